"""Spark SQL types for TFRecord features, and record batches made to fit them, without pyspark:
what the Spark data source (tfrecord_lite.spark) reads and writes, in the JSON form of a Spark
schema (StructType.jsonValue(): {"type": "struct", "fields": [{"name", "type", ...}]}).

Strategy: a Spark column is a leaf type (a scalar: one value a row), an array of one (a list of
values), or, for a SequenceExample's feature list, an array of arrays (a list of steps). Only
the schema's keys are decoded, without a spec, which gives one large_list column per feature
(of steps, for a feature list), null where a record lacks it, as spark-tfrecord reads a missing
feature; its kind is checked against the column's, and it is cast by Arrow to the type Spark
expects: a scalar takes the single value of each row (null where
the feature is missing or empty; more than one value is an error naming the column and row), a
list is cast as it is. Casts that lose or invent data fail (int64 → int32 out of range, bytes
that are not UTF-8 for a string column), each as a FeatureError naming the column. Inference
goes the other way: FixedLenFeature([]) (every record one value) → the leaf type, other
features → arrays, feature lists → arrays of arrays; bytes are chosen per column (bytes_type="auto",
the default): strings where every sampled value is UTF-8 text, as spark-tfrecord infers them,
binary where one is not (encoded images); bytes_type="string" or "binary" makes every bytes column one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from tfrecord_lite._arrow.lazy import lazy
from tfrecord_lite._batches.columnar import note_record
from tfrecord_lite._compression.kinds import from_alias
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.decode import decode_example, decode_sequence_example
from tfrecord_lite._example.spec import FeatureSpec, FixedLenFeature

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:  # imported at first use (lazy.py)
    pa = lazy("pyarrow", globals(), "pa")
    pc = lazy("pyarrow.compute", globals(), "pc")

# Spark's leaf types (their JSON names) and the kind of Feature list that holds each
_LEAF_DTYPES = {
    "long": "int64",
    "integer": "int64",
    "short": "int64",
    "byte": "int64",
    "boolean": "int64",
    "float": "float32",
    "double": "float32",
    "string": "bytes",
    "binary": "bytes",
}
_INFERRED_LEAF = {"int64": "long", "float32": "float", "bytes": "string"}
BYTES_TYPES = ("auto", "string", "binary")
RECORD_TYPES = ("Example", "SequenceExample", "ByteArray", "Message", "ELWC")
BYTE_ARRAY_COLUMN = "byteArray"  # spark-tfrecord's one column of recordType ByteArray


def check_record_type(record_type: str) -> str:
    """`record_type` as spark-tfrecord spells it (any case), or a ValueError naming the choices."""
    for known in RECORD_TYPES:
        if record_type.lower() == known.lower():
            return known
    raise ValueError(f"recordType must be one of {', '.join(RECORD_TYPES)}, not {record_type!r}")


def _field(name: str, data_type: Any) -> dict[str, Any]:
    return {"name": name, "type": data_type, "nullable": True, "metadata": {}}


def _array(element: Any) -> dict[str, Any]:
    return {"type": "array", "elementType": element, "containsNull": True}


def struct(fields: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A Spark schema's JSON form from its fields' (StructType.fromJson reads it)."""
    return {"type": "struct", "fields": list(fields)}


def inferred_fields(
    context: Mapping[str, FeatureSpec],
    lists: Mapping[str, FeatureSpec] | None = None,
    bytes_type: str = "auto",
    binary: Collection[str] = (),
) -> list[dict[str, Any]]:
    """The Spark fields of features inferred by infer_features / infer_sequence_features: a
    FixedLenFeature([]) its leaf type, any other feature an array of it, a feature list an array
    of arrays; bytes as `bytes_type` ("string" or "binary"), or with "auto" binary for the keys
    of `binary` (bytes_columns_not_text) and string for the others."""
    check_bytes_type(bytes_type)

    def leaf(key: str, spec: FeatureSpec) -> str:
        if spec.dtype != "bytes":
            return _INFERRED_LEAF[spec.dtype]
        if bytes_type == "auto":
            return "binary" if key in binary else "string"
        return bytes_type

    fields = []
    for key, spec in context.items():
        scalar = isinstance(spec, FixedLenFeature) and spec.shape == ()
        fields.append(_field(key, leaf(key, spec) if scalar else _array(leaf(key, spec))))
    fields += [_field(key, _array(_array(leaf(key, spec)))) for key, spec in (lists or {}).items()]
    return fields


