"""Feature specs, named and shaped as in tf.io: FixedLenFeature, VarLenFeature
and FixedLenSequenceFeature, and the three kinds of a Feature they refer to. A
spec is a frozen value object; its dtype is normalised to one of three kinds
once, at construction, and a default value is converted and shape-checked then
too, so decoding only compares.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Union, cast

import numpy as np

if TYPE_CHECKING:
    from tfrecord_lite._example.ragged_spec import RaggedFeature

# Field numbers of the `kind` oneof in the Feature message.
BYTES, FLOAT, INT64 = 1, 2, 3
KIND_NAMES = {0: "no kind", BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}
DTYPE_KIND = {"bytes": BYTES, "float32": FLOAT, "int64": INT64}
KIND_DTYPE = {v: k for k, v in DTYPE_KIND.items()}

# Every spelling of a dtype the library accepts, by its canonical numpy name. One table for
# specs and decode_raw alike: "int" is int64 and "float" float32, as in an Example's lists
# (and TensorFlow's DT_FLOAT); strings are "bytes".
_ALIASES: dict[Any, str] = {
    "int": "int64",
    "float": "float32",
    "bytes": "bytes",
    "string": "bytes",
    "str": "bytes",
    int: "int64",
    float: "float32",
    bytes: "bytes",
    str: "bytes",
    bool: "bool",
    "half": "float16",
    "double": "float64",
}
SPEC_DTYPES = ("int64", "float32", "bytes")
_SPELLINGS = (
    "'int64' / 'int' / np.int64 / int, 'float32' / 'float' / np.float32 / float, "
    "'bytes' / 'string' / 'str' / bytes / str"
)

DTypeLike = str | type | np.dtype | Any
Shape = tuple[int, ...]
ShapeLike = int | Iterable[int]  # what a spec takes: [2, 3] as in TensorFlow, (2, 3), 4, []
# A {key: spec} argument as callers write it: spec objects, or the `tfrecord` package's names
# ("int", "float", "byte"). The values are checked when used, and typed object because mypy
# infers a dict literal that mixes spec classes as dict[str, object].
SpecDict = Mapping[str, object]


def dtype_name(dtype: DTypeLike) -> str | None:
    """The canonical name of any accepted dtype spelling (also tf.DType-like objects), else None."""
    if isinstance(dtype, str):
        name = dtype.lower()
    elif isinstance(dtype, type) and dtype in _ALIASES:
        return _ALIASES[dtype]
    elif (isinstance(dtype, type) and issubclass(dtype, np.generic)) or isinstance(dtype, np.dtype):
        name = np.dtype(dtype).name
    elif isinstance(getattr(dtype, "name", None), str):
        name = cast(Any, dtype).name  # tf.int64, tf.float32, tf.string, without importing TensorFlow
    else:
        return None
    name = _ALIASES.get(name, name)
    try:
        return name if name == "bytes" else np.dtype(name).name
    except TypeError:
        return None


def normalize_dtype(dtype: DTypeLike) -> str:
    """'int64', 'float32' or 'bytes' for any accepted spelling of a spec's dtype."""
    name = dtype_name(dtype)
    if name in SPEC_DTYPES:
        return name
    raise ValueError(f"unsupported dtype {dtype!r} for a feature spec: use {_SPELLINGS}")


def _normalize_shape(shape: ShapeLike) -> Shape:
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    for d in dims:
        if not isinstance(d, (int, np.integer)) or d < 0:
            raise ValueError(f"shape {shape!r} must be a sequence of non-negative integers")
    return tuple(int(d) for d in dims)


def kind_of(value: Any) -> int:
    """The kind of a value decoded without a spec: BYTES, FLOAT, INT64, or 0 (no kind)."""
    if value is None:
        return 0
    if isinstance(value, np.ndarray):
        return INT64 if value.dtype.kind in "iu" else FLOAT
    return BYTES


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


@dataclasses.dataclass(frozen=True, init=False)
class FixedLenFeature:
    """A feature with exactly prod(shape) values, reshaped to `shape`; `default_value` when missing."""

    shape: Shape
    dtype: str
    default_value: Any = None

    def __init__(self, shape: ShapeLike, dtype: DTypeLike, default_value: Any = None) -> None:
        object.__setattr__(self, "shape", _normalize_shape(shape))
        object.__setattr__(self, "dtype", normalize_dtype(dtype))
        object.__setattr__(self, "default_value", _prepare_default(default_value, self.dtype, self.shape))

    @property
    def kind(self) -> int:
        return DTYPE_KIND[self.dtype]


@dataclasses.dataclass(frozen=True, init=False)
class VarLenFeature:
    """A feature with any number of values, decoded as a 1-D array (a list for bytes)."""

    dtype: str

    def __init__(self, dtype: DTypeLike) -> None:
        object.__setattr__(self, "dtype", normalize_dtype(dtype))

    @property
    def kind(self) -> int:
        return DTYPE_KIND[self.dtype]


@dataclasses.dataclass(frozen=True, init=False)
class FixedLenSequenceFeature:
    """A sequence of steps of `shape` each, decoded as [steps, *shape] (in an Example the
    values are split into steps; there it needs allow_missing=True, as in TensorFlow).
    `default_value` is a scalar that pads shorter rows in batched decoding."""

    shape: Shape
    dtype: str
    allow_missing: bool = False
    default_value: Any = None

    def __init__(
        self, shape: ShapeLike, dtype: DTypeLike, allow_missing: bool = False, default_value: Any = None
    ) -> None:
        object.__setattr__(self, "shape", _normalize_shape(shape))
        object.__setattr__(self, "dtype", normalize_dtype(dtype))
        object.__setattr__(self, "allow_missing", allow_missing)
        # As in TF: a scalar that pads short rows in batched decoding; unused for a single record.
        object.__setattr__(self, "default_value", _prepare_default(default_value, self.dtype, ()))

    @property
    def kind(self) -> int:
        return DTYPE_KIND[self.dtype]


# A RaggedFeature (ragged_spec.py, which builds on this module) is a spec too.
FeatureSpec = Union[FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, "RaggedFeature"]
