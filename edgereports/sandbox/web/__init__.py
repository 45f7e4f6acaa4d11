"""The sandbox's web shell: the Flask app, its HTTP server and every route of the service.

The modules: see :mod:`edgereports.sandbox`. Flask and cheroot are imported only inside the
functions that run the server, so importing this package needs neither.
"""
