"""The sandbox's web shell: the Flask app, its HTTP server and every route of the service.

One module per area of the service and per concern (credentials, faults, the rate-limit mode,
the OpenAPI document). Flask and cheroot are imported only inside the functions that run the
server, so importing this package needs neither.
"""
