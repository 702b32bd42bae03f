"""The Example / SequenceExample codec, sans-I/O: bytes in, dicts out, and back.

Decoding walks the protobuf wire format directly instead of building message
objects: a Feature is reduced to its kind plus the byte ranges that hold its
values, and values are materialised in one step (np.frombuffer for packed
floats, the protobuf runtime's packed parser or numpy for int64 lists). A
record whose skeleton equals the last one of its length reuses that parse. Protobuf semantics are
kept exactly: unknown fields are skipped, packed and unpacked encodings are
both read, a repeated map key keeps its last entry, a repeated oneof field
merges, a different one replaces. The protobuf classes in proto serve as the
independent reference implementation in the tests.

Encoding writes the wire format straight from Python values and numpy arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from tfrecord_lite._errors import DecodeError, FeatureError
from tfrecord_lite._example.spec import (
    BYTES,
    DTYPE_KIND,
    FLOAT,
    INT64,
    KIND_NAMES,
    FeatureSpec,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SpecDict,
    VarLenFeature,
    empty_values,
    shape_values,
)
from tfrecord_lite._example.validate import as_spec, feature_specs, missing_feature
from tfrecord_lite._example.varint_words import packed_varints

# A parsed Feature: (kind, [(start, end), ...]) — kind 0 when no kind is set.
# float chunks hold raw little-endian float32 bytes, int64 chunks hold whole
# varints, bytes chunks hold one value each. Everything is validated while
# parsing, so a malformed value errors even in an entry that a later one replaces.
Parsed = tuple[int, list[tuple[int, int]]]
_V = TypeVar("_V")  # what a map parser makes of each value
Buffer = "bytes | bytearray | memoryview"

_INT64_MIN, _UINT64_LIMIT = -(1 << 63), 1 << 64
_LE_F32, _F32 = np.dtype("<f4"), np.dtype(np.float32)  # dtype objects: numpy parses no string per call


# --------------------------------------------------------------------------- wire reading


def _read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
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


def _read_varint32(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """A tag or length: at most 5 bytes and 32 bits, as the protobuf runtime requires."""
    value, after = _read_varint(buf, pos, end)
    if after - pos > 5 or value > 0xFFFFFFFF:
        raise DecodeError("malformed protobuf: tag or length varint longer than 32 bits")
    return value, after


def _fields(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """Yield (field_number, wire_type, start, stop) for each field of the message in buf[pos:end].

    For length-delimited fields buf[start:stop] is the payload; for varints, fixed32
    and fixed64 it is the encoded value. Groups are skipped whole, like unknown fields.
    """
    while pos < end:
        b = buf[pos]
        if b < 0x80:
            tag = b
            pos += 1
        else:
            tag, pos = _read_varint32(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise DecodeError("malformed protobuf: field number 0")
        start, stop, after = _value_end(buf, pos, end, number, wire)
        yield number, wire, start, stop
        pos = after


def _value_end(buf: bytes, pos: int, end: int, number: int, wire: int) -> tuple[int, int, int]:
    """(start, end) of the value of a field whose tag ends at `pos`, and where the next field starts."""
    if wire == 2:
        if pos < end and buf[pos] < 0x80:
            length = buf[pos]
            pos += 1
        else:
            length, pos = _read_varint32(buf, pos, end)
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
        start = pos
        while pos < end:
            tag, after = _read_varint32(buf, pos, end)
            if tag & 7 == 4:
                if tag >> 3 != number:
                    raise DecodeError("malformed protobuf: mismatched end-group tag")
                return start, pos, after
            if tag >> 3 == 0:
                raise DecodeError("malformed protobuf: field number 0 inside a group")
            pos = _value_end(buf, after, end, tag >> 3, tag & 7)[2]
        raise DecodeError("malformed protobuf: unterminated group")
    raise DecodeError(f"malformed protobuf: invalid wire type {wire}")


def _parse_feature(buf: bytes, start: int, end: int) -> Parsed:
    """Reduce one Feature message to (kind, chunks) with oneof semantics."""
    kind = 0
    chunks: list[tuple[int, int]] = []
    for number, wire, s, e in _fields(buf, start, end):
        if wire != 2 or not (BYTES <= number <= INT64):
            continue  # unknown field
        if number != kind:
            _check_dropped(buf, (kind, chunks))
            kind = number
            chunks = []
        for vnum, vwire, vs, ve in _fields(buf, s, e):
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


def _check_dropped(buf: bytes, parsed: Parsed) -> None:
    """Decode a value that a later one replaces, for its errors only: the protobuf runtime
    parses every field, replaced or not, so a malformed varint there fails the record."""
    if parsed[0] == INT64:
        values_of(buf, parsed)


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
    for number, wire, s, e in _fields(buf, start, end):
        if number != 1 or wire != 2:
            continue
        name = ""
        value: list[tuple[int, int]] = []
        keep = True
        for enum, ewire, es, ee in _fields(buf, s, e):
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
            _check_dropped(buf, (kind, chunks))
            kind, chunks = k, c
        elif k:
            chunks.extend(c)
    return kind, chunks


def _check_dropped_steps(buf: bytes, steps: list[Parsed]) -> None:
    for step in steps:
        _check_dropped(buf, step)


def _feature_list_value(buf: bytes, ranges: list[tuple[int, int]]) -> list[Parsed]:
    steps = []
    for s, e in ranges:
        for number, wire, fs, fe in _fields(buf, s, e):
            if number == 1 and wire == 2:
                steps.append(_parse_feature(buf, fs, fe))
    return steps


def _as_bytes(data: Any) -> bytes:
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
        n, start = _read_varint32(buf, p + 1, limit)
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
            if value is None:
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
    n, start = (buf[1], 2) if buf[1] < 0x80 else _read_varint32(buf, 1, end)
    return _canonical_features(buf, start, end) if start + n == end else None


def _general_example(buf: bytes, check_dropped: Callable[[bytes, Parsed], None] = _check_dropped) -> dict[str, Parsed]:
    """Any Example, with every protobuf rule (merged fields, unknown fields, ...). A value a
    later entry of its key replaces is checked as protobuf checks it; with a spec, decoding
    passes `_unchecked`: TensorFlow's parser never looks at a replaced value."""
    features: dict[str, Parsed] = {}
    for number, wire, s, e in _fields(buf, 0, len(buf)):
        if number == 1 and wire == 2:
            _parse_map(buf, s, e, features, _feature_value, check_dropped)
    return features


