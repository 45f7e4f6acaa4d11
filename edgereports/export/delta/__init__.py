"""The Delta Lake format of the export: one transactional table per report, local or on S3.

``table`` (creating, writing, reading and maintaining a report's table; ``deltalake`` is the
optional extra ``edgereports[delta]``) and ``run`` (the engine of a run into Delta tables).
"""
