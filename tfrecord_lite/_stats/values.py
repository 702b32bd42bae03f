"""The statistics of a stream of int64 or bytes values beyond their numbers: how many different
values, the most frequent ones, bytes lengths, and the images among bytes values.

Strategy: a batch's values are hashed at once (sketches.hash_bytes / hash_ints) and the hashes
feed a `Distinct` count and a `FrequentItems` summary; an int64 value is its own key in the
summary, a bytes value keeps a prefix of itself (at most PREFIX bytes, so that a summary of
images stays small). Image formats are sniffed for the whole batch with numpy
(images.sniff_formats); only the values that match have their headers parsed, one by one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfrecord_lite._stats.images import FORMATS, image_size, sniff_formats
from tfrecord_lite._stats.numbers import COUNTS_SAMPLE, NumberAccumulator
from tfrecord_lite._stats.results import Categories, ImageStats, TopValue
from tfrecord_lite._stats.sketches import Distinct, FrequentItems, hash_bytes, hash_ints

__all__ = ["CategoryAccumulator", "ImageAccumulator", "as_binary"]

PREFIX = 96  # bytes of a frequent value kept to show it


def as_binary(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """bytes values as (data, offsets): a flat.Binary as it is, a list of bytes joined."""
    if hasattr(values, "offsets"):
        return values.data, values.offsets
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(b"".join(values), dtype=np.uint8), offsets


class CategoryAccumulator:
    """Distinct values and the most frequent ones, of int64 or bytes values."""

    def __init__(self, capacity: int = 1024) -> None:
        self.distinct = Distinct()
        self.frequent = FrequentItems(capacity)

    def add_ints(self, values: np.ndarray) -> None:
        self.distinct.add(hash_ints(values))
        self.frequent.add(values.astype(np.int64, copy=False).view(np.uint64))

    def add_bytes(self, data: np.ndarray, offsets: np.ndarray) -> None:
        hashes = hash_bytes(data, offsets)
        self.distinct.add(hashes)

        def example(k: int) -> tuple[bytes, bool]:
            start, end = int(offsets[k]), int(offsets[k + 1])
            return data[start : min(end, start + PREFIX)].tobytes(), end - start > PREFIX

        self.frequent.add(hashes, example)

    def merge(self, other: CategoryAccumulator) -> None:
        self.distinct.merge(other.distinct)
        self.frequent.merge(other.frequent)

    def result(self, top_k: int, integer: bool) -> Categories:
        top = []
        for key, count in self.frequent.top(top_k):
            if integer:
                top.append(TopValue(int(np.uint64(key).view(np.int64)), count))
            else:
                value, truncated = self.frequent.examples[key]
                top.append(TopValue(value, count, truncated))
        return Categories(
            distinct=self.distinct.estimate(),
            distinct_exact=self.distinct.is_exact,
            top=tuple(top),
            top_exact=self.frequent.is_exact,
            top_error=self.frequent.decrements,
        )


class ImageAccumulator:
    """The bytes values that are images: how many of each format, their widths and heights."""

    def __init__(self) -> None:
        self.formats = dict.fromkeys(FORMATS, 0)
        self.values = 0
        self.width = NumberAccumulator(integer=True, sample_size=COUNTS_SAMPLE)
        self.height = NumberAccumulator(integer=True, sample_size=COUNTS_SAMPLE)
        self.sizes = FrequentItems(256)

    def add(self, data: np.ndarray, offsets: np.ndarray) -> None:
        self.values += len(offsets) - 1
        sniffed = sniff_formats(data, offsets)
        found = np.flatnonzero(sniffed)
        if not len(found):
            return
        widths, heights = [], []
        for k, code in zip(found.tolist(), sniffed[found].tolist(), strict=True):
            kind = FORMATS[code - 1]
            size = image_size(kind, data[offsets[k] : offsets[k + 1]].tobytes())
            if size is not None:
                self.formats[kind] += 1
                widths.append(size[0])
                heights.append(size[1])
        w, h = np.array(widths, dtype=np.int64), np.array(heights, dtype=np.int64)
        self.width.add(w)
        self.height.add(h)
        self.sizes.add(((w << 32) | h).view(np.uint64))

    def merge(self, other: ImageAccumulator) -> None:
        for kind, count in other.formats.items():
            self.formats[kind] += count
        self.values += other.values
        self.width.merge(other.width)
        self.height.merge(other.height)
        self.sizes.merge(other.sizes)

    @property
    def images(self) -> int:
        return sum(self.formats.values())

    def result(self, top_k: int) -> ImageStats | None:
        if not self.images:
            return None
        sizes = tuple((key >> 32, key & 0xFFFFFFFF, count) for key, count in self.sizes.top(top_k))
        return ImageStats(
            images=self.images,
            not_images=self.values - self.images,
            formats={kind: count for kind, count in self.formats.items() if count},
            width=self.width.result(),
            height=self.height.result(),
            sizes=sizes,
        )
