"""Dask adapter (extra [dask]; `import tfrecord_lite` never imports this module): TFRecord files read
into a dask.dataframe.DataFrame, with no TensorFlow.

Strategy: dask.dataframe.from_map over the pieces of pieces — one partition per file, or per
record range of an uncompressed file when more partitions than files are asked for. A partition
decodes its Arrow record batches (decode_arrow) and converts them to pandas. The meta (the empty
frame every partition matches) comes from the spec's Arrow types, or without a spec from the first
batch of the first file; a partition that has a key the meta lacks is an error naming the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfrecord_lite._datasets.pieces import Piece, PieceOptions, group_pieces, input_files, piece_batches, plan_pieces
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.validate import check_int, feature_specs
from tfrecord_lite._storage.sources import Sources
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

try:
    import dask.dataframe as dd
    import pandas as pd
    import pyarrow as pa
except ImportError as exc:  # pragma: no cover - exercised where Dask is missing
    raise ImportError(f"tfrecord_lite.dask needs Dask's dataframes ({exc}): pip install 'tfrlite[dask]'") from exc

from tfrecord_lite._arrow.batches import arrow_schema
from tfrecord_lite._arrow.union import concat_batches

__all__ = ["read_tfrecords"]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


def _table(piece: Piece, options: dict[str, Any], schema: pa.Schema) -> pa.Table:
    """The piece's rows with the columns of `schema` (nulls where its records lack a key)."""
    batches = list(piece_batches(piece, **options))
    if options["features"] is not None:
        return pa.Table.from_batches(batches, schema=schema)
    table = concat_batches(batches) if batches else schema.empty_table()
    unknown = [key for key in table.column_names if key not in schema.names]
    if unknown:
        raise FeatureError(
            unknown[0],
            f"is in {piece.path} but not in the first file's first batch, which the columns come from: "
            "pass `features` to name the columns",
        )
    columns = [table.column(k) if k in table.column_names else pa.nulls(table.num_rows) for k in schema.names]
    return pa.table(columns, names=schema.names)


def _pandas_type(kind: pa.DataType) -> pd.ArrowDtype | None:
    """Numbers stay numpy columns; lists, bytes and nulls stay Arrow-backed (pd.ArrowDtype): as
    object columns Dask would turn them into strings (its `dataframe.convert-string`)."""
    return None if pa.types.is_integer(kind) or pa.types.is_floating(kind) else pd.ArrowDtype(kind)


def _frame(table: pa.Table) -> pd.DataFrame:
    return table.to_pandas(types_mapper=_pandas_type)


def _partition(pieces: list[Piece], options: dict[str, Any], schema: pa.Schema) -> pd.DataFrame:
    return _frame(pa.concat_tables([_table(piece, options, schema) for piece in pieces]))


def read_tfrecords(
    source: Sources,
    *,
    features: Mapping[str, Any] | None = None,
    sequence_features: Mapping[str, Any] | None = None,
    batch_size: int = 2048,
    npartitions: int | None = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> dd.DataFrame:
    """A Dask DataFrame of the Examples in `source` (files, folders, globs, URLs, or a list of those).

    Columns are decode_arrow's in pandas: numbers as numpy columns, lists and bytes Arrow-backed
    (pd.ArrowDtype). With `features` they are typed as TensorFlow parses them; without, one list
    column per key of the first file's first batch. SequenceExamples: each feature list is a
    column of steps (list<list<T>>) beside the context columns, found in the records without a
    spec, or typed by `sequence_features` (then `features` is the context's spec). One partition
    per file; `npartitions` larger than the number of files splits uncompressed files by record
    ranges, and smaller gives each partition a run of neighbouring files of about equal bytes.

    The reader options are iter_records'. With on_error="skip" (or a callable) files are read
    whole, never split, and `max_skipped` counts the damaged spans of each file.
    `storage_options` open URLs (s3://, gs://, ...): fsspec's options, as Dask's own readers take
    them, or an fsspec filesystem; the workers get them with each partition."""
    check_int("batch_size", batch_size, 1)
    specs = feature_specs(features)
    lists = feature_specs(sequence_features, "sequence_features")
    reading = PieceOptions(compression, verify, on_error, max_skipped, storage_options, max_record_bytes)
    files = input_files(source, storage_options)
    wanted = len(files) if npartitions is None else check_int("npartitions", npartitions, 1)
    pieces = plan_pieces(files, wanted, batch_size, reading)
    options: dict[str, Any] = {
        "features": specs,
        "batch_size": batch_size,
        "options": reading,
        "sequence_features": lists,
    }
    if specs is not None:
        schema = arrow_schema(specs, lists)
    else:
        first = next(piece_batches(Piece(files[0], 0), **options), pa.record_batch([]))
        schema = first.schema
    meta = _frame(schema.empty_table())
    groups = group_pieces(pieces, wanted)
    return dd.from_map(_partition, groups, options=options, schema=schema, meta=meta, enforce_metadata=False)
