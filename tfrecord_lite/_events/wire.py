"""The wire format of TensorBoard's `Event` and `Summary` protos walked directly, sans-I/O: one
record's bytes in, its step, wall time and the (tag, kind, value) of each summary value out.

Strategy: no message objects. An Event's fields are found by `iter_fields` (the protobuf rules of
_example/wire.py: unknown fields and groups skipped, every length checked against the bytes there
before anything is sliced); only the summary field is walked further. Each summary value is first
reduced to the spans of its fields; its tag is matched against the caller's filter (the answer kept
per tag bytes), and a value whose tag or kind is not wanted is dropped with its payload never
decoded. The kind comes from the field that holds the value (`simple_value`, `histo`, `image`,
`audio`) or, for a tensor, from the plugin named in its metadata, which tf.summary writes with a
tag's first value only: `Plugins` remembers it per tag for the run. Histograms of both forms become
TensorBoard's [k, 3] array of (left edge, right edge, count), v1 ones converted as TensorBoard's
data_compat converts them; the hparams plugin's session start and end become dicts.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.varints import read_varint
from tfrecord_lite._example.wire import iter_fields
from tfrecord_lite._tensor.codec import dtype_of_number, parse_tensor
from tfrecord_lite._tensor.wire import locate

KINDS = ("scalar", "tensor", "histogram", "image", "audio", "text", "hparams")
# a tensor's kind, by the plugin that wrote it
_PLUGIN_KINDS = {
    "scalars": "scalar",
    "histograms": "histogram",
    "images": "image",
    "audio": "audio",
    "text": "text",
    "hparams": "hparams",
}
# the most buckets a histogram may claim: a [k, 3] float64 array of this many is 24 MiB
MAX_BUCKETS = 1 << 20

_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")

Plugins = dict[bytes, str]  # a run's tag -> the plugin its metadata named
Field = tuple[int, int, int, int]  # (number, wire type, start, stop), as iter_fields gives it


class EventValue(NamedTuple):
    """One value of an event: its tag, its kind (one of KINDS) and the value itself."""

    tag: str
    kind: str
    value: Any


class DecodedEvent(NamedTuple):
    step: int
    wall_time: float
    values: list[EventValue]
    file_version: str | None


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def decode_event(
    buf: bytes,
    plugins: Plugins,
    wanted_tag: Callable[[bytes], bool] | None = None,
    kinds: frozenset[str] | None = None,
) -> DecodedEvent:
    """An Event's step, wall time and the wanted values of its summary; DecodeError if malformed.

    `plugins` is updated with the plugin each value's metadata names; `wanted_tag` says whether a
    tag (its bytes) is wanted, `kinds` which kinds are."""
    fast = _one_scalar(buf, plugins, wanted_tag, kinds)
    if fast is not None:
        return fast
    step, wall_time, file_version = 0, 0.0, None
    values: list[EventValue] = []
    for number, wire, start, stop in iter_fields(buf, 0, len(buf)):
        if number == 1 and wire == 1:
            wall_time = _DOUBLE.unpack_from(buf, start)[0]
        elif number == 2 and wire == 0:
            step = _signed64(read_varint(buf, start, stop)[0])
        elif number == 3 and wire == 2:
            file_version = _text(buf[start:stop], "file_version")
        elif number == 5 and wire == 2:
            _summary(buf, start, stop, plugins, wanted_tag, kinds, values)
    return DecodedEvent(step, wall_time, values, file_version)


# A scalar tensor as tf.summary writes it: dtype, an empty shape, then tensor_content of 4 or 8 bytes
_SCALAR_TENSORS = {b"\x08\x01\x12\x00\x22\x04": _FLOAT, b"\x08\x02\x12\x00\x22\x08": _DOUBLE}
SCALARS_METADATA = _SCALARS_METADATA = b"\x4a\x0b\x0a\x09\x0a\x07scalars"
# what follows a float32 scalar at the end of an event: nothing after a simple_value or a tensor,
# or the scalars plugin's metadata
SIMPLE, TENSOR, TAGGED = 0, 1, 2
_EMPTY: list[EventValue] = []


def _one_scalar(
    buf: bytes, plugins: Plugins, wanted_tag: Callable[[bytes], bool] | None, kinds: frozenset[str] | None
) -> DecodedEvent | None:
    """The fast path: an event of one value laid out as TensorFlow and PyTorch write it (wall time,
    step, a summary of one value: its tag, then a `simple_value` or a scalar tensor and the scalars
    plugin's metadata). A value whose tag is not wanted is dropped whatever it holds, without looking
    at it. None for any other layout: the general walk decides those."""
    found = one_scalar(buf, plugins, wanted_tag)
    if found is None:
        return None
    step, wall_time, tag, value, _, _ = found
    if value is None or (kinds is not None and "scalar" not in kinds):
        return DecodedEvent(step, wall_time, _EMPTY, None)
    return DecodedEvent(step, wall_time, [EventValue(_text(tag, "tag"), "scalar", value)], None)


def one_scalar(
    buf: bytes, plugins: Plugins, wanted_tag: Callable[[bytes], bool] | None
) -> tuple[int, float, bytes, float | None, int, int] | None:
    """An event of one scalar in the layout TensorFlow and PyTorch write, as (step, wall time, tag
    bytes, value, layout, form), the value None when the tag is not wanted; None for any other
    layout. When the value is a float32 `layout` is where the bytes after the step start and
    `form` says what follows the value: SIMPLE (nothing, a `simple_value`), TENSOR (nothing, a
    tensor the run's plugin memory calls a scalar) or TAGGED (the scalars plugin's metadata);
    every event whose bytes from `layout` up to the value are the same, and which ends as this
    one, has this tag and its value there. `layout` is -1 otherwise. The lean scan under the
    tables: no object made but the tuple."""
    end = len(buf)
    if end < 14 or buf[0] != 0x09:
        return None
    wall_time = _DOUBLE.unpack_from(buf, 1)[0]
    pos, step = 9, 0
    if buf[pos] == 0x10:
        if buf[pos + 1] < 0x80:
            step, pos = buf[pos + 1], pos + 2
        elif buf[pos + 2] < 0x80:
            step, pos = (buf[pos + 1] & 0x7F) | buf[pos + 2] << 7, pos + 3
        elif buf[pos + 3] < 0x80:
            step, pos = (buf[pos + 1] & 0x7F) | (buf[pos + 2] & 0x7F) << 7 | buf[pos + 3] << 14, pos + 4
        else:
            raw, pos = read_varint(buf, pos + 1, end)
            step = _signed64(raw)
    layout = pos
    # the summary (field 5), its one value (field 1) and the value's tag (field 1): the first two
    # run to the end of the event, lengths read inline when they take one byte
    if pos + 2 > end or buf[pos] != 0x2A:
        return None
    size = buf[pos + 1]
    size, pos = (size, pos + 2) if size < 0x80 else read_varint(buf, pos + 1, end)
    if pos + size != end or pos + 2 > end or buf[pos] != 0x0A:
        return None
    size = buf[pos + 1]
    size, pos = (size, pos + 2) if size < 0x80 else read_varint(buf, pos + 1, end)
    if pos + size != end or pos + 2 > end or buf[pos] != 0x0A:
        return None
    size = buf[pos + 1]
    size, pos = (size, pos + 2) if size < 0x80 else read_varint(buf, pos + 1, end)
    tag = buf[pos : pos + size]
    pos += size
    if pos >= end:
        return None
    if wanted_tag is not None and not wanted_tag(tag):
        return step, wall_time, tag, None, -1, 0
    form_found = SIMPLE
    if buf[pos] == 0x15 and pos + 5 == end:
        value = _FLOAT.unpack_from(buf, pos + 1)[0]
    elif buf[pos] == 0x42 and pos + 2 < end:
        form = _SCALAR_TENSORS.get(buf[pos + 2 : pos + 8])
        if form is None or buf[pos + 1] != 6 + form.size:
            return None
        value = form.unpack_from(buf, pos + 8)[0]
        pos += 8 + form.size
        if buf[pos:] == _SCALARS_METADATA:
            plugins[tag] = "scalars"
            form_found = TAGGED
        elif pos != end or plugins.get(tag) != "scalars":
            return None
        else:
            form_found = TENSOR
        if form is _DOUBLE:
            layout = -1
    else:
        return None
    return step, wall_time, tag, float(value), layout, form_found


def unwanted_tensor(
    buf: bytes,
    plugins: Plugins,
    kinds: frozenset[str],
    known: dict[bytes, str],
) -> bool:
    """True when an event is one tensor value followed by its metadata (as tf.summary writes each
    histogram, image or text) whose plugin makes it a kind not in `kinds`: decode_event would give
    it no value, and the run's plugin memory is updated as decode_event updates it. False for any
    other event, or one that does not walk cleanly (decode_event then decides). `known` keeps the
    plugin named by each metadata seen. The tag filter is the caller's, applied before."""
    end = len(buf)
    if end < 14 or buf[0] != 0x09:
        return False
    try:
        pos = read_varint(buf, 10, end)[1] if buf[9] == 0x10 else 9
        for field_tag in (0x2A, 0x0A):  # the summary, then its one value: each runs to the end of the event
            if pos + 2 > end or buf[pos] != field_tag:
                return False
            size, pos = read_varint(buf, pos + 1, end)
            if pos + size != end:
                return False
        if pos + 2 > end or buf[pos] != 0x0A:
            return False
        size, pos = read_varint(buf, pos + 1, end)
        tag = buf[pos : pos + size]
        pos += size
        if pos + 2 > end or buf[pos] != 0x42:
            return False
        size, pos = read_varint(buf, pos + 1, end)
        pos += size
        if pos + 2 > end or buf[pos] != 0x4A:
            return False
        size, pos = read_varint(buf, pos + 1, end)
        if pos + size != end:
            return False
        metadata = buf[pos:end]
        plugin = known.get(metadata)
        if plugin is None:
            if len(known) >= 4096:
                known.clear()
            plugin = known[metadata] = _plugin_name(buf, pos, end)
    except DecodeError:
        return False
    if not plugin or _PLUGIN_KINDS.get(plugin, "tensor") in kinds:
        return False
    plugins[tag] = plugin
    return True


def _summary(
    buf: bytes,
    pos: int,
    end: int,
    plugins: Plugins,
    wanted_tag: Callable[[bytes], bool] | None,
    kinds: frozenset[str] | None,
    out: list[EventValue],
) -> None:
    for number, wire, start, stop in iter_fields(buf, pos, end, 1):
        if number != 1 or wire != 2:
            continue
        fields: dict[int, Field] = {}
        for found in iter_fields(buf, start, stop, 2):
            fields[found[0]] = found  # a repeated singular field keeps its last occurrence
        tag_field = fields.get(1)
        tag = buf[tag_field[2] : tag_field[3]] if tag_field is not None and tag_field[1] == 2 else b""
        if wanted_tag is not None and not wanted_tag(tag):
            continue
        meta = fields.get(9)
        if meta is not None and meta[1] == 2:
            plugin = _plugin_name(buf, meta[2], meta[3])
            if plugin:
                plugins[tag] = plugin
        kind, field = _kind(fields, plugins.get(tag, ""))
        if kind is None or (kinds is not None and kind not in kinds):
            continue
        name = _text(tag, "tag")
        for value in _values(buf, kind, field, meta):
            out.append(EventValue(name, kind, value))


def _kind(fields: dict[int, Field], plugin: str) -> tuple[str | None, Field | None]:
    """The kind of a summary value and the field that holds it."""
    if 2 in fields and fields[2][1] == 5:
        return "scalar", fields[2]
    for number, kind in ((5, "histogram"), (4, "image"), (6, "audio")):
        if number in fields and fields[number][1] == 2:
            return kind, fields[number]
    if 8 in fields and fields[8][1] == 2:
        return _PLUGIN_KINDS.get(plugin, "tensor"), fields[8]
    if plugin == "hparams":
        return "hparams", None
    return None, None


def _values(buf: bytes, kind: str, field: Field | None, meta: Field | None) -> list[Any]:
    if kind == "hparams":
        return _hparams(buf, meta)
    assert field is not None
    number, wire, start, stop = field
    if wire == 5:
        return [float(_FLOAT.unpack_from(buf, start)[0])]
    if number == 5:
        return [_v1_histogram(buf, start, stop)]
    if number in (4, 6):  # Summary.Image / Summary.Audio: the encoded bytes are their field 4
        return [_bytes_field(buf, start, stop, 4)]
    array = tensor_array(buf[start:stop])
    if kind == "scalar":
        if array.size != 1:
            raise DecodeError(f"a scalar summary holds a tensor of shape {list(array.shape)}, not one value")
        return [float(array.reshape(()))]
    if kind == "histogram":
        return [_v2_histogram(array)]
    if kind == "image":
        return [bytes(x) for x in array.reshape(-1)[2:]]  # width, height, then the encoded images
    if kind == "audio":
        return [bytes(x) for x in (array[:, 0] if array.ndim == 2 else array.reshape(-1))]
    if kind == "text":
        return [_texts(array)]
    return [array]


def tensor_array(buf: bytes) -> np.ndarray:
    """A TensorProto's array, whatever its dtype; DecodeError for a dtype numpy has no type for."""
    number = locate(buf).dtype
    name = dtype_of_number(number)
    if name is None:
        raise DecodeError(f"a summary tensor of DataType {number}, which has no numpy type")
    return parse_tensor(buf, name)


def _texts(array: np.ndarray) -> Any:
    if array.dtype != object:
        return array
    if array.ndim == 0:
        return _text(array.item(), "text value")
    return np.vectorize(lambda b: _text(b, "text value"), otypes=[object])(array)


def _text(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DecodeError(
            f"the event's {what} is not UTF-8 ({err.reason} at byte {err.start}: {data[:40]!r})"
        ) from None


def _plugin_name(buf: bytes, pos: int, end: int) -> str:
    for number, wire, start, stop in iter_fields(buf, pos, end, 3):
        if number == 1 and wire == 2:  # plugin_data
            for n, w, s, e in iter_fields(buf, start, stop, 4):
                if n == 1 and w == 2:
                    return _text(buf[s:e], "plugin name")
    return ""


def _plugin_content(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    span = (0, 0)
    for number, wire, start, stop in iter_fields(buf, pos, end, 3):
        if number == 1 and wire == 2:
            for n, w, s, e in iter_fields(buf, start, stop, 4):
                if n == 2 and w == 2:
                    span = (s, e)
    return span


def _bytes_field(buf: bytes, pos: int, end: int, wanted: int) -> bytes:
    data = b""
    for number, wire, start, stop in iter_fields(buf, pos, end, 3):
        if number == wanted and wire == 2:
            data = buf[start:stop]
    return data


def _packed_doubles(buf: bytes, start: int, stop: int, parts: list[np.ndarray]) -> None:
    if (stop - start) % 8:
        raise DecodeError("a histogram's packed doubles are not a whole number of 8 bytes")
    parts.append(np.frombuffer(buf, "<f8", (stop - start) // 8, start))


def _v1_histogram(buf: bytes, pos: int, end: int) -> np.ndarray:
    """A HistogramProto as TensorBoard's data_compat makes it a [k, 3] array: empty buckets at the
    ends dropped, the outer edges the min and the max."""
    lo = hi = 0.0
    limits: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for number, wire, start, stop in iter_fields(buf, pos, end, 3):
        if number == 1 and wire == 1:
            lo = _DOUBLE.unpack_from(buf, start)[0]
        elif number == 2 and wire == 1:
            hi = _DOUBLE.unpack_from(buf, start)[0]
        elif number in (6, 7) and wire == 2:
            _packed_doubles(buf, start, stop, limits if number == 6 else counts)
        elif number in (6, 7) and wire == 1:
            (limits if number == 6 else counts).append(np.frombuffer(buf, "<f8", 1, start))
    limit = np.concatenate(limits) if limits else np.zeros(0)
    count = np.concatenate(counts) if counts else np.zeros(0)
    if len(count) > MAX_BUCKETS:
        raise DecodeError(f"a histogram of {len(count):,} buckets, more than the {MAX_BUCKETS:,} read")
    nonzero = np.flatnonzero(count > 0)
    if not len(nonzero):
        return np.zeros((0, 3))
    first, last = int(nonzero[0]), int(nonzero[-1])
    inner = limit[first:last]
    if len(inner) != last - first:
        raise DecodeError(f"a histogram with {len(count)} bucket counts but {len(limit)} bucket limits")
    lefts = np.concatenate([[lo], inner])
    rights = np.concatenate([inner, [hi]])
    return np.stack([lefts, rights, count[first : last + 1]], axis=1)


def _v2_histogram(array: np.ndarray) -> np.ndarray:
    if array.ndim != 2 or array.shape[1] != 3:
        raise DecodeError(f"a histogram summary holds a tensor of shape {list(array.shape)}, not [k, 3]")
    return array.astype(np.float64, copy=False)


# ----------------------------------------------------------------------------- hparams


def _hparams(buf: bytes, meta: Field | None) -> list[Any]:
    """The hparams plugin's HParamsPluginData (version 1, experiment 2, session_start_info 3,
    session_end_info 4) as a dict: {"session_start": {...}} or {"session_end": {...}}; an
    experiment summary (the hparams' domains) as {"experiment": <its serialized bytes>}."""
    if meta is None:
        return []
    pos, end = _plugin_content(buf, meta[2], meta[3])
    out: dict[str, Any] = {}
    for number, wire, start, stop in iter_fields(buf, pos, end, 4):
        if number == 2 and wire == 2:
            out["experiment"] = buf[start:stop]
        elif number == 3 and wire == 2:
            out["session_start"] = _session_start(buf, start, stop)
        elif number == 4 and wire == 2:
            out["session_end"] = _session_end(buf, start, stop)
    return [out] if out else []


def _session_start(buf: bytes, pos: int, end: int) -> dict[str, Any]:
    hparams: dict[str, Any] = {}
    info: dict[str, Any] = {"hparams": hparams}
    for number, wire, start, stop in iter_fields(buf, pos, end, 5):
        if number == 1 and wire == 2:
            key, value = "", None
            for n, w, s, e in iter_fields(buf, start, stop, 6):
                if n == 1 and w == 2:
                    key = _text(buf[s:e], "hparam name")
                elif n == 2 and w == 2:
                    value = _struct_value(buf, s, e, 7)
            hparams[key] = value
        elif number in (2, 3, 4) and wire == 2:
            info[("model_uri", "monitor_url", "group_name")[number - 2]] = _text(buf[start:stop], "session field")
        elif number == 5 and wire == 1:
            info["start_time_secs"] = _DOUBLE.unpack_from(buf, start)[0]
    return info


def _session_end(buf: bytes, pos: int, end: int) -> dict[str, Any]:
    statuses = ("STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE", "STATUS_RUNNING")
    info: dict[str, Any] = {}
    for number, wire, start, stop in iter_fields(buf, pos, end, 5):
        if number == 1 and wire == 0:
            status = read_varint(buf, start, stop)[0]
            info["status"] = statuses[status] if status < len(statuses) else status
        elif number == 2 and wire == 1:
            info["end_time_secs"] = _DOUBLE.unpack_from(buf, start)[0]
    return info


def _struct_value(buf: bytes, pos: int, end: int, depth: int) -> Any:
    """A google.protobuf.Value as Python: None, float, str, bool, dict or list."""
    if depth > 64:
        raise DecodeError("an hparam value nested more than 64 deep")
    value: Any = None
    for number, wire, start, stop in iter_fields(buf, pos, end, depth):
        if number == 1:
            value = None
        elif number == 2 and wire == 1:
            value = _DOUBLE.unpack_from(buf, start)[0]
        elif number == 3 and wire == 2:
            value = _text(buf[start:stop], "hparam value")
        elif number == 4 and wire == 0:
            value = bool(read_varint(buf, start, stop)[0])
        elif number == 5 and wire == 2:
            value = {}
            for _, w, s, e in iter_fields(buf, start, stop, depth + 1):
                if w == 2:
                    key, item = _entry(buf, s, e, depth + 2)
                    value[key] = item
        elif number == 6 and wire == 2:
            value = [
                _struct_value(buf, s, e, depth + 2) for _, w, s, e in iter_fields(buf, start, stop, depth + 1) if w == 2
            ]
    return value


def _entry(buf: bytes, pos: int, end: int, depth: int) -> tuple[str, Any]:
    key, value = "", None
    for n, w, s, e in iter_fields(buf, pos, end, depth):
        if n == 1 and w == 2:
            key = _text(buf[s:e], "hparam name")
        elif n == 2 and w == 2:
            value = _struct_value(buf, s, e, depth + 1)
    return key, value


# ----------------------------------------------------------------------------- display


def event_fields(buf: bytes, plugins: Plugins | None = None) -> dict[str, Any] | None:
    """An Event shown as the features of a record (step, wall_time, file_version, then each value
    under "tag (kind)"), each a flat numpy array of numbers or a list of bytes, as a record decoded
    without a spec holds them; None when `buf` is not an Event: one starts with its wall time
    (field 1, a double), where an Example serializer writes its features. `plugins`: its run's
    memory of which plugin wrote each tag, when known (a copy is used)."""
    if buf[:1] != b"\x09":
        return None
    try:
        event = decode_event(buf, dict(plugins or {}))
    except DecodeError:
        return None
    shown: dict[str, Any] = {"step": np.array([event.step]), "wall_time": np.array([event.wall_time])}
    if event.file_version is not None:
        shown["file_version"] = [event.file_version.encode()]
    for tag, kind, value in event.values:
        key = f"{tag} ({kind})"
        flat = _flat(value)
        if key in shown:  # several images or clips of one step
            flat = shown[key] + flat if isinstance(flat, list) else np.concatenate([shown[key], flat])
        shown[key] = flat
    return shown


def _flat(value: Any) -> Any:
    if isinstance(value, float):
        return np.array([value])
    if isinstance(value, bytes):
        return [value]
    if isinstance(value, str):
        return [value.encode()]
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
        return value.reshape(-1).astype(np.float64 if value.dtype.kind == "f" else np.int64)
    if isinstance(value, np.ndarray):
        return [v.encode() if isinstance(v, str) else bytes(v) for v in value.reshape(-1)]
    return [repr(value).encode()]
