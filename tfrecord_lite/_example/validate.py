"""Checking what users pass, where they pass it: a spec mapping, a callable, a
record to write. Each check says what was expected and what was found, and
where a likely mistake has a known fix (a key typo, the `tfrecord` package's
{"key": "byte"} descriptions, write() given a dict) it names the fix. Datasets
and batch decoders call these in their constructors, so a mistake surfaces
where it was made, not at the first item.
"""

from __future__ import annotations

import difflib
import operator
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.ragged_spec import RaggedFeature, components, from_tf, has_ragged
from tfrecord_lite._example.raw import RawFeature
from tfrecord_lite._example.spec import (
    FeatureSpec,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
    dtype_name,
)
from tfrecord_lite._example.tf_specs import from_tf_spec

# The `tfrecord` package's description names and the specs that give its users the same
# numbers: its "int" / "float" read every value of the list (a 1-D array, as VarLenFeature),
# its "byte" reads the one bytes value (FixedLenFeature([], "bytes") gives it as bytes;
# np.frombuffer(value, np.uint8) is the package's uint8 array).
TFRECORD_DESCRIPTIONS: dict[str, FeatureSpec] = {
    "byte": FixedLenFeature((), "bytes"),
    "int": VarLenFeature("int64"),
    "float": VarLenFeature("float32"),
}
_SPEC_TYPES = (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, SparseFeature, RaggedFeature, RawFeature)
_EXPECTED_SPEC = (
    "a FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, SparseFeature, RaggedFeature (ours or "
    "tf.io's) or RawFeature; or 'byte' / 'int' / 'float'"
)


def _found(value: Any) -> str:
    if hasattr(value, "SerializeToString"):
        return f"a {type(value).__name__} message"
    text = " ".join(repr(value).split())
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def as_spec(key: str, spec: Any) -> FeatureSpec:
    """One feature's spec: a spec object as it is, a `tfrecord`-package name mapped, one of
    TensorFlow's spec objects converted; else a FeatureError saying what a spec is."""
    if isinstance(spec, _SPEC_TYPES):
        return spec
    if isinstance(spec, str) and spec in TFRECORD_DESCRIPTIONS:
        return TFRECORD_DESCRIPTIONS[spec]
    try:
        converted = from_tf(spec) or from_tf_spec(spec)
    except (TypeError, ValueError) as err:
        raise FeatureError(key, f"{type(spec).__name__} from TensorFlow: {err}") from None
    if converted is not None:
        return converted
    hint = ""
    if dtype_name(spec) is not None:
        hint = f"; for a dtype alone write tfr.VarLenFeature({spec!r}) or tfr.FixedLenFeature([], {spec!r})"
    raise FeatureError(key, f"unsupported spec: expected {_EXPECTED_SPEC}, found {_found(spec)}{hint}")


def feature_specs(features: Any, name: str = "features") -> dict[str, FeatureSpec] | None:
    """A spec mapping checked whole (None stays None): keys are str, values specs."""
    if features is None:
        return None
    if not isinstance(features, Mapping):
        hint = ""
        if isinstance(features, (list, tuple, set)) and all(isinstance(k, str) for k in features):
            hint = (
                " — a list of keys has no types: give each key a spec, e.g. {'image': 'byte', 'label': 'int'} "
                "(the tfrecord package's names) or {'label': tfr.FixedLenFeature([], 'int64')}; "
                "None decodes every feature"
            )
        elif isinstance(features, str):
            hint = (
                " — if it is an index path (the tfrecord package's second argument), drop it: the index is "
                "built for you"
            )
        raise TypeError(f"{name} must be a dict {{key: spec}}, found {_found(features)}{hint}")
    out = {}
    for key, spec in features.items():
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be str, found {_found(key)}")
        out[key] = as_spec(key, spec)
    # A key read two ways (as two dtypes, or dense and sparse) is an error, as in TensorFlow: a
    # RaggedFeature's reads are checked by components, then with SparseFeatures' as VarLenFeatures.
    check_sparse_keys(components(out) if has_ragged(out) else out)
    return out


