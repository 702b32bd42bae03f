"""Where the values of a batch of Examples lie: the batch parser behind columnar's
decoders, on the batch's records in one buffer, with no Python work per record.

Strategy: records of one dataset mostly share their skeleton (every byte outside the
values): one record per length is parsed (wire.layout_of), the others of that length
are compared with it in one numpy operation and their values taken from the same
offsets (match_layouts, by_layout). The rest are parsed in lockstep with numpy — each
step handles the same protobuf level of every record at once (Example -> map entries ->
key / Feature -> value list; by_lockstep). Either way each feature's numbers are
gathered and decoded once (gather_numbers): packed floats by one frombuffer, int64
varints by one packed parse. A lockstep step costs the same for one record as for thousands, so
the few lists still going after 32 steps (a record of millions of values among short ones) are
walked one at a time into arrays of offsets, never an object per value.

The lockstep parser accepts only the canonical layout that every protobuf writer
produces (one Features field, key before value, packed numeric lists, ASCII keys), and
checks everything decode_example checks (every key, every list of every feature,
requested or not). A record that deviates in any way — unpacked lists, repeated oneof
fields, unknown fields, malformed data — or holds a feature of another kind than its
spec is marked bad: the caller decodes it with the single-record decoder.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from tfrecord_lite._batches.keys import index_ranges, match_keys
from tfrecord_lite._example.raw import RawFeature
from tfrecord_lite._example.spec import BYTES, FLOAT, INT64, FeatureSpec
from tfrecord_lite._example.varints import decode_varint_runs
from tfrecord_lite._example.wire import Layout, layout_of

_U64 = np.uint64
_LOCKSTEP_STEPS, _FEW_SPANS = 32, 64  # past this many steps, this few spans are walked one by one
_MOST_LAYOUTS = 16  # record lengths a batch matches by layout at most (each costs a parse in Python)


class Plan(NamedTuple):
    """One feature a batch decode asks for."""

    key: str
    spec: FeatureSpec
    size: int  # values per row (FixedLen) or per step (FixedLenSequence)
    # a RawFeature read as this bytes value: the values found as their (start, end) in the buffer,
    # whatever text() gives, to be gathered into one array
    raw: RawFeature | None = None


class _SpanSlicer:
    """What `text()` gives when bytes values are wanted as their spans (see columnar.Assembly)."""

    __slots__ = ()


SPANS = _SpanSlicer()


class Span(NamedTuple):
    """Where the packed numbers of one feature lie in some records: rows, and byte spans."""

    rows: np.ndarray
    starts: np.ndarray
    ends: np.ndarray


class Found(NamedTuple):
    """The values of one feature in some records: the rows that have it (with the spec's
    kind), how many values each has, and the values, flat, in row order."""

    rows: np.ndarray
    counts: np.ndarray
    values: Any  # an ndarray, or a list of bytes


def _varints(buf: np.ndarray, pos: np.ndarray, limit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode the length varint at each position: (value as int64, position after it, ok).

    `ok` is false where the varint is longer than 5 bytes (the protobuf runtime's
    limit for lengths), runs past `limit`, or its value is more than what is left
    before `limit`.
    """
    b = buf[pos]
    value = (b & 0x7F).astype(_U64)
    after = pos + 1
    ok = np.ones(len(pos), dtype=bool)
    more = np.flatnonzero(b & 0x80)
    shift = 7
    while more.size:
        if shift == 35:
            ok[more] = False
            break
        bk = buf[pos[more] + shift // 7]
        value[more] |= (bk & 0x7F).astype(_U64) << _U64(shift)
        after[more] += 1
        more = more[(bk & 0x80) != 0]
        shift += 7
    room = limit - after
    ok &= room >= 0
    ok &= value <= np.minimum(np.maximum(room, 0), 0xFFFFFFFF).astype(_U64)
    return value.astype(np.int64), after, ok


def delimited_fields(
    buf: np.ndarray, pos: np.ndarray, limit: np.ndarray, tag: int | np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A length-delimited field with one-byte `tag` (one, or one per position) at each position:
    (start, end, ok)."""
    ok = buf[pos] == tag
    length, start, fits = _varints(buf, pos + 1, limit)
    ok &= fits
    return start, start + np.where(ok, length, 0), ok


def _repeated(
    buf: np.ndarray, pos: np.ndarray, end: np.ndarray, bad: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Walk the repeated field-1 length-delimited values in every span [pos[i], end[i]) at once.

    Returns (span index, start, end) of every value found, in order within each span
    (the spans' values interleaved); a span with anything else in it is marked in `bad`.
    A step costs the same for one span as for thousands: once only a few spans are left
    (a record of very many entries among short ones), each is walked on its own into
    arrays (_walk), at a fraction of that cost per value and with no object per value.
    """
    owners: list[np.ndarray] = []
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    live = pos < end
    idx, pos, end = np.flatnonzero(live), pos[live], end[live]
    for step in itertools.count():
        if not idx.size:
            break
        if step >= _LOCKSTEP_STEPS and idx.size < _FEW_SPANS:
            _walk_each(buf, idx, pos, end, bad, (owners, starts, ends))
            break
        s, e, ok = delimited_fields(buf, pos, end, 0x0A)
        if not ok.all():
            bad[idx[~ok]] = True
            idx, s, e, end = idx[ok], s[ok], e[ok], end[ok]
        owners.append(idx)
        starts.append(s)
        ends.append(e)
        live = e < end
        idx, pos, end = idx[live], e[live], end[live]
    if not owners:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(owners), np.concatenate(starts), np.concatenate(ends)


def _walk_each(
    buf: np.ndarray,
    idx: np.ndarray,
    pos: np.ndarray,
    end: np.ndarray,
    bad: np.ndarray,
    into: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]],
) -> None:
    """The values left in a few spans, each walked on its own (16 bytes a value, no object per
    value); a span with anything else in it is marked in `bad`."""
    view = buf.data
    for i, p, e in zip(idx.tolist(), pos.tolist(), end.tolist(), strict=True):
        walked = _walk(view, p, e)
        if walked is None:
            bad[i] = True
            continue
        first, last = (np.frombuffer(a, dtype=np.int64) for a in walked)
        into[0].append(np.full(len(first), i, dtype=idx.dtype))
        into[1].append(first)
        into[2].append(last)


