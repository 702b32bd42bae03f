"""Small mergeable summaries of a stream of values, in numpy, each of bounded size.

Strategy: values are reduced a batch at a time, never one at a time in Python.

- `hash_bytes`: a 64-bit hash of each bytes value of a batch. Values up to 256 bytes are hashed
  column-wise: padded into a matrix of 8-byte words, mixed word by word over all rows at once
  (multiply-xorshift rounds over a value's own words only, so that its hash does not depend on
  the batch; the length folded in, splitmix64's finaliser last). Longer values (images,
  documents) are few per batch and hashed one by one: the CRC32C and the zlib CRC-32 of the value
  (two polynomials, so not linearly related; together 15 µs for 64 KiB where BLAKE2b took 65)
  side by side in 64 bits, the length folded in, the same finaliser. Not cryptographic: two
  different values collide with a chance of about 2**-64, unless crafted to.
- `Distinct`: how many different hashes. Exact (a sorted array of them) up to 4096; beyond, a
  HyperLogLog of 2**14 one-byte registers (16 KiB; relative standard error 1.04 / 128 ≈ 0.8 %),
  fed all along so that switching loses nothing. Merging two takes the maximum of the registers.
- `FrequentItems`: the most frequent keys (uint64: a hash, or an int64 value itself) by the
  Misra–Gries summary of `capacity` counters: while fewer keys than that have been seen the
  counts are exact; afterwards each count is at most `decrements` below the true one, and
  `decrements` ≤ n / (capacity + 1). Summaries merge (Agarwal et al., "Mergeable summaries").
- `Sample`: a uniform sample of at most `capacity` values kept by bottom-k sampling (each value
  draws a random key, the k smallest keys stay), so two samples merge into a sample of the union.
  While the stream fits, the sample is the whole stream and quantiles are exact; beyond, the rank
  of a quantile read from it is off by a standard error of at most 0.5 / sqrt(capacity).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
from crc32c import crc32c

__all__ = ["Distinct", "FrequentItems", "Sample", "hash_bytes", "hash_ints"]

_SHORT = 256  # values up to this length are hashed column-wise
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_PRIME = np.uint64(0x9E3779B97F4A7C15)


def _finish(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit reaches every output bit."""
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)
    return h


