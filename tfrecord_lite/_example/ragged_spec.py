"""RaggedFeature, tf.io.RaggedFeature's counterpart: values of one feature partitioned into
nested rows by other int64 features of the same Example (or by a uniform row length).

Strategy: a frozen value object like the other specs, its dtype, row_splits_dtype and
partitions checked once at construction; the partition kinds are small frozen classes nested
in it as TensorFlow nests them (RaggedFeature.RowSplits, ...). Decoding never sees a
RaggedFeature as such: `components` turns the spec mapping's RaggedFeatures into the plain
VarLenFeatures they read (their value and partition keys), which both decoders already read,
and ragged_build partitions those values. A tf.io.RaggedFeature is recognised by its type
name and attributes (TensorFlow is never imported) and converted by `from_tf`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tfrecord_lite._example.spec import DTYPE_KIND, DTypeLike, VarLenFeature, dtype_name, normalize_dtype


def _check_key(cls: str, key: Any) -> str:
    if not isinstance(key, str) or not key:
        raise ValueError(f"RaggedFeature.{cls} takes a feature key (a non-empty str), found {key!r}")
    return key


@dataclasses.dataclass(frozen=True)
class RowSplits:
    """Row i of the values is values[splits[i]:splits[i + 1]]; the feature `key` holds the splits."""

    key: str

    def __post_init__(self) -> None:
        _check_key("RowSplits", self.key)


@dataclasses.dataclass(frozen=True)
class RowLengths:
    """The feature `key` holds the number of values in each row."""

    key: str

    def __post_init__(self) -> None:
        _check_key("RowLengths", self.key)


@dataclasses.dataclass(frozen=True)
class RowStarts:
    """The feature `key` holds where each row starts; the last row ends with the values."""

    key: str

    def __post_init__(self) -> None:
        _check_key("RowStarts", self.key)


@dataclasses.dataclass(frozen=True)
class RowLimits:
    """The feature `key` holds where each row ends."""

    key: str

    def __post_init__(self) -> None:
        _check_key("RowLimits", self.key)


@dataclasses.dataclass(frozen=True)
class ValueRowIds:
    """The feature `key` holds the row of each value (sorted; skipped ids are empty rows)."""

    key: str

    def __post_init__(self) -> None:
        _check_key("ValueRowIds", self.key)


@dataclasses.dataclass(frozen=True)
class UniformRowLength:
    """Every row has `length` values (innermost: the values reshaped, as in TensorFlow)."""

    length: int

    def __post_init__(self) -> None:
        if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length < 1:
            raise ValueError(f"RaggedFeature.UniformRowLength takes an int >= 1, found {self.length!r}")


Partition = RowSplits | RowLengths | RowStarts | RowLimits | ValueRowIds | UniformRowLength
PARTITION_TYPES = (RowSplits, RowLengths, RowStarts, RowLimits, ValueRowIds, UniformRowLength)
_BY_NAME = {cls.__name__: cls for cls in PARTITION_TYPES}
_INT64 = VarLenFeature("int64")


def _partition(value: Any) -> Partition:
    """A partition object as it is, or one of tf.io.RaggedFeature's namedtuples converted."""
    if isinstance(value, PARTITION_TYPES):
        return value
    cls = _BY_NAME.get(type(value).__name__)
    if cls is UniformRowLength and hasattr(value, "length"):
        return UniformRowLength(int(value.length))
    if cls is not None and cls is not UniformRowLength and hasattr(value, "key"):
        return cls(value.key)
    names = ", ".join(f"RaggedFeature.{name}" for name in _BY_NAME)
    raise TypeError(f"RaggedFeature partitions must each be one of {names}; found {value!r}")


def _splits_dtype(dtype: DTypeLike) -> str:
    name = dtype_name(dtype)
    if name not in ("int32", "int64"):
        raise ValueError(f"row_splits_dtype must be int32 or int64 (in any spelling), found {dtype!r}")
    return name


