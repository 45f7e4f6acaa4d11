"""The sandbox's report engine: a report request in, the bytes of its answer out.

``request`` (with ``fields``) parses and checks a request, ``answer`` computes it from the
model (``metrics`` says what each metric and aggregation is), ``render`` writes it as JSON or
CSV; ``v2`` and ``reporting_service`` hold what is particular to the v2 report and to the v2
reporting service. Nothing here knows about HTTP; it reads the network through ``..model``.
"""