def _unchecked(buf: bytes, parsed: Parsed) -> None:
    """A replaced value left unread, as TensorFlow's parse_example leaves it."""


# Records of one dataset share their skeleton — every byte outside the value
# payloads — so the last canonical layout seen for each record length is kept: a
# record that matches it byte for byte parses the same (payloads are opaque to
# parsing, except that a packed int64 run must end a varint), and is not parsed.


class _Layout:
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


_LAYOUTS: dict[int, _Layout] = {}  # record length -> the last canonical layout of that length
_MAX_LAYOUTS = 256


def layout_of(buf: bytes) -> _Layout | None:
    """The layout of a canonically laid out Example (the cached one when it matches); else None."""
    layout = _LAYOUTS.get(len(buf))
    if layout is not None and layout.matches(buf):
        return layout
    return _new_layout(buf)


def _new_layout(buf: bytes) -> _Layout | None:
    """Parse a record the cached layout did not fit; cache its layout if it is canonical.

    A malformed record has no layout: the caller's general path then reports it with its index."""
    try:
        parsed = _canonical_example(buf) if buf else {}
    except DecodeError:
        return None
    if parsed is None:
        return None
    if len(_LAYOUTS) >= _MAX_LAYOUTS:
        _LAYOUTS.clear()
    layout = _LAYOUTS[len(buf)] = _Layout(buf, parsed)
    return layout


def parse_sequence_example(data: Any) -> tuple[bytes, dict[str, Parsed], dict[str, list[Parsed]]]:
    """Parse a SequenceExample into context {key: parsed} and feature_lists {key: [parsed per step]}."""
    buf = _as_bytes(data)
    context: dict[str, Parsed] = {}
    lists: dict[str, list[Parsed]] = {}
    for number, wire, s, e in _fields(buf, 0, len(buf)):
        if wire != 2:
            continue
        if number == 1:
            _parse_map(buf, s, e, context, _feature_value, _check_dropped)
        elif number == 2:
            _parse_map(buf, s, e, lists, _feature_list_value, _check_dropped_steps)
    return buf, context, lists


# --------------------------------------------------------------------------- values


