# Feature specs, named and shaped as in tf.io: FixedLenFeature, VarLenFeature
# and FixedLenSequenceFeature. A spec is a frozen value object; its dtype is
# normalised to one of three kinds once, at construction, and a default value
# is converted and shape-checked then too, so decoding only compares.
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

# Field numbers of the `kind` oneof in the Feature message.
BYTES, FLOAT, INT64 = 1, 2, 3
KIND_NAMES = {0: "no kind", BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}
DTYPE_KIND = {"bytes": BYTES, "float32": FLOAT, "int64": INT64}
KIND_DTYPE = {v: k for k, v in DTYPE_KIND.items()}

_DTYPE_NAMES = {
    "int64": "int64",
    "float32": "float32",
    "float": "float32",
    "bytes": "bytes",
    "string": "bytes",
    "str": "bytes",
}

DTypeLike = str | type | np.dtype | Any
Shape = tuple[int, ...]


def normalize_dtype(dtype: DTypeLike) -> str:
    """'int64', 'float32' or 'bytes' for any accepted spelling (also tf.DType-like objects)."""
    name: Any = dtype
    if dtype is bytes or dtype is str:
        return "bytes"
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        name = np.dtype(dtype).name
    elif isinstance(dtype, np.dtype):
        name = dtype.name
    elif not isinstance(dtype, str) and isinstance(getattr(dtype, "name", None), str):
        name = cast(Any, dtype).name  # tf.int64, tf.float32, tf.string, without importing TensorFlow
    if isinstance(name, str) and name.lower() in _DTYPE_NAMES:
        return _DTYPE_NAMES[name.lower()]
    raise ValueError(
        f"unsupported dtype {dtype!r}: use 'int64', 'float32' or 'bytes' "
        "(np.int64, np.float32, bytes and 'string' are accepted too)"
    )


def _normalize_shape(shape: int | Iterable[int]) -> Shape:
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    for d in dims:
        if not isinstance(d, (int, np.integer)) or d < 0:
            raise ValueError(f"shape {shape!r} must be a sequence of non-negative integers")
    return tuple(int(d) for d in dims)


def empty_values(dtype: str) -> Any:
    """The decoded form of an empty list of this dtype."""
    return [] if dtype == "bytes" else np.empty(0, dtype=np.dtype(dtype))


def shape_values(values: Any, dtype: str, shape: Shape) -> Any:
    """Reshape a decoded 1-D value list to `shape`: numeric → ndarray (numpy scalar
    for shape ()), bytes → bytes for shape (), else an object ndarray."""
    if dtype == "bytes":
        if shape == ():
            return values[0]
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        return arr.reshape(shape)
    if shape == ():
        return values[0]
    return values.reshape(shape)


def _prepare_default(default_value: Any, dtype: str, shape: Shape) -> Any:
    """Convert a default to decoded form and check it has prod(shape) values."""
    if default_value is None:
        return None
    size = math.prod(shape)
    if np.size(default_value) == 0 and size == 0:
        return None  # as in TF: an empty default is no default (a missing feature still raises)
    if dtype == "bytes":
        arr = np.asarray(default_value, dtype=object).ravel()
        values: Any = [v.encode("utf-8") if isinstance(v, str) else v for v in arr.tolist()]
        if not all(isinstance(v, bytes) for v in values):
            raise ValueError(f"default_value {default_value!r} is not bytes/str for dtype 'bytes'")
    else:
        given = np.asarray(default_value)
        if dtype == "int64" and given.dtype.kind not in "iub":
            raise ValueError(f"default_value {default_value!r} is not an integer value for dtype 'int64'")
        if dtype == "int64" and given.dtype.kind == "u" and given.size and given.max() > np.iinfo(np.int64).max:
            raise ValueError(f"default_value {default_value!r} is outside the int64 range")
        if dtype == "float32" and given.dtype.kind not in "iubf":
            raise ValueError(f"default_value {default_value!r} is not a number for dtype 'float32'")
        values = given.astype(np.dtype(dtype)).ravel()
    if len(values) != size:
        raise ValueError(f"default_value has {len(values)} values but shape {list(shape)} needs {size}")
    return shape_values(values, dtype, shape)


@dataclasses.dataclass(frozen=True)
class FixedLenFeature:
    """A feature with exactly prod(shape) values, reshaped to `shape`; `default_value` when missing."""

    shape: Shape
    dtype: str
    default_value: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", _normalize_shape(self.shape))
        object.__setattr__(self, "dtype", normalize_dtype(self.dtype))
        object.__setattr__(self, "default_value", _prepare_default(self.default_value, self.dtype, self.shape))

    @property
    def kind(self) -> int:
        return DTYPE_KIND[self.dtype]


@dataclasses.dataclass(frozen=True)
class VarLenFeature:
    """A feature with any number of values, decoded as a 1-D array (a list for bytes)."""

    dtype: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", normalize_dtype(self.dtype))

    @property
    def kind(self) -> int:
        return DTYPE_KIND[self.dtype]


@dataclasses.dataclass(frozen=True)
class FixedLenSequenceFeature:
    """A sequence of steps of `shape` each, decoded as [steps, *shape] (in an Example the
    values are split into steps; there it needs allow_missing=True, as in TensorFlow).
    `default_value` is a scalar that pads shorter rows in batched decoding."""

    shape: Shape
    dtype: str
    allow_missing: bool = False
    default_value: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", _normalize_shape(self.shape))
        object.__setattr__(self, "dtype", normalize_dtype(self.dtype))
        # As in TF: a scalar that pads short rows in batched decoding; unused for a single record.
        object.__setattr__(self, "default_value", _prepare_default(self.default_value, self.dtype, ()))

    @property
    def kind(self) -> int:
        return DTYPE_KIND[self.dtype]


FeatureSpec = FixedLenFeature | VarLenFeature | FixedLenSequenceFeature
