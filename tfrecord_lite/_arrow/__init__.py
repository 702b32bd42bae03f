"""Examples as Arrow: record batches and back, Arrow data encoded as Examples, unions of batch schemas,
feature lists as list columns, Parquet / Arrow IPC / CSV tables, Spark SQL types."""
