"""Dividing a run of records into parts (train / val / test ...) by ratio or by counts.

Strategy: the sizes of the parts are fixed first (ratios rounded at their cumulative sums, so
the parts add up to the total exactly; counts taken as given, the records beyond their sum left
out), then every record position gets its part number in one numpy array, shuffled with a seed
when asked. One pass over the records then sends each to its part, whatever the number of files.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np


def ratio_sizes(total: int, ratio: Sequence[float]) -> list[int]:
    """Records per part for parts in proportion to `ratio`; they add up to `total`."""
    cum, acc, bounds = sum(ratio), 0.0, [0]
    for r in ratio:
        acc += r
        bounds.append(round(total * acc / cum))
    return [b - a for a, b in itertools.pairwise(bounds)]


def record_parts(total: int, sizes: Sequence[int], seed: int | None = None) -> np.ndarray:
    """The part number of each of `total` record positions: sizes[0] zeros, sizes[1] ones ... in
    order, or shuffled with `seed`; -1 for the records beyond sum(sizes) (at most `total`)."""
    part = np.repeat(np.arange(len(sizes)), sizes)
    part = np.concatenate([part, np.full(total - len(part), -1)])
    if seed is not None:
        np.random.default_rng(seed).shuffle(part)
    return part