def check_bytes_type(bytes_type: str) -> str:
    if bytes_type not in BYTES_TYPES:
        raise ValueError(f"bytesType must be one of {BYTES_TYPES}, not {bytes_type!r}")
    return bytes_type


def bytes_columns_not_text(records: Iterable[bytes], sequences: bool = False) -> set[str]:
    """The keys of `records` (Examples, or SequenceExamples' context and feature lists) holding a
    bytes value that is not UTF-8 text (encoded images ...): Spark reads those as binary."""
    binary: set[str] = set()
    for record in records:
        if sequences:
            context, lists = decode_sequence_example(record)
            values = {**context, **{k: [v for step in steps for v in _listed(step)] for k, steps in lists.items()}}
        else:
            values = decode_example(record)
        for key, value in values.items():
            if key not in binary and any(not _is_text(v) for v in _listed(value)):
                binary.add(key)
    return binary


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_text(value: Any) -> bool:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        return True
    try:
        bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def byte_array_fields() -> list[dict[str, Any]]:
    """The one binary column of recordType ByteArray: each record's bytes as they are."""
    return [_field(BYTE_ARRAY_COLUMN, "binary")]


class Column(NamedTuple):
    """How one Spark column maps to a feature: its leaf's kind and depth (0 scalar, 1 list,
    2 list of lists: a feature list)."""

    name: str
    dtype: str
    depth: int


def _column(field: Mapping[str, Any]) -> Column:
    name, data_type, depth = field["name"], field["type"], 0
    while isinstance(data_type, dict) and data_type.get("type") == "array":
        data_type, depth = data_type["elementType"], depth + 1
    if not isinstance(data_type, str) or data_type not in _LEAF_DTYPES or depth > 2:
        shown = data_type if isinstance(data_type, str) else data_type.get("type", data_type)
        raise FeatureError(
            name,
            f"has Spark type {shown!s} (array depth {depth}), which a TFRecord feature cannot hold: use "
            "integral, boolean, float, double, string or binary types, arrays of them, or arrays of arrays "
            "(feature lists)",
        )
    return Column(name, _LEAF_DTYPES[data_type], depth)


def feature_columns(schema: Mapping[str, Any], record_type: str, skip: Sequence[str] = ()) -> list[Column]:
    """The Columns of a Spark schema (JSON) but those in `skip` (partition columns); an array
    of arrays outside recordType SequenceExample is an error naming it."""
    columns = [_column(field) for field in schema["fields"] if field["name"] not in skip]
    for column in columns:
        if column.depth == 2 and record_type != "SequenceExample":
            raise FeatureError(column.name, "is an array of arrays (a feature list): use recordType SequenceExample")
    return columns


def _leaf_kind(data_type: pa.DataType) -> str | None:
    """The kind of Feature list a decoded column holds (None: no record of the batch had one)."""
    while pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        data_type = data_type.value_type
    if pa.types.is_null(data_type):
        return None
    return "int64" if pa.types.is_integer(data_type) else "float32" if pa.types.is_floating(data_type) else "bytes"


def _check_kind(column: Column, decoded: pa.DataType) -> None:
    found = _leaf_kind(decoded)
    if found is not None and found != column.dtype:
        raise FeatureError(column.name, f"holds {found} values in the data, but its Spark type reads {column.dtype}")


