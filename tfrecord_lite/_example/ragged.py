"""Ragged: variable-length rows, nested as TensorFlow's RaggedTensor nests them.

Strategy: a Ragged is a pair (values, row_splits): row i is values[row_splits[i]:row_splits[i + 1]].
`values` is a numpy array (an object array for bytes; more than one dimension when the innermost
rows have a uniform length) or, for more ragged dimensions, itself a Ragged — the canonical nesting
is Ragged(Ragged(values, inner_splits), outer_splits), outermost partition outside. Everything is
derived from that pair: flat_values and nested_row_splits by walking the nesting, to_list by
splitting the flat values' Python list once per level (innermost first), padding by numpy indexing
(each flat value's position in every dimension at once), stacking by offsetting the splits.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from tfrecord_lite._repr import shown_value

_SHOWN_ROWS = 3  # rows a Ragged's repr shows


class Ragged(NamedTuple):
    """Variable-length rows: row i is ``values[row_splits[i]:row_splits[i + 1]]``; `values` is an
    array or, for further ragged dimensions, a Ragged itself (as in tf.RaggedTensor)."""

    values: Any  # np.ndarray | Ragged
    row_splits: np.ndarray

    @property
    def flat_values(self) -> np.ndarray:
        """The innermost values, an array (as RaggedTensor.flat_values)."""
        values = self.values
        while isinstance(values, Ragged):
            values = values.values
        return values  # type: ignore[no-any-return]

    @property
    def nested_row_splits(self) -> tuple[np.ndarray, ...]:
        """The row splits of every ragged dimension, outermost first."""
        splits = [self.row_splits]
        values = self.values
        while isinstance(values, Ragged):
            splits.append(values.row_splits)
            values = values.values
        return tuple(splits)

    @property
    def ragged_rank(self) -> int:
        """How many ragged dimensions there are (1 for Ragged(array, splits))."""
        return len(self.nested_row_splits)

    @property
    def nrows(self) -> int:
        return len(self.row_splits) - 1

    @property
    def dtype(self) -> np.dtype:
        return self.flat_values.dtype

    def row_lengths(self) -> np.ndarray:
        """The number of values (or of inner rows) in each row."""
        return np.diff(self.row_splits)

    def row(self, i: int) -> Any:
        """Row `i`: an array, or a Ragged when there are inner ragged dimensions."""
        start, end = int(self.row_splits[i]), int(self.row_splits[i + 1])
        return _rows(self.values, start, end)

    def to_list(self) -> list[Any]:
        """Nested Python lists of Python scalars (bytes for strings), as RaggedTensor.to_list()."""
        out: list[Any] = self.flat_values.tolist()
        for splits in reversed(self.nested_row_splits):
            bounds = splits.tolist()
            out = [out[a:b] for a, b in itertools.pairwise(bounds)]
        return out

    def __repr__(self) -> str:
        rows = self.nrows
        shown = ", ".join(shown_value(_as_list(self.row(i))) for i in range(min(rows, _SHOWN_ROWS)))
        more = ", ..." if rows > _SHOWN_ROWS else ""
        dims = ", ".join(["None"] * self.ragged_rank + [str(d) for d in self.flat_values.shape[1:]])
        return f"Ragged(shape=[{rows}, {dims}], dtype={self.dtype}, rows=[{shown}{more}])"


def _as_list(value: Any) -> Any:
    return value.to_list() if isinstance(value, Ragged) else value.tolist()


def _rows(values: Any, start: int, end: int) -> Any:
    """Rows start..end of `values` (an array, or a Ragged whose splits are then rebased)."""
    if not isinstance(values, Ragged):
        return values[start:end]
    splits = values.row_splits[start : end + 1]
    inner = _rows(values.values, int(splits[0]), int(splits[-1]))
    return Ragged(inner, splits - splits[0])


def from_nested_splits(flat_values: np.ndarray, nested_splits: Sequence[np.ndarray]) -> Any:
    """Ragged(Ragged(flat_values, nested_splits[-1]), ...) with nested_splits[0] outermost;
    the flat values themselves when there are no splits."""
    out: Any = flat_values
    for splits in reversed(nested_splits):
        out = Ragged(out, splits)
    return out


def stack(items: Sequence[Any], splits_dtype: Any = np.int64) -> Ragged:
    """One Ragged with the items as its rows (each an array or a Ragged of one structure)."""
    first = items[0] if items else None
    depth = first.ragged_rank if isinstance(first, Ragged) else 0
    flat = [item.flat_values if isinstance(item, Ragged) else _array(item) for item in items]
    lengths = [np.array([v.nrows if isinstance(v, Ragged) else len(v) for v in items], dtype=np.int64)]
    for level in range(depth):
        per = [item.nested_row_splits[level] for item in items]
        lengths.append(np.concatenate([np.diff(s) for s in per]) if per else np.empty(0, np.int64))
    if flat:
        values = np.concatenate(flat) if flat[0].dtype != object else _objects([v for f in flat for v in f])
    else:
        values = np.empty(0)
    splits = [_splits(length, splits_dtype) for length in lengths]
    return from_nested_splits(values, splits)  # type: ignore[no-any-return]


def _splits(lengths: np.ndarray, dtype: Any) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=dtype)
    np.cumsum(lengths, out=out[1:])
    return out


def _array(value: Any) -> np.ndarray:
    return _objects(value) if isinstance(value, list) else np.asarray(value)


def _objects(values: list[Any]) -> np.ndarray:
    """An object array of the values (fromiter: an assignment would look into memoryviews)."""
    return np.fromiter(values, dtype=object, count=len(values))


def positions(ragged: Ragged) -> tuple[tuple[np.ndarray, ...], list[np.ndarray]]:
    """Where each flat value sits in the padded dense array (one index array per ragged
    dimension, batch first), and the dense shape's ragged widths."""
    all_splits = ragged.nested_row_splits
    count = len(ragged.flat_values)
    rows = np.arange(count)
    index: list[np.ndarray] = []
    widths: list[np.ndarray] = []
    for splits in reversed(all_splits):
        lengths = np.diff(splits)
        parent = np.repeat(np.arange(len(lengths)), lengths)[rows]
        index.append(rows - splits[parent])
        widths.append(lengths)
        rows = parent
    index.append(rows)
    return tuple(reversed(index)), list(reversed(widths))


def padded(ragged: Ragged, pad_value: Any) -> tuple[np.ndarray, list[np.ndarray]]:
    """The dense array (every ragged dimension padded to its longest row with `pad_value`), and
    per ragged dimension the lengths of its rows, shaped as the dimensions outside it."""
    index, widths = positions(ragged)
    flat = ragged.flat_values
    dims = [ragged.nrows] + [int(w.max()) if len(w) else 0 for w in widths]
    out = np.full(tuple(dims) + flat.shape[1:], pad_value, dtype=flat.dtype)
    out[index] = flat
    all_splits = ragged.nested_row_splits
    lengths = [widths[0].astype(np.int64)]
    for level in range(1, len(widths)):
        rows_here = from_nested_splits(np.zeros(int(all_splits[level - 1][-1])), all_splits[:level])
        shaped = np.zeros(tuple(dims[: level + 1]), dtype=np.int64)
        shaped[positions(rows_here)[0]] = widths[level]
        lengths.append(shaped)
    return out, lengths
