"""Batched, columnar Example decoding — the counterpart of tf.io.parse_example.

Strategy: the records of a batch lie in one buffer (the reader's, or the records
joined: joins). lockstep finds each feature's values in every record at once, by the
layout the records share or by parsing them in lockstep, so the Python cost is per
batch, not per record. A record lockstep does not accept, and one that does not fit its
spec, is decoded by the single-record decoder (decode.decode_example), which gives the
answer or raises the error that record deserves: results and errors are by construction
those of decode_example, record by record. An Assembly then builds each feature's
column from the parts: numpy arrays and Ragged here, flat's Arrow-style columns for
decode_arrow. Of large records (images) only what lies outside their long bytes values
is joined; those values are sliced once out of the records themselves, where joining
them would copy them twice (_decode_sparse).
This module works on bytes only; reading batches from files is _records/example_batches.py.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from tfrecord_lite._batches.joins import (
    SCRATCH,
    SPARSE_RECORD,
    SPARSE_VALUE,
    RecordSlicer,
    ViewSlicer,
    all_bytes,
    join_records,
)
from tfrecord_lite._batches.keys import index_ranges
from tfrecord_lite._batches.lockstep import (
    SPANS,
    Found,
    Match,
    Plan,
    Span,
    by_layout,
    by_lockstep,
    gather_numbers,
    match_layouts,
)
from tfrecord_lite._errors import FeatureError, TFRecordError, place
from tfrecord_lite._example.decode import apply_spec, decode_example
from tfrecord_lite._example.ragged import Ragged
from tfrecord_lite._example.ragged_build import finish_batch
from tfrecord_lite._example.ragged_spec import RaggedFeature, has_ragged
from tfrecord_lite._example.ragged_spec import components as ragged_components
from tfrecord_lite._example.raw import RawFeature, check_lengths, raw_column
from tfrecord_lite._example.sparse import batch_rows, first_mismatch, sparse_batch
from tfrecord_lite._example.sparse import components as sparse_components
from tfrecord_lite._example.spec import (
    BYTES,
    FeatureSpec,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    SpecDict,
    VarLenFeature,
)
from tfrecord_lite._example.validate import batch_specs
from tfrecord_lite._example.wire import Layout, as_bytes, layout_of


def _as_array(values: list[Any] | npt.NDArray[Any]) -> npt.NDArray[Any]:
    """An ndarray of the values; a list of bytes becomes an object array (never a bytes_ array)."""
    if isinstance(values, list):  # fromiter: an assignment of memoryviews would look into each
        return np.fromiter(values, dtype=object, count=len(values))
    return values


def _slices(values: Any, splits: np.ndarray) -> list[Any]:
    return [values[a:b] for a, b in zip(splits[:-1].tolist(), splits[1:].tolist(), strict=False)]


def _assemble(plan: Plan, n: int, parts: list[Found], slow: dict[int, Any], _view: memoryview) -> Any:
    """The batch value of one feature from what the fast paths found (rows not slow) and
    the slow rows' decoded values."""
    if plan.raw is not None:
        return _gather_values(plan, n, parts, slow, _view)
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
    rows, counts, values = merge_found(parts, spec.dtype)
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
    assert isinstance(spec, FixedLenSequenceFeature)  # a RaggedFeature is planned as its components
    steps = np.zeros(n, dtype=np.int64)
    if plan.size:
        steps[rows] = counts // plan.size
    for i, v in slow.items():
        steps[i] = len(v)
    width = int(steps.max()) if n else 0
    out = np.empty((n, width) + spec.shape, dtype=dtype)
    assert isinstance(spec, FixedLenSequenceFeature)  # plan_features reads a SparseFeature's keys instead
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


def _gather_values(plan: Plan, n: int, parts: list[Found], slow: dict[int, Any], view: memoryview) -> np.ndarray:
    """A RawFeature's bytes values as the rows of one (n, nbytes) uint8 array: the fast rows'
    gathered from their spans in the buffer at once, the slow rows' copied in; every length is
    checked against the feature's shape before the array is allocated."""
    spec = plan.raw
    assert spec is not None
    lengths = np.zeros(n, dtype=np.int64)
    for part in parts:
        lengths[part.rows] = part.values[:, 1] - part.values[:, 0]
    for i, v in slow.items():
        lengths[i] = len(v)
    check_lengths(plan.key, spec, lengths)
    size = spec.nbytes
    if not size or not n:
        return np.empty((n, size), dtype=np.uint8)
    buf = np.frombuffer(view, dtype=np.uint8)
    whole = np.ndarray((len(buf) - size + 1,), dtype=f"V{size}", buffer=buf, strides=(1,))  # a value at each offset
    if len(parts) == 1 and not slow and len(parts[0].rows) == n:  # every row in order: one gather is the array
        gathered: np.ndarray = whole[parts[0].values[:, 0]].view(np.uint8).reshape(n, size)
        return gathered
    out = np.empty((n, size), dtype=np.uint8)  # (an assignment into a void view is slow: rows of uint8 instead)
    for part in parts:
        out[part.rows] = whole[part.values[:, 0]].view(np.uint8).reshape(-1, size)
    for i, v in slow.items():
        out[i] = np.frombuffer(v, dtype=np.uint8)
    return out


