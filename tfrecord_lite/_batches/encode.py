"""Many Examples encoded at once from flat columns (values, per-row offsets, presence), with numpy
and no Python work per record: the writer's path for Arrow data (encode_arrow, the engines'
sinks), byte for byte what encode_example writes for the same rows.

Strategy: an Example's bytes are a fixed sequence of segments per row: the Example's tag and
length, then for each present feature its map entry's tag and length, the key (one constant
segment per column), the Feature's length, its kind's tag, the list's length (and the packed
field's tag and length, for numbers) and the values. Every length is computed for all rows at
once from the values' sizes, every varint of a column is written in one pass (encode_varints),
and each segment is the (start, length) in each row of bytes in one source: a constant, a
column's varints or values. The output is allocated once and each segment copied to where it lies
in every row, rows of one segment length at a time: `length` bytes are one item of a void dtype, so
the copy takes one index per row, not one per byte (a segment of many distinct lengths in a batch
is copied by a per-byte index). A segment that is the same bytes in every row that has it (a
constant, or a varint of one value: a fixed-size list's lengths) is merged with such neighbours of
the same rows, so that a column of fixed-size values costs two copies (its head, its values), not
eight. An absent feature's segments have length 0. Bytes values are first laid out the same way,
one (tag, length, bytes) per value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from tfrecord_lite._batches.keys import index_ranges
from tfrecord_lite._example.encode import encode_varints
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
    largest = int(u.max()) if u.size else 0
    for k in range(1, 10):
        if largest < 1 << (7 * k):
            break
        sizes += u >= np.uint64(1 << (7 * k))
    return sizes


_FEW_LENGTHS = 24  # distinct segment lengths of a column copied by length; more: by a per-byte index


class Segment(NamedTuple):
    """One segment of every row: its bytes are source[starts[i]:starts[i] + lengths[i]];
    `uniform` when they are the same bytes (all of source) in every row that has the segment."""

    source: npt.NDArray[np.uint8]
    starts: Ints
    lengths: Ints
    uniform: bool = False


def constant(data: bytes, present: npt.NDArray[np.bool_]) -> Segment:
    """`data` in every present row."""
    lengths = np.where(present, len(data), 0).astype(np.int64)
    return Segment(np.frombuffer(data, dtype=np.uint8), np.zeros(len(present), dtype=np.int64), lengths, True)


def varints(values: Ints, present: npt.NDArray[np.bool_]) -> Segment:
    """Row i's value as a varint, in every present row (a constant where those values are one)."""
    held = values if present.all() else values[present]
    if len(held) and held.min() == held.max():
        return constant(bytes(encode_varints(held[:1])), present)
    sizes = varint_sizes(values)
    return Segment(
        np.frombuffer(encode_varints(values), dtype=np.uint8), np.cumsum(sizes) - sizes, np.where(present, sizes, 0)
    )


def spans(data: np.ndarray, starts: Ints, lengths: Ints) -> Segment:
    """Bytes of `data` (any dtype, viewed as bytes) at byte offsets `starts`."""
    return Segment(np.ascontiguousarray(data).view(np.uint8).ravel(), starts, lengths)


def _items(buffer: npt.NDArray[np.uint8], width: int) -> np.ndarray:
    """Every `width` bytes of `buffer` as one item of a void dtype (item i starts at byte i): a view,
    so that a segment of `width` bytes is copied as one item, not byte by byte."""
    items: np.ndarray = np.ndarray((len(buffer) - width + 1,), dtype=f"V{width}", buffer=buffer, strides=(1,))
    return items


def _place(out: npt.NDArray[np.uint8], at: Ints, segment: Segment) -> None:
    """Copy each row's segment to out[at[i]:]: rows of one length at a time (one item per row)."""
    source, starts, lengths, _ = segment
    widest = int(lengths.max()) if len(lengths) else 0
    if widest == 0:
        return
    counts = np.bincount(lengths) if widest <= 4096 else np.zeros(0, dtype=np.int64)
    widths = np.flatnonzero(counts[1:]) + 1
    if len(counts) == 0 or len(widths) > _FEW_LENGTHS:
        out[index_ranges(at, lengths)] = source[index_ranges(starts, lengths)]
        return
    for width in widths.tolist():
        rows = slice(None) if counts[width] == len(lengths) else np.flatnonzero(lengths == width)
        items = _items(source, width)
        if len(source) == width:  # a constant: every row copies the same item
            _items(out, width)[at[rows]] = items[0]
        else:
            _items(out, width)[at[rows]] = items[starts[rows]]


