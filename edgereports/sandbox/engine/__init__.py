"""The sandbox's report engine: a report request in, the bytes of its answer out.

Nothing here knows about HTTP; it reads the network through ``..model``.
"""