def plan_features(features: Mapping[str, FeatureSpec]) -> list[Plan]:
    """The features a batch reads: a RaggedFeature's or SparseFeature's components in its place; a
    RawFeature's bytes value read as its spans, to be gathered into one array."""
    plans = []
    for key, spec in _read(features).items():
        if not isinstance(spec, (FixedLenFeature, VarLenFeature)):
            apply_spec(key, spec, b"", None)  # raises for specs an Example cannot take, as decode_example does
        size = math.prod(spec.shape) if isinstance(spec, (FixedLenFeature, FixedLenSequenceFeature)) else 0
        asked = features.get(key)
        plans.append(Plan(key, spec, size, asked if isinstance(asked, RawFeature) else None))
    return plans


def decode_examples(source: Sequence[Any], features: SpecDict, *, copy: bool = True) -> dict[str, Any]:
    """Decode a batch of serialized Examples into one column per feature, like tf.io.parse_example.

    FixedLenFeature → ndarray [batch, *shape] (defaults filled in; an object array for
    bytes); VarLenFeature → Ragged(values, row_splits), or a list of lists of bytes;
    FixedLenSequenceFeature → [batch, max steps, *shape], padded with its default_value
    (else zeros / b""); RaggedFeature → a Ragged with the batch outermost, nested once more
    per partition, as tf.io.parse_example gives it; SparseFeature → a Sparse whose first index
    is the record's number, dense_shape [batch, *size]. Errors are those decode_example raises
    for the offending record.

    `copy=False` gives bytes values as read-only memoryviews, as decode_example(copy=False)
    does, each keeping alive what it points into: its record (a record that is not bytes is
    copied to bytes first), or where records are small (under 4 KiB on average) one copy of
    the batch's records joined.
    """
    records = source if isinstance(source, (list, tuple)) else list(source)
    specs = batch_specs(features)
    return decode_records(records, specs, assembly_for(copy, specs))[0]


def assembly_for(copy: bool, features: Mapping[str, FeatureSpec]) -> Assembly:
    """How decode_examples(copy=) finishes: bytes values as views only when not copying and
    there are bytes values (else the views would cost a fresh join for nothing)."""
    return _VIEWS if not copy and any(spec.dtype == "bytes" for spec in features.values()) else _NUMPY


def decode_records(
    records: Sequence[Any], features: Mapping[str, FeatureSpec], assembly: Assembly | None = None
) -> tuple[dict[str, Any], list[int]]:
    """decode_examples (another `assembly`: its last step, e.g. decode_arrow's flat columns),
    plus the indices of the records that took the single-record path. An assembly that takes
    the values' spans gathers them out of the joined buffer (one copy): it needs them there,
    so large records are joined whole for it, not sparsely."""
    assembly = assembly or _NUMPY
    plans = plan_features(features)
    if not records:
        columns = {p.key: assembly.assemble(p, 0, [], {}, memoryview(b"")) for p in plans}
        return _finish(columns, features, 0, assembly, records.__getitem__), []
    if assembly.views:
        records = [as_bytes(r) for r in records]
    sparse = not assembly.spans and not any(plan.raw is not None for plan in plans)  # spans need the values joined
    if sparse and sum(map(len, records)) >= SPARSE_RECORD * len(records) and all_bytes(records):
        return _decode_sparse(records, plans, features, assembly)
    raw, ends = join_records(records, scratch=True)
    starts = ends - np.diff(ends, prepend=0)
    values = None
    if assembly.views:  # into the join when it is new (small records), else into the records
        values = memoryview(raw) if type(raw) is bytes else RecordSlicer(records, starts.tolist(), views=True)
    return decode_buffer(raw, starts, ends, plans, features, records.__getitem__, assembly, values=values)


