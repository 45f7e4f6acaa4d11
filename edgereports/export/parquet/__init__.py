"""The Parquet format of the export: day files, their state, locks and the run that writes them."""
