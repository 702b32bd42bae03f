"""Many files as one dataset: shards, schemas, tables, engine pieces, streaming plans, collation."""