def _decode_sparse(
    records: Sequence[bytes], plans: list[Plan], features: Mapping[str, FeatureSpec], assembly: Assembly
) -> tuple[dict[str, Any], list[int]]:
    """decode_records for large records: each record's layout is looked up (one Python check per
    record, cached by length), its long bytes values are left out of the joined buffer, and
    those values are sliced from the records themselves (one copy of them, not two)."""
    layouts = [layout_of(r) for r in records]
    distinct = {id(layout): layout for layout in layouts if layout is not None}
    skips = {key: _long_values(layout) for key, layout in distinct.items()}
    lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    raw = SCRATCH.join(records, starts, ends, [skips.get(id(layout), ()) for layout in layouts])
    rows: dict[int, list[int]] = {}
    for i, layout in enumerate(layouts):
        if layout is not None:
            rows.setdefault(id(layout), []).append(i)
    matches = [Match(r, starts[r], layouts[r[0]]) for r in map(np.array, rows.values())]
    values = RecordSlicer(records, starts.tolist(), views=assembly.views)
    return decode_buffer(
        raw, starts, ends, plans, features, records.__getitem__, assembly, matches=matches, values=values
    )


def _long_values(layout: Layout) -> tuple[tuple[int, int], ...]:
    """The spans of a layout's bytes values of at least SPARSE_VALUE bytes, in order."""
    return tuple(
        sorted(
            (s, e)
            for kind, chunks in layout.parsed.values()
            if kind == BYTES
            for s, e in chunks
            if e - s >= SPARSE_VALUE
        )
    )


def _single(
    record: Callable[[int], Any],
    rows: list[int],
    features: Mapping[str, FeatureSpec],
    assembly: Assembly,
    asked: Mapping[str, FeatureSpec] | None = None,
) -> dict[int, dict[str, Any]]:
    """The records `rows` decoded one at a time (assembly.slow); an error notes which record it is
    about. With `asked` (the spec asked for, when `features` reads a SparseFeature's keys in its
    place), a record that fails is decoded by `asked` for the error that spec gives."""
    decoded: dict[int, dict[str, Any]] = {}
    for i in rows:
        try:
            decoded[i] = assembly.slow(record(i), features)
        except Exception as err:
            if asked is not None:
                _single(record, [i], asked, assembly)
            note_record(err, i, assembly.caller)
            raise
    return decoded


