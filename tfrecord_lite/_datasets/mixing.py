"""Mixing several streams of items at random with weights, without torch: what
tfrecord_lite.torch.MixedTFRecordDataset yields, and its resumable position.

Strategy: each draw picks one of the sources still active with a probability in proportion to
its weight (a bisection in the cumulative weights), from a random.Random seeded by (seed, epoch,
consumer, consumers), salted so that it differs from every shuffle drawn from the same seed. The
whole position is plain data, updated after every item: the RNG state and, per source, its epoch,
the items it yielded and whether it is still active. A checkpoint taken at any time therefore
resumes exactly, each source reopened at its epoch and position. An exhausted source ends the
mixture (stop="first"), drops out of it (stop="all"), or starts its next epoch (infinite).
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from tfrecord_lite._datasets.plan import MIXING_SALT, mix_seed

# open_source(source number, epoch, items to skip) -> that source's (records, item) pairs from there on
OpenSource = Callable[[int, int, int], Iterator[tuple[int, Any]]]


def start_state(seed: int, epoch: int, weights: Sequence[float], consumer: int, consumers: int) -> dict[str, Any]:
    """The position of `consumer` (of `consumers`) at the start of `epoch`."""
    return {
        "epoch": epoch,
        "rng": random.Random(mix_seed(seed, epoch, consumer, consumers, MIXING_SALT)).getstate(),
        "sources": [{"epoch": epoch, "yielded": 0, "active": w > 0} for w in weights],
        "consumer": consumer,
        "consumers": consumers,
    }


def mixed_items(
    state: dict[str, Any], weights: Sequence[float], open_source: OpenSource, *, stop: str, infinite: bool
) -> Iterator[Any]:
    """The items drawn from the sources from the position `state` on, which is kept up to date."""
    rng = random.Random()
    rng.setstate(_as_rng_state(state["rng"]))
    srcs = state["sources"]
    iters: list[Iterator[Any] | None] = [None] * len(srcs)
    fresh = [False] * len(srcs)
    while True:
        active = [i for i, s in enumerate(srcs) if s["active"]]
        if not active:
            return
        cum = list(itertools.accumulate(weights[i] for i in active))
        i = active[bisect.bisect_right(cum, rng.random() * cum[-1])]
        src = srcs[i]
        if iters[i] is None:
            iters[i] = open_source(i, src["epoch"], src["yielded"])
            fresh[i] = src["yielded"] == 0
        try:
            _, item = next(iters[i])  # type: ignore[arg-type]
        except StopIteration:
            iters[i] = None
            if infinite and not fresh[i]:
                src["epoch"] += 1
                src["yielded"] = 0
            elif stop == "first" and not infinite:
                state["rng"] = rng.getstate()
                return
            else:
                src["active"] = False  # finite "all", or a source with nothing for this consumer
            state["rng"] = rng.getstate()
            continue
        fresh[i] = False
        src["yielded"] += 1
        state["rng"] = rng.getstate()
        yield item


def copy_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a position whose per-source entries change apart from those of `state`."""
    out = dict(state)
    out["sources"] = [dict(s) for s in state["sources"]]
    return out


def _as_rng_state(state: Any) -> tuple[Any, ...]:
    """random.Random state back from a checkpoint (which may have turned its tuples into lists)."""
    version, internal, gauss = state
    return (version, tuple(internal), gauss)
