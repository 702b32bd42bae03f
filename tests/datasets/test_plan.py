# The streaming plan (tfrecord_lite._datasets.plan) as pure functions, without torch: every record
# goes to exactly one consumer for every sharding (hypothesis), seeded shard orders and
# shuffle buffers, equal-count targets, padding runs, what sharding="auto" picks, and that
# the module (hence these guarantees) needs no torch. The same plan driven through real
# DataLoaders is tested in test_torch.py.
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_lite._datasets.plan import (
    MIXING_SALT,
    SHARD_ORDER_SALT,
    Segment,
    Share,
    choose_sharding,
    even_target,
    mix_seed,
    padded_positions,
    plan_shares,
    shard_order,
    shuffle_buffer,
)

ROOT = Path(__file__).resolve().parents[2]


def expand(share: Any, counts: list[int]) -> list[tuple]:
    """The (shard, record) pairs a Share stands for."""
    seq = [
        (seg.shard, r)
        for seg in share.segments
        for r in range(seg.start, counts[seg.shard] if seg.stop is None else seg.stop)
    ]
    return seq[share.offset :: share.step]


@settings(max_examples=150, deadline=None)
@given(
    counts=st.lists(st.integers(0, 25), min_size=0, max_size=6),
    consumers=st.integers(1, 9),
    sharding=st.sampled_from(["shard", "range", "stride"]),
    seed=st.integers(0, 3),
    epoch=st.integers(0, 3),
)
def test_plan_covers_every_record_once(counts: list[int], consumers: int, sharding: str, seed: int, epoch: int) -> None:
    order = shard_order(len(counts), seed, epoch, shuffle=True)
    assert sorted(order) == list(range(len(counts)))
    shares = plan_shares(counts, consumers, sharding, order)
    assert len(shares) == consumers
    got = [expand(s, counts) for s in shares]
    flat = [r for g in got for r in g]
    assert sorted(flat) == [(s, r) for s in range(len(counts)) for r in range(counts[s])]
    assert [s.count for s in shares] == [len(g) for g in got]
    if sharding == "range":
        assert max(map(len, got)) - min(map(len, got)) <= 1
    # counts unknown (compressed shards): same records, counts None where they cannot be known
    blind = plan_shares([None] * len(counts), consumers, "shard" if sharding == "range" else sharding, order)
    assert sorted(r for s in blind for r in expand(s, counts)) == sorted(flat)


def test_plan_range_needs_counts() -> None:
    with pytest.raises(ValueError, match="record count"):
        plan_shares([3, None], 2, "range", [0, 1])
    with pytest.raises(ValueError, match="sharding"):
        plan_shares([3], 2, "rows", [0])


def test_shard_order_is_seeded() -> None:
    assert shard_order(50, 7, 1, True) == shard_order(50, 7, 1, True)
    assert shard_order(50, 7, 1, True) != shard_order(50, 7, 2, True)
    assert shard_order(5, 7, 1, False) == [0, 1, 2, 3, 4]


def test_even_target() -> None:
    shares = [Share((Segment(0),), count=n) for n in (4, 6, 5)]
    assert even_target(shares, None) is None
    assert even_target(shares, "drop") == 4 and even_target(shares, "pad") == 6
    with pytest.raises(ValueError, match="record count"):
        even_target([Share((Segment(0),))], "drop")


def test_padded_positions() -> None:
    assert padded_positions(5, 5, 0) == [(0, 5)]
    assert padded_positions(5, 3, 0) == [(0, 3)]
    assert padded_positions(3, 7, 0) == [(0, 3), (0, 3), (0, 1)]
    assert padded_positions(3, 7, 4) == [(1, 2), (0, 1)]
    assert padded_positions(0, 0, 0) == []
    with pytest.raises(ValueError, match="no records"):
        padded_positions(0, 2, 0)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(0, 60), size=st.integers(0, 10), seed=st.integers(0, 5))
def test_shuffle_buffer_is_a_bounded_permutation(n: int, size: int, seed: int) -> None:
    out = list(shuffle_buffer(range(n), size, random.Random(seed)))
    assert sorted(out) == list(range(n))
    for pos, value in enumerate(out[: max(0, n - size)]):
        assert value <= pos + max(size, 1) - 1  # emitted before `size` later arrivals came in
    assert out == list(shuffle_buffer(range(n), size, random.Random(seed)))


@pytest.mark.parametrize(
    ("sharding", "all_indexed", "num_shards", "consumers", "even", "expected"),
    [
        ("stride", True, 2, 8, None, "stride"),  # an explicit sharding is kept
        ("auto", False, 4, 8, "drop", "range"),  # equal counts: ranges balance them to one record
        ("auto", True, 2, 8, None, "range"),  # few indexed shards: ranges inside them
        ("auto", True, 8, 8, None, "shard"),  # enough shards: whole shards
        ("auto", False, 8, 4, None, "shard"),
        ("auto", False, 2, 8, None, "stride"),  # few compressed shards: strides through them
    ],
)
def test_choose_sharding(
    sharding: str, all_indexed: bool, num_shards: int, consumers: int, even: Any, expected: str
) -> None:
    assert choose_sharding(sharding, all_indexed, num_shards, consumers, even) == expected


def test_mix_seed_is_stable_and_separates_its_parts() -> None:
    seeds = {mix_seed(7, epoch, consumer) for epoch in range(4) for consumer in range(4)}
    assert len(seeds) == 16 and all(0 <= s < 1 << 128 for s in seeds)
    assert mix_seed(7, 1, 2) == mix_seed(7, 1, 2) != mix_seed(7, 2, 1)  # order matters
    assert mix_seed(-1) == mix_seed(0xFFFFFFFFFFFFFFFF)  # negative parts wrap to 64 bits, no error
    salted = {mix_seed(7, 1, SHARD_ORDER_SALT), mix_seed(7, 1, 0, 1, MIXING_SALT), mix_seed(7, 1, 0, 1)}
    assert len(salted) == 3  # shard order, mixing and a shuffle buffer draw different streams


def test_plan_needs_no_torch() -> None:
    """The planning module imports and plans in an interpreter where torch cannot be imported."""
    code = """
import sys
class Block:
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] == "torch":
            raise ModuleNotFoundError("torch blocked by test_plan")
sys.meta_path.insert(0, Block())
from tfrecord_lite._datasets.plan import plan_shares, shard_order
print(len(plan_shares([3, 4], 3, "range", shard_order(2, 0, 0, True))))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "3"
