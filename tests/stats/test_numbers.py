# NumberAccumulator: batch by batch and merged from parts, it gives what numpy gives over the whole
# stream (counts, extremes, mean, std; quantiles and histogram while the sample holds every value).
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_lite._stats.numbers import NumberAccumulator

floats = st.lists(
    st.one_of(st.floats(-1e9, 1e9, width=32), st.sampled_from([0.0, float("nan"), float("inf"), -float("inf")])),
    max_size=80,
)


def _fed(parts, integer=False):
    acc = NumberAccumulator(integer=integer, sample_size=1000)
    for part in parts:
        acc.add(np.array(part, dtype=np.int64 if integer else np.float32))
    return acc


def _check(result, values):
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    assert result.count == len(values)
    assert result.nans == int(np.isnan(values).sum()) and result.infinities == int(np.isinf(values).sum())
    assert result.zeros == int((values == 0).sum())
    numbers = values[~np.isnan(values)]
    assert (result.min, result.max) == ((numbers.min(), numbers.max()) if len(numbers) else (None, None))
    if len(finite):
        assert result.mean == pytest.approx(finite.mean(), rel=1e-9, abs=1e-6)
        assert result.std == pytest.approx(finite.std(), rel=1e-6, abs=1e-3)
        assert [v for _, v in result.quantiles] == pytest.approx(np.quantile(finite, [q for q, _ in result.quantiles]))
        assert sum(result.histogram.counts) == len(finite)
    else:
        assert result.mean is None and result.quantiles == ()


@settings(max_examples=60, deadline=None)
@given(st.lists(floats, max_size=5), st.lists(floats, max_size=5))
def test_floats_batched_and_merged(a, b):
    left, right = _fed(a), _fed(b)
    left.merge(right)
    values = [np.float32(v) for part in a + b for v in part]
    _check(left.result(), values)
    _check(_fed(a + b).result(), values)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(-(2**40), 2**40), max_size=50), max_size=5), st.integers(0, 9))
def test_ints_batched_and_merged(parts, constant):
    parts = [*parts, [constant] * 7]  # a constant run takes the short path
    left, right = _fed(parts[:2], integer=True), _fed(parts[2:], integer=True)
    left.merge(right)
    values = [v for part in parts for v in part]
    result = left.result()
    _check(result, values)
    assert isinstance(result.min, int) and result.min == min(values)  # int64 extremes stay exact
