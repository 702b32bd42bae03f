"""Parsing the protobuf wire format of an Example or SequenceExample, sans-I/O: a
record's bytes in, each Feature reduced to its kind and the byte spans of its values out
(a Parsed); decode materialises the values.

Strategy: the wire format is walked directly, no message objects. A record laid out as
every serializer writes it (one Features field; entries of key then value; each Feature
one packed list) takes a straight-line fast path; any other goes through the general
parser, which keeps protobuf's semantics exactly: unknown fields and groups are skipped,
packed and unpacked encodings are both read, a repeated map key keeps its last entry, a
repeated oneof field merges, a different one replaces, and a replaced value is still
checked for the errors protobuf would raise. Records of one dataset share their
skeleton (every byte outside the values), so the last canonical layout of each record
length is kept: a record that matches it byte for byte is not parsed again. A layout holds
at most MAX_LAYOUT_VALUES bytes values a feature (a record of 10^7 empty values would make
one of gigabytes, kept in the cache). The protobuf
classes in proto serve as the independent reference implementation in the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.spec import BYTES, FLOAT, INT64
from tfrecord_lite._example.varints import decode_varints, read_varint

# A parsed Feature: (kind, [(start, end), ...]) — kind 0 when no kind is set.
# float chunks hold raw little-endian float32 bytes, int64 chunks hold whole
# varints, bytes chunks hold one value each. Everything is validated while
# parsing, so a malformed value errors even in an entry that a later one replaces.
Parsed = tuple[int, list[tuple[int, int]]]
_V = TypeVar("_V")  # what a map parser makes of each value

# How deep messages and groups may nest, counted as the protobuf runtime counts them
# (its default recursion limit): an Example is at depth 0, its Features at 1, a map
# entry at 2, the Feature in it at 3, a list at 4; a FeatureList is a Feature's peer, its
# steps at 4.
# Deeper groups are rejected as the runtime rejects them, not followed into a
# RecursionError.
MAX_DEPTH = 100
_FEATURES, _ENTRY, _FEATURE, _STEP = 1, 2, 3, 4
# bytes values of one feature a canonical layout holds at most (a span of Python ints each, kept
# while the layout is cached); a record of more is parsed by the general parser, or, in a
# batch, walked by the lockstep parser into arrays
MAX_LAYOUT_VALUES = 1 << 16


def read_varint32(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A tag or length: at most 5 bytes and 32 bits, as the protobuf runtime requires."""
    value, after = read_varint(buf, pos, end)
    if after - pos > 5 or value > 0xFFFFFFFF:
        raise DecodeError("malformed protobuf: tag or length varint longer than 32 bits")
    return value, after