def _walk(view: memoryview, pos: int, end: int) -> tuple[array[int], array[int]] | None:
    """(starts, ends) of the field-1 length-delimited values filling view[pos:end]; None
    where anything else is there (as delimited_fields checks: lengths of at most 5 bytes and
    32 bits, within the span)."""
    starts, ends = array("q"), array("q")
    add_start, add_end = starts.append, ends.append
    while pos < end:
        if view[pos] != 0x0A:
            return None
        pos += 1
        length = shift = 0
        while True:
            if pos >= end or shift == 35:
                return None
            b = view[pos]
            pos += 1
            length |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        if length > 0xFFFFFFFF or pos + length > end:
            return None
        add_start(pos)
        pos += length
        add_end(pos)
    return starts, ends


def ragged_gather(
    buf: npt.NDArray[np.uint8], raw: memoryview, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> npt.NDArray[np.uint8]:
    """The bytes buf[starts[i]:ends[i]] of all i, concatenated, as a uint8 array."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.uint8)
    width = int(lengths.max())
    equal = total == width * len(starts)
    long = total > 64 * len(starts)
    if (equal or not long) and width * len(starts) <= 2 * total and int(starts.max()) + width <= len(buf):
        # lengths equal, or short and alike: rows of `width` bytes, each copied whole (one item of a
        # void dtype, not `width` one-byte items), then the bytes past each length dropped
        whole = np.ndarray((len(buf) - width + 1,), dtype=f"V{width}", buffer=buf, strides=(1,))
        rows: npt.NDArray[np.uint8] = whole[starts].view(np.uint8)
        return rows if equal else rows.reshape(-1, width)[np.arange(width) < lengths[:, None]]
    if long:  # long runs of unequal lengths: copy slices (memcpy speed; dropping bytes after costs more)
        out = bytearray().join(map(raw.__getitem__, map(slice, starts.tolist(), ends.tolist())))
        return np.frombuffer(out, dtype=np.uint8)
    return buf[index_ranges(starts, lengths)]


def _rows(buf: np.ndarray, base: np.ndarray, width: int) -> np.ndarray:
    """The `width` bytes at each of `base` as the rows of a new array (each row copied as one
    item of a void dtype: about a third cheaper than a gather of `width` one-byte items)."""
    whole = np.ndarray((len(buf) - width + 1,), dtype=f"V{width}", buffer=buf, strides=(1,))
    rows: np.ndarray = whole[base].view(np.uint8).reshape(-1, width)
    return rows


class _Column(NamedTuple):
    """What the lockstep parse found for one spec key: for each record that has the
    feature, its row, the Feature's kind, the byte span of its values (packed numbers)
    and its map entry (for bytes values, walked in _parse_batch)."""

    rows: np.ndarray
    kinds: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    entries: np.ndarray


class _BytesValues(NamedTuple):
    """Every bytes value of every bytes_list in the batch, grouped by map entry:
    entry e holds values first[e] .. first[e + 1] - 1."""

    first: np.ndarray
    starts: np.ndarray
    ends: np.ndarray


def _runs_with(mask: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """For consecutive runs of `mask` (run i has lengths[i] items): does run i hold a True?"""
    cum = np.zeros(len(mask) + 1, dtype=np.int64)
    np.cumsum(mask, out=cum[1:])
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return cum[bounds[1:]] > cum[bounds[:-1]]


def map_entries(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, bad: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, start, end) of every map entry of the records' Features; marks malformed records in `bad`."""
    rows = np.flatnonzero(starts < ends)  # an empty record is an Example with no features
    # Example: one `features` field spanning the record.
    features_start, features_end, ok = delimited_fields(buf, starts[rows], ends[rows], 0x0A)
    ok &= features_end == ends[rows]
    bad[rows[~ok]] = True
    rows, features_start, features_end = rows[ok], features_start[ok], features_end[ok]
    # Features: a run of map entries.
    entry_bad = np.zeros(len(rows), dtype=bool)
    owner, entry_start, entry_end = _repeated(buf, features_start, features_end, entry_bad)
    bad[rows[entry_bad]] = True
    return rows[owner], entry_start, entry_end


def _bytes_values(
    buf: np.ndarray, lists: np.ndarray, list_start: np.ndarray, list_end: np.ndarray, entries: int, ok: np.ndarray
) -> _BytesValues:
    """The values of the bytes lists (entries `lists`): a run of field-1 values each; a bad run clears `ok`."""
    list_bad = np.zeros(len(lists), dtype=bool)
    owner, value_start, value_end = _repeated(buf, list_start[lists], list_end[lists], list_bad)
    ok[lists[list_bad]] = False
    order = np.argsort(owner, kind="stable")
    per_entry = np.zeros(entries, dtype=np.int64)
    per_entry[lists] = np.bincount(owner, minlength=len(lists))
    first = np.zeros(entries + 1, dtype=np.int64)
    np.cumsum(per_entry, out=first[1:])
    return _BytesValues(first, value_start[order], value_end[order])


def feature_spans(
    buf: np.ndarray, feature_start: np.ndarray, feature_end: np.ndarray, ok: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each Feature message at feature_start..feature_end: its kind (0: none) and the span of its
    values (one packed run for numbers, the run of bytes values for bytes); clears `ok` in place
    where a Feature is not laid out canonically."""
    # Feature: no kind (empty), or one list field (bytes 0x0A, float 0x12, int64 0x1A) spanning it.
    tag = buf[feature_start]
    has_kind = feature_start < feature_end
    length, list_start, fits = _varints(buf, feature_start + 1, feature_end)
    list_end = list_start + np.where(fits, length, 0)
    ok &= ~has_kind | (((tag == 0x0A) | (tag == 0x12) | (tag == 0x1A)) & fits & (list_end == feature_end))
    kinds = np.where(has_kind, tag >> 3, 0)
    # Numeric lists: empty, or one packed field spanning the list.
    numeric = ok & has_kind & (kinds != BYTES) & (list_start < list_end)
    packed_start, packed_end, packed_ok = delimited_fields(
        buf, np.where(numeric, list_start, 0), np.where(numeric, list_end, 1), 0x0A
    )
    ok &= ~numeric | (packed_ok & (packed_end == list_end))
    ok &= ~numeric | (kinds != FLOAT) | ((packed_end - packed_start) % 4 == 0)
    ok &= ~numeric | (kinds != INT64) | (buf[np.maximum(packed_end - 1, 0)] < 0x80)
    list_start = np.where(numeric, packed_start, list_start)
    list_end = np.where(numeric, packed_end, list_end)
    return kinds, list_start, list_end


def ascii_keys(
    buf: np.ndarray, raw: memoryview, key_start: np.ndarray, key_end: np.ndarray, ok: np.ndarray
) -> np.ndarray:
    """The length of each key where `ok` (else 0); clears `ok` where a key is not ASCII. Keys must be
    valid UTF-8, as the single-record decoder requires: ASCII passes here, the rest goes the slow way."""
    key_len = np.where(ok, key_end - key_start, 0)
    if key_len.any():
        high = ragged_gather(buf, raw, key_start, key_start + key_len) >= 0x80
        if high.any():
            ok &= ~_runs_with(high, key_len)
    return key_len


def _parse_batch(
    buf: np.ndarray, raw: memoryview, starts: np.ndarray, ends: np.ndarray, keys: list[bytes], bad: np.ndarray
) -> tuple[list[_Column], _BytesValues]:
    """Parse the batch down to each requested Feature; marks non-canonical records in `bad`.

    Everything decode_example validates is validated here too (every key, every list
    of every feature, requested or not), so a record passes only if it would decode.
    """
    entry_row, entry_start, entry_end = map_entries(buf, starts, ends, bad)
    # Entry: key (field 1) then value (field 2), nothing else.
    key_start, key_end, ok = delimited_fields(buf, entry_start, entry_end, 0x0A)
    ok &= key_end < entry_end
    feature_start, feature_end, feature_ok = delimited_fields(buf, np.where(ok, key_end, entry_start), entry_end, 0x12)
    ok &= feature_ok & (feature_end == entry_end)
    kinds, list_start, list_end = feature_spans(buf, feature_start, feature_end, ok)
    values = _bytes_values(buf, np.flatnonzero(ok & (kinds == BYTES)), list_start, list_end, len(entry_start), ok)
    key_len = ascii_keys(buf, raw, key_start, key_end, ok)
    bad[entry_row[~ok]] = True
    columns = [
        _Column(rows, kinds[found], list_start[found], list_end[found], found)
        for rows, found in match_keys(buf, keys, key_start, key_len, entry_row, ok)
    ]
    return columns, values


def _bytes_column(text: Any, col: _Column, found: _BytesValues) -> tuple[np.ndarray, Any]:
    """(count per entry, flat list of bytes values) of a bytes_list column; `text` holds the
    batch (or is SPANS: then the values' (start, end), shape (k, 2))."""
    first = found.first[col.entries]
    counts = found.first[col.entries + 1] - first
    index = index_ranges(first, counts)
    if text is SPANS:
        return counts, np.stack([found.starts[index], found.ends[index]], axis=1)
    return counts, [text[s:e] for s, e in zip(found.starts[index].tolist(), found.ends[index].tolist(), strict=False)]


class Match(NamedTuple):
    """Records (rows, and where each starts) laid out byte for byte as `layout` outside their values."""

    rows: np.ndarray
    base: np.ndarray
    layout: Layout


def match_layouts(buf: np.ndarray, view: memoryview, starts: np.ndarray, ends: np.ndarray) -> list[Match]:
    """Group the records that share a canonical layout.

    Records of one dataset mostly share their skeleton (the bytes outside the values):
    one record of each length is parsed (wire.Layout), the others of that length are
    compared with it in one numpy operation. Lengths of fewer than 16 records are left to
    the lockstep parser (a length costs about as much Python as the lockstep parser spends
    on 30 records: records of many lengths, as variable-length features give, parse faster
    in lockstep), unless few records are left (at most a 16th of the batch, as when
    a few varints are longer): then those are matched one length at a time too, which
    costs less than the lockstep parser's pass. Of many lengths (records of variable-length
    lists) only the _MOST_LAYOUTS commonest are matched: a parse per length would cost more
    than the lockstep parser's pass over their records.
    """
    matches = _match_lengths(buf, view, starts, ends, least=16)
    handled = np.zeros(len(starts), dtype=bool)
    for match in matches:
        handled[match.rows] = True
    rest = np.flatnonzero(~handled)
    if 0 < len(rest) <= len(starts) // 16:
        more = _match_lengths(buf, view, starts[rest], ends[rest], least=1)
        matches += [Match(rest[m.rows], m.base, m.layout) for m in more]
    return matches


def _match_lengths(buf: np.ndarray, view: memoryview, starts: np.ndarray, ends: np.ndarray, least: int) -> list[Match]:
    """match_layouts for the lengths of at least `least` records."""
    matches = []
    lengths, group_of, sizes = np.unique(ends - starts, return_inverse=True, return_counts=True)
    groups = np.flatnonzero(sizes >= least)
    if len(groups) > _MOST_LAYOUTS:  # lengths all over the place: the largest groups only
        groups = np.sort(groups[np.argsort(sizes[groups], kind="stable")[-_MOST_LAYOUTS:]])
    for g in groups.tolist():
        rows = np.flatnonzero(group_of == g)
        layout = layout_of(view[starts[rows[0]] : ends[rows[0]]].tobytes())
        if layout is None:
            continue
        base = starts[rows]
        ok = _fits(buf, base, int(lengths[g]), layout)
        if ok.any():
            matches.append(Match(rows[ok], base[ok], layout))
    return matches


def _fits(buf: np.ndarray, base: np.ndarray, length: int, layout: Layout) -> np.ndarray:
    """Which records at `base` (of `length` bytes) have the skeleton of `layout`, and end
    each of its int64 runs where it ends (so their values parse as the layout's do)."""
    positions, skeleton = layout.skeleton()
    int_ends = np.array(layout.int_ends, dtype=np.int64) - 1
    if 4 * (len(positions) + len(int_ends)) > length:  # small records: compared whole, one copy per row
        expected = np.zeros(length, dtype=np.uint8)
        expected[positions] = skeleton
        mask = np.zeros(length, dtype=np.uint8)
        mask[positions] = 0xFF
        mask[int_ends] |= 0x80  # a run's last byte ends a varint
        off = _rows(buf, base, length)
        off ^= expected
        off &= mask
        if not off.any():
            return np.ones(len(base), dtype=bool)
        fits: np.ndarray = np.logical_not(off.any(axis=1))
        return fits
    seen = buf[base[:, None] + np.concatenate([positions, int_ends])]
    ok: np.ndarray = (seen[:, : len(skeleton)] == skeleton).all(axis=1)
    ok &= (seen[:, len(skeleton) :] < 0x80).all(axis=1)
    return ok


def by_layout(
    buf: np.ndarray,
    text: Callable[[], Any],
    n: int,
    matches: list[Match],
    plans: list[Plan],
    bad: np.ndarray,
) -> tuple[np.ndarray, list[list[Found]], list[list[Span]]]:
    """Decode the records of `matches` (see match_layouts): the values of those that match
    are gathered from the same offsets. Returns which records were handled, and per plan
    the bytes values found in them and the spans of the numbers.
    """
    handled = np.zeros(n, dtype=bool)
    found: list[list[Found]] = [[] for _ in plans]
    spans: list[list[Span]] = [[] for _ in plans]
    for rows, base, layout in matches:
        handled[rows] = True
        for plan, into, pieces in zip(plans, found, spans, strict=False):
            parsed = layout.parsed.get(plan.key)
            if parsed is None or not parsed[0]:
                continue  # missing, or no kind: the same in every record of the group
            kind, chunks = parsed
            if kind != plan.spec.kind:
                bad[rows] = True  # the single-record path raises the error
                continue
            if kind == BYTES and (plan.raw is not None or text() is SPANS):
                into.append(Found(rows, np.full(len(rows), len(chunks)), _chunk_spans(base, chunks)))
                continue
            if kind == BYTES:
                data = text()
                per_chunk = [
                    [data[a:b] for a, b in zip((base + s).tolist(), (base + e).tolist(), strict=False)]
                    for s, e in chunks
                ]
                values: Any = (
                    per_chunk[0] if len(chunks) == 1 else [v for row in zip(*per_chunk, strict=False) for v in row]
                )
                if not chunks:
                    values = []
                into.append(Found(rows, np.full(len(rows), len(chunks)), values))
                continue
            s, e = chunks[0] if chunks else (0, 0)  # canonical: one packed run, or none
            pieces.append(Span(rows, base + s, base + e))
    return handled, found, spans


def _chunk_spans(base: np.ndarray, chunks: list[tuple[int, int]]) -> np.ndarray:
    """(start, end) of every chunk of every record at `base`, records in turn: shape (k, 2)."""
    if not chunks:
        return np.empty((0, 2), dtype=np.int64)
    per_chunk = [np.stack([base + s, base + e], axis=1) for s, e in chunks]
    return np.stack(per_chunk, axis=1).reshape(-1, 2)


def gather_numbers(buf: np.ndarray, view: memoryview, kind: int, pieces: list[Span], bad: np.ndarray) -> Found:
    """The numbers of a float / int64 feature from the spans where they lie (packed runs,
    from any number of sources), gathered and decoded at once, in row order."""
    rows = np.concatenate([r for r, _, _ in pieces])
    first = np.concatenate([a for _, a, _ in pieces])
    last = np.concatenate([b for _, _, b in pieces])
    if len(pieces) > 1:
        order = np.argsort(rows, kind="stable")
        rows, first, last = rows[order], first[order], last[order]
    data = ragged_gather(buf, view, first, last)
    if kind == FLOAT:
        return Found(rows, (last - first) // 4, data.view("<f4").astype(np.float32, copy=False))
    values, counts, run_bad = decode_varint_runs(data, last - first)
    bad[rows[run_bad]] = True
    return Found(rows, counts, values)


def by_lockstep(
    buf: np.ndarray,
    view: memoryview,
    text: Callable[[], Any],
    starts: np.ndarray,
    ends: np.ndarray,
    plans: list[Plan],
    bad: np.ndarray,
) -> list[Any]:
    """Parse the records with the lockstep parser; per plan the bytes values found (a Found)
    or the spans of the numbers (a Span), rows relative to starts."""
    keys = [p.key.encode("utf-8", "surrogatepass") for p in plans]
    columns, bytes_found = _parse_batch(buf, view, starts, ends, keys, bad)
    found: list[Any] = []
    for plan, col in zip(plans, columns, strict=False):
        spec = plan.spec
        present = col.kinds != 0
        wrong = present & (col.kinds != spec.kind)
        bad[col.rows[wrong]] = True
        col = _Column(*(a[present & ~wrong] for a in col))
        if spec.dtype == "bytes":
            found.append(Found(col.rows, *_bytes_column(SPANS if plan.raw is not None else text(), col, bytes_found)))
        else:
            found.append(Span(col.rows, col.starts, col.ends))
    return found
