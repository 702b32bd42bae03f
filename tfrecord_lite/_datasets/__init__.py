"""Many files as one dataset: shards and their writer, schemas, engine pieces and task plans, streaming
plans and segments, mixing, hive partitions, splits."""
