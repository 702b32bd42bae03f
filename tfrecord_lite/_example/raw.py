"""Raw tensors: tf.io.decode_raw for numpy. A bytes value holding a packed array
(pixels, an embedding written with .tobytes()) becomes that array. A batch of
values (a list, or the object array a batch decoder returns) must hold values of
one length (or, with fixed_length=, of any length: each is cut or padded with zero
bytes to it) and becomes one array with a trailing dimension, as in TensorFlow.
The values are joined once and read by one np.frombuffer in the stated byte
order; the result is a fresh, writable array in native byte order.

RawFeature is that format as a feature spec: one bytes value per record holding an
array of one shape and dtype. The decoders read it as the bytes value it is (its
`reads` spec, FixedLenFeature([], "bytes")) and then make the array here: one value
by raw_value, a batch's values by raw_column, which checks every value's length
against the shape at once (np.fromiter over len, in C), before anything is allocated,
and joins them with one bytearray.join into the (batch, *shape) array's own memory.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.spec import BYTES, DTypeLike, FixedLenFeature, Shape, ShapeLike, dtype_name

# tf.io.decode_raw's out_type set (bfloat16 has no numpy dtype).
RAW_DTYPES = (
    "float16",
    "float32",
    "float64",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "int64",
    "complex64",
    "complex128",
    "bool",
)
_BYTES_LIKE = (bytes, bytearray, memoryview)


def raw_dtype(dtype: DTypeLike) -> np.dtype:
    """The numpy dtype for decode_raw's `dtype` (any accepted spelling: 'float' is float32)."""
    name = dtype_name(dtype)
    if name in RAW_DTYPES:
        return np.dtype(name)
    raise ValueError(f"decode_raw cannot make {dtype!r} values: use one of {', '.join(RAW_DTYPES)}")


def decode_raw(
    source: Any,
    dtype: DTypeLike,
    shape: Sequence[int] | None = None,
    *,
    little_endian: bool = True,
    fixed_length: int | None = None,
) -> np.ndarray:
    """The numbers packed in `source`, like tf.io.decode_raw, as a numpy array.

    `source` is one bytes-like value (→ a 1-D array) or a batch of them — a list (nested for
    more dimensions) or an object / bytes array — whose values all have the same length
    (→ the batch's shape plus one dimension). Each value's length must be a multiple of
    the dtype's size. `shape` reshapes each value's numbers (the last dimension) to it.
    `fixed_length` (bytes, a positive multiple of the dtype's size), as in TensorFlow: each
    value is cut to that many bytes or padded with zero bytes to it, so values may differ in length.
    """
    dt = raw_dtype(dtype)
    batch_shape, values = _values(source)
    if fixed_length is None:
        size = _common_length(values)
    else:
        size = _fixed_length(fixed_length, dt)
        values = _fixed(values, size)
    if size % dt.itemsize:
        raise ValueError(
            f"decode_raw: a value of {size} bytes is not a multiple of {dt.itemsize}, the size of {dt.name}"
        )
    count = size // dt.itemsize
    item_shape = (count,) if shape is None else _item_shape(shape, count, dt)
    stored = dt.newbyteorder("<" if little_endian else ">") if dt.kind in "iufc" else dt
    flat = np.frombuffer(b"".join(values), dtype=np.uint8 if dt.kind == "b" else stored)
    numbers = flat != 0 if dt.kind == "b" else flat.astype(dt.newbyteorder("="))
    return numbers.reshape(batch_shape + item_shape)


def _fixed_length(fixed_length: Any, dt: np.dtype) -> int:
    if isinstance(fixed_length, (bool, np.bool_)) or not isinstance(fixed_length, (int, np.integer)):
        raise TypeError(f"decode_raw: fixed_length must be an int, found {type(fixed_length).__name__}")
    if fixed_length <= 0:
        raise ValueError(f"decode_raw: fixed_length must be greater than zero, found {fixed_length}")
    if fixed_length % dt.itemsize:
        raise ValueError(
            f"decode_raw: fixed_length {fixed_length} is not a multiple of {dt.itemsize}, the size of {dt.name}"
        )
    return int(fixed_length)


