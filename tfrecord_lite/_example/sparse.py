"""SparseFeature's values: `Sparse` (indices, values, dense_shape: the fields of TensorFlow's
SparseTensor) built from the VarLenFeature values of its index and value keys, for one record
or for a batch.

Strategy: as in TensorFlow, a SparseFeature is a composite. Its keys are read as VarLenFeatures
by the decoders that already exist (`components` lists them; a batch reads them by columns,
in lockstep), and the result is put together here with numpy, once per record or once per
batch: the index columns stacked (a batch's row number first), then, unless `already_sorted` or
in order already, sorted lexicographically: the columns' offsets from their minimum and the
entry's position packed into one int64 (mixed radix) and sorted by numpy's vectorised argsort,
or by np.lexsort where that number would not fit. Entries with equal indices keep their order in the
record (TensorFlow's order among them is unspecified). Indices are not checked against the
size when decoding, as in TensorFlow; `Sparse.to_dense` checks them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.spec import FeatureSpec, SparseFeature, VarLenFeature
from tfrecord_lite._repr import shown_value

_SHOWN_ENTRIES = 3  # entries a Sparse's repr shows
_INDEX = VarLenFeature("int64")


class Sparse(NamedTuple):
    """A sparse tensor, as TensorFlow's SparseTensor: entry i is ``values[i]`` at ``indices[i]``
    (int64, [nnz, rank]) in a dense tensor of ``dense_shape`` (int64, [rank]). ``values`` is an
    ndarray of the spec's dtype, or a list of bytes for strings (as a VarLenFeature's)."""

    indices: np.ndarray
    values: Any
    dense_shape: np.ndarray

    def to_dense(self, default: Any = None) -> np.ndarray:
        """The dense ndarray: `default` (0, or b"" for bytes, when None) where no entry is. An
        index out of the dense shape, or one that is repeated, is a ValueError (as in tf.sparse.to_dense)."""
        shape = tuple(int(d) for d in self.dense_shape)
        is_bytes = isinstance(self.values, list)
        if default is None:
            default = b"" if is_bytes else 0
        out = np.full(shape, default, dtype=object if is_bytes else self.values.dtype)
        if not len(self.indices):
            return out
        _check_bounds(self.indices, self.dense_shape)
        flat = np.ravel_multi_index(tuple(self.indices.T), shape)
        _check_repeats(self.indices, flat)
        values = np.fromiter(self.values, dtype=object, count=len(self.values)) if is_bytes else self.values
        out.reshape(-1)[flat] = values
        return out

    def __repr__(self) -> str:
        nnz = len(self.indices)
        dtype = "bytes" if isinstance(self.values, list) else self.values.dtype
        entries = zip(self.indices[:_SHOWN_ENTRIES].tolist(), self._shown(), strict=True)
        shown = ", ".join(f"{idx}: {shown_value(val)}" for idx, val in entries)
        more = ", ..." if nnz > _SHOWN_ENTRIES else ""
        return f"Sparse(dense_shape={self.dense_shape.tolist()}, dtype={dtype}, nnz={nnz}, entries={{{shown}{more}}})"

    def _shown(self) -> list[Any]:
        head = self.values[:_SHOWN_ENTRIES]
        return list(head) if isinstance(head, list) else head.tolist()


def _check_bounds(indices: np.ndarray, dense_shape: np.ndarray) -> None:
    outside = np.flatnonzero(((indices < 0) | (indices >= dense_shape)).any(axis=1))
    if outside.size:
        i = int(outside[0])
        raise ValueError(
            f"Sparse.to_dense: index {indices[i].tolist()} (entry {i}) is out of range of dense_shape "
            f"{dense_shape.tolist()}"
        )


def _check_repeats(indices: np.ndarray, flat: np.ndarray) -> None:
    order = np.argsort(flat, kind="stable")
    repeated = np.flatnonzero(flat[order][1:] == flat[order][:-1])
    if repeated.size:
        i = int(order[repeated[0] + 1])
        raise ValueError(f"Sparse.to_dense: index {indices[i].tolist()} (entry {i}) is repeated")


def components(features: Mapping[str, FeatureSpec]) -> Mapping[str, FeatureSpec]:
    """The specs a decoder reads for `features`: each SparseFeature replaced by VarLenFeatures of its
    index and value keys (`features` itself when it holds none)."""
    if not any(type(spec) is SparseFeature for spec in features.values()):
        return features
    out: dict[str, FeatureSpec] = {k: s for k, s in features.items() if not isinstance(s, SparseFeature)}
    for spec in features.values():
        if isinstance(spec, SparseFeature):
            for key in spec.index_keys:
                out.setdefault(key, _INDEX)
            out.setdefault(spec.value_key, VarLenFeature(spec.dtype))
    return out


def _order(columns: Sequence[np.ndarray]) -> np.ndarray | None:
    """The stable lexicographic order of the rows of `columns` (first column first), or None
    when they are in order already."""
    if len(columns[0]) < 2:
        return None
    ahead = np.zeros(len(columns[0]) - 1, dtype=bool)  # pairs already decided as increasing
    for col in columns:  # compared, not subtracted: any int64 is an index
        if ((col[1:] < col[:-1]) & ~ahead).any():
            return _sort(columns)
        ahead |= col[1:] > col[:-1]
    return None


def _sort(columns: Sequence[np.ndarray]) -> np.ndarray:
    """The stable lexicographic order of `columns`: where the columns' ranges and the entries'
    positions fit in one int64 (as with any real dense shape), one argsort of that number (numpy's
    vectorised sort), else np.lexsort."""
    lows = [int(col.min()) for col in columns]
    spans = [int(col.max()) - low + 1 for col, low in zip(columns, lows, strict=True)]
    if math.prod(spans) * len(columns[0]) >= 2**63:
        return np.lexsort(tuple(reversed(columns)))
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col, low, span in zip(columns, lows, spans, strict=True):
        key *= span
        key += col - low if low else col
    key *= len(key)
    key += np.arange(len(key), dtype=np.int64)  # equal indices keep their order
    return np.argsort(key)


def _count_error(key: str, spec: SparseFeature, index_counts: Sequence[int], value_count: int) -> FeatureError:
    found = ", ".join(f"{n} under {k!r}" for k, n in zip(spec.index_keys, index_counts, strict=True))
    return FeatureError(
        key, f"expected one index per value: found {value_count} values under {spec.value_key!r}, indices {found}"
    )


def sparse_value(key: str, spec: SparseFeature, ids: Sequence[np.ndarray], values: Any) -> Sparse:
    """One record's Sparse from its index lists (one per index key) and its values."""
    counts = [len(i) for i in ids]
    if any(c != len(values) for c in counts):
        raise _count_error(key, spec, counts, len(values))
    indices = np.stack(ids, axis=1) if len(values) else np.empty((0, len(ids)), dtype=np.int64)
    order = None if spec.already_sorted else _order(ids)
    if order is not None:
        indices = indices[order]
        values = [values[i] for i in order.tolist()] if isinstance(values, list) else values[order]
    return Sparse(indices, values, np.array(spec.shape, dtype=np.int64))


