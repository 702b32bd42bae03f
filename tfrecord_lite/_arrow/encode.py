"""Arrow data as Examples: the encoding half of tfrecord_lite.arrow (encode_arrow), which
write_arrow, the engines' sinks and the CLI's `convert` use.

Strategy: each Arrow column is flattened to its leaf values (nested lists flattened), offsets per
row and presence, and checked for a type an Example can hold (integers and bools → int64, floats →
float32, strings and binary → bytes, Arrow's buffers taken as they are). A batch without
feature-list columns is then encoded all at once by the batch encoder (_batches/encode.py),
for a writer into slots with room around each record, where its TFRecord frame is then written
(iter_framed_buffers: the records are never copied again); a batch with some is encoded row by
row by the codec, each row with a value in a feature-list column a SequenceExample.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from tfrecord_lite._arrow.feature_lists import feature_list_names, is_list_type, steps_of
from tfrecord_lite._arrow.lazy import lazy
from tfrecord_lite._batches.encode import FlatColumn, encode_flat_examples
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.encode import encode_example, encode_sequence_example
from tfrecord_lite._example.spec import BYTES, FLOAT, INT64
from tfrecord_lite._wire.framing import FOOTER_SIZE, HEADER_SIZE, fill_frames, framed_records

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:  # imported at first use (lazy.py)
    pa = lazy("pyarrow", globals(), "pa")
    pc = lazy("pyarrow.compute", globals(), "pc")


def _batches_of(data: Any) -> Iterator[pa.RecordBatch]:
    if isinstance(data, pa.RecordBatch):
        yield data
    elif isinstance(data, pa.Table):
        yield from data.to_batches()
    elif type(data).__name__ == "DataFrame" and hasattr(data, "columns"):  # pandas, without importing it
        yield from pa.Table.from_pandas(data, preserve_index=False).to_batches()
    elif isinstance(data, Iterable) and not isinstance(data, (str, bytes)):
        for item in data:
            if not isinstance(item, pa.RecordBatch):
                raise TypeError(f"expected pyarrow RecordBatches, found {type(item).__name__} in the iterable")
            yield item
    else:
        raise TypeError(
            f"expected a pyarrow RecordBatch, Table, an iterable of RecordBatches or a pandas DataFrame, "
            f"found {type(data).__name__}"
        )


def _leaf_values(name: str, array: pa.Array, strict: bool) -> Any:
    """The flat values of a leaf column as an int64 / float32 ndarray or a list of bytes."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        return _leaf_values(name, array.dictionary_decode(), strict)
    if array.null_count:
        raise FeatureError(name, "has a null inside a list: an Example list cannot hold nulls")
    if pa.types.is_boolean(kind) or pa.types.is_integer(kind):
        if pa.types.is_uint64(kind) and len(array) and pc.max(array).as_py() > np.iinfo(np.int64).max:
            raise FeatureError(name, f"uint64 value {pc.max(array).as_py()} does not fit int64")
        return np.asarray(array.cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)
    if pa.types.is_floating(kind):
        wide = np.asarray(array.to_numpy(zero_copy_only=False))
        narrow = wide.astype(np.float32)
        if strict and pa.types.is_float64(kind):
            inexact = (narrow.astype(wide.dtype) != wide) & ~np.isnan(wide)
            if inexact.any():
                value = wide[np.flatnonzero(inexact)[0]]
                raise FeatureError(name, f"float64 value {value!r} is not exact as float32 (strict=True)")
        return narrow
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or _is_view(kind, "string_view"):
        return _objects(array.cast(pa.large_binary()).to_pylist())
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind):
        return _objects(array.to_pylist())
    if _is_view(kind, "binary_view"):
        return _objects(array.to_pylist())
    raise FeatureError(
        name,
        f"has Arrow type {kind}, which an Example cannot hold (integers, bools, floats, strings, binary, "
        "and lists of them)",
    )


def _objects(items: list[bytes]) -> np.ndarray:
    """bytes values as an object array: a slice of it (a row) encodes as bytes, even empty."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _is_view(kind: pa.DataType, name: str) -> bool:
    check = getattr(pa.types, f"is_{name}", None)
    return bool(check and check(kind))


def _flatten_rows(array: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """(leaf values, offsets per row, valid rows) of a column: nested lists flattened."""
    n = len(array)
    valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    row_of = np.flatnonzero(valid)
    if not valid.all():
        array = array.filter(pa.array(valid))
    while is_list_type(array.type):
        row_of = row_of[np.asarray(pc.list_parent_indices(array).to_numpy(), dtype=np.int64)]
        array = array.flatten()
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of, minlength=n), out=offsets[1:])
    return array, offsets, valid


def _flatten_column(name: str, array: pa.Array, strict: bool) -> tuple[Any, np.ndarray, np.ndarray]:
    """(flat values, offsets per row, valid rows) of a column: nested lists flattened."""
    leaf, offsets, valid = _flatten_rows(array)
    return _leaf_values(name, leaf, strict), offsets, valid


_BINARY_CHECKS = ("is_string", "is_large_string", "is_binary", "is_large_binary", "is_fixed_size_binary")


def _is_binary(kind: pa.DataType) -> bool:
    return (
        any(getattr(pa.types, check)(kind) for check in _BINARY_CHECKS)
        or _is_view(kind, "string_view")
        or (_is_view(kind, "binary_view"))
    )


def _flat_column(name: str, array: pa.Array, strict: bool) -> FlatColumn:
    """A column as the batch encoder takes it: bytes values as Arrow's buffers, never as objects."""
    leaf, offsets, valid = _flatten_rows(array)
    if pa.types.is_dictionary(leaf.type):
        leaf = leaf.dictionary_decode()
    if not _is_binary(leaf.type):
        values = _leaf_values(name, leaf, strict)
        return FlatColumn(name, INT64 if values.dtype == np.int64 else FLOAT, values, offsets, valid)
    if leaf.null_count:
        raise FeatureError(name, "has a null inside a list: an Example list cannot hold nulls")
    leaf = leaf.cast(pa.large_binary())
    _, value_offsets, data = leaf.buffers()
    value_offsets = np.frombuffer(value_offsets, dtype=np.int64)[leaf.offset : leaf.offset + len(leaf) + 1]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    return FlatColumn(name, BYTES, data, offsets, valid, value_offsets)


