"""The keys of a batch's map entries told apart, and matched against the keys a decode
wants, in bulk: work linear in the entries, whatever the number of keys.

Strategy: each key (a byte span of the batch's buffer) is hashed with numpy, a
polynomial over its bytes that wraps in 64 bits with its length mixed in, so telling N
keys apart or matching them against K wanted keys is one sort, not K passes over the N
entries (a schema-less batch wants every key it holds: K passes would be quadratic in a
record of many keys). A hash only proposes: every match is confirmed byte for byte, and
when crafted keys collide, an exact way is taken instead (a dict over the keys' bytes,
linear still, with Python work per entry). A few wanted keys are matched one at a time,
which costs less than hashing every entry.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt

_MULTIPLIER = np.uint64(0x100000001B3)
_LENGTH_MIX = np.uint64(0x9E3779B97F4A7C15)
_FEW = 8  # wanted keys matched one at a time, up to this many


def index_ranges(first: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The indices first[i], first[i] + 1, ..., first[i] + counts[i] - 1 for all i, concatenated."""
    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts
    index: npt.NDArray[np.int64] = np.arange(total, dtype=np.int64) + np.repeat(first - offsets, counts)
    return index


def key_hashes(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each key buf[starts[i]:starts[i] + lengths[i]]."""
    out: np.ndarray = lengths.astype(np.uint64) * _LENGTH_MIX
    total = int(lengths.sum())
    if not total:
        return out
    offsets = np.cumsum(lengths) - lengths
    within = np.arange(total, dtype=np.int64) - np.repeat(offsets, lengths)
    powers = np.cumprod(np.full(int(lengths.max()), _MULTIPLIER, dtype=np.uint64))
    terms = (buf[index_ranges(starts, lengths)].astype(np.uint64) + np.uint64(1)) * powers[within]
    nonempty = lengths > 0  # empty keys add no terms: the sums between nonempty offsets are whole keys
    out[nonempty] += np.add.reduceat(terms, offsets[nonempty])
    hashes: np.ndarray = out
    return hashes


def same_keys(
    buf: np.ndarray, starts: np.ndarray, other: np.ndarray, other_starts: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    """Whether buf[starts[i]:][:lengths[i]] equals other[other_starts[i]:][:lengths[i]], for each i."""
    differ = buf[index_ranges(starts, lengths)] != other[index_ranges(other_starts, lengths)]
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    cum = np.zeros(len(differ) + 1, dtype=np.int64)
    np.cumsum(differ, out=cum[1:])
    same: np.ndarray = cum[bounds[1:]] == cum[bounds[:-1]]
    return same


def key_groups(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, which) as np.unique returns them for the keys: first[u] an entry holding key
    u, which[i] the key of entry i; equal keys, and only they, share a u."""
    _, first, which = np.unique(key_hashes(buf, starts, lengths), return_index=True, return_inverse=True)
    which = which.ravel()
    rep = first[which]
    if (lengths[rep] == lengths).all() and same_keys(buf, starts, buf, starts[rep], lengths).all():
        return first, which
    ids: dict[bytes, int] = {}  # crafted collisions: tell the keys apart by their bytes
    which = np.array(
        [
            ids.setdefault(buf[s : s + n].tobytes(), len(ids))
            for s, n in zip(starts.tolist(), lengths.tolist(), strict=True)
        ],
        dtype=np.int64,
    )
    first = np.full(len(ids), len(which), dtype=np.int64)
    np.minimum.at(first, which, np.arange(len(which)))
    return first, which


def match_keys(
    buf: np.ndarray,
    keys: list[bytes],
    key_start: np.ndarray,
    key_len: np.ndarray,
    entry_row: np.ndarray,
    ok: np.ndarray,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each wanted key, (rows, entries) of the good entries (`ok`) that hold it, by row; a
    key given twice in a record keeps its last entry."""
    good = np.flatnonzero(ok)
    if len(keys) <= _FEW:
        which = np.full(len(key_start), -1, dtype=np.int64)
        for i, key in enumerate(keys):
            which[_holding(buf, key, key_start, key_len, ok)] = i
        return _per_key(good, which[good], entry_row, len(keys))
    wanted = np.frombuffer(b"".join(keys), dtype=np.uint8)
    lengths = np.array([len(k) for k in keys], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    hashes = key_hashes(wanted, starts, lengths)
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    if (ordered[1:] == ordered[:-1]).any():
        return _per_key(good, _by_bytes(buf, keys, key_start[good], key_len[good]), entry_row, len(keys))
    found = key_hashes(buf, key_start[good], key_len[good])
    at = np.minimum(np.searchsorted(ordered, found), len(keys) - 1)
    candidate = np.where(ordered[at] == found, order[at], -1)
    hit = np.flatnonzero(candidate >= 0)
    hit = hit[key_len[good[hit]] == lengths[candidate[hit]]]
    hit = hit[same_keys(buf, key_start[good[hit]], wanted, starts[candidate[hit]], lengths[candidate[hit]])]
    which = np.full(len(good), -1, dtype=np.int64)
    which[hit] = candidate[hit]
    return _per_key(good, which, entry_row, len(keys))


def _holding(buf: np.ndarray, key: bytes, key_start: np.ndarray, key_len: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """The good entries whose key is `key`."""
    size = len(key)
    found = np.flatnonzero(ok & (key_len == size))
    if size and found.size:
        want = np.frombuffer(key, dtype=np.uint8)
        found = found[(buf[key_start[found][:, None] + np.arange(size)] == want).all(axis=1)]
    return found


def _by_bytes(buf: np.ndarray, keys: list[bytes], starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Which wanted key each entry holds (-1: none), exactly, through a dict."""
    ids = {key: i for i, key in enumerate(keys)}
    spans = zip(starts.tolist(), lengths.tolist(), strict=True)
    return np.array([ids.get(buf[s : s + n].tobytes(), -1) for s, n in spans], dtype=np.int64)


def _per_key(
    entries: np.ndarray, which: np.ndarray, entry_row: np.ndarray, count: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The entries of each key (which[i] the key of entries[i], -1 none) by row, the last of a row kept."""
    held = which >= 0
    entries, which = entries[held], which[held]
    rows = entry_row[entries]
    order = np.lexsort((entries, rows, which))
    entries, rows, which = entries[order], rows[order], which[order]
    keep = np.ones(len(entries), dtype=bool)
    keep[:-1] = (which[1:] != which[:-1]) | (rows[1:] != rows[:-1])
    entries, rows, which = entries[keep], rows[keep], which[keep]
    bounds = np.searchsorted(which, np.arange(count + 1)).tolist()
    return [(rows[a:b], entries[a:b]) for a, b in itertools.pairwise(bounds)]
