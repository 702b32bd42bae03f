"""Protobuf varints read as int64: one (read_varint, for tags, lengths and scalars), the
packed run of one int64 list (decode_varints), and the runs of a whole batch at once
(decode_varint_runs, one_varint_each), with no Python int per value where there are many.

Strategy: a run of a few bytes is read by a Python loop. Longer runs go to the protobuf
runtime's C parser (packed_varints), which turns a packed run into an Int64List whose
values live in a C array of int64. Getting them out one Python int at a time
(np.fromiter) costs 40 ns a value — 2.5 µs of the 64 ids of a dense record. From
protobuf 7.36 on, extending one repeated field with another of the same C type copies
that array in C, so the values are copied into an Int64Words (repeated sfixed64) and
serialized: out come little-endian 8-byte words, which numpy reads in one call. Older
runtimes box every value in that copy (35-50 ns a value, measured on 4.21 to 7.35), so
they keep np.fromiter for a record's list. A batch takes the runtime's route only where
it copies in C (0.46 ms for the 65k ids of 1024 dense records, where the numpy words
take 0.75 ms); otherwise, and for one varint a run, each varint's first 8 bytes are read
as one little-endian word (an unaligned view, no gather where the spans allow), the
bytes past the varint masked off, and the 7-bit groups packed in three shift-and-mask
steps; bytes 9 and 10 of the longest varints (negative numbers) are added after. A run
the runtime rejects (a varint longer than 10 bytes) is left to numpy, which reports it.
"""

from __future__ import annotations

import re

import numpy as np
from google.protobuf import __version__ as _PROTOBUF_VERSION
from google.protobuf.message import DecodeError as _ProtobufDecodeError

from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.proto import Int64List, Int64Words