def merge_found(parts: list[Found], dtype: str) -> Found:
    """One Found, in row order, from parts about disjoint rows."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return Found(np.empty(0, np.int64), np.empty(0, np.int64), [] if dtype == "bytes" else np.empty(0, dtype))
    rows = np.concatenate([p.rows for p in parts])
    counts = np.concatenate([p.counts for p in parts])
    order = np.argsort(rows, kind="stable")
    index = index_ranges((np.cumsum(counts) - counts)[order], counts[order])
    if dtype == "bytes":
        flat = [v for p in parts for v in p.values]
        values: Any = [flat[i] for i in index.tolist()]
    else:
        values = np.concatenate([p.values for p in parts])[index]
    return Found(rows[order], counts[order], values)


def note_record(err: BaseException, index: int, caller: str) -> None:
    """Add to `err` which record of the batch it is about (Python >= 3.11 shows notes), and keep
    that number as `err.batch_record`, for a reader of files to place the error (`placing`)."""
    if getattr(err, "batch_record", None) is None:
        err.batch_record = index  # type: ignore[attr-defined]
    if hasattr(err, "add_note"):
        err.add_note(f"(record {index} of the batch passed to {caller})")


Where = Callable[[int], tuple[str | None, int, int | None] | None]
"""Where record k of a batch lies: its file, its number in that file, its byte offset (None: unknown)."""


@contextmanager
def placing(where: Where | None, one: int | None = None) -> Iterator[None]:
    """Errors about one record of a batch, raised inside, placed (file, record number, byte offset)
    by `where`, given the record's number in the batch; `one`: the number of the one record decoded
    inside, for errors of the single-record decoders (which do not say)."""
    try:
        yield
    except TFRecordError as err:
        place_by(err, where, one)
        raise


def place_by(err: TFRecordError, where: Where | None, one: int | None = None) -> None:
    """`err` placed by `where` (as `placing` does), for a reader that catches it itself. `where` is
    not asked about an error already placed or naming its file (damage found while reading)."""
    if err.record is not None or err.path is not None:
        return
    index = getattr(err, "batch_record", one)
    found = where(index) if where is not None and index is not None else None
    if found is not None:
        path, record, offset = found
        place(err, path=path, record=record, offset=offset)


class Assembly(NamedTuple):
    """How decode_buffer finishes: `assemble` builds a feature's batch value from the fast
    paths' parts, the slow rows' values and the buffer; `slow` decodes one record the
    single-record way ({key: value}); `caller` names the public function in error notes.
    With `spans`, the fast paths give bytes values as an array of their (start, end) in the
    buffer, shape (k, 2), not bytes objects, for `assemble` to gather (one copy, no object
    per value)."""

    assemble: Callable[[Plan, int, list[Found], dict[int, Any], memoryview], Any]
    slow: Callable[[Any, Mapping[str, FeatureSpec]], dict[str, Any]]
    caller: str
    spans: bool = False
    views: bool = False  # bytes values as memoryviews into the records (decode_examples(copy=False))
    # RaggedFeature columns from their components' columns (None: this assembly takes none)
    ragged: Callable[[dict[str, Any], Mapping[str, FeatureSpec], int], dict[str, Any]] | None = None
    # a RawFeature's column from its bytes column (key, spec, column; None: this assembly takes none)
    raw: Callable[[str, RawFeature, Any], Any] | None = None


def decode_buffer(
    raw: Any,
    starts: np.ndarray,
    ends: np.ndarray,
    plans: list[Plan],
    features: Mapping[str, FeatureSpec],
    record: Callable[[int], Any],
    assembly: Assembly | None = None,
    matches: list[Match] | None = None,
    values: Any = None,
    force_slow: np.ndarray | None = None,
) -> tuple[dict[str, Any], list[int]]:
    """Decode the records raw[starts[i]:ends[i]] (at least 4 readable bytes must follow the
    last one); `record(i)` gives record i to the single-record path. `values`, when given,
    is sliced for the bytes values instead of `raw` (with `matches`, raw need not hold the
    values of the matched records). `force_slow`, when given, marks records to decode by the
    single-record path whatever the batch path finds. Nothing returned refers to `raw`,
    which the caller may then reuse. `plans` are plan_features(features)."""
    assembly = assembly or _NUMPY
    read = _read(features, assembly)
    n = len(starts)
    view = memoryview(raw)
    buf = np.frombuffer(view, dtype=np.uint8)
    bad = np.zeros(n, dtype=bool) if force_slow is None else force_slow.copy()
    cache: list[Any] = [raw] if isinstance(raw, bytes) else []

    def text() -> Any:
        """What to slice bytes values out of: bytes (cheapest per value) when the records are
        small, else the view (one copy per value, not two)."""
        if assembly.spans:
            return SPANS
        if values is not None:
            return values
        if not cache:
            large = int(ends[-1] - starts[0]) > 4096 * n
            cache.append(ViewSlicer(view) if large else view[: int(ends.max())].tobytes())
        return cache[0]

    if matches is None:
        matches = match_layouts(buf, view, starts, ends)
    handled, parts, spans = by_layout(buf, text, n, matches, plans, bad)
    rest = np.flatnonzero(~handled)
    if rest.size:
        rest_bad = np.zeros(len(rest), dtype=bool)
        for into, pieces, f in zip(
            parts, spans, by_lockstep(buf, view, text, starts[rest], ends[rest], plans, rest_bad), strict=False
        ):
            if isinstance(f, Span):
                pieces.append(Span(rest[f.rows], f.starts, f.ends))
            else:
                into.append(Found(rest[f.rows], f.counts, f.values))
        bad[rest[rest_bad]] = True
    for plan, into, pieces in zip(plans, parts, spans, strict=False):
        if pieces:
            into.append(gather_numbers(buf, view, plan.spec.kind, pieces, bad))

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
    slow = _single(record, slow_rows, read, assembly, None if read is features else features)

    out: dict[str, Any] = {}
    for plan, part in zip(plans, parts, strict=False):
        if slow_rows:
            part = [_without(f, ~bad[f.rows]) for f in part]
        out[plan.key] = assembly.assemble(plan, n, part, {i: d.get(plan.key) for i, d in slow.items()}, view)
    return _finish(out, features, n, assembly, record), slow_rows


def _read(features: Mapping[str, FeatureSpec], assembly: Assembly | None = None) -> Mapping[str, FeatureSpec]:
    """The features a batch reads: each RaggedFeature and SparseFeature replaced by the keys it
    reads, a RawFeature by its bytes value (`features` itself when it holds none of them). A
    SparseFeature is for the numpy assembly only."""
    read = sparse_components(ragged_components(features) if has_ragged(features) else features)
    if any(type(spec) is RawFeature for spec in read.values()):
        read = {k: spec.reads if isinstance(spec, RawFeature) else spec for k, spec in read.items()}
    if assembly is not None and assembly.assemble is not _assemble:
        key = next((k for k, spec in features.items() if isinstance(spec, SparseFeature)), None)
        if key is not None:
            raise FeatureError(key, "a SparseFeature decodes to a Sparse, which Arrow columns have no layout for")
    return read


def _finish(
    columns: dict[str, Any],
    features: Mapping[str, FeatureSpec],
    n: int,
    assembly: Assembly,
    record: Callable[[int], Any],
) -> dict[str, Any]:
    """The columns asked for, from the columns read: each RaggedFeature's and SparseFeature's
    built from the columns of the keys it reads."""
    if all(isinstance(spec, _PLAIN) for spec in features.values()):
        return columns
    if has_ragged(features):
        if assembly.ragged is None:
            key = next(k for k, s in features.items() if isinstance(s, RaggedFeature))
            raise FeatureError(key, f"{assembly.caller} does not take a RaggedFeature; decode_examples does")
        ragged = {k: s for k, s in features.items() if isinstance(s, RaggedFeature)}
        columns = {**columns, **assembly.ragged(columns, ragged, n)}
    out = {}
    for key, spec in features.items():
        if isinstance(spec, SparseFeature):
            out[key] = _sparse_column(key, spec, columns, record, features, assembly)
        elif isinstance(spec, RawFeature):
            out[key] = _raw_column(key, spec, columns[key], assembly)
        else:
            out[key] = columns[key]
    return out


def _raw_column(key: str, spec: RawFeature, column: Any, assembly: Assembly) -> Any:
    """A RawFeature's batch value from its bytes column (a length that does not fit the shape
    raises, naming the record's number in the batch)."""
    if assembly.raw is None:
        raise FeatureError(key, f"{assembly.caller} does not take a RawFeature; decode_examples does")
    return assembly.raw(key, spec, column)