def _scalars(name: str, lists: pa.Array) -> pa.Array:
    """The single value of each row of a large_list column (null where it has none)."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    if pa.types.is_null(lists.type):
        return lists
    offsets = np.asarray(lists.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    counts = np.diff(offsets)
    if lists.null_count:
        counts = np.where(np.asarray(lists.is_valid().to_numpy(zero_copy_only=False)), counts, 0)
    if (counts > 1).any():
        row = int(np.flatnonzero(counts > 1)[0])
        raise FeatureError(
            name, f"has {int(counts[row])} values in row {row} of the batch; its Spark type holds one: declare an array"
        )
    if (counts == 1).all():
        return lists.values.slice(int(offsets[0]), len(lists))
    if not len(lists.values):
        return pa.nulls(len(lists), lists.type.value_type)
    taken = lists.values.take(pa.array(np.where(counts == 1, offsets[:-1], 0)))
    return pc.if_else(pa.array(counts == 1), taken, pa.scalar(None, taken.type))


def _cast(name: str, array: pa.Array, target: pa.DataType) -> pa.Array:
    if array.type == target:
        return array
    try:
        return array.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        hint = " (bytes that are not UTF-8: read it as binary, bytesType=binary)" if "utf8" in str(err).lower() else ""
        raise FeatureError(name, f"cannot be read as Arrow {target}{hint}: {err}") from None


def conform(
    batch: pa.RecordBatch, columns: Sequence[Column], target: pa.Schema, constants: Mapping[str, Any] | None = None
) -> pa.RecordBatch:
    """The `batch` decoded without a spec (a large_list column per Column, null where a record
    lacks the feature) as `target`, the Arrow schema Spark expects (pyspark's to_arrow_schema of
    the read schema); the fields of `constants` (partition values) filled with their value."""
    by_name = {c.name: c for c in columns}
    arrays = []
    for field in target:
        if constants is not None and field.name in constants:
            arrays.append(pa.array([constants[field.name]] * batch.num_rows, type=field.type))
            continue
        array, column = batch.column(field.name), by_name[field.name]
        try:
            arrays.append(_conformed(column, array, field.type))
        except FeatureError as err:
            row = _failing_row(column, array, field.type)
            if row is not None:
                note_record(err, row, "the Spark reader")  # a reader of files places it
            raise
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def _conformed(column: Column, array: pa.Array, target: pa.DataType) -> pa.Array:
    """One decoded column as the Arrow type Spark expects (see conform)."""
    _check_kind(column, array.type)
    if column.depth == 0:
        array = _scalars(column.name, array)
    if pa.types.is_null(array.type):
        array = pa.nulls(len(array), target)
    return _cast(column.name, array, target)


def _failing_row(column: Column, array: pa.Array, target: pa.DataType) -> int | None:
    """The first row of `array` that does not conform on its own (only after the column failed)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    for row in np.flatnonzero(np.asarray(array.is_valid().to_numpy(zero_copy_only=False))):
        try:
            _conformed(column, array.slice(int(row), 1), target)
        except FeatureError:
            return int(row)
    return None


def byte_array_batch(
    records: Sequence[bytes], target: pa.Schema, constants: Mapping[str, Any] | None = None
) -> pa.RecordBatch:
    """Raw records as the one binary column of recordType ByteArray (beside partition columns)."""
    arrays = []
    for field in target:
        if constants is not None and field.name in constants:
            arrays.append(pa.array([constants[field.name]] * len(records), type=field.type))
        else:
            arrays.append(pa.array(records, type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


def raw_records(batch: pa.RecordBatch, column: str = BYTE_ARRAY_COLUMN) -> list[bytes]:
    """The records of a ByteArray write: the values of its binary column (one binary column of
    any name also does); a null is an error, a record cannot be missing."""
    names = batch.schema.names
    if column not in names:
        binary = [f.name for f in batch.schema if pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
        if len(binary) != 1:
            raise KeyError(f"recordType ByteArray writes the binary column {column!r}; the data has {names}")
        column = binary[0]
    values = batch.column(column)
    if values.null_count:
        raise FeatureError(column, "has a null: a ByteArray record cannot be missing")
    out: list[bytes] = values.to_pylist()
    return out


def codec_compression(codec: str) -> str | None:
    """The compression of spark-tfrecord's `codec` option: a short name ("gzip", "zlib",
    "deflate", "none") or a Hadoop codec class (org.apache.hadoop.io.compress.GzipCodec;
    DefaultCodec and DeflateCodec write ZLIB streams, as TensorFlow's ZLIB reads them)."""
    name = codec.rsplit(".", 1)[-1].lower().removesuffix("codec")
    kind = from_alias(name)  # the names of each kind are _compression/kinds.py's
    if kind is not None:
        return kind or None
    raise ValueError(f"codec {codec!r} is not one TFRecord files take: gzip, zlib (deflate) or none")
