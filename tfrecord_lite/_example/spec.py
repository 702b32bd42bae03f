"""Feature specs, named and shaped as in tf.io: FixedLenFeature, VarLenFeature,
FixedLenSequenceFeature and SparseFeature (a composite: its index and value keys
are read as VarLenFeatures and then combined), and the three kinds of a Feature
they refer to. A spec is a frozen value object; its dtype is normalised to one of
three kinds once, at construction, and a default value is converted (as
TensorFlow converts it: str as UTF-8, ints of any size to float32) and
shape-checked then too, so decoding only compares.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union, cast

import numpy as np

if TYPE_CHECKING:
    from tfrecord_lite._example.ragged_spec import RaggedFeature
    from tfrecord_lite._example.raw import RawFeature

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
    given = _as_array(default_value)
    size = math.prod(shape)
    if given.size == 0 and size == 0:
        return None  # as in TF: an empty default is no default (a missing feature still raises)
    values = _default_bytes(given) if dtype == "bytes" else _default_numbers(given, dtype)
    if values is None:
        raise ValueError(f"default_value {default_value!r} is not {_DEFAULT_KINDS[dtype]} for dtype {dtype!r}")
    if len(values) != size:
        raise ValueError(f"default_value has {len(values)} values but shape {list(shape)} needs {size}")
    return shape_values(values, dtype, shape)


_DEFAULT_KINDS = {"bytes": "bytes/str", "int64": "an integer value", "float32": "a number"}
_INT64_RANGE = range(-(2**63), 2**63)


def _as_array(value: Any) -> np.ndarray:
    """A default as an ndarray; an object array where numpy would guess a type that changes
    values (str beside bytes, numbers made strings, ints beyond 64 bits)."""
    try:
        given = np.asarray(value)
    except (ValueError, TypeError, UnicodeError, OverflowError):
        given = None
    guessed = given is not None and given.dtype.kind in "SU" and not isinstance(value, (np.ndarray, np.generic))
    if given is not None and given.dtype.kind in "biufSUO" and not guessed:
        return given
    try:
        given = np.asarray(value, dtype=object)
    except ValueError:
        given = None
    if given is None or any(isinstance(v, (list, tuple, np.ndarray)) for v in given.ravel().tolist()):
        raise ValueError(f"default_value {value!r} is not a (nested) list of one shape")
    return given


def _default_bytes(given: np.ndarray) -> list[bytes] | None:
    """Bytes values, str encoded as UTF-8 (as TensorFlow does), numpy's bytes_ / str_ as bytes."""
    values = []
    for v in given.astype(object).ravel().tolist():
        if isinstance(v, str):
            v = v.encode("utf-8")
        if not isinstance(v, bytes):
            return None
        values.append(bytes(v))
    return values


def _default_numbers(given: np.ndarray, dtype: str) -> np.ndarray | None:
    """int64 / float32 values: bools and integers of any size (a float32 default from an int
    beyond 64 bits, as in TensorFlow; an int64 one only in range); floats for float32 only."""
    if given.dtype.kind in "biu" or (dtype == "float32" and given.dtype.kind == "f"):
        if dtype == "int64" and given.dtype.kind == "u" and given.size and given.max() > np.iinfo(np.int64).max:
            raise ValueError(f"default_value {given.tolist()!r} is outside the int64 range")
        return given.astype(np.dtype(dtype)).ravel()
    if given.dtype.kind != "O":
        return None
    flat = given.ravel().tolist()
    if dtype == "int64":
        if not all(isinstance(v, (int, np.integer, np.bool_)) for v in flat):
            return None
        if any(int(v) not in _INT64_RANGE for v in flat):
            raise ValueError(f"default_value {given.tolist()!r} is outside the int64 range")
        return np.array([int(v) for v in flat], dtype=np.int64)
    if not all(isinstance(v, (int, float, np.integer, np.floating, np.bool_)) for v in flat):
        return None
    try:
        numbers = np.array([float(v) for v in flat], dtype=np.float64)
    except OverflowError:
        raise ValueError(f"default_value {given.tolist()!r} is outside the float range") from None
    with np.errstate(over="ignore"):  # as in TensorFlow: beyond float32's range is inf
        return numbers.astype(np.float32)


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


@dataclasses.dataclass(frozen=True, init=False)
class SparseFeature:
    """A sparse tensor from features of one record, as in TensorFlow: the int64 lists under
    `index_key` (one key, or a list of keys for more dimensions) hold each value's index, the
    list under `value_key` the values; `size` (an int, or a list with one per index key) is the
    dense shape. Decoded as a Sparse, its entries sorted by index unless `already_sorted`."""

    index_key: str | tuple[str, ...]
    value_key: str
    dtype: str
    size: int | tuple[int, ...]
    already_sorted: bool = False

    def __init__(
        self,
        index_key: str | Sequence[str],
        value_key: str,
        dtype: DTypeLike,
        size: int | Sequence[int],
        already_sorted: bool = False,
    ) -> None:
        keys = index_key if isinstance(index_key, str) else tuple(index_key)
        dims = _sparse_size(keys, size)
        if not isinstance(value_key, str):
            raise TypeError(f"SparseFeature's value_key must be a str, found {value_key!r}")
        object.__setattr__(self, "index_key", keys)
        object.__setattr__(self, "value_key", value_key)
        object.__setattr__(self, "dtype", normalize_dtype(dtype))
        object.__setattr__(self, "size", dims)
        object.__setattr__(self, "already_sorted", bool(already_sorted))

    @property
    def kind(self) -> int:
        return DTYPE_KIND[self.dtype]

    @property
    def index_keys(self) -> tuple[str, ...]:
        """The index keys, one per dimension."""
        return (self.index_key,) if isinstance(self.index_key, str) else self.index_key

    @property
    def shape(self) -> Shape:
        """The dense shape of one record's value."""
        return (self.size,) if isinstance(self.size, int) else self.size


def _sparse_size(keys: str | tuple[str, ...], size: Any) -> int | tuple[int, ...]:
    """`size` checked against the index keys: an int for one key, a list of ints for a list of keys."""
    one = isinstance(keys, str)
    if not one and (not keys or not all(isinstance(k, str) for k in keys)):
        raise TypeError(f"SparseFeature's index_key must be a str or a non-empty list of str, found {list(keys)!r}")
    if one != isinstance(size, (int, np.integer)) or isinstance(size, (bool, np.bool_)):
        expected = "an int" if one else f"a list of {len(keys)} ints, one per index key"
        raise TypeError(f"SparseFeature's size must be {expected}, found {size!r}")
    dims = (size,) if one else tuple(size)
    if len(dims) != (1 if one else len(keys)) or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) and d >= 0 for d in dims
    ):
        raise ValueError(f"SparseFeature's size must be non-negative, one per index key, found {size!r}")
    return int(dims[0]) if one else tuple(int(d) for d in dims)


# A RaggedFeature (ragged_spec.py) and a RawFeature (raw.py), which build on this module, are specs too.
FeatureSpec = Union[
    FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, SparseFeature, "RaggedFeature", "RawFeature"
]
