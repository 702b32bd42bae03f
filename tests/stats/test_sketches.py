# The sketches of tfrecord_lite/_stats/sketches.py, against exact answers computed here: hashes are
# stable and tell values apart, the distinct count is exact while small and within its error bound
# beyond, Misra–Gries counts are never above the truth nor below it by more than the bound, a
# bottom-k sample is the whole stream while it fits; and each merges as if it had seen both streams.
from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_lite._stats.sketches import Distinct, FrequentItems, Sample, hash_bytes, hash_ints


def _binary(values: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum([len(v) for v in values], out=offsets[1:])
    return np.frombuffer(b"".join(values), dtype=np.uint8), offsets


byte_lists = st.lists(st.binary(max_size=300), max_size=60)


@settings(max_examples=60, deadline=None)
@given(byte_lists)
def test_hash_bytes_depends_on_the_value_only(values):
    hashes = hash_bytes(*_binary(values))
    one_by_one = [int(hash_bytes(*_binary([v]))[0]) for v in values]
    assert hashes.tolist() == one_by_one  # not on the neighbours or the batch
    by_value = dict(zip(values, hashes.tolist(), strict=True))
    assert len(set(by_value.values())) == len(by_value)  # no collisions among a few values


def test_hash_bytes_tells_padding_and_prefixes_apart():
    values = [b"", b"\x00", b"\x00\x00", b"a", b"a\x00", b"ab" * 200, b"ab" * 200 + b"\x00"]
    assert len(set(hash_bytes(*_binary(values)).tolist())) == len(values)


def test_hash_ints_is_a_bijection_on_samples():
    values = np.arange(-50_000, 50_000, dtype=np.int64)
    assert len(np.unique(hash_ints(values))) == len(values)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3000), max_size=400), st.lists(st.integers(0, 3000), max_size=400))
def test_distinct_exact_while_small_and_merges(a, b):
    left, right = Distinct(), Distinct()
    left.add(hash_ints(np.array(a, dtype=np.int64)))
    right.add(hash_ints(np.array(b, dtype=np.int64)))
    left.merge(right)
    assert left.is_exact and left.estimate() == len(set(a) | set(b))


def test_distinct_estimate_within_its_error_bound():
    for n in (5_000, 60_000, 400_000):
        sketch = Distinct()
        values = np.arange(n, dtype=np.int64) * 7919
        for part in np.array_split(values, 7):
            sketch.add(hash_ints(part))
        assert not sketch.is_exact
        assert abs(sketch.estimate() - n) / n < 4 * 1.04 / 128  # four standard errors


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=300), st.lists(st.integers(0, 40), max_size=300), st.integers(2, 12))
def test_frequent_items_bounds_and_merge(a, b, capacity):
    left, right = FrequentItems(capacity), FrequentItems(capacity)
    left.add(np.array(a, dtype=np.uint64))
    right.add(np.array(b, dtype=np.uint64))
    left.merge(right)
    truth = Counter(a + b)
    assert left.decrements <= len(a + b) // (capacity + 1)
    kept = dict(left.top(capacity))
    assert len(kept) <= capacity
    for key, count in truth.items():
        estimate = kept.get(key, 0)
        assert truth[key] - left.decrements <= estimate <= count
    if len(truth) <= capacity:
        assert left.is_exact and kept == dict(truth)


def test_frequent_items_keep_examples_of_the_kept_keys():
    summary = FrequentItems(4)
    values = [b"a"] * 50 + [b"b"] * 30 + [bytes([k]) for k in range(200)]
    hashes = hash_bytes(*_binary(values))
    for part in range(0, len(values), 37):
        chunk = hashes[part : part + 37]
        summary.add(chunk, lambda k, part=part: values[part + k])
    assert [summary.examples[key] for key, _ in summary.top(2)] == [b"a", b"b"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), max_size=200), st.lists(st.floats(-1e6, 1e6), max_size=200))
def test_sample_is_the_stream_while_it_fits(a, b):
    left, right = Sample(capacity=500), Sample(capacity=500)
    left.add(np.array(a))
    right.add(np.array(b))
    left.merge(right)
    assert left.is_exact and sorted(left.values.tolist()) == sorted(a + b)


def test_sample_is_uniform_beyond_capacity():
    sample = Sample(capacity=4000, seed=1)
    for part in np.array_split(np.arange(1_000_000, dtype=np.float64), 50):
        sample.add(part)
    sample.add_repeated(-1.0, 1_000_000)  # as many copies of one value: about half the sample
    values = sample.values
    assert len(values) == 4000 and not sample.is_exact
    assert abs(np.mean(values == -1.0) - 0.5) < 0.05
    rest = values[values >= 0]
    assert abs(np.median(rest) - 500_000) < 40_000  # uniform over the stream, not its start
    assert len(np.unique(rest)) == len(rest)  # without replacement
