"""TFDS split strings ("train", "train[:10%]", "train[100:200]", "train+test", "test[-5%:]",
"train[1shard]", "all") resolved to runs of records per shard, and the order TFDS reads them in,
from the shard lengths alone (no file is opened).

Strategy: the grammar and arithmetic are TFDS's. A string is `+`-separated parts, each a split name
with an optional `[from:to]` slice in examples, percent or shards; percent bounds are rounded to
the closest example with Python's `round` (half to even), as TFDS's default "closest" rounding;
negative bounds count from the end; bounds beyond the split are errors. Each part becomes one
absolute (split, start, stop) range, then FileRun(file, skip, take) runs: one per shard it touches,
empty shards left out. TFDS's reader interleaves those runs unless the dataset disables shuffling
(tf.data's interleave: 16 runs open at once, 16 records from each in turn, a finished run replaced
by the next in its slot); `read_blocks` streams that order as blocks of records, and `ReadOrder`
keeps their table (one row per 16 examples) for `Split[i]` to find the example tfds.as_numpy hands
back i-th.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from tfrecord_lite._tfds.info_files import SplitInfo

CYCLE_LENGTH = 16  # TFDS's ReadConfig defaults: interleave_cycle_length...
BLOCK_LENGTH = 16  # ...and interleave_block_length
_PART = re.compile(r"^(?P<name>[\w-]+)(\[(?P<selector>[\d\w%:.-]+)\])?$")
_BOUND = re.compile(r"^((?P<val>-?[\d_.]+)(?P<unit>%|shard)?)?$")
_PLUS = re.compile(r"\s*\+\s*")


@dataclass(frozen=True)
class FileRun:
    """`take` records of shard `file` from its record `skip` on; `split` and `shard` say which."""

    split: str
    shard: int
    file: str
    skip: int
    take: int


def resolve(spec: str, splits: Mapping[str, SplitInfo]) -> list[tuple[str, int, int]]:
    """The absolute (split, start, stop) ranges a split string names, in order."""
    if not isinstance(spec, str):
        raise TypeError(f"split must be a string such as 'train' or 'train[:10%]', not {type(spec).__name__}")
    out: list[tuple[str, int, int]] = []
    for part in _PLUS.split(spec.strip()):
        if part == "all":
            out.extend((name, 0, s.num_examples) for name, s in splits.items())
            continue
        out.append(_part(part, spec, splits))
    return out


def _bad(spec: str, detail: str = "") -> ValueError:
    return ValueError(
        f"unrecognized split {spec!r}{': ' + detail if detail else ''} (forms: 'train', 'train[:10%]', "
        "'train[100:200]', 'train+test', 'test[-5%:]', 'train[2shard]')"
    )


def _part(part: str, spec: str, splits: Mapping[str, SplitInfo]) -> tuple[str, int, int]:
    match = _PART.match(part)
    if not match:
        raise _bad(spec)
    name, selector = match.group("name"), match.group("selector")
    if name == "all":
        raise ValueError(f"split {spec!r}: 'all' takes no slice")
    if name not in splits:
        raise ValueError(f"unknown split {name!r} in {spec!r}: the splits are {sorted(splits)}")
    info = splits[name]
    if selector is None:
        return name, 0, info.num_examples
    bounds = [_BOUND.match(x) for x in selector.split(":")]
    if any(b is None for b in bounds) or not any(b.group(0) for b in bounds if b is not None):
        raise _bad(spec)
    if len(bounds) == 1:
        only = bounds[0]
        assert only is not None
        if only.group("unit") != "shard":
            raise _bad(spec, "a single index takes the 'shard' unit ('train[2shard]')")
        start_text: str | None = only.group("val")
        stop_text: str | None = str(_int(only.group("val"), spec) + 1)
        unit = "shard"
    elif len(bounds) == 2:
        lo, hi = bounds
        assert lo is not None and hi is not None
        start_text, stop_text = lo.group("val"), hi.group("val")
        unit = lo.group("unit") or hi.group("unit") or "abs"
    else:
        raise _bad(spec)
    start, stop = _absolute(start_text, stop_text, unit, info, spec)
    return name, start, stop


def _int(text: str, spec: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _bad(spec, f"{text!r} is not an integer") from None


def _number(text: str | None, unit: str, spec: str) -> float | int | None:
    if text is None:
        return None
    if unit != "%":
        return _int(text, spec)
    try:
        value = float(text)
    except ValueError:
        raise _bad(spec, f"{text!r} is not a number") from None
    if abs(value) > 100:
        raise ValueError(f"split {spec!r}: percent bounds are within [-100, 100]")
    return value


def _absolute(start_text: str | None, stop_text: str | None, unit: str, info: SplitInfo, spec: str) -> tuple[int, int]:
    """TFDS's arithmetic: bounds in examples, checked against the split, negatives from the end."""
    n = info.num_examples
    lo, hi = _number(start_text, unit, spec), _number(stop_text, unit, spec)
    if unit == "%":
        start = 0 if lo is None else round(lo * n / 100.0)
        stop = n if hi is None else round(hi * n / 100.0)
    elif unit == "shard":
        lengths = info.shard_lengths
        start = 0 if lo is None else sum(lengths[: int(lo)])
        shard_stop = None if hi is None else int(hi)
        if shard_stop is not None and shard_stop <= 0:
            shard_stop = len(lengths) + shard_stop
        stop = n if shard_stop is None else sum(lengths[:shard_stop])
    else:
        start = 0 if lo is None else int(lo)
        stop = n if hi is None else int(hi)
    if abs(start) > n or abs(stop) > n:
        raise ValueError(f"split {spec!r}: slice [{start}:{stop}] is out of range for {info.name!r} of {n} examples")
    start = n + start if start < 0 else start
    stop = n + stop if stop < 0 else stop
    return start, max(start, stop)


