"""The Iceberg format of the export: a table per report in a SQL catalog, local or on S3."""
