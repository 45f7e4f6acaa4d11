"""The Delta Lake format of the export: one transactional table per report, local or on S3."""