def _sparse_column(
    key: str,
    spec: SparseFeature,
    columns: Mapping[str, Any],
    record: Callable[[int], Any],
    features: Mapping[str, FeatureSpec],
    assembly: Assembly,
) -> Any:
    """A SparseFeature's batch value from its keys' columns; a record whose index and value counts
    differ is decoded alone, for the error decode_example raises."""
    ids = [batch_rows(columns[k]) for k in spec.index_keys]
    values = batch_rows(columns[spec.value_key])
    bad = first_mismatch(ids, values)
    if bad is not None:
        _single(record, [bad], features, assembly)
        raise AssertionError(f"record {bad} has mismatched counts for {key!r}, but decodes alone")
    return sparse_batch(spec, ids, values)


_PLAIN = (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature)
_NUMPY = Assembly(_assemble, decode_example, "decode_examples", ragged=finish_batch, raw=raw_column)
_VIEWS = Assembly(
    _assemble,
    functools.partial(decode_example, copy=False),
    "decode_examples",
    views=True,
    ragged=finish_batch,
    raw=raw_column,
)


def _without(f: Found, keep: np.ndarray) -> Found:
    """The part of `f` about the rows where `keep` is true."""
    if keep.all():
        return f
    expand = np.repeat(keep, f.counts)
    values = (
        [v for v, k in zip(f.values, expand.tolist(), strict=False) if k]
        if isinstance(f.values, list)
        else f.values[expand]
    )
    return Found(f.rows[keep], f.counts[keep], values)


class Spans(NamedTuple):
    """A batch of records in a buffer: record k is view[starts[k]:ends[k]], also as record(k);
    `where(k)` is its place in its file, for errors (None: not known)."""

    view: memoryview
    starts: np.ndarray
    ends: np.ndarray
    record: Callable[[int], bytes]
    where: Where | None = None


def without(spans: Spans, k: int) -> Spans:
    """`spans` without its record k (a reader skipping a record that does not fit its spec)."""
    keep = np.delete(np.arange(len(spans.starts)), k)

    def record(i: int) -> bytes:
        return spans.record(int(keep[i]))

    where = spans.where
    return Spans(
        spans.view,
        spans.starts[keep],
        spans.ends[keep],
        record,
        None if where is None else (lambda i: where(int(keep[i]))),
    )