def check_sparse_keys(specs: Mapping[str, FeatureSpec]) -> None:
    """TensorFlow's rules for the keys SparseFeatures read (as VarLenFeatures): each key is read as
    one dtype, and none is also a FixedLenFeature's or FixedLenSequenceFeature's."""
    if not any(isinstance(spec, SparseFeature) for spec in specs.values()):
        return
    reads: dict[str, tuple[str, str]] = {}  # key read -> (dtype, the feature reading it)
    for key, spec in specs.items():
        if isinstance(spec, SparseFeature):
            parts = [(k, "int64") for k in spec.index_keys] + [(spec.value_key, spec.dtype)]
        else:
            parts = [(key, spec.dtype)] if isinstance(spec, VarLenFeature) else []
        for read, dtype in parts:
            first = reads.setdefault(read, (dtype, key))
            if first[0] != dtype:
                raise FeatureError(
                    key,
                    f"reads {read!r} as {dtype}, but feature {first[1]!r} reads it as {first[0]}: a key has one dtype",
                )
    for key, spec in specs.items():
        if isinstance(spec, (FixedLenFeature, FixedLenSequenceFeature, RawFeature)) and key in reads:
            raise FeatureError(
                key,
                f"is read by SparseFeature {reads[key][1]!r} too, and cannot also be a {type(spec).__name__} "
                "(as in TensorFlow): read it with a VarLenFeature",
            )


def batch_specs(features: Any) -> dict[str, FeatureSpec]:
    """The spec of a batch decoder, which needs one."""
    specs = feature_specs(features)
    if specs is None:
        raise TypeError("decoding a batch by columns needs features= (a dict {key: spec}), found None")
    return specs


def check_int(name: str, value: Any, minimum: int | None = None) -> int:
    """An integer (a Python or numpy int, not a bool) of at least `minimum`, as an int."""
    expected = "an int" + (f" >= {minimum}" if minimum is not None else "")
    try:
        number = operator.index(value)
    except TypeError:
        number = None
    if number is None or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be {expected}, found {_found(value)}")
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be {expected}, found {number}")
    return number


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> Any:
    """`value` if it is one of `allowed`; else a ValueError listing them."""
    if value not in allowed:
        raise ValueError(f"{name}={value!r}: use one of {', '.join(repr(a) for a in allowed)}")
    return value


def check_callable(name: str, value: Any, what: str) -> None:
    """None or a callable; else a TypeError saying what the argument is for."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a callable ({what}) or None, found {_found(value)}")


def did_you_mean(key: str, present: Collection[str]) -> str:
    """ "; did you mean 'label'?" naming the keys of `present` close to `key`, or '' when none is."""
    close = difflib.get_close_matches(key, list(present), n=3)
    return ("; did you mean " + " or ".join(repr(k) for k in close) + "?") if close else ""


def missing_feature(key: str, present: Collection[str], what: str = "feature") -> FeatureError:
    """The error for a required key the record does not have: its keys and the close matches."""
    message = f"required {what} is missing and its spec has no default_value"
    if what != "feature":
        message = f"required {what} is missing (allow_missing=False)"
    message += did_you_mean(key, present) or "."
    keys = sorted(present)
    shown = ", ".join(repr(k) for k in keys[:20]) + (f", ... ({len(keys)} in all)" if len(keys) > 20 else "")
    message += f" The record has {shown}." if keys else " The record has no features."
    return FeatureError(key, message)


def as_record(record: Any) -> bytes:
    """A record to write as bytes (from any bytes-like object); else a TypeError pointing to write_example."""
    if isinstance(record, bytes):
        return record
    if isinstance(record, str):
        raise _not_a_record(record)
    try:
        return bytes(memoryview(record).cast("B"))
    except TypeError:
        raise _not_a_record(record) from None


def _not_a_record(record: Any) -> TypeError:
    hint = "; for a dict of feature values use write_example(...)"
    if hasattr(record, "SerializeToString"):
        hint = "; pass record.SerializeToString(), or write_example(...) for a dict of feature values"
    elif isinstance(record, str):
        hint = "; encode text first (record.encode()), or use write_example(...) for feature values"
    return TypeError(
        f"write() takes one serialized record (bytes or a bytes-like object), found {_found(record)}{hint}"
    )
