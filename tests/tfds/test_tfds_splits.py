"""Split strings against a simple model of TFDS's arithmetic (slices of a Python list, percent
bounds rounded half to even), and the runs of records per shard against slicing the concatenated
shards."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tfrecord_lite._tfds.info_files import SplitInfo
from tfrecord_lite._tfds.split_strings import ReadOrder, file_runs, read_blocks, resolve


def split_of(name: str, lengths: list[int]) -> SplitInfo:
    return SplitInfo(name, sum(lengths), tuple(lengths), tuple(f"{name}-{k}" for k in range(len(lengths))))


def model(n: int, lo: float | None, hi: float | None, percent: bool) -> list[int] | None:
    """The examples TFDS selects, or None where it refuses the bounds."""

    def absolute(b: float | None, default: int) -> int:
        return default if b is None else (round(b * n / 100.0) if percent else int(b))

    start, stop = absolute(lo, 0), absolute(hi, n)
    if abs(start) > n or abs(stop) > n:
        return None
    return list(range(n))[slice(start, stop)]


bound = st.none() | st.integers(-130, 130)


@given(lengths=st.lists(st.integers(0, 40), min_size=1, max_size=6), lo=bound, hi=bound, percent=st.booleans())
def test_one_slice_selects_what_list_slicing_selects(
    lengths: list[int], lo: int | None, hi: int | None, percent: bool
) -> None:
    splits = {"train": split_of("train", lengths)}
    unit = "%" if percent else ""
    ends = ["" if b is None else f"{b}{unit}" for b in (lo, hi)]
    spec = "train" if lo is None and hi is None else f"train[{ends[0]}:{ends[1]}]"
    if percent and any(b is not None and abs(b) > 100 for b in (lo, hi)):
        with pytest.raises(ValueError, match="percent"):
            resolve(spec, splits)
        return
    expected = model(sum(lengths), lo, hi, percent)
    if expected is None:
        with pytest.raises(ValueError, match="out of range"):
            resolve(spec, splits)
        return
    runs = file_runs(resolve(spec, splits), splits)
    shards = [[(k, j) for j in range(n)] for k, n in enumerate(lengths)]
    flat = [pair for shard in shards for pair in shard]
    got = [(run.shard, run.skip + j) for run in runs for j in range(run.take)]
    assert got == [flat[i] for i in expected]
    assert all(run.take > 0 for run in runs)


@given(takes=st.lists(st.integers(1, 50), max_size=40), interleave=st.booleans())
def test_the_read_order_visits_every_record_once_in_run_order(takes: list[int], interleave: bool) -> None:
    pairs = [(run, first + j) for run, first, count in read_blocks(takes, interleave=interleave) for j in range(count)]
    order = ReadOrder(takes, interleave=interleave)
    assert [order.locate(i) for i in range(len(pairs))] == pairs
    assert sorted(pairs) == [(k, j) for k, n in enumerate(takes) for j in range(n)]
    for k in range(len(takes)):  # each run is read from its first record on
        assert [j for r, j in pairs if r == k] == list(range(takes[k]))


def test_addition_all_and_shards() -> None:
    splits = {"train": split_of("train", [3, 0, 4]), "test": split_of("test", [2, 2])}
    assert resolve("train+test[:50%]", splits) == [("train", 0, 7), ("test", 0, 2)]
    assert resolve("all", splits) == [("train", 0, 7), ("test", 0, 4)]
    assert resolve("test[1shard]", splits) == [("test", 2, 4)]
    assert resolve("train[-1shard:]", splits) == [("train", 3, 7)]
    assert [(r.shard, r.skip, r.take) for r in file_runs(resolve("train[2:5]", splits), splits)] == [
        (0, 2, 1),
        (2, 0, 2),
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("validation", "unknown split 'validation'"),
        ("train[", "unrecognized split"),
        ("train[5]", "shard"),
        ("all[:5]", "'all' takes no slice"),
        ("train[1:2:3]", "unrecognized split"),
    ],
)
def test_bad_split_strings_are_named(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        resolve(spec, {"train": split_of("train", [10])})
