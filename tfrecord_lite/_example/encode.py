"""Encoding Examples and SequenceExamples, sans-I/O: Python values and numpy arrays in,
serialized protobuf bytes out.

Strategy: the wire format is written directly, with no message objects. Each value's
kind is decided once: numpy infers it for a list or array in C, and only the rare
inferences that lose a kind (ints beyond int64, mixed or ragged lists) are decided
element by element. Numbers go out packed: floats as one little-endian float32 run,
int64s as varints encoded with numpy for long runs. An int outside the int64 range is
an error, never a silent float or a wrapped value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.spec import BYTES, FLOAT, INT64

_INT64_MIN = -(1 << 63)


def encode_varint(value: int) -> bytes:
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
    return encode_varint(field << 3 | 2) + encode_varint(len(payload)) + payload


def encode_varints(values: np.ndarray) -> bytes:
    """Encode int64 values as concatenated varints (negative → 10-byte two's complement)."""
    u = np.ascontiguousarray(values, dtype=np.int64).view(np.uint64)
    if u.size <= 16:
        return b"".join([encode_varint(v) for v in u.tolist()])
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
        return INT64, _ld(1, encode_varint(v & 0xFFFFFFFFFFFFFFFF))
    if isinstance(value, (float, np.floating)):
        return FLOAT, _packed(_float_array(np.asarray([value], dtype=np.float64)).tobytes())
    if isinstance(value, np.ndarray):
        return _array_payload(key, value.ravel())
    if isinstance(value, (list, tuple)):
        if isinstance(value, tuple) and _is_package_pair(value):
            raise _package_pair_error(key, value, "value")
        return _list_payload(key, value)
    raise FeatureError(
        key,
        f"cannot encode a value of type {type(value).__name__}: use int / bool / float / bytes / str, "
        "a list of them, a numpy array, None or a tfr.Feature",
    )


_PACKAGE_KINDS = ("byte", "float", "int")  # the `tfrecord` package's (value, kind) pairs


def _is_package_pair(value: tuple[Any, ...]) -> bool:
    return len(value) == 2 and isinstance(value[1], str) and value[1] in _PACKAGE_KINDS


def _package_pair_error(key: str, pair: tuple[Any, ...], what: str) -> FeatureError:
    """A (value, kind) pair of the `tfrecord` package's writer, which would be encoded as a two-value list."""
    value, kind = pair
    shown = " ".join(repr(value).split())
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    alone = f"np.asarray({shown}, np.float32)" if kind == "float" else shown
    return FeatureError(
        key,
        f"({shown}, {kind!r}) is a (value, kind) pair of the tfrecord package's writer; here the {what} goes "
        f"alone and its kind follows from it: {{{key!r}: {alone}}} (ints: int64_list, floats: float_list, "
        "bytes / str: bytes_list). To write such a tuple as it is, pass a list; for the package's calls "
        "unchanged, use tfrecord_lite.compat.tfrecord.TFRecordWriter",
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
    if isinstance(steps, tuple) and _is_package_pair(steps):
        raise _package_pair_error(key, steps, "list of steps")
    return b"".join([_ld(1, encode_feature(key, step)) for step in steps])


def encode_example(values: Mapping[str, Any]) -> bytes:
    """Serialize a dict of feature values (one record's) as a tf.train.Example.

    Values: int / bool / float / bytes / str, lists of one of them, numpy arrays (any
    shape, flattened), None (a Feature with no kind) or a Feature message.
    """
    return _ld(1, _encode_map(values, encode_feature))


def encode_sequence_example(context: Mapping[str, Any], feature_lists: Mapping[str, Sequence[Any]]) -> bytes:
    """Serialize a tf.train.SequenceExample: context features plus {key: [value per step]}."""
    return _ld(1, _encode_map(context, encode_feature)) + _ld(2, _encode_map(feature_lists, _encode_feature_list))
