"""Planning who reads what in a streaming epoch, without torch: pure functions of
(record counts, shard order, consumers, seed, epoch), so every DataLoader worker of
every rank computes the same plan with no communication, and so they can be tested
where torch is not installed. streaming.py reads a consumer's share; tfrecord_lite.torch tells
which consumer (DataLoader worker of a rank) the calling process is.

A consumer's Share is a list of Segments (record ranges of shards) plus a stride;
the ways to divide them are whole shards dealt round-robin ("shard"), contiguous ranges of the
concatenated shards ("range", needs the counts), or every k-th record of a shard
shared by k consumers ("stride"). Randomness comes from random.Random seeded by
mix_seed(seed, epoch, ...), so an epoch replays exactly (resumable positions).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

SHARDINGS = ("auto", "shard", "range", "stride")
EVEN = (None, "drop", "pad")

# Salts appended to (seed, epoch, ...) so that random streams drawn from the same seed differ:
SHARD_ORDER_SALT = 0x5A4D  # the epoch's shard permutation, unlike any consumer's shuffle buffer
MIXING_SALT = 0x313  # MixedTFRecordDataset's choice of source, unlike the same consumer's shuffle buffer


def mix_seed(*parts: int) -> int:
    """A well-mixed 128-bit seed from integers (seed, epoch, consumer, ...)."""
    state = np.random.SeedSequence([int(p) & 0xFFFFFFFFFFFFFFFF for p in parts]).generate_state(4)
    return int.from_bytes(state.tobytes(), "little")


@dataclass(frozen=True)
class Segment:
    """Records [start, stop) of shard number `shard` (stop None: to the shard's end)."""

    shard: int
    start: int = 0
    stop: int | None = None


@dataclass(frozen=True)
class Share:
    """What one consumer reads: its segments in order, keeping every `step`-th record from `offset`;
    `count` is the number of records kept when it is known."""

    segments: tuple[Segment, ...]
    step: int = 1
    offset: int = 0
    count: int | None = None


def shard_order(num_shards: int, seed: int, epoch: int, shuffle: bool) -> list[int]:
    """The order in which shards are dealt out this epoch: a seeded permutation when shuffling."""
    order = list(range(num_shards))
    if shuffle:
        random.Random(mix_seed(seed, epoch, SHARD_ORDER_SALT)).shuffle(order)
    return order


def plan_shares(counts: Sequence[int | None], consumers: int, sharding: str, order: Sequence[int]) -> list[Share]:
    """Split the shards (with their record counts, None when unknown) among `consumers` so that every
    record goes to exactly one of them. "shard": shards dealt round-robin in `order`; "range": the
    shards concatenated in `order`, cut in `consumers` contiguous ranges of near-equal size (counts
    needed); "stride": consumer c reads shard order[c % S] and keeps every k-th record, k being the
    number of consumers on that shard (whole shards when there are at least as many as consumers)."""
    if consumers < 1:
        raise ValueError(f"consumers must be >= 1, not {consumers}")
    known = all(n is not None for n in counts)
    if sharding == "shard":
        shares = []
        for c in range(consumers):
            mine = order[c::consumers]
            total = sum(counts[s] for s in mine) if known else None  # type: ignore[misc]
            shares.append(Share(tuple(Segment(s) for s in mine), count=total))
        return shares
    if sharding == "range":
        if not known:
            raise ValueError("sharding='range' needs the record count of every shard (uncompressed, indexed files)")
        cum = [0]
        for s in order:
            cum.append(cum[-1] + counts[s])  # type: ignore[operator]
        total = cum[-1]
        shares = []
        for c in range(consumers):
            lo, hi = c * total // consumers, (c + 1) * total // consumers
            segments = []
            i = bisect.bisect_right(cum, lo) - 1
            while lo < hi:
                a, b = lo - cum[i], min(hi, cum[i + 1]) - cum[i]
                if b > a:
                    segments.append(Segment(order[i], a, b))
                lo = cum[i] + b
                i += 1
            shares.append(Share(tuple(segments), count=hi - c * total // consumers))
        return shares
    if sharding == "stride":
        num = len(order)
        if num == 0:
            return [Share((), count=0) for _ in range(consumers)]
        if num >= consumers:  # nothing to share: whole shards
            return plan_shares(counts, consumers, "shard", order)
        shares = []
        for c in range(consumers):
            pos, offset = c % num, c // num
            if offset * num + pos >= consumers:
                shares.append(Share((), count=0))
                continue
            step = len(range(pos, consumers, num))
            n = counts[order[pos]]
            shares.append(
                Share((Segment(order[pos]),), step, offset, None if n is None else len(range(offset, n, step)))
            )
        return shares
    raise ValueError(f"sharding={sharding!r}: use one of {', '.join(repr(s) for s in SHARDINGS)}")


def needs_counts(sharding: str, even: str | None) -> bool:
    """Whether every shard's record count is needed before the epoch's plan whatever the consumers:
    record ranges are cut by the counts, equal counts (`even`) compare them. Whole shards and
    strides need none; sharding="auto" needs them where it comes to ranges (choose_sharding), known
    only with the consumers."""
    return sharding == "range" or even is not None


def choose_sharding(sharding: str, all_indexed: bool, num_shards: int, consumers: int, even: str | None) -> str:
    """What sharding="auto" means here: record ranges when equal counts are wanted (the counts are known
    then, and ranges balance them to one record) or for indexed shards fewer than the consumers; whole
    shards when there are enough; else strides."""
    if sharding != "auto":
        return sharding
    if even is not None or (all_indexed and num_shards < consumers):
        return "range"
    return "shard" if num_shards >= consumers else "stride"


def even_target(shares: Sequence[Share], even: str | None) -> int | None:
    """Records every consumer yields with even="drop" (the smallest share) or "pad" (the largest)."""
    if even is None:
        return None
    counts = [s.count for s in shares]
    if any(n is None for n in counts):
        raise ValueError("equal counts (even=...) need the record count of every share")
    return min(counts) if even == "drop" else max(counts)  # type: ignore[type-var]


def shuffle_buffer(items: Iterable[Any], size: int, rng: random.Random) -> Iterator[Any]:
    """Bounded-buffer shuffle (as tf.data's): fill `size` items, then emit a random one per new arrival."""
    if size <= 1:
        yield from items
        return
    buf: list[Any] = []
    for item in items:
        if len(buf) < size:
            buf.append(item)
            continue
        j = rng.randrange(size)
        out, buf[j] = buf[j], item
        yield out
    rng.shuffle(buf)
    yield from buf


def padded_positions(count: int, target: int, skip: int) -> list[tuple[int, int]]:
    """(start, how many) runs of a share's record positions that make up positions [skip, target) of a
    stream padded to `target` by starting the share over (or cut to it when target < count)."""
    runs = []
    pos = skip
    while pos < target:
        if count == 0:
            raise ValueError("cannot pad a consumer that has no records: fewer records than consumers")
        start = pos % count
        take = min(count - start, target - pos)
        runs.append((start, take))
        pos += take
    return runs