class Rows(NamedTuple):
    """A batch column of a VarLenFeature: flat values (an ndarray, or a list of bytes) and row_splits."""

    values: Any
    row_splits: np.ndarray


def batch_rows(column: Any) -> Rows:
    """A decode_examples VarLenFeature column (a Ragged, or a list of lists of bytes) as Rows."""
    if isinstance(column, list):
        lengths = np.fromiter(map(len, column), dtype=np.int64, count=len(column))
        splits = np.zeros(len(column) + 1, dtype=np.int64)
        np.cumsum(lengths, out=splits[1:])
        return Rows([v for row in column for v in row], splits)
    return Rows(column.values, column.row_splits)


def first_mismatch(ids: Sequence[Rows], values: Rows) -> int | None:
    """The first row whose index and value counts differ, or None."""
    lengths = np.diff(values.row_splits)
    bad = np.zeros(len(lengths), dtype=bool)
    for rows in ids:
        bad |= np.diff(rows.row_splits) != lengths
    where = np.flatnonzero(bad)
    return int(where[0]) if where.size else None


def sparse_batch(spec: SparseFeature, ids: Sequence[Rows], values: Rows) -> Sparse:
    """A batch's Sparse, its row number the first index column, from Rows whose counts agree
    (first_mismatch found none)."""
    n = len(values.row_splits) - 1
    batch_row = np.repeat(np.arange(n, dtype=np.int64), np.diff(values.row_splits))
    columns = [batch_row, *(np.asarray(rows.values, dtype=np.int64) for rows in ids)]
    indices = np.empty((len(batch_row), len(columns)), dtype=np.int64)
    for j, col in enumerate(columns):
        indices[:, j] = col
    flat = values.values
    order = None if spec.already_sorted else _order(columns)
    if order is not None:
        indices = indices[order]
        flat = [flat[i] for i in order.tolist()] if isinstance(flat, list) else flat[order]
    return Sparse(indices, flat, np.array((n, *spec.shape), dtype=np.int64))


def stack_sparse(items: Sequence[Sparse]) -> Sparse:
    """One batch Sparse from single records' ones of one dense shape, the item's number first."""
    shapes = {tuple(item.dense_shape.tolist()) for item in items}
    if len(shapes) != 1:
        raise ValueError(f"cannot batch Sparse values of different dense shapes: {sorted(shapes)}")
    counts = np.fromiter((len(item.indices) for item in items), dtype=np.int64, count=len(items))
    batch_row = np.repeat(np.arange(len(items), dtype=np.int64), counts)
    indices = np.column_stack([batch_row, np.concatenate([item.indices for item in items])])
    if isinstance(items[0].values, list):
        values: Any = [v for item in items for v in item.values]
    else:
        values = np.concatenate([item.values for item in items])
    return Sparse(indices, values, np.array((len(items), *shapes.pop()), dtype=np.int64))
