"""Batched, columnar Example parsing — the counterpart of tf.io.parse_example.

Strategy: the records of a batch lie in one buffer (the reader's, or the
records joined). Records of one dataset mostly share their skeleton (every
byte outside the values): one record per length is parsed, the others of that
length are compared with it in one numpy operation and their values taken from
the same offsets. The rest are parsed in lockstep with numpy — each step
handles the same protobuf level of every record at once (Example -> map
entries -> key / Feature -> value list). Either way the Python cost is per
batch, not per record, and each feature's numbers are gathered and decoded
once: packed floats by one frombuffer, int64 varints by one packed parse.

The lockstep parser accepts only the canonical layout that every protobuf
writer produces (one Features field, key before value, packed numeric lists,
ASCII keys). A record that deviates in any way — unpacked lists, repeated
oneof fields, unknown fields, malformed data — and a record that does not fit
its spec are decoded by the single-record decoder (decode.decode_example),
which gives the answer or raises the error that record deserves. So results
and errors are by construction those of decode_example, record by record.
Of large records (images) only what lies outside their long bytes values is
joined; those values are sliced once out of the records themselves, where
joining them would copy them twice (_decode_sparse).
This module works on bytes only; joining the records and slicing values out of the join
is _example/joins.py, reading batches from files _records/example_batches.py.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from tfrecord_lite._example.decode import apply_spec, decode_example
from tfrecord_lite._example.joins import (
    _SCRATCH,
    _SPARSE_RECORD,
    _SPARSE_VALUE,
    _all_bytes,
    _join,
    _RecordSlicer,
    _ViewSlicer,
)
from tfrecord_lite._example.spec import (
    BYTES,
    FLOAT,
    INT64,
    FeatureSpec,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SpecDict,
    VarLenFeature,
)
from tfrecord_lite._example.validate import batch_specs
from tfrecord_lite._example.varints import decode_varint_runs
from tfrecord_lite._example.wire import as_bytes, layout_of

_U64 = np.uint64
_TAG_OF_KIND = {BYTES: 0x0A, FLOAT: 0x12, INT64: 0x1A}
_SHOWN_ROWS = 3  # rows a Ragged's repr shows


class Ragged(NamedTuple):
    """Variable-length values of a batch: row i is ``values[row_splits[i]:row_splits[i + 1]]``."""

    values: np.ndarray
    row_splits: np.ndarray

    def row_lengths(self) -> np.ndarray:
        """The number of values in each row."""
        return np.diff(self.row_splits)

    def row(self, i: int) -> np.ndarray:
        """The values of row `i`."""
        return self.values[self.row_splits[i] : self.row_splits[i + 1]]

    def to_list(self) -> list[np.ndarray]:
        """One array per row."""
        return np.split(self.values, self.row_splits[1:-1])

    def __repr__(self) -> str:
        rows = len(self.row_splits) - 1
        shown = ", ".join(str(self.row(i).tolist()) for i in range(min(rows, _SHOWN_ROWS)))
        more = ", ..." if rows > _SHOWN_ROWS else ""
        return f"Ragged(shape=[{rows}, None], dtype={self.values.dtype}, rows=[{shown}{more}])"


# --------------------------------------------------------------------------- lockstep wire parsing


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


def _field(
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
    """
    owners, starts, ends = [], [], []
    live = pos < end
    idx, pos, end = np.flatnonzero(live), pos[live], end[live]
    while idx.size:
        s, e, ok = _field(buf, pos, end, 0x0A)
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


