"""How the steps of the batch's FeatureLists are found: walked one after the other, or, where
every step of a list has one encoded size, at a constant stride with no walk.

Strategy: walk_steps walks every list at once, a step a turn (numpy operations per turn,
then per step), and step_spans reads each step's kind and the span of its values. Most real
feature lists have steps of one encoded size, though: a FixedLenSequenceFeature of float32
is, every step, `0x0A L | 0x12 L-2 | 0x0A L-4 | L-4 bytes`, and int64 steps differ only in
their varints' sizes. strided_lists takes such a list as (start, stride, steps): it reads
the first step's six head bytes, checks that the list's length is a multiple of the step's,
then compares the head bytes of every step with the first's at once (the 8 bytes at each
step read as one word, masked) and, for int64, that every step's run ends where a varint
does (as step_spans checks). strided_values then takes a requested list's values as one
gather of each step's value bytes as one item (float32), or reads each value in place as a
varint of the width of the list's first (int64); a list with a value of another width
sends its record to the single-record decoder. A list that does not fit (bytes, a step with
no kind, lengths of 128 bytes or more, steps of differing sizes, a malformed step) is
walked: results and checks are those of the walk by construction, as a strided list is
exactly a list whose every step the walk and step_spans would take by their fast paths,
with one kind and one value count.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from tfrecord_lite._batches.keys import index_ranges
from tfrecord_lite._batches.lockstep import _repeated, feature_spans
from tfrecord_lite._example.spec import BYTES, FLOAT, INT64
from tfrecord_lite._example.varints import CONTINUED, FIRST_BYTES, one_varint_each


class Strided(NamedTuple):
    """Per feature list: the stride of its steps in bytes (0: the list is walked), its steps,
    their kind (FLOAT or INT64), values a step, and bytes a value (4 for float32, the
    varints' width for int64)."""

    stride: np.ndarray
    steps: np.ndarray
    kinds: np.ndarray
    per_step: np.ndarray
    width: np.ndarray


_HEAD = 6  # a step's tag and length, its list's, its packed run's: one byte each
_WORD = 8  # bytes read at once at a value
_HEAD_BYTES = FIRST_BYTES[_HEAD]


def _windows(buf: np.ndarray, width: int) -> np.ndarray:
    """Every `width` bytes of buf as a row (a view): row i is buf[i:i + width]."""
    return np.lib.stride_tricks.as_strided(buf, shape=(len(buf) - width + 1, width), strides=(1, 1), writeable=False)


def strided_lists(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Strided:
    """Which lists [starts[i], ends[i]) have steps at a constant stride, all numbers of one kind
    in packed runs of one size, laid out canonically (see the module docstring). An int64
    list's values are taken as varints of the first one's width; strided_values checks that."""
    out = Strided(*(np.zeros(len(starts), dtype=np.int64) for _ in range(5)))
    lists = np.flatnonzero(ends - starts > _HEAD)
    head = _windows(buf, _HEAD)[starts[lists]]
    size = head[:, 1].astype(np.int64)
    tag = head[:, 2]
    fits = (head[:, 0] == 0x0A) & (size < 0x80) & (size > 4) & ((tag == 0x12) | (tag == 0x1A))
    fits &= (head[:, 3] == size - 2) & (head[:, 4] == 0x0A) & (head[:, 5] == size - 4)
    fits &= (ends[lists] - starts[lists]) % (size + 2) == 0
    width = np.full(len(lists), 4)
    numbers = np.flatnonzero(tag == 0x1A)
    width[numbers] = _first_width(buf, starts[lists[numbers]] + _HEAD)
    run = size - 4  # bytes of values a step
    fits &= (width > 0) & (run % np.maximum(width, 1) == 0)
    keep = np.flatnonzero(fits)
    lists, stride, kinds, run, width = lists[keep], size[keep] + 2, tag[keep] >> 3, run[keep], width[keep]
    steps = (ends[lists] - starts[lists]) // stride
    step_at = _step_starts(starts[lists], stride, steps)
    owner = np.repeat(np.arange(len(lists)), steps)
    words = _words(buf)
    wrong = np.zeros(len(lists), dtype=bool)
    wrong[owner[(words[step_at] & _HEAD_BYTES) != (words[starts[lists]] & _HEAD_BYTES)[owner]]] = True
    numbers = np.flatnonzero(kinds[owner] == INT64)  # their steps
    if numbers.size:  # each run ends where a varint does, as the walk checks
        number_owner = owner[numbers]
        wrong[number_owner[buf[step_at[numbers] + stride[number_owner] - 1] >= 0x80]] = True
    lists, ok = lists[~wrong], ~wrong
    out.stride[lists], out.steps[lists], out.kinds[lists] = stride[ok], steps[ok], kinds[ok]
    out.per_step[lists], out.width[lists] = (run // width)[ok], width[ok]
    return out


def _first_width(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The size of the varint at each of `at` (0: longer than a word)."""
    ends = _windows(buf, _WORD)[at] < 0x80
    return np.where(ends.any(axis=1), ends.argmax(axis=1) + 1, 0)


def _one_varint(buf: np.ndarray, at: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Whether the `width` bytes at each of `at` are one varint (1 <= width <= 8)."""
    word = _words(buf)[at] & FIRST_BYTES[width]
    ok: np.ndarray = (word & CONTINUED[width]) == CONTINUED[width - 1]
    return ok


def _words(buf: np.ndarray) -> np.ndarray:
    """The 8 bytes at every offset of buf as one little-endian word (a view)."""
    words: np.ndarray = np.ndarray((len(buf) - _WORD + 1,), dtype="<u8", buffer=buf, strides=(1,))
    return words


def _step_starts(starts: np.ndarray, stride: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Where each step of each strided list starts, list after list."""
    first = np.cumsum(steps) - steps
    number = np.arange(int(steps.sum()), dtype=np.int64) - np.repeat(first, steps)
    at: np.ndarray = np.repeat(starts, steps) + number * np.repeat(stride, steps)
    return at


def strided_values(
    buf: np.ndarray, strided: Strided, starts: np.ndarray, lists: np.ndarray, kind: int, dtype: Any
) -> tuple[np.ndarray, Any, np.ndarray]:
    """(values per step, the values flat, which lists do not fit) of the strided lists `lists`
    (starting at `starts`), step after step; a list of another kind than `kind` gives its
    steps no values. An int64 list with a value that is not one varint of its list's width
    does not fit: its record is for the single-record decoder."""
    usable = strided.kinds[lists] == kind
    steps, per_step = strided.steps[lists], np.where(usable, strided.per_step[lists], 0)
    counts, wrong = np.repeat(per_step, steps), np.zeros(len(lists), dtype=bool)
    take = np.flatnonzero(usable)
    step_at = _step_starts(starts[take], strided.stride[lists[take]], steps[take]) + _HEAD
    if kind == FLOAT and take.size:
        floats = _float_rows(buf, step_at, np.repeat(per_step[take], steps[take]))
        return counts, floats.astype(dtype, copy=False), wrong
    if kind != INT64 or not take.size:
        return counts, [] if kind == BYTES else np.empty(0, dtype=dtype), wrong
    per = np.repeat(per_step[take], steps[take])
    width = np.repeat(strided.width[lists[take]], steps[take] * per_step[take])
    at = _value_starts(step_at, per, width)
    values = one_varint_each(buf, at, width)
    if values is not None:
        return counts, values, wrong
    fits = _one_varint(buf, at, width)
    wrong[take[np.repeat(np.arange(len(take)), steps[take] * per_step[take])[~fits]]] = True
    some = np.zeros(len(at), dtype=np.int64)  # those of the lists that fit
    found = one_varint_each(buf, at[fits], width[fits])
    if found is not None:
        some[fits] = found
    return counts, some, wrong


def _value_starts(step_at: np.ndarray, per: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Where each value starts: `per` values of `width` bytes (one width a value) at each of `step_at`."""
    if len(per) and per.min() == per.max() == 1:  # an id a step
        return step_at
    number = np.arange(int(per.sum()), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
    at: np.ndarray = np.repeat(step_at, per) + number * width
    return at


def _float_rows(buf: np.ndarray, step_at: np.ndarray, per: np.ndarray) -> np.ndarray:
    """The float32 values of steps of `per` values each at `step_at`, in order: each step's
    bytes gathered as one item, by groups of one size."""
    if per.min() == per.max():
        rows: np.ndarray = _items(buf, 4 * int(per[0]))[step_at].view("<f4")
        return rows.reshape(-1)
    out = np.empty(int(per.sum()), dtype="<f4")
    first = np.cumsum(per) - per
    for size in np.unique(per).tolist():
        group = np.flatnonzero(per == size)
        out[index_ranges(first[group], per[group])] = _items(buf, 4 * size)[step_at[group]].view("<f4").reshape(-1)
    return out


def _items(buf: np.ndarray, size: int) -> np.ndarray:
    """The `size` bytes at every offset of buf as one item (a view)."""
    items: np.ndarray = np.ndarray((len(buf) - size + 1,), dtype=f"V{size}", buffer=buf, strides=(1,))
    return items


def walk_steps(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, bad: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """lockstep._repeated for the steps of FeatureLists, in list order: (list, start, end) of
    each step. Each list's steps are walked one after the other, all lists at once, with three
    numpy operations a step where steps are under 128 bytes: a step's one-byte length is read
    and skipped, _UNROLL steps a turn, and the tags and lengths are checked after the walk, for
    all steps at once (a list walked past its end reads at most _UNROLL steps it does not have,
    in the padding after the last record at worst; they are dropped then). A list where that
    reading does not hold is walked again by _repeated."""
    idx = np.flatnonzero(starts < ends)
    at, end = starts[idx] + 1, ends[idx]  # at: the length byte of each list's next step
    owners, positions, lengths = [], [], []
    while idx.size:
        for _ in range(_UNROLL):
            length = buf[at]
            owners.append(idx)
            positions.append(at)
            lengths.append(length)
            at = at + length
            at += 2
        live = at <= end
        if not live.all():
            idx, at, end = idx[live], at[live], end[live]
    if not owners:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    # Step k of each list was read in turn k: its place in list order is where its list's steps begin, plus k.
    number = np.repeat(np.arange(len(owners)), [len(o) for o in owners])
    owner, start = np.concatenate(owners), np.concatenate(positions) + 1
    real = np.flatnonzero(start - 2 < ends[owner])  # the tag is inside the list
    owner, start, number = owner[real], start[real], number[real]
    first = np.zeros(len(starts), dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=len(starts))[:-1], out=first[1:])
    place = first[owner] + number
    owner[place], start[place] = owner.copy(), start.copy()
    length = np.empty(len(real), dtype=np.uint8)
    length[place] = np.concatenate(lengths)[real]
    stop = start + length
    wrong = np.zeros(len(starts), dtype=bool)
    wrong[owner[(buf[start - 2] != 0x0A) | (length >= 0x80)]] = True  # not field 1, length-delimited; a longer length
    last = np.flatnonzero(np.append(owner[1:] != owner[:-1], True))
    wrong[owner[last[stop[last] != ends[owner[last]]]]] = True  # the last step ends past the list
    if wrong.any():
        redo = np.flatnonzero(wrong)
        keep = ~wrong[owner]
        redo_bad = np.zeros(len(redo), dtype=bool)
        again, again_start, again_stop = _repeated(buf, starts[redo], ends[redo], redo_bad)
        bad[redo[redo_bad]] = True
        owner = np.concatenate([owner[keep], redo[again]])
        order = np.argsort(owner, kind="stable")
        owner = owner[order]
        start = np.concatenate([start[keep], again_start])[order]
        stop = np.concatenate([stop[keep], again_stop])[order]
    return owner, start, stop


_UNROLL = 4  # steps each list walks a turn
WALK_PAD = bytes(_UNROLL * 258)  # after the last record: what a walk past its end may read


def step_spans(
    buf: np.ndarray, start: np.ndarray, end: np.ndarray, ok: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """lockstep.feature_spans for the steps, with less work where every list field and packed
    run is under 128 bytes: a step's first four bytes are its list's tag and length and its
    packed run's tag and length (four byte gathers: numpy gathers bytes much faster than
    unaligned words). Steps laid out otherwise go to feature_spans. The padding after the
    last record holds the four bytes of an empty step at its end."""
    tag, size, inner_tag, inner_size = buf[start], buf[start + 1], buf[start + 2], buf[start + 3]
    has_kind = start < end
    kinds = np.where(has_kind, tag >> 3, 0).astype(np.int64)
    numeric = has_kind & (size > 0) & (kinds != BYTES)
    fast = ~has_kind | ((kinds >= BYTES) & (kinds <= INT64) & (tag & 7 == 2) & (start + 2 + size == end))
    fast &= ~numeric | ((inner_tag == 0x0A) & (start + 4 + inner_size == end))
    fast &= ~numeric | (kinds != FLOAT) | (inner_size % 4 == 0)
    fast &= ~numeric | (kinds != INT64) | (buf[end - 1] < 0x80)
    value_start = np.where(numeric, start + 4, np.where(has_kind, start + 2, start))
    slow = np.flatnonzero(~fast)
    if slow.size:
        slow_ok = np.ones(len(slow), dtype=bool)
        kinds[slow], value_start[slow], end_slow = feature_spans(buf, start[slow], end[slow], slow_ok)
        ok[slow] = slow_ok
        end = end.copy()
        end[slow] = end_slow
    return kinds, value_start, end