def decode_varints(raw: bytes) -> np.ndarray:
    """Decode a run of complete varints to int64 (two's complement): a Python loop for a few,
    the protobuf runtime's packed-field parser (C) for more, numpy for long runs and errors."""
    n = len(raw)
    if not n:
        return np.empty(0, dtype=np.int64)
    if n <= 24:
        v, pos = _read_varint(raw, 0, n)
        if pos == n:  # one number, the most common list
            return np.array([v - _UINT64_LIMIT if v >> 63 else v], dtype=np.int64)
        out = [v - _UINT64_LIMIT if v >> 63 else v]
        while pos < n:
            v, pos = _read_varint(raw, pos, n)
            out.append(v - _UINT64_LIMIT if v >> 63 else v)
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


def _join(buf: bytes, chunks: list[tuple[int, int]]) -> bytes:
    if len(chunks) == 1:
        s, e = chunks[0]
        return buf[s:e]
    return b"".join([buf[s:e] for s, e in chunks])


def parse_example(data: Any) -> tuple[bytes, dict[str, Parsed]]:
    """A serialized Example parsed but not decoded: its bytes and {key: (kind, value spans)}
    (values_of decodes one); a DecodeError where the record is not an Example."""
    buf = data if type(data) is bytes else _as_bytes(data)
    layout = layout_of(buf)
    return buf, layout.parsed if layout is not None else _general_example(buf)


def values_of(buf: bytes, parsed: Parsed, view: memoryview | None = None) -> Any:
    """Materialise a parsed Feature: int64 / float32 ndarray, list of bytes (of memoryviews
    into `view`, the record, when given), or None."""
    kind, chunks = parsed
    if kind == FLOAT:
        if len(chunks) == 1:
            s, e = chunks[0]
            return np.frombuffer(buf, "<f4", (e - s) >> 2, s).astype(np.float32)
        return np.frombuffer(_join(buf, chunks) if chunks else b"", "<f4").astype(np.float32)
    if kind == INT64:
        if len(chunks) == 1:
            s, e = chunks[0]
            return decode_varints(buf[s:e])
        return decode_varints(_join(buf, chunks)) if chunks else np.empty(0, np.int64)
    if kind == BYTES:
        src = buf if view is None else view
        return [src[s:e] for s, e in chunks]
    return None


def _kind_error(key: str, spec: FeatureSpec, kind: int) -> FeatureError:
    want = KIND_NAMES[spec.kind]
    return FeatureError(key, f"expected {want} ({spec.dtype}), found {KIND_NAMES[kind]}")