UINT64_LIMIT = 1 << 64
_U64 = np.uint64


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Decode the varint at `pos`; returns (value, next_pos)."""
    result = 0
    shift = 0
    while pos < end:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("malformed protobuf: varint longer than 10 bytes")
    raise DecodeError("malformed protobuf: truncated varint")


def decode_varints(raw: bytes) -> np.ndarray:
    """Decode a run of complete varints to int64 (two's complement): a Python loop for a few,
    the protobuf runtime's packed-field parser (C) for more, numpy for long runs and errors."""
    n = len(raw)
    if not n:
        return np.empty(0, dtype=np.int64)
    if n <= 24:
        v, pos = read_varint(raw, 0, n)
        if pos == n:  # one number, the most common list
            return np.array([v - UINT64_LIMIT if v >> 63 else v], dtype=np.int64)
        out = [v - UINT64_LIMIT if v >> 63 else v]
        while pos < n:
            v, pos = read_varint(raw, pos, n)
            out.append(v - UINT64_LIMIT if v >> 63 else v)
        return np.array(out, dtype=np.int64)
    values = packed_varints(raw)
    if values is not None:
        return values
    a = np.frombuffer(raw, dtype=np.uint8)
    high = a >= 0x80
    if not high.any():
        return a.astype(np.int64)
    ends = np.flatnonzero(~high)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    if lengths.max() > 10:
        raise DecodeError("malformed protobuf: varint longer than 10 bytes")
    pos_in = np.arange(n) - np.repeat(starts, lengths)
    parts = (a & 0x7F).astype(np.uint64) << (pos_in.astype(np.uint64) * np.uint64(7))
    return np.add.reduceat(parts, starts).view(np.int64)


_MAX_RUN = 1 << 24  # bytes of varints parsed in one message; longer runs are the caller's


def _version(version: str) -> tuple[int, int]:
    numbers = re.match(r"(\d+)\.(\d+)", version)
    return (int(numbers[1]), int(numbers[2])) if numbers else (0, 0)


def _copies_in_c() -> bool:
    """Whether this runtime's repeated-field extend copies an int64 array without boxing."""
    from google.protobuf.internal import api_implementation

    return api_implementation.Type() == "upb" and _version(_PROTOBUF_VERSION) >= (7, 36)


WORDS = _copies_in_c()  # else a packed run costs a Python int per value
# Before 4.25 the upb parser can crash the interpreter on malformed messages: only runs
# with no varint longer than 10 bytes (no ten continuation bits in a row) are given to it.
_GUARDED = _version(_PROTOBUF_VERSION) < (4, 25)
_HIGH_BIT = bytes(b >> 7 for b in range(256))  # translate table: 1 for a byte with the continuation bit
_TEN_HIGH = b"\x01" * 10


def _head(n: int) -> bytes:
    """The tag and length of an Int64List's packed field of n bytes (cached: records of one
    dataset have a few lengths)."""
    head = _HEADS.get(n)
    if head is None:
        out, rest = bytearray(b"\x0a"), n
        while rest >= 0x80:
            out.append(rest & 0x7F | 0x80)
            rest >>= 7
        out.append(rest)
        if len(_HEADS) >= 4096:
            _HEADS.clear()
        head = _HEADS[n] = bytes(out)
    return head


_HEADS: dict[int, bytes] = {}


def packed_varints(raw: bytes) -> np.ndarray | None:
    """The values of `raw`, whole varints back to back, as int64 (two's complement, as
    protobuf reads them); None where the runtime rejects them (a varint longer than 10
    bytes) or the run is too long, for the caller's own decoder to report or decode."""
    if len(raw) > _MAX_RUN or (_GUARDED and raw.translate(_HIGH_BIT).find(_TEN_HIGH) >= 0):
        return None
    try:
        values = Int64List.FromString(_head(len(raw)) + raw).value
    except _ProtobufDecodeError:
        return None
    if not WORDS:
        return np.fromiter(values, np.int64, len(values))
    words = Int64Words()
    words.value.extend(values)
    out = words.SerializeToString()
    count = len(values)
    array: np.ndarray = np.frombuffer(out, "<i8", count, len(out) - 8 * count).copy()
    return array


def decode_varint_runs(data: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode the concatenated packed-varint runs `data` (run i has lengths[i] bytes).

    Returns (values int64, count per run, bad run mask): a run is bad when a varint
    is longer than 10 bytes or the run ends inside a varint.
    """
    runs = len(lengths)
    bounds = np.zeros(runs + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    last = data < 0x80
    counts = _varints_ending(last, bounds)
    bad = np.zeros(runs, dtype=bool)
    nonempty = lengths > 0
    bad[nonempty] = ~last[bounds[1:][nonempty] - 1]
    if runs and not bad.any() and (counts == 1).all():  # one value a run (none empty)
        values = data.astype(np.int64) if runs == len(data) else varint_values(data, bounds[:-1], lengths)
        return values, counts, lengths > 10
    if int(counts.sum()) == len(data):  # every value fits in one byte
        return data.astype(np.int64), counts, bad
    parsed = packed_varints(data.tobytes()) if WORDS and last[-1] else None
    if parsed is not None:  # the runtime's parser took them all: none is longer than 10 bytes
        return parsed, counts, bad
    ends = np.flatnonzero(last)
    begins = np.empty_like(ends)
    begins[:1] = 0
    begins[1:] = ends[:-1] + 1
    size = ends - begins + 1
    long = size > 10
    if long.any():
        bad[np.searchsorted(bounds, begins[long], side="right") - 1] = True
    return varint_values(data, begins, size), counts, bad


def _varints_ending(last: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """How many varints end in each run (run i: bytes bounds[i] to bounds[i + 1]; a byte
    without the continuation bit ends one), summed into int32 where it fits: for runs of a
    few bytes, a running count differenced at the bounds (half the time of a reduceat over
    thousands of tiny runs); for longer runs, one reduceat over the non-empty runs (a
    running count writes 4 bytes for each byte read)."""
    wide = np.int32 if len(last) < 1 << 31 else np.int64
    runs = len(bounds) - 1
    if len(last) <= _SHORT_RUNS * runs:
        running = np.zeros(len(last) + 1, dtype=wide)
        np.cumsum(last, out=running[1:])
        short: np.ndarray = np.diff(running[bounds]).astype(np.int64)
        return short
    counts = np.zeros(runs, dtype=np.int64)
    nonempty = np.flatnonzero(bounds[1:] > bounds[:-1])
    counts[nonempty] = np.add.reduceat(last.view(np.uint8), bounds[nonempty], dtype=wide)
    return counts


_SHORT_RUNS = 16  # bytes a run on average, at most, for the running count


_ALL_BITS = _U64(0xFFFFFFFFFFFFFFFF)
# Packing the 7-bit groups of a word in three steps: byte pairs, then 16-bit lanes, then halves.
_PACK_STEPS = [
    (_U64(0x007F007F007F007F), _U64(0x7F007F007F007F00), _U64(1)),
    (_U64(0x00003FFF00003FFF), _U64(0x3FFF00003FFF0000), _U64(2)),
    (_U64(0x000000000FFFFFFF), _U64(0x0FFFFFFF00000000), _U64(4)),
]


def _packed(word: np.ndarray) -> np.ndarray:
    """The 7-bit groups of each word (a varint's bytes, those past it zero) packed, in place."""
    high = np.empty_like(word)
    for low_mask, high_mask, shift in _PACK_STEPS:
        np.bitwise_and(word, high_mask, out=high)
        high >>= shift
        word &= low_mask
        word |= high
    return word


# The first k bytes of a little-endian word (index k), and their continuation bits.
FIRST_BYTES = np.array([(1 << 8 * k) - 1 for k in range(9)], dtype=_U64)
CONTINUED = FIRST_BYTES & _U64(0x8080808080808080)


def one_varint_each(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """The value of each span buf[starts[i]:starts[i] + lengths[i]] when each holds exactly one
    varint of at most 8 bytes (a label, an id), read in place with no gather; else None."""
    if not len(starts) or lengths.min() < 1 or lengths.max() > 8 or int(starts.max()) + 8 > len(buf):
        return None
    words = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))
    word = words[starts]
    word &= FIRST_BYTES[lengths]
    if not np.array_equal(word & CONTINUED[lengths], CONTINUED[lengths - 1]):
        return None  # a byte before the last ends a varint, or the last does not
    return _packed(word).view(np.int64)


def varint_values(data: np.ndarray, begins: np.ndarray, size: np.ndarray, chunk: int = 1 << 15) -> np.ndarray:
    """The varints of `size` bytes at `begins` of `data` as int64: the 8 bytes at each begin
    read as one little-endian word, the bytes past the varint masked off, and the 7-bit
    groups packed (_PACK_STEPS); in chunks that stay in cache. Bytes 9 and 10 of longer
    varints (negative numbers) are added after."""
    padded = np.zeros(len(data) + 8, dtype=np.uint8)
    padded[: len(data)] = data
    words = np.ndarray((len(data),), dtype="<u8", buffer=padded, strides=(1,))
    out = np.empty(len(begins), dtype=_U64)
    cut = (64 - 8 * np.minimum(size, 8)).astype(_U64)
    for first in range(0, len(begins), chunk):
        part = slice(first, first + chunk)
        word = words[begins[part]]
        word &= _ALL_BITS >> cut[part]
        out[part] = _packed(word)
    for k in (8, 9):
        more = np.flatnonzero(size > k)
        if not more.size:
            break
        out[more] |= (padded[begins[more] + k] & 0x7F).astype(_U64) << _U64(7 * k)
    return out.view(np.int64)
