"""Packed int64 varints: the protobuf runtime's route (packed_varints), on any runtime and with
either way out of it (8-byte words, or np.fromiter), decodes exactly what a plain varint
reader does, and a run it rejects (a varint longer than 10 bytes) still raises the clear
error, from decode_example and decode_examples alike."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests.example.test_codec import entry, example, ld, varint
from tfrecord_lite._example import varints as _varints
from tfrecord_lite._example.varints import decode_varint_runs, decode_varints


def plain_varints(raw: bytes) -> list[int]:
    """The reference: each varint read byte by byte, kept to 64 bits, as int64."""
    out, value, shift = [], 0, 0
    for b in raw:
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            value &= (1 << 64) - 1
            out.append(value - (1 << 64) if value >> 63 else value)
            value, shift = 0, 0
    return out


# A varint of 1 to 10 bytes; 10-byte ones may carry bits past the 64th (protobuf drops them).
one_varint = st.one_of(
    st.integers(-(2**63), 2**64 - 1).map(varint),
    st.binary(min_size=9, max_size=9).map(lambda b: bytes(x | 0x80 for x in b) + b"\x7f"),
)
runs = st.lists(one_varint, min_size=1, max_size=80).map(b"".join)


@contextlib.contextmanager
def route(words: bool) -> Iterator[None]:
    """One of the ways out of the runtime: the 8-byte words of protobuf >= 7.36 or np.fromiter
    of older runtimes (the words route works on every runtime, only slower where it boxes)."""
    saved = _varints.WORDS
    _varints.WORDS = words
    try:
        yield
    finally:
        _varints.WORDS = saved


both_routes = pytest.mark.parametrize("words", [True, False], ids=["words", "fromiter"])


@both_routes
@given(raw=runs)
def test_the_runtimes_route_decodes_what_a_plain_reader_does(words: bool, raw: bytes) -> None:
    with route(words):
        _check_run(raw)


def _check_run(raw: bytes) -> None:
    want = np.array(plain_varints(raw), dtype=np.int64)
    got = _varints.packed_varints(raw)
    assert got is not None and got.dtype == np.int64 and got.flags.writeable
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(decode_varints(raw), want)


@both_routes
@given(pieces=st.lists(st.one_of(runs, st.just(b"")), min_size=1, max_size=12))
def test_batched_runs_decode_what_a_plain_reader_does(words: bool, pieces: list[bytes]) -> None:
    data = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    with route(words):
        values, counts, bad = decode_varint_runs(data, np.array([len(p) for p in pieces]))
    assert not bad.any()
    np.testing.assert_array_equal(counts, [len(plain_varints(p)) for p in pieces])
    np.testing.assert_array_equal(values, plain_varints(b"".join(pieces)))


@given(pieces=st.lists(st.one_of(runs, st.just(b""), st.binary(max_size=14)), min_size=1, max_size=12))
def test_runs_that_end_inside_a_varint_are_bad_and_counted_as_before(pieces: list[bytes]) -> None:
    data = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    values, counts, bad = decode_varint_runs(data, np.array([len(p) for p in pieces]))
    np.testing.assert_array_equal(counts, [sum(b < 0x80 for b in p) for p in pieces])
    ends_inside = [bool(p) and p[-1] >= 0x80 for p in pieces]
    assert all(bad[ends_inside])
    if all(len(v) <= 10 for v in _varint_bytes(b"".join(pieces))):  # else a run with a long one is bad too
        np.testing.assert_array_equal(bad, ends_inside)
        if not bad.any():
            np.testing.assert_array_equal(values, plain_varints(b"".join(pieces)))


def _varint_bytes(raw: bytes) -> list[bytes]:
    out, start = [], 0
    for i, b in enumerate(raw):
        if b < 0x80:
            out.append(raw[start : i + 1])
            start = i + 1
    return out


@both_routes
@given(before=runs, after=runs)
def test_an_overlong_varint_is_rejected_by_the_runtime_and_reported(words: bool, before: bytes, after: bytes) -> None:
    with route(words):
        _check_overlong(before, after)


def _check_overlong(before: bytes, after: bytes) -> None:
    raw = before + b"\x80" * 10 + b"\x01" + after  # one varint of 11 bytes
    assert _varints.packed_varints(raw) is None
    with pytest.raises(tfr.DecodeError, match="longer than 10 bytes"):
        decode_varints(raw)
    record = example(entry(b"ids", ld(3, ld(1, raw))))
    with pytest.raises(tfr.DecodeError, match="longer than 10 bytes"):
        tfr.decode_example(record)
    good = tfr.encode_example({"ids": np.arange(len(plain_varints(before + after)) + 1)})
    spec = {"ids": tfr.VarLenFeature("int64")}
    with pytest.raises(tfr.DecodeError, match="longer than 10 bytes") as info:
        tfr.decode_examples([good, good, record, good], spec)
    if hasattr(info.value, "add_note"):
        assert "record 2 of the batch" in info.value.__notes__[0]


@both_routes
def test_dense_ids_decode_alike_in_a_record_and_in_a_batch(words: bool) -> None:
    with route(words):
        _check_dense()


def _check_dense() -> None:
    rng = np.random.default_rng(5)
    rows = rng.integers(-(2**63), 2**63 - 1, size=(40, 64), dtype=np.int64)
    rows[::3] >>= 24  # varints of every length in one batch
    records = [tfr.encode_example({"ids": row}) for row in rows]
    spec = {"ids": tfr.FixedLenFeature([64], "int64")}
    np.testing.assert_array_equal(tfr.decode_examples(records, spec)["ids"], rows)
    for record, row in zip(records, rows, strict=True):
        np.testing.assert_array_equal(tfr.decode_example(record, spec)["ids"], row)
    assert varint(-1) == b"\xff" * 9 + b"\x01"  # the helper writes protobuf's 10-byte form


@given(value=st.integers(-(2**63), 2**63 - 1))
def test_a_scalar_int64_of_any_length_decodes_as_an_int64(value: int) -> None:
    record = tfr.encode_example({"label": value})
    got = tfr.decode_example(record, {"label": tfr.FixedLenFeature([], "int64")})["label"]
    assert type(got) is np.int64 and int(got) == value


def test_two_one_byte_varints_are_two_values_not_one_scalar() -> None:
    record = example(entry(b"label", ld(3, ld(1, b"\x01\x02"))))
    with pytest.raises(tfr.FeatureError, match="expected 1 value for shape \\[\\], found 2"):
        tfr.decode_example(record, {"label": tfr.FixedLenFeature([], "int64")})