def _apply_spec(
    key: str,
    spec: object,
    buf: bytes,
    parsed: Parsed | None,
    kindless_is_missing: bool = True,
    present: Collection[str] = (),
    view: memoryview | None = None,
) -> Any:
    """Decode one Example feature per its spec, as tf.io.parse_single_example does.

    A Feature with no kind counts as missing, except in a SequenceExample's context,
    where TensorFlow takes it as present with no values (`kindless_is_missing=False`).
    `present`: the record's keys, for the error about a missing one.
    """
    kind = parsed[0] if parsed is not None else 0
    if isinstance(spec, VarLenFeature):
        if kind == 0:
            return empty_values(spec.dtype)
        if kind != spec.kind:
            raise _kind_error(key, spec, kind)
        return values_of(buf, parsed, view)  # type: ignore[arg-type]
    if isinstance(spec, FixedLenFeature):
        if kind == 0 and parsed is not None and not kindless_is_missing:
            return _fixed(key, spec, empty_values(spec.dtype))
        if kind == 0:
            if spec.default_value is None:
                raise missing_feature(key, present)
            return _copy(spec.default_value)
        return _fixed(key, spec, values_of(buf, _checked(key, spec, parsed), view))  # type: ignore[arg-type]
    if isinstance(spec, FixedLenSequenceFeature):
        if not spec.allow_missing:
            raise FeatureError(key, "a FixedLenSequenceFeature in an Example needs allow_missing=True")
        if kind == 0:
            return _stack(spec, empty_values(spec.dtype), 0)
        values = values_of(buf, _checked(key, spec, parsed), view)  # type: ignore[arg-type]
        inner = math.prod(spec.shape)
        if (inner == 0 and len(values)) or (inner and len(values) % inner):
            raise FeatureError(key, f"found {len(values)} values, not a multiple of {inner} (shape {list(spec.shape)})")
        return _stack(spec, values, len(values) // inner if inner else 0)
    return _apply_spec(key, as_spec(key, spec), buf, parsed, kindless_is_missing, present, view)  # or a FeatureError


def _checked(key: str, spec: FeatureSpec, parsed: Parsed) -> Parsed:
    if parsed[0] != spec.kind:
        raise _kind_error(key, spec, parsed[0])
    return parsed


def _check_count(key: str, spec: Any, found: int) -> None:
    size = math.prod(spec.shape)
    if found != size:
        raise FeatureError(
            key, f"expected {size} value{'s' if size != 1 else ''} for shape {list(spec.shape)}, found {found}"
        )


def _fixed(key: str, spec: Any, values: Any) -> Any:
    shape = spec.shape
    if len(values) != (math.prod(shape) if shape else 1):
        _check_count(key, spec, len(values))
    if not shape:
        return values[0]
    if len(shape) == 1 and spec.dtype != "bytes":
        return values  # already 1-D of that length
    return shape_values(values, spec.dtype, shape)


def _stack(spec: FixedLenSequenceFeature, flat: Any, steps: int) -> Any:
    """Shape flat values (steps * prod(shape) of them) as [steps, *shape]."""
    shape = (steps,) + spec.shape
    if spec.dtype == "bytes":
        arr = np.empty(len(flat), dtype=object)
        arr[:] = flat
        return arr.reshape(shape)
    return np.asarray(flat, dtype=np.dtype(spec.dtype)).reshape(shape)


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def decode_example(data: Any, features: SpecDict | None = None, *, copy: bool = True) -> dict[str, Any]:
    """Decode a serialized tf.train.Example.

    Without `features`: every feature, int64 → int64 ndarray, float → float32 ndarray,
    bytes → list of bytes, a Feature with no kind → None. With a spec dict: only those
    keys, shaped and checked like tf.io.parse_single_example.

    `copy=False` gives bytes values as read-only memoryviews into the record instead of
    copies (no copy of a large image or blob). They stay valid as long as they exist: each
    keeps the whole record alive (a bytes record; any other buffer is copied to bytes first),
    so keep `bytes(v)` of the few values you hold on to across many records.
    """
    buf = data if type(data) is bytes else _as_bytes(data)
    view = None if copy else memoryview(buf)
    if features is not None and type(features) is not dict:
        features = feature_specs(features)
    layout = _LAYOUTS.get(len(buf))  # layout_of, inlined: this is the hot path
    if layout is None or not layout.matches(buf):
        layout = _new_layout(buf)
    if layout is not None:
        parsed = layout.parsed  # shared: only read
    else:
        parsed = _general_example(buf, _check_dropped if features is None else _unchecked)
    if features is None:
        return {key: values_of(buf, p, view) for key, p in parsed.items()}
    out = {}
    get = parsed.get
    for key, spec in features.items():
        p = get(key)
        if p is None or type(spec) is not FixedLenFeature or p[0] != DTYPE_KIND[spec.dtype]:
            out[key] = _apply_spec(key, spec, buf, p, present=parsed, view=view)
            continue
        # The common case, without the detours: a FixedLenFeature of the right kind, one run
        # of values; the four commonest shapes are read directly (anything else, errors
        # included, goes through values_of and _fixed).
        kind, chunks = p
        shape = spec.shape
        if len(chunks) == 1 and len(shape) <= 1:
            s, e = chunks[0]
            if kind == INT64 and not shape:  # a scalar int64, such as a label (its last byte ends it)
                if e - s == 1:
                    out[key] = np.int64(buf[s])
                    continue
                if e - s == 2 and buf[s] >= 0x80:
                    out[key] = np.int64(buf[s] & 0x7F | buf[s + 1] << 7)
                    continue
                v, after = _read_varint(buf, s, e)
                if after == e:
                    out[key] = np.int64(v - _UINT64_LIMIT if v >> 63 else v)
                    continue
            elif kind == FLOAT and shape and e - s == 4 * shape[0]:  # a vector of floats
                out[key] = np.frombuffer(buf, _LE_F32, shape[0], s).astype(_F32)
                continue
            elif kind == INT64 and shape:  # a vector of int64s, such as ids
                values = decode_varints(buf[s:e])
                if len(values) == shape[0]:
                    out[key] = values
                    continue
            elif kind == BYTES and not shape:  # one string
                out[key] = buf[s:e] if view is None else view[s:e]
                continue
        out[key] = _fixed(key, spec, values_of(buf, p, view))
    return out


def _apply_sequence_spec(
    key: str, spec: FeatureSpec, buf: bytes, steps: list[Parsed] | None, present: Collection[str] = ()
) -> Any:
    """Decode one feature_list per its spec, as tf.io.parse_single_sequence_example does."""
    if isinstance(spec, VarLenFeature):
        out = []
        for i, step in enumerate(steps or ()):
            if step[0] not in (0, spec.kind):
                raise FeatureError(key, f"step {i}: " + _kind_error(key, spec, step[0]).detail)
            out.append(values_of(buf, step) if step[0] else empty_values(spec.dtype))
        return out
    if isinstance(spec, FixedLenSequenceFeature):
        if spec.default_value is not None:
            raise FeatureError(
                key, "a FixedLenSequenceFeature in sequence_features takes no default_value (as in TensorFlow)"
            )
        if steps is None:
            if not spec.allow_missing:
                raise missing_feature(key, present, "feature_list")
            return _stack(spec, empty_values(spec.dtype), 0)
        per_step = []
        for i, step in enumerate(steps):
            try:
                values = values_of(buf, _checked(key, spec, step))
                _check_count(key, spec, len(values))
            except FeatureError as err:
                raise FeatureError(key, f"step {i}: {err.detail}") from None
            per_step.append(values)
        if spec.dtype == "bytes":
            flat: Any = [v for values in per_step for v in values]
        else:
            flat = np.concatenate(per_step) if per_step else empty_values(spec.dtype)
        return _stack(spec, flat, len(per_step))
    raise FeatureError(key, f"sequence_features take FixedLenSequenceFeature or VarLenFeature, not {spec!r}")


def decode_sequence_example(
    data: Any,
    context_features: SpecDict | None = None,
    sequence_features: SpecDict | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Decode a serialized tf.train.SequenceExample into (context, feature_lists).

    Without specs: context as in decode_example, feature_lists as {key: [value per step]}.
    With specs: like tf.io.parse_single_sequence_example (FixedLenSequenceFeature →
    [steps, *shape]; VarLenFeature → a list with one 1-D value array per step).
    """
    buf, context, lists = parse_sequence_example(data)
    if context_features is None:
        ctx = {key: values_of(buf, p) for key, p in context.items()}
    else:
        ctx = {}
        for key, spec in feature_specs(context_features, "context_features").items():  # type: ignore[union-attr]
            if isinstance(spec, FixedLenSequenceFeature):
                raise FeatureError(
                    key, "context_features take FixedLenFeature or VarLenFeature, not FixedLenSequenceFeature"
                )
            ctx[key] = _apply_spec(key, spec, buf, context.get(key), kindless_is_missing=False, present=context)
    if sequence_features is None:
        seq = {key: [values_of(buf, step) for step in steps] for key, steps in lists.items()}
    else:
        seq = {
            key: _apply_sequence_spec(key, spec, buf, lists.get(key), lists)
            for key, spec in feature_specs(sequence_features, "sequence_features").items()  # type: ignore[union-attr]
        }
    return ctx, seq


# --------------------------------------------------------------------------- encoding


def _varint(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def encode_varints(values: np.ndarray) -> bytes:
    """Encode int64 values as concatenated varints (negative → 10-byte two's complement)."""
    u = np.ascontiguousarray(values, dtype=np.int64).view(np.uint64)
    if u.size <= 16:
        return b"".join([_varint(v) for v in u.tolist()])
    if not (u >= 0x80).any():
        return u.astype(np.uint8).tobytes()
    nbytes = np.ones(u.shape, dtype=np.int64)
    for k in range(1, 10):
        nbytes += u >= (np.uint64(1) << np.uint64(7 * k))
    offsets = np.zeros(u.shape, dtype=np.int64)
    np.cumsum(nbytes[:-1], out=offsets[1:])
    out = np.empty(int(nbytes.sum()), dtype=np.uint8)
    for j in range(10):
        live = nbytes > j
        if not live.any():
            break
        group = ((u[live] >> np.uint64(7 * j)) & np.uint64(0x7F)).astype(np.uint8)
        group |= np.where(nbytes[live] - 1 > j, np.uint8(0x80), np.uint8(0))
        out[offsets[live] + j] = group
    return out.tobytes()


_TEXT_TYPES = (bytes, str, bytearray, memoryview, np.bytes_, np.str_)
_INT_TYPES = (bool, int, np.integer, np.bool_)  # bool is an int subclass; np.bool_ is not
_INT64_RANGE = "[-2**63, 2**63 - 1]"


def _to_bytes(key: str, v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytearray, memoryview, np.bytes_)):
        return bytes(v)
    raise FeatureError(key, f"cannot mix {type(v).__name__} into a bytes_list")


def _short_int(value: int) -> str:
    text = str(value)
    return text if len(text) <= 30 else f"{text[:12]}...{text[-6:]} ({len(text.lstrip('-'))} digits)"


def _out_of_range(key: str, value: Any) -> FeatureError:
    return FeatureError(
        key,
        f"integer {_short_int(int(value))} is outside the int64 range {_INT64_RANGE}: an int64_list cannot hold it "
        "(pass floats or bytes explicitly if that is what you mean)",
    )


def _int64_array(key: str, arr: np.ndarray) -> np.ndarray:
    """Check an integer or bool array against the int64 range and convert it."""
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise _out_of_range(key, arr.max())
    return arr.astype(np.int64, copy=False)


def _python_ints(key: str, items: Sequence[Any]) -> np.ndarray:
    """Python / numpy integers, some of them too large for a numpy integer dtype."""
    for v in items:
        if not _INT64_MIN <= int(v) < (1 << 63):
            raise _out_of_range(key, int(v))
    return np.array([int(v) for v in items], dtype=np.int64)


def _float_array(arr: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # beyond float32 → ±inf, as protobuf's FloatList does
        return arr.astype("<f4", copy=False)


def _kind_and_payload(key: str, value: Any) -> tuple[int, bytes]:
    """The Feature kind and the serialized list message for one value."""
    if isinstance(value, _TEXT_TYPES):
        return BYTES, _ld(1, _to_bytes(key, value))
    if isinstance(value, _INT_TYPES):
        v = int(value)
        if not _INT64_MIN <= v < (1 << 63):
            raise _out_of_range(key, v)
        return INT64, _ld(1, _varint(v & 0xFFFFFFFFFFFFFFFF))
    if isinstance(value, (float, np.floating)):
        return FLOAT, _packed(_float_array(np.asarray([value], dtype=np.float64)).tobytes())
    if isinstance(value, np.ndarray):
        return _array_payload(key, value.ravel())
    if isinstance(value, (list, tuple)):
        return _list_payload(key, value)
    raise FeatureError(
        key,
        f"cannot encode a value of type {type(value).__name__}: use int / bool / float / bytes / str, "
        "a list of them, a numpy array, None or a tfr.Feature",
    )


def _list_payload(key: str, items: Sequence[Any]) -> tuple[int, bytes]:
    """A Python list: numpy infers the kind in C; the rare inferences that lose kinds
    (ints beyond int64 promoted to float64 or object) are caught and decided here."""
    if not items:
        raise FeatureError(
            key,
            "cannot tell the kind of an empty list: pass a typed numpy array "
            "(np.array([], np.int64) / np.float32 / dtype=bytes) or a Feature message",
        )
    try:
        arr = np.asarray(items)
    except (ValueError, TypeError, OverflowError):
        arr = np.empty(len(items), dtype=object)  # ragged or odd elements: decide element by element
        arr[:] = [*items]
    if arr.ndim != 1:
        raise FeatureError(key, f"nested lists cannot be encoded (found {arr.ndim} dimensions): flatten them first")
    k = arr.dtype.kind
    if k == "f" and not _is_float(items[0]) and np.abs(arr).max() >= 2.0**63 and not any(map(_is_float, items)):
        # only ints (and bools): numpy promoted int64 with uint64 to float64
        return _sequence_payload(key, items)
    if k in "SU":
        if not all(isinstance(v, _TEXT_TYPES) for v in items):
            return _sequence_payload(key, items)  # numpy made strings of numbers: a mixed list
        return BYTES, b"".join([_ld(1, _to_bytes(key, v)) for v in items])
    if k == "O":
        return _sequence_payload(key, items)
    return _array_payload(key, arr)


def _is_float(v: Any) -> bool:
    return isinstance(v, (float, np.floating))


def _as_float(key: str, v: Any) -> float:
    try:
        return float(v)
    except OverflowError:
        raise FeatureError(key, f"integer {_short_int(int(v))} in a list of floats is too large for a float") from None


def _array_payload(key: str, arr: np.ndarray) -> tuple[int, bytes]:
    k = arr.dtype.kind
    if k in "iub":
        return INT64, _packed_int64(_int64_array(key, arr))
    if k == "f":
        return FLOAT, _packed(_float_array(arr).tobytes())
    if k in "SU":
        return BYTES, b"".join([_ld(1, _to_bytes(key, v)) for v in arr.tolist()])
    if k == "O":
        return _sequence_payload(key, arr.tolist())
    raise FeatureError(
        key, f"cannot encode a numpy array of dtype {arr.dtype}: use an integer, bool, floating, bytes or str dtype"
    )


def _sequence_payload(key: str, items: Sequence[Any]) -> tuple[int, bytes]:
    """Decide the kind element by element (object arrays, lists numpy could not type):
    bools / ints → int64; numbers with a float among them → float32; bytes / str → bytes."""
    if not items:
        return BYTES, b""  # an empty object array: as np.array([], dtype=bytes)
    if all(isinstance(v, _INT_TYPES) for v in items):
        return INT64, _packed_int64(_python_ints(key, items))
    if all(isinstance(v, _INT_TYPES) or _is_float(v) for v in items):
        floats = np.array([_as_float(key, v) for v in items], dtype=np.float64)
        return FLOAT, _packed(_float_array(floats).tobytes())
    if all(isinstance(v, _TEXT_TYPES) for v in items):
        return BYTES, b"".join([_ld(1, _to_bytes(key, v)) for v in items])
    if any(isinstance(v, (list, tuple, np.ndarray)) for v in items):
        raise FeatureError(key, "nested or ragged lists cannot be encoded: flatten them first")
    kinds = ", ".join(sorted({type(v).__name__ for v in items}))
    raise FeatureError(key, f"cannot encode a mixed list of {kinds}: a feature holds ints, floats or bytes")


def _packed(payload: bytes) -> bytes:
    return _ld(1, payload) if payload else b""


def _packed_int64(arr: np.ndarray) -> bytes:
    return _packed(encode_varints(arr))


def encode_feature(key: str, value: Any) -> bytes:
    """Serialize one value as a Feature message (None → a Feature with no kind)."""
    if value is None:
        return b""
    if hasattr(value, "SerializeToString") and getattr(getattr(value, "DESCRIPTOR", None), "name", "") == "Feature":
        serialized: bytes = value.SerializeToString()
        return serialized
    kind, payload = _kind_and_payload(key, value)
    return _ld(kind, payload)


def _encode_map(entries: Mapping[str, Any], encode_value: Callable[[str, Any], bytes]) -> bytes:
    out = []
    for key, value in entries.items():
        if not isinstance(key, str):
            raise FeatureError(str(key), f"feature keys must be str, not {type(key).__name__}")
        entry = _ld(1, key.encode("utf-8")) + _ld(2, encode_value(key, value))
        out.append(_ld(1, entry))
    return b"".join(out)


def _encode_feature_list(key: str, steps: Any) -> bytes:
    if isinstance(steps, (bytes, str)) or not isinstance(steps, (list, tuple, np.ndarray)):
        raise FeatureError(key, "a feature_list value must be a list with one value per step")
    return b"".join([_ld(1, encode_feature(key, step)) for step in steps])


def encode_example(features: Mapping[str, Any]) -> bytes:
    """Serialize a dict of feature values as a tf.train.Example.

    Values: int / bool / float / bytes / str, lists of one of them, numpy arrays (any
    shape, flattened), None (a Feature with no kind) or a Feature message.
    """
    return _ld(1, _encode_map(features, encode_feature))


def encode_sequence_example(context: Mapping[str, Any], feature_lists: Mapping[str, Sequence[Any]]) -> bytes:
    """Serialize a tf.train.SequenceExample: context features plus {key: [value per step]}."""
    return _ld(1, _encode_map(context, encode_feature)) + _ld(2, _encode_map(feature_lists, _encode_feature_list))
