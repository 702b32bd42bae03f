# Rounds: how every benchmark here compares systems on a shared, noisy machine.
#
# The systems take turns: one run of each per round, the order rotating from round to round,
# so that load from elsewhere (or a machine that gets busier or quieter) favours none of them.
# In-process functions run once each for warm-up first (imports, caches, page cache). A result
# is the median of the rounds with its spread: the lowest and highest round. A comparison of two
# systems is the ratio of their medians, with the spread of the ratios of single rounds.
#
#   from _rounds import compare, rounds, spread, timed, turns
#   times = rounds({"ours": f, "theirs": g}, n=5)   # seconds per round, per system
#   compare(times["ours"], times["theirs"])           # {"median": 2.1, "low": 1.8, "high": 2.4}
#   for round_, system in turns(["a", "b", "c"], 3):  # the order, for systems run otherwise
#   seconds, result = timed(f)                        # one call, in a script's own rounds
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any


def turns(systems: Sequence[str], n: int) -> Iterator[tuple[int, str]]:
    """(round, system) in the order they run: every system once per round, rotating the order."""
    for round_ in range(n):
        start = round_ % len(systems) if systems else 0
        for system in [*systems[start:], *systems[:start]]:
            yield round_, system


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call, for a script that runs its own rounds."""
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def rounds(fns: Mapping[str, Callable[[], Any]], n: int, warmup: bool = True) -> dict[str, list[float]]:
    """Seconds of each function in each of `n` rounds (after one warm-up call of each)."""
    if warmup:
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _, name in turns(list(fns), n):
        times[name].append(timed(fns[name])[0])
    return times


def spread(values: Sequence[float]) -> dict[str, float]:
    """The median of the rounds and the lowest and highest of them."""
    return {"median": statistics.median(values), "low": min(values), "high": max(values)}


def compare(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """How many times faster `a` is than `b` (b's seconds / a's): the ratio of the medians, and the
    lowest and highest ratio of one round."""
    ratios = [tb / ta for ta, tb in zip(a, b, strict=True)]
    return {"median": statistics.median(b) / statistics.median(a), "low": min(ratios), "high": max(ratios)}