def hash_ints(values: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each int64 value."""
    return _finish(values.astype(np.int64, copy=True).view(np.uint64) + _PRIME)


def hash_bytes(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each value data[offsets[k]:offsets[k + 1]]."""
    lengths = np.diff(offsets)
    out = np.empty(len(lengths), dtype=np.uint64)
    short = lengths <= _SHORT
    if short.all():
        return _hash_short(data, offsets[:-1], lengths)
    out[short] = _hash_short(data, offsets[:-1][short], lengths[short])
    long = np.flatnonzero(~short)
    pairs = []
    for k in long.tolist():
        value = data[offsets[k] : offsets[k + 1]].data
        pairs.append((crc32c(value) << 32) | zlib.crc32(value))
    out[long] = _finish(np.array(pairs, dtype=np.uint64) ^ (lengths[long].astype(np.uint64) * _PRIME))
    return out


def _padded(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """The values as rows of a (n, width) uint8 matrix, zeros after each value's end."""
    longest = int(lengths.max())
    start = int(starts[0])
    if lengths.min() == longest and int(starts[-1]) - start == longest * (len(starts) - 1):  # end to end, one length
        matrix = np.zeros((len(starts), width), dtype=np.uint8)
        matrix[:, :longest] = data[start : start + longest * len(starts)].reshape(len(starts), longest)
        return matrix
    columns = np.arange(width)
    index = np.minimum(starts[:, None] + columns, len(data) - 1)
    padded: np.ndarray = np.where(columns < lengths[:, None], data[index], 0).astype(np.uint8)
    return padded


def _hash_short(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    h = lengths.astype(np.uint64) * _PRIME
    if not len(lengths) or not lengths.max():
        return _finish(h)
    width = (int(lengths.max()) + 7) // 8 * 8
    words = _padded(data, starts, lengths, width).view("<u8")
    same = bool(lengths.min() == lengths.max())
    for j in range(words.shape[1]):
        mixed = (h ^ words[:, j]) * _M1
        mixed ^= mixed >> np.uint64(29)
        h = mixed if same else np.where(lengths > 8 * j, mixed, h)  # a value's own words only
    return _finish(h)


class Distinct:
    """The number of different 64-bit hashes: exact up to EXACT of them, then HyperLogLog."""

    EXACT = 4096
    P = 14  # 2**14 registers: relative standard error 1.04 / 2**7

    def __init__(self) -> None:
        self.exact: np.ndarray | None = np.empty(0, dtype=np.uint64)
        self.registers = np.zeros(1 << self.P, dtype=np.uint8)

    def add(self, hashes: np.ndarray) -> None:
        if not len(hashes):
            return
        index = (hashes >> np.uint64(64 - self.P)).astype(np.intp)
        rest = hashes << np.uint64(self.P)
        np.maximum.at(self.registers, index, _rank(rest, 64 - self.P))
        if self.exact is None:
            return
        if len(hashes) > self.EXACT and self._sketched() > 2 * self.EXACT:
            self.exact = None  # far too many to count exactly: no need to sort them to know
            return
        self.exact = np.union1d(self.exact, hashes)
        if len(self.exact) > self.EXACT:
            self.exact = None

    def merge(self, other: Distinct) -> None:
        np.maximum(self.registers, other.registers, out=self.registers)
        if self.exact is not None and other.exact is not None:
            self.exact = np.union1d(self.exact, other.exact)
            if len(self.exact) > self.EXACT:
                self.exact = None
        else:
            self.exact = None

    @property
    def is_exact(self) -> bool:
        return self.exact is not None

    def estimate(self) -> int:
        return len(self.exact) if self.exact is not None else self._sketched()

    def _sketched(self) -> int:
        """HyperLogLog's estimate (linear counting while many registers are empty)."""
        m = float(len(self.registers))
        raw = 0.7213 / (1 + 1.079 / m) * m * m / float(np.sum(np.ldexp(1.0, -self.registers.astype(np.int64))))
        zeros = int(np.count_nonzero(self.registers == 0))
        if raw <= 2.5 * m and zeros:
            return round(m * float(np.log(m / zeros)))  # linear counting, better for small counts
        return round(raw)


def _rank(bits: np.ndarray, width: int) -> np.ndarray:
    """1 + the number of leading zero bits of each value, counted in its top `width` bits."""
    high = (bits >> np.uint64(32)).astype(np.float64)
    low = (bits & np.uint64(0xFFFFFFFF)).astype(np.float64)
    _, high_len = np.frexp(high)  # exact: the halves fit a float64's mantissa
    _, low_len = np.frexp(low)
    zeros = np.where(high_len > 0, 32 - high_len, 64 - low_len)
    ranks: np.ndarray = np.minimum(zeros, width).astype(np.uint8) + np.uint8(1)
    return ranks


class FrequentItems:
    """The Misra–Gries summary of uint64 keys: at most `capacity` counters."""

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self.keys = np.empty(0, dtype=np.uint64)
        self.counts = np.empty(0, dtype=np.int64)
        self.decrements = 0  # how far below its true count any count may be
        self.examples: dict[int, Any] = {}  # a key's value, for keys that are hashes

    def add(self, keys: np.ndarray, example: Any = None) -> None:
        """Count `keys`; `example(k)` gives the value of keys[k], kept for the keys that stay."""
        if not len(keys):
            return
        if example is None:
            unique, counts = np.unique(keys, return_counts=True)
            self._combine(unique, counts)
            return
        unique, first, counts = _unique_with_index(keys)
        new = self._combine(unique, counts)
        for key, k in zip(new.tolist(), first[np.searchsorted(unique, new)].tolist(), strict=True):
            self.examples[key] = example(k)

    def merge(self, other: FrequentItems) -> None:
        self.decrements += other.decrements
        for key in self._combine(other.keys, other.counts).tolist():
            if key in other.examples:
                self.examples[key] = other.examples[key]

    def _combine(self, keys: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Add counts of (sorted, unique) keys and prune to capacity; the kept keys that have no
        example yet (examples of keys dropped are forgotten from time to time)."""
        merged = np.concatenate([self.keys, keys])
        unique, inverse = np.unique(merged, return_inverse=True)
        totals = np.bincount(inverse, weights=np.concatenate([self.counts, counts])).astype(np.int64)
        if len(unique) > self.capacity:
            cut = int(np.partition(totals, len(totals) - self.capacity - 1)[len(totals) - self.capacity - 1])
            self.decrements += cut
            totals -= cut
            keep = totals > 0
            unique, totals = unique[keep], totals[keep]
        new = np.setdiff1d(unique, self.keys, assume_unique=True)
        self.keys, self.counts = unique, totals
        if len(self.examples) > 2 * self.capacity:
            kept = set(unique.tolist())
            self.examples = {k: v for k, v in self.examples.items() if k in kept}
        if not self.examples or not len(new):
            return new
        return new[[k not in self.examples for k in new.tolist()]]

    @property
    def is_exact(self) -> bool:
        return self.decrements == 0

    def top(self, k: int) -> list[tuple[int, int]]:
        """The k largest (key, count), largest first, ties by key."""
        order = np.lexsort((self.keys, -self.counts))[:k]
        return list(zip(self.keys[order].tolist(), self.counts[order].tolist(), strict=True))


def _unique_with_index(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique's (unique, index, counts), the index of any occurrence (not the first): an
    unstable argsort is quicker than np.unique's stable one."""
    order = keys.argsort()
    ordered = keys[order]
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    counts = np.diff(np.append(starts, len(keys)))
    return ordered[starts], order[starts], counts


class Sample:
    """A uniform sample of at most `capacity` float64 values (bottom-k of random keys). Kept
    lazily: entries pile up to twice the capacity before the smallest keys are picked out."""

    def __init__(self, capacity: int = 1 << 16, seed: int = 0) -> None:
        self.capacity = capacity
        self.rng = np.random.default_rng(seed)
        self.keys: list[np.ndarray] = []
        self.parts: list[np.ndarray] = []
        self.held = 0
        self.threshold = 1.0  # keys at or above it can no longer enter
        self.seen = 0

    def add(self, values: np.ndarray) -> None:
        self.seen += len(values)
        threshold = self.threshold
        if len(values) > self.capacity:  # of a big batch, only keys below this can matter
            threshold = min(threshold, 3 * self.capacity / len(values))
        if threshold >= 1.0:
            self._hold(self.rng.random(len(values)), values.astype(np.float64))
            return
        # draw only the values whose key falls below the threshold, then their keys
        entering = values[self._below(len(values), threshold)]
        keys = self.rng.random(len(entering)) * threshold  # uniform below it, as a key is
        if threshold < self.threshold and not self._lower(threshold, len(keys)):
            # too few keys below it (about never: 3 × capacity are expected): a key for every value
            self._hold(self.rng.random(len(values)) * self.threshold, values.astype(np.float64))
            return
        self._hold(keys, entering.astype(np.float64))

    def _lower(self, threshold: float, entering: int) -> bool:
        """Lower the threshold if `capacity` keys lie below it (then no key above it can stay)."""
        below = [k < threshold for k in self.keys]
        if sum(int(np.count_nonzero(b)) for b in below) + entering < self.capacity:
            return False
        self.keys = [k[b] for k, b in zip(self.keys, below, strict=True)]
        self.parts = [v[b] for v, b in zip(self.parts, below, strict=True)]
        self.held = sum(map(len, self.keys))
        self.threshold = threshold
        return True

    def add_repeated(self, value: float, n: int) -> None:
        """add() of n copies of one value, without making them unless they enter."""
        if self.threshold >= 1.0 or n > self.capacity:
            self.add(np.full(n, value))
            return
        self.seen += n
        entering = len(self._below(n, self.threshold))
        self._hold(self.rng.random(entering) * self.threshold, np.full(entering, value))

    def _below(self, n: int, p: float) -> np.ndarray:
        """The positions among n whose key would fall below p: each with probability p, found by
        geometric gaps between them rather than a key drawn for each."""
        expected = n * p
        positions = np.cumsum(self.rng.geometric(p, size=int(expected + 6 * expected**0.5 + 16))) - 1
        while positions[-1] < n:
            more = np.cumsum(self.rng.geometric(p, size=len(positions))) + positions[-1]
            positions = np.concatenate([positions, more])
        return positions[positions < n]

    def merge(self, other: Sample) -> None:
        self.seen += other.seen
        keys, values = other._compact()
        self._hold(keys, values)
        self.threshold = min(self.threshold, other.threshold)

    def _hold(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.keys.append(keys)
        self.parts.append(values)
        self.held += len(keys)
        if self.held > 2 * self.capacity:
            self._compact()

    def _compact(self) -> tuple[np.ndarray, np.ndarray]:
        keys = np.concatenate(self.keys) if self.keys else np.empty(0)
        values = np.concatenate(self.parts) if self.parts else np.empty(0)
        if len(keys) > self.capacity:
            pick = np.argpartition(keys, self.capacity - 1)[: self.capacity]
            keys, values = keys[pick], values[pick]
            self.threshold = float(keys.max())
        self.keys, self.parts, self.held = [keys], [values], len(keys)
        return keys, values

    @property
    def values(self) -> np.ndarray:
        """The sample: every value while the stream fits, else `capacity` of them."""
        return self._compact()[1]

    @property
    def is_exact(self) -> bool:
        return self.seen <= self.capacity
