"""A RaggedFeature's value built from the plain columns it reads: its values and its partition
features, for a batch of records at once (one record is a batch of one).

Strategy: every column is flat values plus a count per record. The partitions are applied
innermost first; each turns the values per record at its level into row lengths and rows per
record, with numpy over the whole batch (segment boundaries from the counts, no loop per
record): RowLengths are the lengths, RowSplits / RowLimits / RowStarts differ within a record,
ValueRowIds are counted, a UniformRowLength divides. Each is checked against the values it
partitions before anything is sized by it (bounds, order, totals), so bad partitions are a
FeatureError naming the feature, the record and what was expected, never an out-of-bounds read;
the check is always made, whatever `validate` says. Innermost uniform lengths reshape the
values, as in TensorFlow; every other partition becomes a level of Ragged splits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.ragged import Ragged, from_nested_splits
from tfrecord_lite._example.ragged_spec import (
    Partition,
    RaggedFeature,
    RowLengths,
    RowLimits,
    RowSplits,
    RowStarts,
    UniformRowLength,
    ValueRowIds,
)

# Rows a ValueRowIds partition may add past its values (empty rows), per record and over a
# whole batch: ids are untrusted numbers, and the rows they imply are allocated (8 bytes each),
# so a batch of records each of a few bytes cannot claim a million rows apiece.
MAX_EMPTY_ROWS = 1 << 20
_INT32_MAX = np.iinfo(np.int32).max


class Column(NamedTuple):
    """One feature over a batch: its values, flat, and how many each record has."""

    values: Any  # an ndarray (an object array for bytes)
    counts: np.ndarray  # int64, one per record


class _Segments(NamedTuple):
    """Where each record's partition values lie in the flat partition column."""

    owner: np.ndarray  # the record of each value
    first: np.ndarray  # per record: index of its first value
    counts: np.ndarray  # per record
    same: np.ndarray  # per value but the last: does the next value belong to the same record


def _segments(counts: np.ndarray) -> _Segments:
    owner = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    return _Segments(owner, first, counts, owner[1:] == owner[:-1])


class _Checks:
    """The checks of one partition: the first record that fails one raises its message, saying
    where the record is (`where`, from its index)."""

    def __init__(self, key: str, partition: Partition, n: int, where: Callable[[int], str]) -> None:
        self.key, self.partition, self.n, self.where = key, partition, n, where

    def records(self, bad: np.ndarray, message: Callable[[int], str]) -> None:
        """`bad`: a mask over the records."""
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            detail = f"partition {self.partition!r} does not fit the values: {message(i)}{self.where(i)}"
            raise FeatureError(self.key, detail)

    def values(self, bad: np.ndarray, owner: np.ndarray, message: Callable[[int], str]) -> None:
        """`bad`: a mask over the partition values, `owner` their records."""
        if bad.any():
            mask = np.zeros(self.n, dtype=bool)
            mask[owner[bad]] = True
            self.records(mask, message)


def _lengths(
    partition: Partition, column: Column | None, nvals: np.ndarray, checks: _Checks
) -> tuple[np.ndarray, np.ndarray]:
    """(row lengths, flat over the batch; rows per record) of one partition over `nvals` values
    per record, checked first."""
    if isinstance(partition, UniformRowLength):
        k = partition.length
        checks.records(nvals % k != 0, lambda i: f"{int(nvals[i])} values are not a multiple of {k}")
        rows = nvals // k
        return np.full(int(rows.sum()), k, dtype=np.int64), rows
    assert column is not None
    p, seg = np.asarray(column.values, dtype=np.int64), _segments(column.counts)
    limit = nvals[seg.owner]
    if isinstance(partition, ValueRowIds):
        return _row_ids(p, seg, nvals, checks)
    values_of = _describe(p, seg)
    if isinstance(partition, RowLengths):
        checks.values(
            (p < 0) | (p > limit),
            seg.owner,
            lambda i: f"row lengths {values_of(i)} must be in 0..{int(nvals[i])} (the values)",
        )
        total = np.zeros(len(p) + 1, dtype=np.int64)
        np.cumsum(p, out=total[1:])
        sums = total[seg.first + seg.counts] - total[seg.first]
        checks.records(
            sums != nvals, lambda i: f"row lengths sum to {int(sums[i])}, but there are {int(nvals[i])} values"
        )
        return p, seg.counts
    name = _NAMES[type(partition)]
    checks.values(
        (p < 0) | (p > limit),
        seg.owner,
        lambda i: f"{name} {values_of(i)} must be in 0..{int(nvals[i])} (there are {int(nvals[i])} values)",
    )
    checks.values(
        np.concatenate([(np.diff(p) < 0) & seg.same, [False]]),
        seg.owner,
        lambda i: f"{name} {values_of(i)} must not decrease",
    )
    has = seg.counts > 0
    checks.records(~has & (nvals > 0), lambda i: f"no {name} given for {int(nvals[i])} values")
    last = np.where(has, p[np.maximum(seg.first + seg.counts - 1, 0)] if len(p) else 0, 0)
    head = np.where(has, p[np.minimum(seg.first, max(len(p) - 1, 0))] if len(p) else 0, 0)
    if isinstance(partition, (RowSplits, RowStarts)):
        checks.records(has & (head != 0), lambda i: f"{name} {values_of(i)} must start at 0")
    if isinstance(partition, (RowSplits, RowLimits)):
        checks.records(
            has & (last != nvals),
            lambda i: f"{name} {values_of(i)} end at {int(last[i])}, but there are {int(nvals[i])} values",
        )
    if isinstance(partition, RowSplits):
        return np.diff(p)[seg.same], np.maximum(seg.counts - 1, 0)
    if isinstance(partition, RowLimits):
        previous = np.concatenate([[0], p[:-1]])
        previous[seg.first[has]] = 0
        return p - previous, seg.counts
    following = np.concatenate([p[1:], [0]])  # RowStarts: a row ends where the next starts
    ends = seg.first[has] + seg.counts[has] - 1
    following[ends] = nvals[has]
    return following - p, seg.counts


