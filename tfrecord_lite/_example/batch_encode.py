"""Many Examples encoded at once from flat columns (values, per-row offsets, presence), with numpy
and no Python work per record: the writer's path for Arrow data (encode_arrow, the engines'
sinks), byte for byte what encode_example writes for the same rows.

Strategy: an Example's bytes are a fixed sequence of segments per row: the Example's tag and
length, then for each present feature its map entry's tag and length, the key (one constant
segment per column), the Feature's length, its kind's tag, the list's length (and the packed
field's tag and length, for numbers) and the values. Every length is computed for all rows at
once from the values' sizes, every varint of a column is written in one pass (encode_varints),
and the segments are the (start, length) of bytes in one pool: constants, varints, values.
One gather of the pool by index_ranges lays out every record; an absent feature's segments have
length 0. Bytes values are first laid out the same way, one (tag, length, bytes) per value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from tfrecord_lite._example.encode import encode_varints
from tfrecord_lite._example.keys import index_ranges
from tfrecord_lite._example.spec import BYTES, INT64

Ints = npt.NDArray[np.int64]


class FlatColumn(NamedTuple):
    """One feature of a batch: `kind` (INT64, FLOAT or BYTES), its values (int64 or float32
    numbers; for BYTES the uint8 `data` and the values' `value_offsets` into it), `offsets`
    (row i has values offsets[i]:offsets[i + 1]) and `valid` (rows that have the feature)."""

    key: str
    kind: int
    values: np.ndarray
    offsets: Ints
    valid: npt.NDArray[np.bool_]
    value_offsets: Ints | None = None


def varint_sizes(values: Ints) -> Ints:
    """The bytes each int64 takes as a protobuf varint (negatives: 10)."""
    u = np.ascontiguousarray(values, dtype=np.int64).view(np.uint64)
    sizes = np.ones(u.shape, dtype=np.int64)
    for k in range(1, 10):
        sizes += u >= (np.uint64(1) << np.uint64(7 * k))
    return sizes


class _Pool:
    """The bytes every segment points into, appended chunk by chunk."""

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []
        self.size = 0

    def add(self, data: np.ndarray | bytes) -> int:
        chunk = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data.view(np.uint8).ravel()
        self.chunks.append(chunk)
        self.size += len(chunk)
        return self.size - len(chunk)

    def constant(self, data: bytes, present: npt.NDArray[np.bool_]) -> tuple[Ints, Ints]:
        base = self.add(data)
        return np.full(len(present), base, dtype=np.int64), np.where(present, len(data), 0).astype(np.int64)

    def varints(self, values: Ints, present: npt.NDArray[np.bool_]) -> tuple[Ints, Ints]:
        sizes = varint_sizes(values)
        base = self.add(encode_varints(values))
        return base + np.cumsum(sizes) - sizes, np.where(present, sizes, 0)

    def gather(self, segments: Sequence[tuple[Ints, Ints]]) -> tuple[np.ndarray, Ints]:
        """Each row's segments in order, every row after the other; (bytes, end of each row)."""
        source = np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.uint8)
        starts = np.stack([s for s, _ in segments], axis=1).ravel()
        lengths = np.stack([n for _, n in segments], axis=1)
        out = source[index_ranges(starts, lengths.ravel())]
        return out, np.cumsum(lengths.sum(axis=1))


def _tag(field: int) -> bytes:
    return bytes((field << 3 | 2,))


def _row_ranges(sizes: Ints, offsets: Ints) -> tuple[Ints, Ints]:
    """(first byte, bytes) of each row's values, from each value's size."""
    cumulative = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return cumulative[offsets[:-1]], cumulative[offsets[1:]] - cumulative[offsets[:-1]]


def _payload(pool: _Pool, column: FlatColumn) -> tuple[list[tuple[Ints, Ints]], Ints]:
    """The segments of a column's list message in each row (Int64List, FloatList, BytesList),
    and its length."""
    present = column.valid
    if column.kind == BYTES:
        assert column.value_offsets is not None
        lengths = np.diff(column.value_offsets)
        values = _Pool()
        data_base = values.add(column.values)
        ones = np.ones(len(lengths), dtype=bool)
        laid, _ = values.gather(
            [
                values.constant(_tag(1), ones),
                values.varints(lengths, ones),
                (data_base + column.value_offsets[:-1], lengths),
            ]
        )
        first, size = _row_ranges(1 + varint_sizes(lengths) + lengths, column.offsets)
        base = pool.add(laid)
        return [(base + first, np.where(present, size, 0))], size
    if column.kind == INT64:
        sizes = varint_sizes(column.values)
        base = pool.add(encode_varints(column.values))
    else:
        sizes = np.full(len(column.values), 4, dtype=np.int64)
        base = pool.add(np.ascontiguousarray(column.values, dtype="<f4"))
    first, packed = _row_ranges(sizes, column.offsets)
    some = present & (packed > 0)  # an empty list: no packed field at all
    segments = [pool.constant(_tag(1), some), pool.varints(packed, some), (base + first, np.where(some, packed, 0))]
    return segments, np.where(packed > 0, 1 + varint_sizes(packed) + packed, 0)


def _entry(pool: _Pool, column: FlatColumn) -> tuple[list[tuple[Ints, Ints]], Ints]:
    """The segments of a column's map entry (tag and length included) in each row, and its length
    (0 where the row lacks the feature)."""
    present = column.valid
    payload, list_length = _payload(pool, column)
    feature = 1 + varint_sizes(list_length) + list_length
    key = column.key.encode("utf-8")
    head = _tag(1) + bytes(encode_varints(np.array([len(key)], dtype=np.int64))) + key + _tag(2)
    entry = len(head) + varint_sizes(feature) + feature
    segments = [
        pool.constant(_tag(1), present),
        pool.varints(entry, present),
        pool.constant(head, present),
        pool.varints(feature, present),
        pool.constant(_tag(column.kind), present),
        pool.varints(list_length, present),
        *payload,
    ]
    return segments, np.where(present, 1 + varint_sizes(entry) + entry, 0)


def encode_flat_examples(columns: Sequence[FlatColumn], rows: int) -> tuple[np.ndarray, Ints]:
    """The serialized Examples of `rows` rows of `columns`, in one uint8 buffer, and the end of
    each record in it (record i is buffer[ends[i - 1]:ends[i]])."""
    pool = _Pool()
    everyone = np.ones(rows, dtype=bool)
    entries: list[tuple[Ints, Ints]] = []
    features = np.zeros(rows, dtype=np.int64)
    for column in columns:
        segments, length = _entry(pool, column)
        entries += segments
        features += length
    head = [pool.constant(_tag(1), everyone), pool.varints(features, everyone)]
    return pool.gather(head + entries)