def _flat_columns(batch: pa.RecordBatch, strict: bool) -> list[FlatColumn]:
    return [
        _flat_column(name, array, strict)
        for name, array in zip(batch.schema.names, batch.columns, strict=True)
        if not pa.types.is_null(array.type)
    ]


def _encoded_examples(batch: pa.RecordBatch, strict: bool) -> tuple[bytes, list[int]]:
    """The rows of a batch without feature lists as Examples, encoded all at once: the records
    back to back, and where each ends."""
    buffer, ends = encode_flat_examples(_flat_columns(batch, strict), batch.num_rows)
    return buffer.tobytes(), ends.tolist()


def _encoded(batch: pa.RecordBatch, strict: bool, feature_lists: Collection[str] | None) -> Iterator[bytes]:
    """The batch's rows encoded: Examples, or SequenceExamples where a feature-list column
    (marked, or named in `feature_lists`) has a value in the row."""
    lists = feature_list_names(batch.schema, feature_lists)
    if not lists:
        data, ends = _encoded_examples(batch, strict)
        yield from map(data.__getitem__, map(slice, [0, *ends], ends))
        return
    columns, sequences = [], []
    for name, array in zip(batch.schema.names, batch.columns, strict=True):
        if name in lists:
            sequences.append((name, steps_of(name, array, lambda key, steps: _flatten_column(key, steps, strict))))
        elif not pa.types.is_null(array.type):
            values, offsets, valid = _flatten_column(name, array, strict)
            columns.append((name, values, offsets.tolist(), valid.tolist()))
    for i in range(batch.num_rows):
        row = {name: values[offsets[i] : offsets[i + 1]] for name, values, offsets, valid in columns if valid[i]}
        steps = {name: column.row(i) for name, column in sequences}
        present = {name: row_steps for name, row_steps in steps.items() if row_steps is not None}
        yield encode_sequence_example(row, present) if present else encode_example(row)


def iter_encoded(data: Any, strict: bool = False, feature_lists: Collection[str] | None = None) -> Iterator[bytes]:
    """encode_arrow's records one at a time, a batch of `data` decoded at a time (memory stays flat)."""
    for batch in _batches_of(data):
        yield from _encoded(batch, strict, feature_lists)


def iter_framed_buffers(
    data: Any, strict: bool = False, feature_lists: Collection[str] | None = None
) -> Iterator[tuple[Any, np.ndarray]]:
    """encode_arrow's records a batch of `data` at a time, framed as a TFRecord file holds them:
    (the framed records back to back, each record's length), as TFRecordWriter.write_framed takes
    them. Examples are encoded into slots with room for their frames, which are then written
    there (framing.fill_frames): no record is copied again."""
    for batch in _batches_of(data):
        if feature_list_names(batch.schema, feature_lists):
            records = list(_encoded(batch, strict, feature_lists))
            yield framed_records(records)
        else:
            buffer, ends = encode_flat_examples(_flat_columns(batch, strict), batch.num_rows, HEADER_SIZE, FOOTER_SIZE)
            yield buffer, fill_frames(buffer, ends)


def encode_arrow(source: Any, *, strict: bool = False, feature_lists: Collection[str] | None = None) -> list[bytes]:
    """Serialized Examples, one per row of `source` (a RecordBatch, a Table, an iterable of
    RecordBatches or a pandas DataFrame). Scalars become one-value lists; lists (nested:
    flattened) become lists; integers and bools → int64, floats → float32, strings and
    binary → bytes; a null leaves the feature out. Other types are an error naming the
    column, as is a float64 not exact as float32 when `strict`.

    Feature lists: a column that decode_sequence_arrow (or read_arrow) marked as a feature
    list in its schema field, or that `feature_lists` names, holds one list of steps per row;
    a row with a value in such a column becomes a SequenceExample (the other columns its
    context, each step a Feature, a null step one with no kind); a row with none, an Example."""
    return list(iter_encoded(source, strict, feature_lists))