_NAMES = {RowSplits: "row splits", RowLimits: "row limits", RowStarts: "row starts"}


def _row_ids(p: np.ndarray, seg: _Segments, nvals: np.ndarray, checks: _Checks) -> tuple[np.ndarray, np.ndarray]:
    values_of = _describe(p, seg)
    checks.records(seg.counts != nvals, lambda i: f"{int(seg.counts[i])} row ids for {int(nvals[i])} values")
    limit = nvals[seg.owner] + MAX_EMPTY_ROWS
    checks.values(
        (p < 0) | (p >= limit),
        seg.owner,
        lambda i: f"row ids {values_of(i)} must be in 0..{int(nvals[i]) + MAX_EMPTY_ROWS - 1}",
    )
    checks.values(
        np.concatenate([(np.diff(p) < 0) & seg.same, [False]]),
        seg.owner,
        lambda i: f"row ids {values_of(i)} must not decrease",
    )
    has = seg.counts > 0
    rows = np.zeros(len(nvals), dtype=np.int64)
    rows[has] = p[seg.first[has] + seg.counts[has] - 1] + 1
    extra = np.maximum(rows - nvals, 0)  # at least the empty rows each record's ids imply
    checks.records(
        np.cumsum(extra) > MAX_EMPTY_ROWS,
        lambda i: f"row ids {values_of(i)} take the batch past {MAX_EMPTY_ROWS} empty rows in all",
    )
    offsets = np.cumsum(rows) - rows
    lengths = np.bincount(p + offsets[seg.owner], minlength=int(rows.sum())).astype(np.int64)
    return lengths, rows


def _describe(p: np.ndarray, seg: _Segments) -> Callable[[int], str]:
    """The message text for record i's partition values (its first ones)."""

    def text(i: int) -> str:
        values = p[seg.first[i] : seg.first[i] + seg.counts[i]].tolist()
        return str(values if len(values) <= 8 else values[:8] + ["..."])

    return text


def build(
    key: str,
    spec: RaggedFeature,
    base: Column,
    columns: Mapping[str, Column],
    n: int,
    batch: bool,
    dense: bool = True,
    where: Callable[[int], str] | None = None,
) -> Any:
    """The value of RaggedFeature `key` for `n` records from the columns it reads (spec.keys):
    its values `base` and its partitions' `columns`. Batched, a Ragged with the records
    outermost; else record 0's value (its values array, or a list for bytes, when nothing is
    ragged). `dense=False`: innermost uniform lengths become splits too. `where(i)`: where
    record i is, in an error (by default its index in the batch, when batched)."""
    values, nvals = base.values, base.counts
    splits: list[np.ndarray] = []
    where = where or ((lambda i: f" (record {i} of the batch)") if batch else (lambda i: ""))
    for partition in reversed(spec.partitions):
        checks = _Checks(key, partition, n, where)
        column = None if isinstance(partition, UniformRowLength) else columns[partition.key]
        lengths, rows = _lengths(partition, column, nvals, checks)
        if dense and isinstance(partition, UniformRowLength):  # trailing uniform lengths reshape the values
            values = values.reshape((-1, partition.length) + values.shape[1:])
        else:
            dense = False
            splits.insert(0, _to_splits(key, lengths, spec.row_splits_dtype))
        nvals = rows
    if batch:
        splits.insert(0, _to_splits(key, nvals, spec.row_splits_dtype))
    elif not splits and not spec.partitions and spec.dtype == "bytes":
        return values.tolist()  # as a VarLenFeature's bytes
    return from_nested_splits(values, splits)


