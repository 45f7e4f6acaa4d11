"""The Parquet format of the export: day files, their state, locks and the run that writes them.

``writer`` (atomic day partitions), ``state`` (the watermark in ``_state.json``), ``lock``
(one writer per report directory or per day), ``checks`` (what a run checks of the saved
states and files before it fetches).
"""
