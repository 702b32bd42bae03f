"""Index sidecars: record offsets for plain files, seek points for GZIP, remote and tolerant indexes."""