def build_steps(
    key: str, spec: RaggedFeature, columns: Mapping[str, Column], steps: Mapping[str, np.ndarray], batch: bool
) -> Any:
    """A RaggedFeature of sequence_features from the feature lists it reads: `columns` count
    values per step (the steps of every record, record after record), `steps` count each
    list's steps per record. Each step is a row, partitioned as an Example's values are by the
    same step of the partition lists, so every list it reads must have as many steps as the
    values' list (TensorFlow does not check it, and mixes the records' values where they
    differ). Batched, a Ragged [records, steps, ...]; one record, a Ragged [steps, ...]. Bytes
    values may come as a list."""
    value_key = spec.value_key or key
    columns = {part: Column(_objects(c.values), c.counts) for part, c in columns.items()}
    want = steps[value_key]
    for part, have in steps.items():
        wrong = np.flatnonzero(have != want)
        if wrong.size:
            i = int(wrong[0])
            where = f" (record {i} of the batch)" if batch else ""
            raise FeatureError(
                key,
                f"feature list {part!r} has {int(have[i])} steps, but {value_key!r} has {int(want[i])}: "
                f"a RaggedFeature partitions each step of its values by the same step of its partitions{where}",
            )
    ends = np.cumsum(want)

    def where_step(i: int) -> str:
        record = int(np.searchsorted(ends, i, side="right"))
        step = i - int(ends[record] - want[record])
        return f" (step {step} of record {record} of the batch)" if batch else f" (step {step})"

    value = build(key, spec, columns[value_key], columns, int(ends[-1]) if len(ends) else 0, True, where=where_step)
    return Ragged(value, _to_splits(key, want, spec.row_splits_dtype)) if batch else value


def _objects(values: Any) -> Any:
    return np.fromiter(values, dtype=object, count=len(values)) if isinstance(values, list) else values


def _to_splits(key: str, lengths: np.ndarray, dtype: str) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    if dtype == "int32":
        if out[-1] > _INT32_MAX:
            raise FeatureError(key, f"{int(out[-1])} values do not fit row_splits_dtype int32: use int64")
        return out.astype(np.int32)
    return out


def ragged_column(values: Any) -> Column:
    """The Column of one VarLenFeature decoded for a batch (a Ragged, or a list of lists of bytes)."""
    if isinstance(values, Ragged):
        return Column(values.values, np.diff(values.row_splits).astype(np.int64))
    counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    flat = [v for row in values for v in row]
    return Column(np.fromiter(flat, dtype=object, count=len(flat)), counts)


def single_column(values: Any) -> Column:
    """The Column of one VarLenFeature decoded for one record (an array, or a list of bytes)."""
    if isinstance(values, list):
        values = np.fromiter(values, dtype=object, count=len(values))
    return Column(values, np.array([len(values)], dtype=np.int64))


def finish_batch(columns: Mapping[str, Any], specs: Mapping[str, Any], n: int) -> dict[str, Any]:
    """decode_examples' columns for `specs` from the columns of their components (ragged_spec's
    `components`): each RaggedFeature built from the VarLenFeature columns it reads."""
    out: dict[str, Any] = {}
    for key, spec in specs.items():
        if isinstance(spec, RaggedFeature):
            read = {part: ragged_column(columns[part]) for part in spec.keys(key)}
            out[key] = build(key, spec, read[spec.value_key or key], read, n, batch=True)
        else:
            out[key] = columns[key]
    return out


class FlatRagged(NamedTuple):
    """A RaggedFeature's column in Arrow's layout: its values' flat column, and the offsets of
    every level of lists, the records' first."""

    values: Any  # the values feature's flat.Flat
    nested_splits: tuple[np.ndarray, ...]


def finish_flat(columns: Mapping[str, Any], specs: Mapping[str, Any], n: int) -> dict[str, Any]:
    """finish_batch for flat columns (flat.Flat: values and offsets): a RaggedFeature's column is a
    FlatRagged, its partitions computed over the positions of its values."""
    out: dict[str, Any] = {}
    for key, spec in specs.items():
        if not isinstance(spec, RaggedFeature):
            out[key] = columns[key]
            continue
        read = {part: Column(columns[part].values, np.diff(columns[part].offsets)) for part in spec.keys(key)}
        flat = columns[spec.value_key or key]
        positions = Column(np.arange(int(flat.offsets[-1])), np.diff(flat.offsets))
        ragged = build(key, spec, positions, read, n, batch=True, dense=False)
        out[key] = FlatRagged(flat, tuple(s.astype(np.int64) for s in ragged.nested_row_splits))
    return out
