"""The sandbox's web shell: the Flask app, its HTTP server and every route of the service.

``server`` runs it (:func:`~edgereports.sandbox.serve`) on ``wsgi_server``; ``app`` wires the
routes, checks credentials and applies ``throttle`` and ``faults``; ``reporting`` and
``reporting_v2`` hand requests to the report engine; ``content``, ``content_store``,
``playback`` (area A) and ``campaigns`` (area B) keep their own in-memory stores in the running
sandbox's ``state``; ``admin`` holds the ``/sandbox/`` routes, ``openapi*`` the document. Flask
and cheroot are imported only inside the functions that run the server, so importing this
package needs neither.
"""
