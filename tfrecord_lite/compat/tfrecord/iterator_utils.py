"""The `tfrecord` package's `iterator_utils`: cycling, weighted sampling and shuffling of iterators.

Strategy: the same algorithms drawing from numpy's global random state in the same order as
the package 1.14.6, so a seeded run (`np.random.seed`) yields the same sequence as the package.
A DataLoader worker's dataset seeds that state from the worker's seed, as the package does.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["cycle", "sample_iterators", "shuffle_iterator"]


def cycle(iterator_fn: Callable[[], Iterable[Any]]) -> Iterator[Any]:
    """Repeat the iterators that `iterator_fn` makes, forever (an empty one ends nothing: avoid it)."""
    while True:
        yield from iterator_fn()


def sample_iterators(
    iterators: Sequence[Callable[[], Iterable[Any]]], ratios: Sequence[float], infinite: bool = True
) -> Iterator[Any]:
    """Items drawn at random from the iterators `iterators` make, with probabilities `ratios`
    (normalised). Finite (`infinite=False`): an exhausted iterator drops out and the rest go on."""
    running = [cycle(make) if infinite else iter(make()) for make in iterators]
    weights = np.array(ratios, dtype=np.float64)
    weights = weights / weights.sum()
    while running:
        choice = np.random.choice(len(weights), p=weights)
        try:
            yield next(running[choice])
        except StopIteration:
            del running[choice]
            weights = np.delete(weights, choice)
            weights = weights / weights.sum()


def shuffle_iterator(iterator: Iterator[Any], queue_size: int) -> Iterator[Any]:
    """The items of `iterator` shuffled through a buffer of `queue_size` items (a warning when
    there are fewer items than that)."""
    buffer = []
    try:
        for _ in range(queue_size):
            buffer.append(next(iterator))
    except StopIteration:
        warnings.warn(f"Number of elements in the iterator is less than the queue size (N={queue_size}).", stacklevel=2)
    while buffer:
        index = np.random.randint(len(buffer))
        try:
            item = buffer[index]
            buffer[index] = next(iterator)
            yield item
        except StopIteration:
            yield buffer.pop(index)