def _merged(segments: Sequence[Segment]) -> list[Segment]:
    """`segments` with neighbouring uniform ones of the same rows made one (their bytes joined),
    so that they are copied together."""
    merged: list[Segment] = []
    for segment in segments:
        last = merged[-1] if merged else None
        if (
            last is not None
            and last.uniform
            and segment.uniform
            and np.array_equal(last.lengths > 0, segment.lengths > 0)
        ):
            source = np.concatenate([last.source, segment.source])
            merged[-1] = Segment(source, last.starts, last.lengths + segment.lengths, True)
        else:
            merged.append(segment)
    return merged


def gather(segments: Sequence[Segment], before: int = 0, after: int = 0) -> tuple[npt.NDArray[np.uint8], Ints]:
    """Each row's segments in order, every row after the other, `before` and `after` bytes left
    free around each (not written); (bytes, end of each row's slot, free bytes included)."""
    sizes = np.full(len(segments[0].lengths) if segments else 0, before + after, dtype=np.int64)
    for segment in segments:
        sizes += segment.lengths
    ends = np.cumsum(sizes)
    out = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.uint8)
    at = ends - sizes + before
    for segment in _merged(segments):
        _place(out, at, segment)
        at += segment.lengths
    return out, ends


def _tag(field: int) -> bytes:
    return bytes((field << 3 | 2,))


def _row_ranges(sizes: Ints, offsets: Ints) -> tuple[Ints, Ints]:
    """(first byte, bytes) of each row's values, from each value's size."""
    cumulative = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return cumulative[offsets[:-1]], cumulative[offsets[1:]] - cumulative[offsets[:-1]]


def _payload(column: FlatColumn) -> tuple[list[Segment], Ints]:
    """The segments of a column's list message in each row (Int64List, FloatList, BytesList),
    and its length."""
    present = column.valid
    if column.kind == BYTES:
        assert column.value_offsets is not None
        lengths = np.diff(column.value_offsets)
        ones = np.ones(len(lengths), dtype=bool)
        laid, _ = gather(
            [constant(_tag(1), ones), varints(lengths, ones), spans(column.values, column.value_offsets[:-1], lengths)]
        )
        first, size = _row_ranges(1 + varint_sizes(lengths) + lengths, column.offsets)
        return [Segment(laid, first, np.where(present, size, 0))], size
    if column.kind == INT64:
        sizes = varint_sizes(column.values)
        data = np.frombuffer(encode_varints(column.values), dtype=np.uint8)
        first, packed = _row_ranges(sizes, column.offsets)
    else:  # 4 bytes a value
        data = np.ascontiguousarray(column.values, dtype="<f4").view(np.uint8)
        offsets = np.asarray(column.offsets, dtype=np.int64)
        first, packed = offsets[:-1] * 4, np.diff(offsets) * 4
    some = present & (packed > 0)  # an empty list: no packed field at all
    segments = [constant(_tag(1), some), varints(packed, some), spans(data, first, np.where(some, packed, 0))]
    return segments, np.where(packed > 0, 1 + varint_sizes(packed) + packed, 0)


def _entry(column: FlatColumn) -> tuple[list[Segment], Ints]:
    """The segments of a column's map entry (tag and length included) in each row, and its length
    (0 where the row lacks the feature)."""
    present = column.valid
    payload, list_length = _payload(column)
    feature = 1 + varint_sizes(list_length) + list_length
    key = column.key.encode("utf-8")
    head = _tag(1) + bytes(encode_varints(np.array([len(key)], dtype=np.int64))) + key + _tag(2)
    entry = len(head) + varint_sizes(feature) + feature
    segments = [
        constant(_tag(1), present),
        varints(entry, present),
        constant(head, present),
        varints(feature, present),
        constant(_tag(column.kind), present),
        varints(list_length, present),
        *payload,
    ]
    return segments, np.where(present, 1 + varint_sizes(entry) + entry, 0)


def encode_flat_examples(
    columns: Sequence[FlatColumn], rows: int, before: int = 0, after: int = 0
) -> tuple[np.ndarray, Ints]:
    """The serialized Examples of `rows` rows of `columns`, in one uint8 buffer, and the end of
    each record's slot in it: record i is buffer[ends[i - 1] + before:ends[i] - after], the bytes
    around it left free (where framing.fill_frames writes a TFRecord frame's header and footer)."""
    everyone = np.ones(rows, dtype=bool)
    entries: list[Segment] = []
    features = np.zeros(rows, dtype=np.int64)
    for column in columns:
        segments, length = _entry(column)
        entries += segments
        features += length
    return gather([constant(_tag(1), everyone), varints(features, everyone), *entries], before, after)