def file_runs(ranges: list[tuple[str, int, int]], splits: Mapping[str, SplitInfo]) -> list[FileRun]:
    """The runs of records per shard that the ranges cover, in order; empty ones left out."""
    runs: list[FileRun] = []
    for name, start, stop in ranges:
        info = splits[name]
        first = 0
        for shard, (file, length) in enumerate(zip(info.files, info.shard_lengths, strict=True)):
            end = first + length
            if length and start < end and stop > first:
                skip = max(start - first, 0)
                take = min(stop, end) - first - skip
                if take > 0:
                    runs.append(FileRun(name, shard, file, skip, take))
            first = end
    return runs


def read_blocks(takes: list[int], *, interleave: bool) -> Iterator[tuple[int, int, int]]:
    """(run, first record within the run, count) of each block of records in the order TFDS reads
    them: each run whole, one after the other, or interleaved as tf.data's
    `interleave(cycle_length=16, block_length=16)` (an empty slot takes the next run and reads it at
    once; a run found finished empties its slot, which takes the next run on the cycle's next visit)."""
    if not interleave or len(takes) <= 1:
        for run, take in enumerate(takes):
            yield run, 0, take
        return
    slots: list[int | None] = [None] * CYCLE_LENGTH
    done = [0] * len(takes)
    left, next_run, slot = sum(takes), 0, 0
    while left:
        current = slots[slot]
        if current is None:
            if next_run < len(takes):
                slots[slot] = next_run
                next_run += 1
                continue
        elif done[current] == takes[current]:  # found finished after a full block
            slots[slot] = None
        else:
            n = min(BLOCK_LENGTH, takes[current] - done[current])
            yield current, done[current], n
            done[current] += n
            left -= n
            if n < BLOCK_LENGTH:  # the run ended inside its block: found at once
                slots[slot] = None
        slot = (slot + 1) % CYCLE_LENGTH


class ReadOrder:
    """Where the i-th example of a reading order lies, from a table of its blocks (1/16 of the
    examples when interleaved, one per run otherwise): `locate(i)` -> (run, record within the run)."""

    def __init__(self, takes: list[int], *, interleave: bool) -> None:
        blocks = np.array(list(read_blocks(takes, interleave=interleave)), np.int64).reshape(-1, 3)
        self.runs, self.firsts = blocks[:, 0], blocks[:, 1]
        self.starts = np.concatenate(([0], np.cumsum(blocks[:, 2])[:-1])).astype(np.int64)

    def locate(self, i: int) -> tuple[int, int]:
        k = int(np.searchsorted(self.starts, i, side="right")) - 1
        return int(self.runs[k]), int(self.firsts[k]) + i - int(self.starts[k])
