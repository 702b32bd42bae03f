"""Packed int64 varints decoded by the protobuf runtime's C parser, for the
single-record decoder (wire) and the batch decoders (varints).

The parser turns a packed run into an Int64List, whose values live in a C array
of int64. Getting them out one Python int at a time (np.fromiter) costs 40 ns a
value — 2.5 µs of the 64 ids of a dense record. From protobuf 7.36 on, extending
one repeated field with another of the same C type copies that array in C, so
the values are copied into an Int64Words (repeated sfixed64) and serialized:
out come little-endian 8-byte words, which numpy reads in one call. Older
runtimes box every value in that copy (35-50 ns a value, measured on 4.21 to
7.35), so they keep np.fromiter. A run the runtime rejects (a varint longer
than 10 bytes) is left to the caller's decoder, which reports it.
"""

from __future__ import annotations

import re

import numpy as np
from google.protobuf import __version__ as _PROTOBUF_VERSION
from google.protobuf.message import DecodeError as _ProtobufDecodeError

from tfrecord_lite._example.proto import Int64List, Int64Words

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
