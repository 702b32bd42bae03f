# keys.py: telling keys apart and matching them in bulk agrees with matching one key at a time,
# and stays exact when keys collide in their hash (forced here by a hash of the length alone).
from __future__ import annotations

import numpy as np
import pytest

from tfrecord_lite._batches import keys


def spans(names: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    buf = np.frombuffer(b"".join(names) + b"\0", dtype=np.uint8)
    lengths = np.array([len(n) for n in names], dtype=np.int64)
    return buf, np.cumsum(lengths) - lengths, lengths


def expected_matches(
    names: list[bytes], rows: np.ndarray, ok: np.ndarray, wanted: list[bytes]
) -> list[list[tuple[int, int]]]:
    out = []
    for key in wanted:
        last: dict[int, int] = {}
        for entry, name in enumerate(names):
            if ok[entry] and name == key:
                last[int(rows[entry])] = entry
        out.append(sorted(last.items()))
    return out


@pytest.fixture(params=["hashed", "colliding"])
def hashing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "colliding":
        monkeypatch.setattr(keys, "key_hashes", lambda buf, starts, lengths: lengths.astype(np.uint64))
    return str(request.param)


def test_matching_many_keys_agrees_with_one_at_a_time(hashing: str) -> None:
    rng = np.random.default_rng(3)
    vocabulary = [b"", b"a", b"ab", b"ba", b"abc", *(f"k{i}".encode() for i in range(60))]
    names = [vocabulary[int(i)] for i in rng.integers(0, len(vocabulary), 500)]
    buf, starts, lengths = spans(names)
    rows = np.sort(rng.integers(0, 40, len(names)))
    ok = rng.random(len(names)) > 0.1
    for wanted in (vocabulary[:3], vocabulary, [b"missing", *vocabulary[::2]]):
        found = keys.match_keys(buf, wanted, starts, lengths, rows, ok)
        got = [list(zip(r.tolist(), e.tolist(), strict=True)) for r, e in found]
        assert got == expected_matches(names, rows, ok, wanted)


def test_key_groups_tell_equal_keys_and_only_them_apart(hashing: str) -> None:
    names = [b"x", b"y", b"x", b"", b"xy", b"yx", b"", b"y"]
    buf, starts, lengths = spans(names)
    first, which = keys.key_groups(buf, starts, lengths)
    assert [names[int(first[u])] for u in which.tolist()] == names
    assert len(first) == len(set(names))
