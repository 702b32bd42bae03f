"""Record batches decoded without a spec, joined into one table (read_arrow, the Dask partitions):
each batch has the columns of its own records, so one may lack a key, hold it with no kind yet, or
hold it with another type than the batch before.

Strategy: one pass over the batches' schemas finds each column's type where its values have a kind
(the first batch that has one), and raises where two batches disagree, naming the key, both types
and both batches — a feature list told from a feature by its schema mark — instead of Arrow's error
or a silent promotion (int64 into double would round large values). Columns with no kind in a batch
(type null, lists of null) are cast to that type; Arrow then fills the keys a batch lacks with nulls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tfrecord_lite._arrow.feature_lists import is_feature_list, is_list_type
from tfrecord_lite._arrow.lazy import lazy
from tfrecord_lite._errors import FeatureError

if TYPE_CHECKING:
    import pyarrow as pa
else:  # imported at first use (lazy.py)
    pa = lazy("pyarrow", globals(), "pa")

__all__ = ["concat_batches"]


def concat_batches(batches: Sequence[pa.RecordBatch]) -> pa.Table:
    """Batches decoded without a spec as one table: a key some lack is null there, a column
    whose values never have a kind in a batch (type null, or a feature list of null steps)
    takes the type it has in the others; a key with two types (int64 in one batch, float in
    another; a feature in one, a feature list in another) is a FeatureError naming both."""
    kinds = _column_kinds(batches)
    tables = [pa.Table.from_batches([_with_kinds(batch, kinds)]) for batch in batches]
    return pa.concat_tables(tables, promote_options="default")


def _kindless(kind: pa.DataType) -> bool:
    """Whether a column's type holds no kind of value: null, or lists of null."""
    return bool(pa.types.is_null(kind) or (is_list_type(kind) and _kindless(kind.value_type)))


def _column_kinds(batches: Sequence[pa.RecordBatch]) -> dict[str, tuple[pa.Field, int]]:
    """Each column's field (and the batch it is first in) where its values have a kind."""
    seen: dict[str, tuple[pa.Field, int]] = {}
    for number, batch in enumerate(batches):
        for field in batch.schema:
            if _kindless(field.type):
                continue
            first, at = seen.setdefault(field.name, (field, number))
            if first.type != field.type or _described(first) != _described(field):
                raise FeatureError(
                    field.name,
                    f"is {_described(first)} in batch {at} but {_described(field)} in batch {number}: "
                    "a column keeps one type; give a spec (features=, sequence_features=)",
                )
    return seen


def _with_kinds(batch: pa.RecordBatch, kinds: Mapping[str, tuple[pa.Field, int]]) -> pa.RecordBatch:
    """`batch` with its kindless columns cast to the field they have in other batches."""
    fields, arrays = list(batch.schema), list(batch.columns)
    for i, field in enumerate(fields):
        if field.name in kinds and _kindless(field.type):
            fields[i] = kinds[field.name][0]
            arrays[i] = arrays[i].cast(fields[i].type)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def _described(field: pa.Field) -> str:
    return f"a feature list {field.type}" if is_feature_list(field) else str(field.type)
