# The batch encoder (_example/batch_encode.py) against the one-record encoder: for any flat
# columns (int64 of every varint width and sign, float32, bytes; empty lists; rows without the
# feature), each record is byte for byte what encode_example writes for that row, and the
# protobuf runtime parses it back to the row's values.
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.reference import decode_example, same_features
from tfrecord_lite._batches.encode import (
    FlatColumn,
    constant,
    encode_flat_examples,
    gather,
    varint_sizes,
    varints,
)
from tfrecord_lite._example.encode import encode_example, encode_varints
from tfrecord_lite._example.spec import BYTES, FLOAT, INT64

VALUES = {
    INT64: st.integers(-(2**63), 2**63 - 1),
    FLOAT: st.floats(width=32, allow_nan=False),
    BYTES: st.binary(max_size=200),
}


@st.composite
def columns(draw: st.DrawFn) -> tuple[int, list[tuple[str, int, list[list | None]]]]:
    rows = draw(st.integers(0, 12))
    out = []
    for key in draw(st.lists(st.text(min_size=1, max_size=20), unique=True, max_size=4)):
        kind = draw(st.sampled_from([INT64, FLOAT, BYTES]))
        cells = draw(st.lists(st.none() | st.lists(VALUES[kind], max_size=150), min_size=rows, max_size=rows))
        out.append((key, kind, cells))
    return rows, out


def flat(key: str, kind: int, cells: list[list | None]) -> FlatColumn:
    counts = [len(c or []) for c in cells]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    valid = np.array([c is not None for c in cells], dtype=bool)
    values = [v for c in cells for v in c or []]
    if kind == BYTES:
        value_offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int64)
        data = np.frombuffer(b"".join(values), dtype=np.uint8)
        return FlatColumn(key, kind, data, offsets, valid, value_offsets)
    return FlatColumn(key, kind, np.array(values, dtype=np.int64 if kind == INT64 else np.float32), offsets, valid)


def typed(kind: int, values: list) -> np.ndarray:
    if kind == BYTES:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.array(values, dtype=np.int64 if kind == INT64 else np.float32)


@given(columns())
def test_each_record_is_what_encode_example_writes(data: tuple[int, list[tuple[str, int, list[list | None]]]]) -> None:
    rows, cols = data
    buffer, ends = encode_flat_examples([flat(*c) for c in cols], rows)
    assert len(ends) == rows
    bounds = [0, *ends.tolist()]
    for i in range(rows):
        row = {key: typed(kind, cells[i]) for key, kind, cells in cols if cells[i] is not None}
        record = buffer[bounds[i] : bounds[i + 1]].tobytes()
        assert record == encode_example(row)
        assert same_features(decode_example(record), {k: v if v.dtype != object else list(v) for k, v in row.items()})


@given(columns(), st.integers(0, 12), st.integers(0, 4))
def test_slots_with_room_around_hold_the_same_records(
    data: tuple[int, list[tuple[str, int, list[list | None]]]], before: int, after: int
) -> None:
    rows, cols = data
    tight, ends = encode_flat_examples([flat(*c) for c in cols], rows)
    roomy, slot_ends = encode_flat_examples([flat(*c) for c in cols], rows, before, after)
    assert len(slot_ends) == rows and len(roomy) == len(tight) + rows * (before + after)
    for i, (stop, slot_stop) in enumerate(zip(ends.tolist(), slot_ends.tolist(), strict=True)):
        start = ends[i - 1] if i else 0
        assert roomy[slot_stop - after - (stop - start) : slot_stop - after].tobytes() == tight[start:stop].tobytes()


@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_varint_sizes_are_the_encoded_sizes(values: list[int]) -> None:
    array = np.array(values, dtype=np.int64)
    assert int(varint_sizes(array).sum()) == len(encode_varints(array))


@given(
    st.lists(st.lists(st.binary(max_size=40), max_size=3), min_size=30, max_size=80),
    st.sets(st.integers(0, 79), max_size=5),
    st.sampled_from([BYTES, INT64, FLOAT]),
)
def test_rows_of_many_lengths_are_what_encode_example_writes(drawn: list[list], absent: set[int], kind: int) -> None:
    # row i holds i + 1 values (or a value of i bytes): past a few distinct segment lengths a column
    # is copied by a per-byte index, not by length
    def cell(i: int, values: list) -> list:
        return [b"\x07" * i, *values] if kind == BYTES else [*range(-3, i - 2), *(len(v) * 31 - 600 for v in values)]

    cells = [None if i in absent else cell(i, values) for i, values in enumerate(drawn)]
    buffer, ends = encode_flat_examples([flat("f", kind, cells)], len(cells))
    bounds = [0, *ends.tolist()]
    for i, values in enumerate(cells):
        row = {} if values is None else {"f": typed(kind, values)}
        assert buffer[bounds[i] : bounds[i + 1]].tobytes() == encode_example(row)


@st.composite
def uniform_columns(draw: st.DrawFn) -> tuple[int, list[tuple[str, int, list[list | None]]]]:
    # every row of a column holds the same number of values (bytes of one length), or lacks the
    # feature: the lengths in every record are equal, so neighbouring segments merge into one
    rows = draw(st.integers(1, 30))
    out = []
    for key in draw(st.lists(st.text(min_size=1, max_size=5), unique=True, min_size=1, max_size=4)):
        kind = draw(st.sampled_from([INT64, FLOAT, BYTES]))
        size = draw(st.integers(0, 3))
        value = {
            INT64: st.integers(0, 127) | st.integers(-(2**63), -1),
            FLOAT: st.floats(width=32, allow_nan=False),
            BYTES: st.binary(min_size=2, max_size=2),
        }[kind]
        cell = st.lists(value, min_size=size, max_size=size)
        cells = draw(st.lists(st.none() | cell if draw(st.booleans()) else cell, min_size=rows, max_size=rows))
        out.append((key, kind, cells))
    return rows, out


@given(uniform_columns())
def test_rows_of_equal_lengths_are_what_encode_example_writes(
    data: tuple[int, list[tuple[str, int, list[list | None]]]],
) -> None:
    rows, cols = data
    buffer, ends = encode_flat_examples([flat(*c) for c in cols], rows)
    bounds = [0, *ends.tolist()]
    for i in range(rows):
        row = {key: typed(kind, cells[i]) for key, kind, cells in cols if cells[i] is not None}
        assert buffer[bounds[i] : bounds[i + 1]].tobytes() == encode_example(row)


@given(
    st.lists(st.tuples(st.binary(min_size=1, max_size=4), st.lists(st.booleans(), min_size=6, max_size=6)), max_size=5)
)
def test_gather_copies_neighbouring_constants_of_other_rows(parts: list[tuple[bytes, list[bool]]]) -> None:
    # constants (and varints of one value) present in different rows: merged only where the rows agree
    segments = [constant(data, np.array(rows)) for data, rows in parts]
    segments += [varints(np.full(6, 300, dtype=np.int64), np.array(rows)) for _, rows in parts[:1]]
    out, ends = gather(segments) if segments else (np.zeros(0, np.uint8), np.zeros(6, np.int64))
    expected = [b"".join(data for data, rows in parts if rows[i]) for i in range(6)]
    if parts:
        expected = [e + (b"\xac\x02" if parts[0][1][i] else b"") for i, e in enumerate(expected)]
    bounds = [0, *ends.tolist()]
    assert [out[bounds[i] : bounds[i + 1]].tobytes() for i in range(6)] == expected
