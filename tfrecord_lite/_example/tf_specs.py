"""TensorFlow's own spec objects (tf.io.FixedLenFeature, VarLenFeature, FixedLenSequenceFeature,
SparseFeature) taken wherever a spec is, without importing TensorFlow.

Strategy: TensorFlow's specs are namedtuples. One is recognised by its class name and its
fields together (so that no other tuple is taken for one), and converted by the one function
of its class to the spec of the same name here; its dtype (a tf.DType) is read by dtype_name
through its `.name`, and its shape and default are checked as ours are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfrecord_lite._example.spec import (
    FeatureSpec,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
)


def _fixed_len(spec: Any) -> FeatureSpec:
    return FixedLenFeature(spec.shape, spec.dtype, spec.default_value)


def _var_len(spec: Any) -> FeatureSpec:
    return VarLenFeature(spec.dtype)


def _fixed_len_sequence(spec: Any) -> FeatureSpec:
    return FixedLenSequenceFeature(spec.shape, spec.dtype, spec.allow_missing, spec.default_value)


def _sparse(spec: Any) -> FeatureSpec:
    return SparseFeature(spec.index_key, spec.value_key, spec.dtype, spec.size, spec.already_sorted)


# (class name, namedtuple fields) -> the conversion.
_CONVERSIONS: dict[tuple[str, tuple[str, ...]], Callable[[Any], FeatureSpec]] = {
    ("FixedLenFeature", ("shape", "dtype", "default_value")): _fixed_len,
    ("VarLenFeature", ("dtype",)): _var_len,
    ("FixedLenSequenceFeature", ("shape", "dtype", "allow_missing", "default_value")): _fixed_len_sequence,
    ("SparseFeature", ("index_key", "value_key", "dtype", "size", "already_sorted")): _sparse,
}


def from_tf_spec(spec: Any) -> FeatureSpec | None:
    """Our spec for one of TensorFlow's spec objects; None for anything else. A TensorFlow spec
    that ours cannot take (a dtype other than int64 / float32 / string) raises ValueError."""
    if not isinstance(spec, tuple):
        return None
    fields = getattr(spec, "_fields", None)
    convert = _CONVERSIONS.get((type(spec).__name__, tuple(fields) if isinstance(fields, tuple) else ()))
    return None if convert is None else convert(spec)