def _ragged_gather(
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
    return buf[_ranges(starts, lengths)]


def _windows(buf: np.ndarray, width: int) -> np.ndarray:
    """Every `width` bytes of `buf` as a row (row i starts at byte i): a view, no copy."""
    return np.lib.stride_tricks.as_strided(buf, (len(buf) - width + 1, width), (1, 1), writeable=False)


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


def _ranges(first: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The indices first[i], first[i] + 1, ..., first[i] + counts[i] - 1 for all i, concatenated."""
    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts
    index: npt.NDArray[np.int64] = np.arange(total, dtype=np.int64) + np.repeat(first - offsets, counts)
    return index


def _map_entries(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, bad: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, start, end) of every map entry of the records' Features; marks malformed records in `bad`."""
    rows = np.flatnonzero(starts < ends)  # an empty record is an Example with no features
    # Example: one `features` field spanning the record.
    features_start, features_end, ok = _field(buf, starts[rows], ends[rows], 0x0A)
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


def _parse_batch(
    buf: np.ndarray, raw: memoryview, starts: np.ndarray, ends: np.ndarray, keys: list[bytes], bad: np.ndarray
) -> tuple[list[_Column], _BytesValues]:
    """Parse the batch down to each requested Feature; marks non-canonical records in `bad`.

    Everything decode_example validates is validated here too (every key, every list
    of every feature, requested or not), so a record passes only if it would decode.
    """
    entry_row, entry_start, entry_end = _map_entries(buf, starts, ends, bad)
    # Entry: key (field 1) then value (field 2), nothing else.
    key_start, key_end, ok = _field(buf, entry_start, entry_end, 0x0A)
    ok &= key_end < entry_end
    feature_start, feature_end, feature_ok = _field(buf, np.where(ok, key_end, entry_start), entry_end, 0x12)
    ok &= feature_ok & (feature_end == entry_end)
    # Feature: no kind (empty), or one list field (bytes 0x0A, float 0x12, int64 0x1A) spanning it.
    tag = buf[feature_start]
    has_kind = feature_start < feature_end
    length, list_start, fits = _varints(buf, feature_start + 1, feature_end)
    list_end = list_start + np.where(fits, length, 0)
    ok &= ~has_kind | (((tag == 0x0A) | (tag == 0x12) | (tag == 0x1A)) & fits & (list_end == feature_end))
    kinds = np.where(has_kind, tag >> 3, 0)
    # Numeric lists: empty, or one packed field spanning the list.
    numeric = ok & has_kind & (kinds != BYTES) & (list_start < list_end)
    packed_start, packed_end, packed_ok = _field(
        buf, np.where(numeric, list_start, 0), np.where(numeric, list_end, 1), 0x0A
    )
    ok &= ~numeric | (packed_ok & (packed_end == list_end))
    ok &= ~numeric | (kinds != FLOAT) | ((packed_end - packed_start) % 4 == 0)
    ok &= ~numeric | (kinds != INT64) | (buf[np.maximum(packed_end - 1, 0)] < 0x80)
    list_start = np.where(numeric, packed_start, list_start)
    list_end = np.where(numeric, packed_end, list_end)
    values = _bytes_values(buf, np.flatnonzero(ok & (kinds == BYTES)), list_start, list_end, len(entry_start), ok)
    # Keys must be valid UTF-8, as decode_example requires: ASCII passes here, the rest goes the slow way.
    key_len = np.where(ok, key_end - key_start, 0)
    if key_len.any():
        high = _ragged_gather(buf, raw, key_start, key_start + key_len) >= 0x80
        if high.any():
            ok &= ~_runs_with(high, key_len)
    bad[entry_row[~ok]] = True
    columns = [
        _Column(rows, kinds[found], list_start[found], list_end[found], found)
        for rows, found in (_match_key(buf, key, key_start, key_len, entry_row, ok) for key in keys)
    ]
    return columns, values


def _match_key(
    buf: np.ndarray, key: bytes, key_start: np.ndarray, key_len: np.ndarray, entry_row: np.ndarray, ok: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, entries) of the good entries whose key is `key`; a repeated key keeps its last entry."""
    size = len(key)
    found = np.flatnonzero(ok & (key_len == size))
    if size and found.size:
        want = np.frombuffer(key, dtype=np.uint8)
        found = found[(buf[key_start[found][:, None] + np.arange(size)] == want).all(axis=1)]
    rows = entry_row[found]
    if rows.size and (np.diff(rows) <= 0).any():  # entries are in step order: keep each row's last match
        order = np.lexsort((found, rows))
        rows, found = rows[order], found[order]
        keep = np.ones(rows.size, dtype=bool)
        keep[:-1] = rows[1:] != rows[:-1]
        rows, found = rows[keep], found[keep]
    return rows, found


# --------------------------------------------------------------------------- values


def _bytes_column(text: Any, col: _Column, found: _BytesValues) -> tuple[np.ndarray, Any]:
    """(count per entry, flat list of bytes values) of a bytes_list column; `text` holds the
    batch (or is _SPANS: then the values' (start, end), shape (k, 2))."""
    first = found.first[col.entries]
    counts = found.first[col.entries + 1] - first
    index = _ranges(first, counts)
    if text is _SPANS:
        return counts, np.stack([found.starts[index], found.ends[index]], axis=1)
    return counts, [text[s:e] for s, e in zip(found.starts[index].tolist(), found.ends[index].tolist(), strict=False)]


class _Plan(NamedTuple):
    key: str
    spec: FeatureSpec
    size: int  # values per row (FixedLen) or per step (FixedLenSequence)


def _as_array(values: list[Any] | npt.NDArray[Any]) -> npt.NDArray[Any]:
    """An ndarray of the values; a list of bytes becomes an object array (never a bytes_ array)."""
    if isinstance(values, list):  # fromiter: an assignment of memoryviews would look into each
        return np.fromiter(values, dtype=object, count=len(values))
    return values


def _slices(values: Any, splits: np.ndarray) -> list[Any]:
    return [values[a:b] for a, b in zip(splits[:-1].tolist(), splits[1:].tolist(), strict=False)]


def _assemble(plan: _Plan, n: int, parts: list[_Found], slow: dict[int, Any], _view: memoryview) -> Any:
    """The batch value of one feature from what the fast paths found (rows not slow) and
    the slow rows' decoded values."""
    spec = plan.spec
    is_bytes = spec.dtype == "bytes"
    if isinstance(spec, FixedLenFeature):
        if len(parts) == 1 and len(parts[0].rows) == n and not is_bytes:
            return parts[0].values.reshape((n,) + spec.shape)  # every record has it: the values are the column
        out = np.empty((n,) + spec.shape, dtype=object if is_bytes else spec.dtype)
        flat = out.reshape(n, plan.size)
        missing = np.ones(n, dtype=bool)
        for part in parts:
            flat[part.rows] = _as_array(part.values).reshape(len(part.rows), plan.size)
            missing[part.rows] = False
        missing[list(slow)] = False
        if missing.any():
            out[missing] = spec.default_value
        for i, v in slow.items():
            out[i] = v
        return out
    rows, counts, values = _merge(parts, spec.dtype)
    if isinstance(spec, VarLenFeature):
        lengths = np.zeros(n, dtype=np.int64)
        lengths[rows] = counts
        for i, v in slow.items():
            lengths[i] = len(v)
        splits = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=splits[1:])
        if is_bytes:
            per_row: list[Any] = [[] for _ in range(n)]
            for i, v in zip(rows.tolist(), _slices(values, np.concatenate(([0], np.cumsum(counts)))), strict=False):
                per_row[i] = v
            for i, v in slow.items():
                per_row[i] = v
            return per_row
        if not slow:
            return Ragged(np.asarray(values, dtype=spec.dtype), splits)
        out = np.empty(int(splits[-1]), dtype=spec.dtype)
        fast = np.ones(n, dtype=bool)
        fast[list(slow)] = False
        out[np.repeat(fast, lengths)] = values
        for i, v in slow.items():
            out[splits[i] : splits[i + 1]] = v
        return Ragged(out, splits)
    dtype = object if is_bytes else spec.dtype
    # FixedLenSequenceFeature: [n, steps, *shape], padded with the default (or zeros / b"").
    steps = np.zeros(n, dtype=np.int64)
    if plan.size:
        steps[rows] = counts // plan.size
    for i, v in slow.items():
        steps[i] = len(v)
    width = int(steps.max()) if n else 0
    out = np.empty((n, width) + spec.shape, dtype=dtype)
    fill = spec.default_value if spec.default_value is not None else (b"" if is_bytes else 0)
    out[...] = fill
    flat = out.reshape(n, width * plan.size)
    if len(values):
        offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
        where_row = np.repeat(rows, counts)
        flat[where_row, np.arange(len(where_row)) - np.repeat(offsets, counts)] = _as_array(values)
    for i, v in slow.items():
        out[i, : len(v)] = v
    return out


def _plan(features: Mapping[str, FeatureSpec]) -> list[_Plan]:
    plans = []
    for key, spec in features.items():
        if not isinstance(spec, (FixedLenFeature, VarLenFeature)):
            apply_spec(key, spec, b"", None)  # raises for specs an Example cannot take, as decode_example does
        size = math.prod(spec.shape) if not isinstance(spec, VarLenFeature) else 0
        plans.append(_Plan(key, spec, size))
    return plans


def decode_examples(records: Sequence[Any], features: SpecDict, *, copy: bool = True) -> dict[str, Any]:
    """Decode a batch of serialized Examples into one column per feature, like tf.io.parse_example.

    FixedLenFeature → ndarray [batch, *shape] (defaults filled in; an object array for
    bytes); VarLenFeature → Ragged(values, row_splits), or a list of lists of bytes;
    FixedLenSequenceFeature → [batch, max steps, *shape], padded with its default_value
    (else zeros / b""). Errors are those decode_example raises for the offending record.

    `copy=False` gives bytes values as read-only memoryviews, as decode_example(copy=False)
    does, each keeping alive what it points into: its record (a record that is not bytes is
    copied to bytes first), or where records are small (under 4 KiB on average) one copy of
    the batch's records joined.
    """
    records = records if isinstance(records, (list, tuple)) else list(records)
    specs = batch_specs(features)
    return _decode(records, specs, assembly_for(copy, specs))[0]


def assembly_for(copy: bool, features: Mapping[str, FeatureSpec]) -> Assembly:
    """How decode_examples(copy=) finishes: bytes values as views only when not copying and
    there are bytes values (else the views would cost a fresh join for nothing)."""
    return _VIEWS if not copy and any(spec.dtype == "bytes" for spec in features.values()) else _NUMPY


def _decode(
    records: Sequence[Any], features: Mapping[str, FeatureSpec], assembly: Assembly | None = None
) -> tuple[dict[str, Any], list[int]]:
    """decode_examples (another `assembly`: its last step, e.g. decode_arrow's flat columns),
    plus the indices of the records that took the single-record path. An assembly that takes
    the values' spans gathers them out of the joined buffer (one copy): it needs them there,
    so large records are joined whole for it, not sparsely."""
    assembly = assembly or _NUMPY
    plans = _plan(features)
    if not records:
        return {p.key: assembly.assemble(p, 0, [], {}, memoryview(b"")) for p in plans}, []
    if assembly.views:
        records = [as_bytes(r) for r in records]
    if not assembly.spans and sum(map(len, records)) >= _SPARSE_RECORD * len(records) and _all_bytes(records):
        return _decode_sparse(records, plans, features, assembly)
    raw, ends = _join(records, scratch=True)
    starts = ends - np.diff(ends, prepend=0)
    values = None
    if assembly.views:  # into the join when it is new (small records), else into the records
        values = memoryview(raw) if type(raw) is bytes else _RecordSlicer(records, starts.tolist(), views=True)
    return _decode_buffer(raw, starts, ends, plans, features, records.__getitem__, assembly, values=values)


def _decode_sparse(
    records: Sequence[bytes], plans: list[_Plan], features: Mapping[str, FeatureSpec], assembly: Assembly
) -> tuple[dict[str, Any], list[int]]:
    """_decode for large records: each record's layout is looked up (one Python check per
    record, cached by length), its long bytes values are left out of the joined buffer, and
    those values are sliced from the records themselves (one copy of them, not two)."""
    layouts = [layout_of(r) for r in records]
    distinct = {id(layout): layout for layout in layouts if layout is not None}
    skips = {key: _long_values(layout) for key, layout in distinct.items()}
    lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    raw = _SCRATCH.join(records, starts, ends, [skips.get(id(layout), ()) for layout in layouts])
    rows: dict[int, list[int]] = {}
    for i, layout in enumerate(layouts):
        if layout is not None:
            rows.setdefault(id(layout), []).append(i)
    matches = [Match(r, starts[r], layouts[r[0]]) for r in map(np.array, rows.values())]
    values = _RecordSlicer(records, starts.tolist(), views=assembly.views)
    return _decode_buffer(
        raw, starts, ends, plans, features, records.__getitem__, assembly, matches=matches, values=values
    )


def _long_values(layout: Any) -> tuple[tuple[int, int], ...]:
    """The spans of a layout's bytes values of at least _SPARSE_VALUE bytes, in order."""
    return tuple(
        sorted(
            (s, e)
            for kind, chunks in layout.parsed.values()
            if kind == BYTES
            for s, e in chunks
            if e - s >= _SPARSE_VALUE
        )
    )


def _single(
    record: Callable[[int], Any], rows: list[int], features: Mapping[str, FeatureSpec], assembly: Assembly
) -> dict[int, dict[str, Any]]:
    """The records `rows` decoded one at a time (assembly.slow); an error notes which record it is about."""
    decoded: dict[int, dict[str, Any]] = {}
    for i in rows:
        try:
            decoded[i] = assembly.slow(record(i), features)
        except Exception as err:
            note_record(err, i, assembly.caller)
            raise
    return decoded


class _SpanSlicer:
    """What `text()` gives when bytes values are wanted as their spans (see Assembly)."""

    __slots__ = ()


class _Span(NamedTuple):
    """Where the packed numbers of one feature lie in some records: rows, and byte spans."""

    rows: np.ndarray
    starts: np.ndarray
    ends: np.ndarray


class _Found(NamedTuple):
    """The values of one feature in some records: the rows that have it (with the spec's
    kind), how many values each has, and the values, flat, in row order."""

    rows: np.ndarray
    counts: np.ndarray
    values: Any  # an ndarray, or a list of bytes


def _merge(parts: list[_Found], dtype: str) -> _Found:
    """One _Found, in row order, from parts about disjoint rows."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return _Found(np.empty(0, np.int64), np.empty(0, np.int64), [] if dtype == "bytes" else np.empty(0, dtype))
    rows = np.concatenate([p.rows for p in parts])
    counts = np.concatenate([p.counts for p in parts])
    order = np.argsort(rows, kind="stable")
    index = _ranges((np.cumsum(counts) - counts)[order], counts[order])
    if dtype == "bytes":
        flat = [v for p in parts for v in p.values]
        values: Any = [flat[i] for i in index.tolist()]
    else:
        values = np.concatenate([p.values for p in parts])[index]
    return _Found(rows[order], counts[order], values)


class Match(NamedTuple):
    """Records (rows, and where each starts) laid out byte for byte as `layout` outside their values."""

    rows: np.ndarray
    base: np.ndarray
    layout: Any  # wire.Layout


def match_layouts(buf: np.ndarray, view: memoryview, starts: np.ndarray, ends: np.ndarray) -> list[Match]:
    """Group the records that share a canonical layout.

    Records of one dataset mostly share their skeleton (the bytes outside the values):
    one record of each length is parsed (wire.Layout), the others of that length are
    compared with it in one numpy operation. Lengths of fewer than 4 records are left to
    the lockstep parser, unless few records are left (at most a 16th of the batch, as when
    a few varints are longer): then those are matched one length at a time too, which
    costs less than the lockstep parser's pass.
    """
    matches = _match_lengths(buf, view, starts, ends, least=4)
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
    for g in np.flatnonzero(sizes >= least).tolist():
        rows = np.flatnonzero(group_of == g)
        layout = layout_of(view[starts[rows[0]] : ends[rows[0]]].tobytes())
        if layout is None:
            continue
        base = starts[rows]
        ok = _fits(buf, base, int(lengths[g]), layout)
        if ok.any():
            matches.append(Match(rows[ok], base[ok], layout))
    return matches


def _fits(buf: np.ndarray, base: np.ndarray, length: int, layout: Any) -> np.ndarray:
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
        off = _windows(buf, length)[base] ^ expected
        off &= mask
        return ~off.any(axis=1) if off.any() else np.ones(len(base), dtype=bool)
    seen = buf[base[:, None] + np.concatenate([positions, int_ends])]
    ok: np.ndarray = (seen[:, : len(skeleton)] == skeleton).all(axis=1)
    ok &= (seen[:, len(skeleton) :] < 0x80).all(axis=1)
    return ok


def _by_layout(
    buf: np.ndarray,
    text: Callable[[], Any],
    n: int,
    matches: list[Match],
    plans: list[_Plan],
    bad: np.ndarray,
) -> tuple[np.ndarray, list[list[_Found]], list[list[_Span]]]:
    """Decode the records of `matches` (see match_layouts): the values of those that match
    are gathered from the same offsets. Returns which records were handled, and per plan
    the bytes values found in them and the spans of the numbers.
    """
    handled = np.zeros(n, dtype=bool)
    found: list[list[_Found]] = [[] for _ in plans]
    spans: list[list[_Span]] = [[] for _ in plans]
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
            if kind == BYTES and text() is _SPANS:
                into.append(_Found(rows, np.full(len(rows), len(chunks)), _chunk_spans(base, chunks)))
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
                into.append(_Found(rows, np.full(len(rows), len(chunks)), values))
                continue
            s, e = chunks[0] if chunks else (0, 0)  # canonical: one packed run, or none
            pieces.append(_Span(rows, base + s, base + e))
    return handled, found, spans


def _chunk_spans(base: np.ndarray, chunks: list[tuple[int, int]]) -> np.ndarray:
    """(start, end) of every chunk of every record at `base`, records in turn: shape (k, 2)."""
    if not chunks:
        return np.empty((0, 2), dtype=np.int64)
    per_chunk = [np.stack([base + s, base + e], axis=1) for s, e in chunks]
    return np.stack(per_chunk, axis=1).reshape(-1, 2)


def _numbers(buf: np.ndarray, view: memoryview, kind: int, pieces: list[_Span], bad: np.ndarray) -> _Found:
    """The numbers of a float / int64 feature from the spans where they lie (packed runs,
    from any number of sources), gathered and decoded at once, in row order."""
    rows = np.concatenate([r for r, _, _ in pieces])
    first = np.concatenate([a for _, a, _ in pieces])
    last = np.concatenate([b for _, _, b in pieces])
    if len(pieces) > 1:
        order = np.argsort(rows, kind="stable")
        rows, first, last = rows[order], first[order], last[order]
    data = _ragged_gather(buf, view, first, last)
    if kind == FLOAT:
        return _Found(rows, (last - first) // 4, data.view("<f4").astype(np.float32, copy=False))
    values, counts, run_bad = decode_varint_runs(data, last - first)
    bad[rows[run_bad]] = True
    return _Found(rows, counts, values)


def _by_lockstep(
    buf: np.ndarray,
    view: memoryview,
    text: Callable[[], Any],
    starts: np.ndarray,
    ends: np.ndarray,
    plans: list[_Plan],
    bad: np.ndarray,
) -> list[Any]:
    """Parse the records with the lockstep parser; per plan the bytes values found (a _Found)
    or the spans of the numbers (a _Span), rows relative to starts."""
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
            found.append(_Found(col.rows, *_bytes_column(text(), col, bytes_found)))
        else:
            found.append(_Span(col.rows, col.starts, col.ends))
    return found


def note_record(err: BaseException, index: int, caller: str) -> None:
    """Add to `err` which record of the batch it is about (Python >= 3.11 shows notes)."""
    if hasattr(err, "add_note"):
        err.add_note(f"(record {index} of the batch passed to {caller})")


class Assembly(NamedTuple):
    """How _decode_buffer finishes: `assemble` builds a feature's batch value from the fast
    paths' parts, the slow rows' values and the buffer; `slow` decodes one record the
    single-record way ({key: value}); `caller` names the public function in error notes.
    With `spans`, the fast paths give bytes values as an array of their (start, end) in the
    buffer, shape (k, 2), not bytes objects, for `assemble` to gather (one copy, no object
    per value)."""

    assemble: Callable[[_Plan, int, list[_Found], dict[int, Any], memoryview], Any]
    slow: Callable[[Any, Mapping[str, FeatureSpec]], dict[str, Any]]
    caller: str
    spans: bool = False
    views: bool = False  # bytes values as memoryviews into the records (decode_examples(copy=False))


def _decode_buffer(
    raw: Any,
    starts: np.ndarray,
    ends: np.ndarray,
    plans: list[_Plan],
    features: Mapping[str, FeatureSpec],
    record: Callable[[int], Any],
    assembly: Assembly | None = None,
    matches: list[Match] | None = None,
    values: Any = None,
) -> tuple[dict[str, Any], list[int]]:
    """Decode the records raw[starts[i]:ends[i]] (at least 4 readable bytes must follow the
    last one); `record(i)` gives record i to the single-record path. `values`, when given,
    is sliced for the bytes values instead of `raw` (with `matches`, raw need not hold the
    values of the matched records). Nothing returned refers to `raw`, which the caller may
    then reuse."""
    assembly = assembly or _NUMPY
    n = len(starts)
    view = memoryview(raw)
    buf = np.frombuffer(view, dtype=np.uint8)
    bad = np.zeros(n, dtype=bool)
    cache: list[Any] = [raw] if isinstance(raw, bytes) else []

    def text() -> Any:
        """What to slice bytes values out of: bytes (cheapest per value) when the records are
        small, else the view (one copy per value, not two)."""
        if assembly.spans:
            return _SPANS
        if values is not None:
            return values
        if not cache:
            large = int(ends[-1] - starts[0]) > 4096 * n
            cache.append(_ViewSlicer(view) if large else view[: int(ends.max())].tobytes())
        return cache[0]

    if matches is None:
        matches = match_layouts(buf, view, starts, ends)
    handled, parts, spans = _by_layout(buf, text, n, matches, plans, bad)
    rest = np.flatnonzero(~handled)
    if rest.size:
        rest_bad = np.zeros(len(rest), dtype=bool)
        for into, pieces, f in zip(
            parts, spans, _by_lockstep(buf, view, text, starts[rest], ends[rest], plans, rest_bad), strict=False
        ):
            if isinstance(f, _Span):
                pieces.append(_Span(rest[f.rows], f.starts, f.ends))
            else:
                into.append(_Found(rest[f.rows], f.counts, f.values))
        bad[rest[rest_bad]] = True
    for plan, into, pieces in zip(plans, parts, spans, strict=False):
        if pieces:
            into.append(_numbers(buf, view, plan.spec.kind, pieces, bad))

    for plan, part in zip(plans, parts, strict=False):
        spec = plan.spec
        if isinstance(spec, FixedLenFeature):
            missing = np.ones(n, dtype=bool)
            for f in part:
                bad[f.rows[f.counts != plan.size]] = True
                missing[f.rows] = False
            if spec.default_value is None:
                bad |= missing
        elif isinstance(spec, FixedLenSequenceFeature):
            for f in part:
                bad[f.rows[(f.counts % plan.size != 0) if plan.size else (f.counts != 0)]] = True

    slow_rows = np.flatnonzero(bad).tolist()
    slow = _single(record, slow_rows, features, assembly)

    out: dict[str, Any] = {}
    for plan, part in zip(plans, parts, strict=False):
        if slow_rows:
            part = [_without(f, ~bad[f.rows]) for f in part]
        out[plan.key] = assembly.assemble(plan, n, part, {i: d.get(plan.key) for i, d in slow.items()}, view)
    return out, slow_rows


_NUMPY = Assembly(_assemble, decode_example, "decode_examples")
_VIEWS = Assembly(_assemble, functools.partial(decode_example, copy=False), "decode_examples", views=True)
_SPANS = _SpanSlicer()


def _without(f: _Found, keep: np.ndarray) -> _Found:
    """The part of `f` about the rows where `keep` is true."""
    if keep.all():
        return f
    expand = np.repeat(keep, f.counts)
    values = (
        [v for v, k in zip(f.values, expand.tolist(), strict=False) if k]
        if isinstance(f.values, list)
        else f.values[expand]
    )
    return _Found(f.rows[keep], f.counts[keep], values)


class Spans(NamedTuple):
    """A batch of records in a buffer: record k is view[starts[k]:ends[k]], also as record(k)."""

    view: memoryview
    starts: np.ndarray
    ends: np.ndarray
    record: Callable[[int], bytes]