@dataclasses.dataclass(frozen=True, init=False)
class RaggedFeature:
    """Values of the feature `value_key` (default: this spec's key) split into nested rows by
    `partitions`, outermost first: a 1-D array without partitions, else a Ragged; batched, a
    Ragged with the batch outermost. As tf.io.RaggedFeature; partitions are always checked
    (`validate` is kept for TensorFlow's signature): a partition that does not fit its values
    is a FeatureError naming the feature."""

    dtype: str
    value_key: str | None = None
    partitions: tuple[Partition, ...] = ()
    row_splits_dtype: str = "int64"
    validate: bool = False
    _values: VarLenFeature = dataclasses.field(default=_INT64, repr=False, compare=False)  # set by __init__

    RowSplits = RowSplits
    RowLengths = RowLengths
    RowStarts = RowStarts
    RowLimits = RowLimits
    ValueRowIds = ValueRowIds
    UniformRowLength = UniformRowLength

    def __init__(
        self,
        dtype: DTypeLike,
        value_key: str | None = None,
        partitions: Any = (),
        row_splits_dtype: DTypeLike = "int64",
        validate: bool = False,
    ) -> None:
        if value_key is not None and (not isinstance(value_key, str) or not value_key):
            raise ValueError(f"value_key must be a non-empty str or None, found {value_key!r}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions must be a list or tuple, found {type(partitions).__name__}")
        if not isinstance(validate, bool):
            raise TypeError(f"validate must be a bool, found {validate!r}")
        object.__setattr__(self, "dtype", normalize_dtype(dtype))
        object.__setattr__(self, "value_key", value_key)
        object.__setattr__(self, "partitions", tuple(_partition(p) for p in partitions))
        object.__setattr__(self, "row_splits_dtype", _splits_dtype(row_splits_dtype))
        object.__setattr__(self, "validate", validate)
        object.__setattr__(self, "_values", VarLenFeature(self.dtype))  # what keys() hands out, made once

    @property
    def kind(self) -> int:
        return DTYPE_KIND[self.dtype]

    def keys(self, key: str) -> dict[str, VarLenFeature]:
        """The features this spec reads when it is `key`'s: its values, then each partition's."""
        out: dict[str, VarLenFeature] = {self.value_key or key: self._values}
        for p in self.partitions:
            if not isinstance(p, UniformRowLength):
                out.setdefault(p.key, _INT64)
        return out


def from_tf(spec: Any) -> RaggedFeature | None:
    """Ours for a tf.io.RaggedFeature (recognised by its type name and fields), else None."""
    fields = ("dtype", "value_key", "partitions", "row_splits_dtype", "validate")
    if type(spec).__name__ != "RaggedFeature" or not all(hasattr(spec, f) for f in fields):
        return None
    return RaggedFeature(spec.dtype, spec.value_key, tuple(spec.partitions), spec.row_splits_dtype, spec.validate)


def ragged_to_json(spec: RaggedFeature) -> dict[str, Any]:
    """The fields of a RaggedFeature but its dtype as JSON-ready data (partitions as [name, key])."""
    partitions = [[type(p).__name__, p.length if isinstance(p, UniformRowLength) else p.key] for p in spec.partitions]
    return {
        "value_key": spec.value_key,
        "partitions": partitions,
        "row_splits_dtype": spec.row_splits_dtype,
        "validate": spec.validate,
    }


def partitions_from_json(pairs: list[Any]) -> tuple[Partition, ...]:
    """The partitions ragged_to_json wrote."""
    out = []
    for pair in pairs:
        cls = _BY_NAME.get(pair[0]) if isinstance(pair, list) and len(pair) == 2 else None
        if cls is None:
            raise ValueError(f"a partition is [name, key or length] with a name of {sorted(_BY_NAME)}, found {pair!r}")
        out.append(cls(pair[1]))
    return tuple(out)


def components(specs: Mapping[str, Any]) -> dict[str, Any]:
    """The specs with every RaggedFeature replaced by the VarLenFeatures it reads. A key that a
    RaggedFeature reads and another spec reads differently is a ValueError, as in TensorFlow."""
    out: dict[str, Any] = {k: s for k, s in specs.items() if not isinstance(s, RaggedFeature)}
    owner: dict[str, str] = {}
    for key, spec in specs.items():
        if not isinstance(spec, RaggedFeature):
            continue
        for part, part_spec in spec.keys(key).items():
            other = out.get(part)
            if other is not None and other != part_spec:
                user = f"RaggedFeature {owner[part]!r}" if part in owner else f"the spec of {part!r}"
                raise ValueError(
                    f"feature {part!r} is read by RaggedFeature {key!r} as {part_spec.dtype} values "
                    f"and by {user} as {other!r}: a key can be read only one way (as in TensorFlow)"
                )
            out[part] = part_spec
            owner.setdefault(part, key)
    return out


def has_ragged(specs: Mapping[str, Any]) -> bool:
    return any(isinstance(s, RaggedFeature) for s in specs.values())