def _fixed(values: list[bytes], length: int) -> list[bytes]:
    """Each value cut to `length` bytes, or padded with zero bytes to it."""
    return [v[:length] if len(v) >= length else v + bytes(length - len(v)) for v in values]


def _values(data: Any) -> tuple[tuple[int, ...], list[bytes]]:
    """(batch shape, the values as bytes in C order): () for one value."""
    if isinstance(data, _BYTES_LIKE + (np.bytes_,)):
        return (), [bytes(data)]
    if isinstance(data, str):
        raise TypeError("decode_raw takes bytes, found str: encode the text first (or pass the bytes value)")
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OS":
        raise TypeError(f"decode_raw takes bytes values, found an array of {data.dtype}: use arr.tobytes()")
    batch = np.empty(0, dtype=object) if isinstance(data, (list, tuple)) and not data else _object_array(data)
    values = batch.ravel().tolist()
    for i, v in enumerate(values):
        if not isinstance(v, _BYTES_LIKE):
            where = np.unravel_index(i, batch.shape)
            raise TypeError(f"decode_raw: element {list(map(int, where))} is {type(v).__name__}, not bytes")
    return batch.shape, [v if isinstance(v, bytes) else bytes(v) for v in values]


def _object_array(data: Any) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return data.astype(object)
    try:
        if not isinstance(data, (list, tuple)):
            raise TypeError
        batch = np.empty(_nested_shape(data), dtype=object)
        batch[...] = data
    except (TypeError, ValueError):
        raise TypeError(
            f"decode_raw takes a bytes value or a (nested) list of them, found {type(data).__name__}"
        ) from None
    return batch


def _nested_shape(data: Any) -> tuple[int, ...]:
    """The shape of nested lists of bytes (the bytes themselves are the leaves)."""
    shape = []
    while isinstance(data, (list, tuple)):
        shape.append(len(data))
        if not data:
            break
        data = data[0]
    return tuple(shape)


def _common_length(values: list[bytes]) -> int:
    if not values:
        return 0
    size = len(values[0])
    for i, v in enumerate(values):
        if len(v) != size:
            raise ValueError(
                f"decode_raw: the values of a batch must have one length, but value {i} has {len(v)} bytes "
                f"and value 0 has {size}"
            )
    return size


