"""The statistics of a stream of numbers (a feature's values, its value counts, lengths, image
sizes), a batch at a time, in bounded memory.

Strategy: each batch is reduced with numpy to a few numbers — counts, NaNs, zeros, extremes, and
its mean and sum of squared deviations, combined with the running ones by Chan's parallel update
(stable where a running sum of squares is not) — and to a uniform sample (sketches.Sample) for
the quantiles and the histogram: exact while every finite value fits in the sample. Accumulators
merge, so batches, files or workers can be summarised apart. int64 extremes stay ints.
"""

from __future__ import annotations

import numpy as np

from tfrecord_lite._stats.results import Histogram, NumberStats
from tfrecord_lite._stats.sketches import Sample

__all__ = ["BINS", "COUNTS_SAMPLE", "QUANTILES", "VALUES_SAMPLE", "NumberAccumulator"]

VALUES_SAMPLE = 1 << 15  # a feature's values: quantiles within 0.5 / sqrt(32768) ≈ 0.28 % of rank
COUNTS_SAMPLE = 1 << 12  # value counts, lengths, steps, image sizes: within 0.8 % of rank
QUANTILES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 0.99, 1.0)
_CHUNK = 1 << 20  # values reduced at a time
BINS = 20  # equal-width histogram buckets between the finite min and max


class NumberAccumulator:
    """Count, NaNs, infinities, zeros, min, max, mean, variance and a sample of a stream."""

    def __init__(self, integer: bool = False, sample_size: int = VALUES_SAMPLE) -> None:
        self.integer = integer
        self.count = self.nans = self.infinities = self.zeros = 0
        self.finite = 0
        self.mean = self.m2 = 0.0
        self.min: float | int | None = None
        self.max: float | int | None = None
        self.sample = Sample(sample_size)

    def add(self, values: np.ndarray) -> None:
        if not len(values):
            return
        self.count += len(values)
        if self.integer:
            low, high = values.min().item(), values.max().item()
            self._bounds(low, high)
            if low == high:  # value counts of fixed-length features: nothing to reduce
                self.zeros += len(values) if low == 0 else 0
                self._combine(len(values), float(low), 0.0)
                self.sample.add_repeated(float(low), len(values))
                return
            self.zeros += int(np.count_nonzero(values == 0))
            self._moments(values)
            return
        self.zeros += int(np.count_nonzero(values == 0))
        finite = np.isfinite(values)
        if finite.all():
            self._bounds(values.min().item(), values.max().item())
            self._moments(values)
            return
        nan = np.isnan(values)
        self.nans += int(np.count_nonzero(nan))
        numbers = values[~nan]
        if len(numbers):
            self._bounds(numbers.min().item(), numbers.max().item())
        self.infinities += len(numbers) - int(np.count_nonzero(finite))
        if finite.any():
            self._moments(values[finite])

    def _moments(self, values: np.ndarray) -> None:
        for start in range(0, len(values), _CHUNK):  # float64 copies of a bounded size
            as_float = values[start : start + _CHUNK].astype(np.float64)
            mean = float(as_float.mean())
            deviations = as_float - mean
            np.multiply(deviations, deviations, out=deviations)  # not a BLAS dot: no threads of its own
            self._combine(len(as_float), mean, float(deviations.sum()))
            self.sample.add(as_float)

    def _bounds(self, low: float, high: float) -> None:
        self.min = low if self.min is None else min(self.min, low)
        self.max = high if self.max is None else max(self.max, high)

    def _combine(self, n: int, mean: float, m2: float) -> None:
        total = self.finite + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self.m2 += m2 + delta * delta * self.finite * n / total
        self.finite = total

    def merge(self, other: NumberAccumulator) -> None:
        self.count += other.count
        self.nans += other.nans
        self.infinities += other.infinities
        self.zeros += other.zeros
        if other.min is not None and other.max is not None:
            self._bounds(other.min, other.max)
        if other.finite:
            self._combine(other.finite, other.mean, other.m2)
        self.sample.merge(other.sample)

    def _bins(self, values: np.ndarray) -> int | np.ndarray:
        """BINS equal buckets; for integers spanning fewer values, one bucket per integer."""
        low, high = float(values.min()), float(values.max())
        if self.integer and high - low < BINS:
            return np.arange(low, high + 2) - 0.5
        return BINS

    def result(self) -> NumberStats:
        values = self.sample.values
        quantiles: tuple[tuple[float, float], ...] = ()
        counts: tuple[float, ...] = ()
        edges: tuple[float, ...] = ()
        if len(values):
            quantiles = tuple(zip(QUANTILES, np.quantile(values, QUANTILES).tolist(), strict=True))
            hist, bin_edges = np.histogram(values, bins=self._bins(values))
            scale = self.finite / len(values)
            counts = tuple(hist.tolist()) if scale == 1 else tuple((hist * scale).tolist())
            edges = tuple(bin_edges.tolist())
        finite = self.finite > 0
        return NumberStats(
            count=self.count,
            nans=self.nans,
            infinities=self.infinities,
            zeros=self.zeros,
            min=self.min,
            max=self.max,
            mean=self.mean if finite else None,
            std=float(np.sqrt(self.m2 / self.finite)) if finite else None,
            quantiles=quantiles,
            histogram=Histogram(edges, counts),
            exact=self.sample.is_exact,
            sample_size=len(values),
        )
