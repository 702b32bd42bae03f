"""Feature lists as Arrow columns: how a column says it holds a SequenceExample's feature list, and
such a column taken apart into the steps of each row for encoding.

Strategy: a feature list decodes to a list of steps per row (list<list<T>>, or list<T> for a
FixedLenSequenceFeature of scalars), a type an Example feature can hold too (a FixedLenFeature
of shape [2, 3], nested lists a user built): the type alone cannot say which a column is. So the
decoders mark each feature-list field in the Arrow schema (field metadata FEATURE_LIST), which
Parquet and Arrow IPC files keep; writers read the mark back, and a caller may also name the
columns (`feature_lists=`), for data that lost the mark (pandas, CSV, hand-built tables). A
marked column is cut at its outer level into steps, each flattened to its values with numpy, as
Example columns are; a null step is a step whose Feature has no kind.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from tfrecord_lite._arrow.lazy import lazy
from tfrecord_lite._errors import FeatureError

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
else:  # imported at first use (lazy.py)
    pa = lazy("pyarrow", globals(), "pa")
    pc = lazy("pyarrow.compute", globals(), "pc")

__all__ = [
    "FEATURE_LIST",
    "Steps",
    "feature_list_field",
    "feature_list_names",
    "is_feature_list",
    "is_list_type",
    "steps_of",
]

FEATURE_LIST = {b"tfrecord_lite.section": b"feature_list"}


def feature_list_field(name: str, kind: pa.DataType) -> pa.Field:
    """The schema field of a feature-list column: its type and the FEATURE_LIST mark."""
    return pa.field(name, kind, metadata=FEATURE_LIST)


def is_feature_list(field: pa.Field) -> bool:
    return bool(field.metadata) and field.metadata.get(b"tfrecord_lite.section") == b"feature_list"


def is_list_type(kind: pa.DataType) -> bool:
    return bool(pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind))


def feature_list_names(schema: pa.Schema, named: Collection[str] | None = None) -> frozenset[str]:
    """The columns of `schema` to write as feature lists: those marked, and those `named`
    (each must be a column of list type: a list of steps)."""
    names = {field.name for field in schema if is_feature_list(field)}
    for name in named or ():
        if name not in schema.names:
            raise KeyError(f"feature_lists: {name!r} is not a column (columns: {schema.names})")
        if not is_list_type(schema.field(name).type):
            raise FeatureError(name, f"is {schema.field(name).type}, not a list of steps: it cannot be a feature list")
        names.add(name)
    return frozenset(names)


class Steps(NamedTuple):
    """A feature-list column: row i has steps[i]:steps[i + 1] (none when not valid[i]); step s
    has values[offsets[s]:offsets[s + 1]], or no kind when not step_valid[s]."""

    steps: list[int]
    valid: list[bool]
    values: Any
    offsets: list[int]
    step_valid: list[bool]

    def row(self, i: int) -> list[Any] | None:
        if not self.valid[i]:
            return None
        values, offsets, step_valid = self.values, self.offsets, self.step_valid
        return [values[offsets[s] : offsets[s + 1]] if step_valid[s] else None for s in range(*self.steps[i : i + 2])]


def steps_of(name: str, array: pa.Array, flatten: Any) -> Steps:
    """A feature-list column's Steps; `flatten(name, steps)` gives (values, offsets, valid) of the
    steps as for an Example column (values: an ndarray or object array)."""
    if not is_list_type(array.type):
        raise FeatureError(name, f"is {array.type}, not a list of steps: it cannot be a feature list")
    valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    counts = np.where(valid, np.asarray(_lengths(array), dtype=np.int64), 0)
    steps = np.zeros(len(array) + 1, dtype=np.int64)
    np.cumsum(counts, out=steps[1:])
    flat = array.flatten()
    if pa.types.is_null(flat.type):  # steps that never have a kind
        empty = np.zeros(len(flat) + 1, dtype=np.int64)
        return Steps(steps.tolist(), valid.tolist(), [], empty.tolist(), [False] * len(flat))
    values, offsets, step_valid = flatten(name, flat)
    return Steps(steps.tolist(), valid.tolist(), values, offsets.tolist(), step_valid.tolist())


def _lengths(array: pa.Array) -> np.ndarray:
    if pa.types.is_fixed_size_list(array.type):
        return np.full(len(array), array.type.list_size, dtype=np.int64)
    return np.asarray(pc.list_value_length(array).fill_null(0).to_numpy(zero_copy_only=False))
