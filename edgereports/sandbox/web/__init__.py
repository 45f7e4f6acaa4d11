"""The sandbox's web shell: the Flask app, its HTTP server and every route of the service.

``server`` runs it (:func:`~edgereports.sandbox.serve`), ``app`` wires the routes, checks
credentials and injects ``faults``; ``reporting`` (area C) hands requests to the report engine;
``content``, ``content_store``, ``playback`` (area A) and ``campaigns`` (area B) keep their
own in-memory stores in the running sandbox's ``state``. Flask and cheroot are imported only
inside the functions that run the server, so importing this package needs neither.
"""