def _item_shape(shape: Sequence[int], count: int, dt: np.dtype) -> tuple[int, ...]:
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    known = math.prod(d for d in dims if d != -1)
    if dims.count(-1) == 1 and known and count % known == 0:
        return tuple(count // known if d == -1 else d for d in dims)
    if -1 not in dims and known == count and all(d >= 0 for d in dims):
        return dims
    raise ValueError(f"decode_raw: a value holds {count} {dt.name} numbers, which shape {list(dims)} cannot hold")


_READS = FixedLenFeature((), "bytes")


@dataclasses.dataclass(frozen=True, init=False)
class RawFeature:
    """One bytes value holding an array of `shape` and `dtype` as its raw bytes (what
    `arr.tobytes()` writes and tf.io.decode_raw reads), decoded as that array; a batch as
    one (batch, *shape) array. `little_endian` is the byte order of the stored numbers (as
    decode_raw's; `tobytes()` on the usual machines writes little-endian). There is no
    default value (decode_raw has none): a record without the feature is an error."""

    shape: Shape
    dtype: str
    little_endian: bool = True

    def __init__(self, shape: ShapeLike, dtype: DTypeLike, little_endian: bool = True) -> None:
        dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
            raise ValueError(f"RawFeature's shape {shape!r} must be a sequence of non-negative integers")
        object.__setattr__(self, "shape", tuple(int(d) for d in dims))
        object.__setattr__(self, "dtype", raw_dtype(dtype).name)
        object.__setattr__(self, "little_endian", bool(little_endian))

    @property
    def kind(self) -> int:
        return BYTES

    @property
    def reads(self) -> FixedLenFeature:
        """The spec of what a record holds: one bytes value."""
        return _READS

    @property
    def nbytes(self) -> int:
        """The length of one record's value: prod(shape) * the dtype's size."""
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize

    @property
    def stored(self) -> np.dtype:
        """The dtype of the numbers as stored (byte order included)."""
        dt = np.dtype(self.dtype)
        return dt.newbyteorder("<" if self.little_endian else ">") if dt.kind in "iufc" else dt

    def encode(self, array: Any) -> bytes:
        """An array's bytes as this feature stores them: `array` must have this shape, and is
        converted to this dtype only where no value changes (a list of small ints to uint8, not
        floats to ints)."""
        arr = np.asarray(array)
        if arr.shape != self.shape:
            raise ValueError(f"RawFeature of shape {list(self.shape)}: the array's shape is {list(arr.shape)}")
        if np.can_cast(arr.dtype, self.dtype, casting="safe"):
            return arr.astype(self.stored, copy=False).tobytes()
        with np.errstate(all="ignore"):
            stored = arr.astype(self.stored) if arr.dtype.kind in "biuf" else None
        if stored is None or not np.array_equal(stored.astype(arr.dtype), arr, equal_nan=arr.dtype.kind in "fc"):
            raise ValueError(f"RawFeature of {self.dtype}: the values of an array of {arr.dtype} do not fit it")
        return stored.tobytes()


def raw_value(key: str, spec: RawFeature, value: Any) -> np.ndarray:
    """One record's array from its bytes value (bytes or a memoryview)."""
    found = len(value)
    if found != spec.nbytes:
        raise FeatureError(key, _length_message(spec, found))
    return _finish(spec, np.frombuffer(bytearray(value), dtype=_read_as(spec)), ())


def raw_column(key: str, spec: RawFeature, values: Any) -> np.ndarray:
    """A batch's (batch, *shape) array from its bytes values (a list or an object array of
    bytes / memoryviews), each checked to hold spec.nbytes bytes before anything is joined; or
    from a (batch, nbytes) uint8 array of the values already gathered and checked."""
    if isinstance(values, np.ndarray) and values.dtype == np.uint8:  # the values' bytes as rows, checked
        return raw_rows(spec, values, len(values))
    values = values.tolist() if isinstance(values, np.ndarray) else values
    check_lengths(key, spec, np.fromiter(map(len, values), dtype=np.int64, count=len(values)))
    return raw_rows(spec, bytearray().join(values), len(values))


def check_lengths(key: str, spec: RawFeature, lengths: np.ndarray) -> None:
    """Raise for the first of a batch's values whose length in bytes is not spec.nbytes."""
    wrong = np.flatnonzero(lengths != spec.nbytes)
    if wrong.size:
        i = int(wrong[0])
        err = FeatureError(key, f"record {i} of the batch: {_length_message(spec, int(lengths[i]))}")
        err.batch_record = i  # type: ignore[attr-defined]  # placed by a reader of files (columnar.placing)
        raise err


def raw_rows(spec: RawFeature, data: Any, n: int) -> np.ndarray:
    """The (n, *shape) array of `n` values of checked length joined in `data` (a writable buffer
    it may view)."""
    return _finish(spec, np.frombuffer(data, dtype=_read_as(spec)), (n,))


def _read_as(spec: RawFeature) -> np.dtype:
    return np.dtype(np.uint8) if spec.dtype == "bool" else spec.stored


def _finish(spec: RawFeature, flat: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """The numbers read (from a fresh, writable buffer) in native order and the feature's shape."""
    if spec.dtype == "bool":
        flat = flat != 0
    elif not flat.dtype.isnative:
        flat = flat.astype(flat.dtype.newbyteorder("="))
    return flat.reshape(batch + spec.shape)


def _length_message(spec: RawFeature, found: int) -> str:
    return f"expected {spec.nbytes} bytes (shape {list(spec.shape)} of {spec.dtype}), found {found} bytes"