def iter_fields(buf: bytes, pos: int, end: int, depth: int = 0) -> Iterator[tuple[int, int, int, int]]:
    """Yield (field_number, wire_type, start, stop) for each field of the message in buf[pos:end].

    For length-delimited fields buf[start:stop] is the payload; for varints, fixed32
    and fixed64 it is the encoded value. Groups are skipped whole, like unknown fields;
    `depth` is how deep the message lies (see MAX_DEPTH).
    """
    while pos < end:
        b = buf[pos]
        if b < 0x80:
            tag = b
            pos += 1
        else:
            tag, pos = read_varint32(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise DecodeError("malformed protobuf: field number 0")
        start, stop, after = _value_end(buf, pos, end, number, wire, depth)
        yield number, wire, start, stop
        pos = after


def _value_end(buf: bytes, pos: int, end: int, number: int, wire: int, depth: int) -> tuple[int, int, int]:
    """(start, end) of the value of a field whose tag ends at `pos`, and where the next field starts."""
    if wire == 2:
        if pos < end and buf[pos] < 0x80:
            length = buf[pos]
            pos += 1
        else:
            length, pos = read_varint32(buf, pos, end)
        stop = pos + length
        if stop > end:
            raise DecodeError(f"malformed protobuf: a field of {length} bytes runs past the end of its message")
        return pos, stop, stop
    if wire == 0:
        stop = pos
        while True:
            if stop >= end:
                raise DecodeError("malformed protobuf: truncated varint")
            if stop - pos >= 10:
                raise DecodeError("malformed protobuf: varint longer than 10 bytes")
            stop += 1
            if buf[stop - 1] < 0x80:
                return pos, stop, stop
    if wire == 5 or wire == 1:
        stop = pos + (4 if wire == 5 else 8)
        if stop > end:
            raise DecodeError("malformed protobuf: truncated fixed-width field")
        return pos, stop, stop
    if wire == 3:  # a group: skip nested fields up to the matching end-group tag
        depth += 1
        if depth > MAX_DEPTH:
            raise DecodeError(f"malformed protobuf: groups nested more than {MAX_DEPTH} deep")
        start = pos
        while pos < end:
            tag, after = read_varint32(buf, pos, end)
            if tag & 7 == 4:
                if tag >> 3 != number:
                    raise DecodeError("malformed protobuf: mismatched end-group tag")
                return start, pos, after
            if tag >> 3 == 0:
                raise DecodeError("malformed protobuf: field number 0 inside a group")
            pos = _value_end(buf, after, end, tag >> 3, tag & 7, depth)[2]
        raise DecodeError("malformed protobuf: unterminated group")
    raise DecodeError(f"malformed protobuf: invalid wire type {wire}")


def _parse_feature(buf: bytes, start: int, end: int, depth: int = _FEATURE) -> Parsed:
    """Reduce one Feature message to (kind, chunks) with oneof semantics."""
    kind = 0
    chunks: list[tuple[int, int]] = []
    for number, wire, s, e in iter_fields(buf, start, end, depth):
        if wire != 2 or not (BYTES <= number <= INT64):
            continue  # unknown field
        if number != kind:
            check_dropped(buf, (kind, chunks))
            kind = number
            chunks = []
        for vnum, vwire, vs, ve in iter_fields(buf, s, e, depth + 1):
            if vnum != 1:
                continue
            if number == BYTES:
                if vwire == 2:
                    chunks.append((vs, ve))
            elif number == FLOAT:
                if vwire == 2:
                    if (ve - vs) % 4:
                        raise DecodeError("malformed protobuf: packed float list length is not a multiple of 4")
                    chunks.append((vs, ve))
                elif vwire == 5:
                    chunks.append((vs, ve))
            elif vwire == 2:
                if vs < ve and buf[ve - 1] >= 0x80:
                    raise DecodeError("malformed protobuf: packed int64 list ends inside a varint")
                chunks.append((vs, ve))
            elif vwire == 0:
                chunks.append((vs, ve))
    return kind, chunks


def check_dropped(buf: bytes, parsed: Parsed) -> None:
    """Decode a value that a later one replaces, for its errors only: the protobuf runtime
    parses every field, replaced or not, so a malformed varint there fails the record."""
    kind, chunks = parsed
    if kind == INT64:
        decode_varints(b"".join([buf[s:e] for s, e in chunks]))


def _parse_map(
    buf: bytes,
    start: int,
    end: int,
    out: dict[str, _V],
    parse_value: Callable[[bytes, list[tuple[int, int]]], _V],
    check_dropped: Callable[[bytes, _V], None],
) -> None:
    """Parse the entries (key = field 1, value = field 2) of map field 1 in buf[start:end].

    A later entry with the same key replaces an earlier one. Like the protobuf runtime,
    an entry holding any other field is parsed (so errors surface) and then dropped; so is
    a replaced value (`check_dropped` raises the errors decoding it would).
    """
    for number, wire, s, e in iter_fields(buf, start, end, _FEATURES):
        if number != 1 or wire != 2:
            continue
        name = ""
        value: list[tuple[int, int]] = []
        keep = True
        for enum, ewire, es, ee in iter_fields(buf, s, e, _ENTRY):
            if ewire == 2 and enum == 1:
                key = buf[es:ee]
                try:  # every occurrence must be UTF-8, not only the last, which wins
                    name = key.decode("utf-8")
                except UnicodeDecodeError:
                    raise DecodeError(f"malformed protobuf: feature key {key!r} is not valid UTF-8") from None
            elif ewire == 2 and enum == 2:
                value.append((es, ee))  # a repeated value field merges
            else:
                keep = False
        parsed = parse_value(buf, value)
        if not keep:
            check_dropped(buf, parsed)
        elif name in out:
            check_dropped(buf, out[name])
        if keep:
            out[name] = parsed


def _feature_value(buf: bytes, ranges: list[tuple[int, int]]) -> Parsed:
    if len(ranges) == 1:
        return _parse_feature(buf, *ranges[0])
    kind = 0
    chunks: list[tuple[int, int]] = []
    for s, e in ranges:  # merged messages: a later kind replaces, the same kind extends
        k, c = _parse_feature(buf, s, e)
        if k and k != kind:
            check_dropped(buf, (kind, chunks))
            kind, chunks = k, c
        elif k:
            chunks.extend(c)
    return kind, chunks


def _check_dropped_steps(buf: bytes, steps: list[Parsed]) -> None:
    for step in steps:
        check_dropped(buf, step)


def _feature_list_value(buf: bytes, ranges: list[tuple[int, int]]) -> list[Parsed]:
    steps = []
    for s, e in ranges:
        for number, wire, fs, fe in iter_fields(buf, s, e, _FEATURE):
            if number == 1 and wire == 2:
                steps.append(_parse_feature(buf, fs, fe, _STEP))
    return steps


def as_bytes(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    try:
        return bytes(memoryview(data).cast("B"))
    except TypeError:
        raise TypeError(f"expected a bytes-like serialized proto, got {type(data).__name__}") from None


def _delimited_span(buf: bytes, p: int, tag: int, limit: int) -> tuple[int, int] | None:
    """(start, stop) of the payload of the length-delimited field with one-byte `tag` at p,
    when it is there and ends by `limit`; else None."""
    if p + 1 >= limit or buf[p] != tag:
        return None
    n = buf[p + 1]
    if n < 0x80:
        start = p + 2
    else:
        n, start = read_varint32(buf, p + 1, limit)
    return (start, start + n) if start + n <= limit else None


_LIST_TAGS = (BYTES << 3 | 2, FLOAT << 3 | 2, INT64 << 3 | 2)


def _canonical_features(buf: bytes, pos: int, end: int) -> dict[str, Parsed] | None:
    """Fast path: the map of a Features message laid out as every serializer writes it
    (entries of key then value; each Feature one packed list, or none), in straight-line
    code. Returns None at the first deviation; the general parser then decides."""
    features: dict[str, Parsed] = {}
    while pos < end:
        entry = _delimited_span(buf, pos, 0x0A, end)
        if entry is None:
            return None
        entry_start, pos = entry
        key = _delimited_span(buf, entry_start, 0x0A, pos)
        if key is None:
            return None
        feature = _delimited_span(buf, key[1], 0x12, pos)
        if feature is None or feature[1] != pos:  # key, then value, then nothing
            return None
        try:
            name = buf[key[0] : key[1]].decode()
        except UnicodeDecodeError:
            return None
        if name in features:  # a key given twice: the general parser checks the value it replaces
            return None
        start, stop = feature
        if start == stop:
            features[name] = (0, [])
            continue
        tag = buf[start]
        values = _delimited_span(buf, start, tag, stop) if tag in _LIST_TAGS else None
        if values is None or values[1] != stop:  # exactly one list field
            return None
        chunks: list[tuple[int, int]] = []
        p = values[0]
        while p < stop:  # the list's values: field 1, length-delimited
            value = _delimited_span(buf, p, 0x0A, stop)
            if value is None or len(chunks) == MAX_LAYOUT_VALUES:
                return None
            chunks.append(value)
            p = value[1]
        kind = tag >> 3
        if kind != BYTES and chunks:
            (s, e), *more = chunks
            if more or (kind == FLOAT and (e - s) % 4) or (kind == INT64 and e > s and buf[e - 1] >= 0x80):
                return None  # a packed list in pieces, or one the general parser must reject
        features[name] = (kind, chunks)
    return features


def _canonical_example(buf: bytes) -> dict[str, Parsed] | None:
    """The fast path for a whole Example: one Features field spanning the message."""
    end = len(buf)
    if end < 2 or buf[0] != 0x0A:
        return None
    n, start = (buf[1], 2) if buf[1] < 0x80 else read_varint32(buf, 1, end)
    return _canonical_features(buf, start, end) if start + n == end else None


def general_example(buf: bytes, check_dropped: Callable[[bytes, Parsed], None] = check_dropped) -> dict[str, Parsed]:
    """Any Example, with every protobuf rule (merged fields, unknown fields, ...). A value a
    later entry of its key replaces is checked as protobuf checks it; with a spec, decoding
    passes `leave_unchecked`: TensorFlow's parser never looks at a replaced value."""
    features: dict[str, Parsed] = {}
    for number, wire, s, e in iter_fields(buf, 0, len(buf)):
        if number == 1 and wire == 2:
            _parse_map(buf, s, e, features, _feature_value, check_dropped)
    return features


def leave_unchecked(buf: bytes, parsed: Parsed) -> None:
    """A replaced value left unread, as TensorFlow's parse_example leaves it."""


# Records of one dataset share their skeleton — every byte outside the value
# payloads — so the last canonical layout seen for each record length is kept: a
# record that matches it byte for byte parses the same (payloads are opaque to
# parsing, except that a packed int64 run must end a varint), and is not parsed.


class Layout:
    """A canonically laid out record's skeleton (its bytes outside the value payloads)
    and its parse."""

    __slots__ = ("_skeleton", "int_ends", "parsed", "pieces")

    def __init__(self, buf: bytes, parsed: dict[str, Parsed]) -> None:
        regions: list[tuple[int, int]] = []
        int_ends: list[int] = []
        for kind, chunks in parsed.values():
            regions.extend(chunks)
            if kind == INT64:
                int_ends.extend(e for s, e in chunks if e > s)
        regions.sort()
        pieces = []
        pos = 0
        for s, e in regions:
            if s > pos:
                pieces.append((pos, buf[pos:s]))
            pos = e
        if pos < len(buf):
            pieces.append((pos, buf[pos:]))
        self.pieces = tuple(pieces)
        self.parsed = parsed
        self.int_ends = tuple(int_ends)
        self._skeleton: tuple[np.ndarray, np.ndarray] | None = None

    def matches(self, buf: bytes) -> bool:
        """Whether `buf` (of the same length) has this skeleton, and so this parse."""
        startswith = buf.startswith
        for pos, piece in self.pieces:
            if not startswith(piece, pos):
                return False
        for end in self.int_ends:  # noqa: SIM110  # a loop, not all(genexpr): this runs once per record
            if buf[end - 1] >= 128:
                return False
        return True

    def skeleton(self) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, bytes) of the skeleton as arrays, for comparing many records at once."""
        if self._skeleton is None:
            offsets = [np.arange(pos, pos + len(piece)) for pos, piece in self.pieces]
            self._skeleton = (
                np.concatenate(offsets) if offsets else np.empty(0, dtype=np.int64),
                np.frombuffer(b"".join(piece for _, piece in self.pieces), dtype=np.uint8),
            )
        return self._skeleton


LAYOUTS: dict[int, Layout] = {}  # record length -> the last canonical layout of that length
_MAX_LAYOUTS = 256


def layout_of(buf: bytes) -> Layout | None:
    """The layout of a canonically laid out Example (the cached one when it matches); else None."""
    layout = LAYOUTS.get(len(buf))
    if layout is not None and layout.matches(buf):
        return layout
    return new_layout(buf)


def new_layout(buf: bytes) -> Layout | None:
    """Parse a record the cached layout did not fit; cache its layout if it is canonical.

    A malformed record has no layout: the caller's general path then reports it with its index."""
    try:
        parsed = _canonical_example(buf) if buf else {}
    except DecodeError:
        return None
    if parsed is None:
        return None
    if len(LAYOUTS) >= _MAX_LAYOUTS:
        LAYOUTS.clear()
    layout = LAYOUTS[len(buf)] = Layout(buf, parsed)
    return layout


def parse_sequence_example(data: Any) -> tuple[bytes, dict[str, Parsed], dict[str, list[Parsed]]]:
    """Parse a SequenceExample into context {key: parsed} and feature_lists {key: [parsed per step]}."""
    buf = as_bytes(data)
    context: dict[str, Parsed] = {}
    lists: dict[str, list[Parsed]] = {}
    for number, wire, s, e in iter_fields(buf, 0, len(buf)):
        if wire != 2:
            continue
        if number == 1:
            _parse_map(buf, s, e, context, _feature_value, check_dropped)
        elif number == 2:
            _parse_map(buf, s, e, lists, _feature_list_value, _check_dropped_steps)
    return buf, context, lists


def parse_example(data: Any) -> tuple[bytes, dict[str, Parsed]]:
    """A serialized Example parsed but not decoded: its bytes and {key: (kind, value spans)}
    (decode.values_of decodes one); a DecodeError where the record is not an Example."""
    buf = data if type(data) is bytes else as_bytes(data)
    layout = layout_of(buf)
    return buf, layout.parsed if layout is not None else general_example(buf)
