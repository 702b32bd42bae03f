"""Many files as one dataset: shards, schemas, columnar tables and Arrow batches, image datasets,
engine pieces, streaming plans, items, collation and mixing; what the adapters and the CLI offer."""
