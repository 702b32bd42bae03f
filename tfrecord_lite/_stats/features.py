"""One feature's statistics over a stream of decoded batches: presence, value counts, and the
accumulators of its kind.

Strategy: the batch decoders give each feature as flat columns (flat.Flat: values, offsets per
row, the rows that have it; flat.Nested for a feature list: steps per row, then values per step),
so a batch is folded in with a few numpy reductions over whole columns: value counts are the
offsets' differences, presence the `valid` mask; the values go to the accumulator of their kind
(numbers for int64 and float, categories for int64 and bytes, lengths and images for bytes). The
kind is fixed by the first batch that gives one; another kind later is an error naming both.
A feature summarised as a RawFeature (statistics(features={key: RawFeature(...)})) is a tensor:
each record's bytes value is checked against the shape and read as its numbers (int64 or float
values, prod(shape) a record), fed to the accumulator a bounded number of values at a time.
The values reach the accumulators VALUE_SLICE at a time, so the working set of the sketches
(hashes, padded matrices, sorts) is bounded however many values one record or batch holds.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from tfrecord_lite._batches.flat import Flat, Nested
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.raw import RawFeature, check_lengths, raw_rows
from tfrecord_lite._stats.numbers import COUNTS_SAMPLE, NumberAccumulator
from tfrecord_lite._stats.results import FeatureStatistics
from tfrecord_lite._stats.values import CategoryAccumulator, ImageAccumulator, as_binary

__all__ = ["FeatureAccumulator", "kind_name", "raw_parts"]

VALUE_SLICE = 1 << 16  # values folded into the sketches at once
_KINDS = {np.dtype(np.int64): "int64", np.dtype(np.float32): "float"}


def kind_name(values: Any) -> str:
    """'int64', 'float' or 'bytes' for a flat column's values."""
    return _KINDS.get(getattr(values, "dtype", None), "bytes")


_RAW_CHUNK = 1 << 22  # values of a RawFeature column converted and folded in at a time


def raw_parts(name: str, spec: RawFeature, column: Flat | Nested | None, rows: int) -> Iterator[tuple[Flat, int]]:
    """A RawFeature's column (its bytes values, one a record) as columns of its numbers, a few
    million values (and their records) at a time: (column, records) pairs to fold in."""
    if not isinstance(column, Flat):
        raise FeatureError(name, "a RawFeature is summarised in Examples (not in feature lists)")
    counts = np.diff(column.offsets)
    present = counts != 0 if column.valid is None else column.valid
    wrong = np.flatnonzero(present & (counts != 1))
    if wrong.size:
        k = int(wrong[0])
        err = FeatureError(name, f"record {k} of the batch has {int(counts[k])} values; a RawFeature one")
        err.batch_record = k  # type: ignore[attr-defined]  # placed by a reader of files (columnar.placing)
        raise err
    data, offsets = as_binary(column.values)
    check_lengths(name, spec, np.diff(offsets))
    size = math.prod(spec.shape)
    step = max(1, _RAW_CHUNK // max(size, 1))
    first = 0  # the first value of the chunk (values are the present rows', in order)
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        chunk_present = present[start:stop]
        k = int(np.count_nonzero(chunk_present))
        numbers = raw_rows(spec, data[offsets[first] : offsets[first + k]], k).reshape(-1)
        numbers = numbers.astype(np.float32 if numbers.dtype.kind in "fc" else np.int64)
        offs = np.zeros(stop - start + 1, dtype=np.int64)
        np.cumsum(chunk_present * size, out=offs[1:])
        yield Flat(numbers, offs, None if column.valid is None else chunk_present), stop - start
        first += k


class FeatureAccumulator:
    """The statistics of one feature (`is_list`: a SequenceExample's feature list)."""

    def __init__(self, name: str, is_list: bool) -> None:
        self.name = name
        self.is_list = is_list
        self.kind: str | None = None
        self.present = 0
        self.value_counts = NumberAccumulator(integer=True, sample_size=COUNTS_SAMPLE)
        self.steps = NumberAccumulator(integer=True, sample_size=COUNTS_SAMPLE) if is_list else None
        self.numbers: NumberAccumulator | None = None
        self.categories: CategoryAccumulator | None = None
        self.lengths: NumberAccumulator | None = None
        self.images: ImageAccumulator | None = None

    def add(self, column: Flat | Nested | None, rows: int) -> None:
        """Fold in a batch of `rows` records' column (None: the key has no kind in this batch)."""
        if column is None:
            return
        valid = column.valid
        self.present += rows if valid is None else int(np.count_nonzero(valid))
        if isinstance(column, Nested):
            steps = np.diff(column.steps)
            assert self.steps is not None
            self.steps.add(steps if valid is None else steps[valid])
            column = column.inner
            valid = column.valid
        counts = np.diff(column.offsets)
        self.value_counts.add(counts if valid is None else counts[valid])
        if len(column.values) or counts.any():
            self._add_values(column.values)

    def _add_values(self, values: Any) -> None:
        kind = kind_name(values)
        if self.kind is None:
            self._start(kind)
        elif kind != self.kind:
            raise FeatureError(self.name, f"holds {self.kind} values in earlier records but {kind} in later ones")
        if kind == "bytes":
            data, offsets = as_binary(values)
            assert self.lengths is not None and self.categories is not None and self.images is not None
            for first in range(0, len(offsets) - 1, VALUE_SLICE):
                part = offsets[first : first + VALUE_SLICE + 1]
                self.lengths.add(np.diff(part))
                self.categories.add_bytes(data, part)
                self.images.add(data, part)
            return
        assert self.numbers is not None
        for first in range(0, len(values), VALUE_SLICE):
            part = values[first : first + VALUE_SLICE]
            self.numbers.add(part)
            if self.categories is not None:
                self.categories.add_ints(part)

    def _start(self, kind: str) -> None:
        self.kind = kind
        if kind != "bytes":
            self.numbers = NumberAccumulator(integer=kind == "int64")
        if kind != "float":
            self.categories = CategoryAccumulator()
        if kind == "bytes":
            self.lengths = NumberAccumulator(integer=True, sample_size=COUNTS_SAMPLE)
            self.images = ImageAccumulator()

    def result(self, records: int, section: str, top_k: int) -> FeatureStatistics:
        return FeatureStatistics(
            name=self.name,
            section=section,
            kind=self.kind,
            present=self.present,
            missing=records - self.present,
            value_counts=self.value_counts.result(),
            numbers=None if self.numbers is None else self.numbers.result(),
            categories=None if self.categories is None else self.categories.result(top_k, self.kind == "int64"),
            lengths=None if self.lengths is None else self.lengths.result(),
            image=None if self.images is None else self.images.result(top_k),
            sequence_lengths=None if self.steps is None else self.steps.result(),
        )
