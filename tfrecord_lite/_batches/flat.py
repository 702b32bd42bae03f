"""Flat columns: each feature of a batch as one flat run of values plus a count per row —
the layout of Arrow (and Parquet) columns, built without a Python object per number.

Strategy: the batch decoder (columnar, on lockstep's parser) does all the parsing; this
module gives it another last step (an Assembly) that keeps the values flat, with per-row
counts and presence, instead of shaping numpy arrays; with a spec, a list of records goes
in by decode_examples' own entry (columnar.decode_records), so both decode alike. A batch
decoded without a spec first learns its keys and kinds: records that share a layout
(lockstep.match_layouts) share its keys, the map entries of the others are walked in
lockstep (as lockstep parses) and their keys told apart in bulk (keys.key_groups); only
records the lockstep walk does not accept are decoded one by one. Each key then decodes
as a VarLenFeature of its kind, and "present" is remembered, so a missing or kindless
feature is null, not empty. Columns come sorted by key, as tfx-bsl orders
them. When every record of the batch has a layout (the common case: one dataset, one
writer), the batch decoder is skipped: each feature's value spans are looked up per row
in a small table per layout, already in row order, and gathered once (a run of one
varint a row is read in place).
SequenceExamples have no batch parser: they are decoded record by record and flattened.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from tfrecord_lite._batches.columnar import (
    Assembly,
    Spans,
    decode_buffer,
    decode_records,
    merge_found,
    note_record,
    plan_features,
)
from tfrecord_lite._batches.joins import join_records
from tfrecord_lite._batches.keys import index_ranges, key_groups
from tfrecord_lite._batches.lockstep import (
    Found,
    Match,
    Plan,
    delimited_fields,
    map_entries,
    match_layouts,
    ragged_gather,
)
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.decode import decode_example, decode_sequence_example, values_of
from tfrecord_lite._example.ragged import Ragged, stack
from tfrecord_lite._example.ragged_build import FlatRagged, finish_flat
from tfrecord_lite._example.ragged_spec import RaggedFeature
from tfrecord_lite._example.raw import RawFeature, check_lengths, raw_rows
from tfrecord_lite._example.spec import (
    BYTES,
    DTYPE_KIND,
    FLOAT,
    INT64,
    KIND_DTYPE,
    KIND_NAMES,
    FeatureSpec,
    FixedLenFeature,
    VarLenFeature,
    kind_of,
)
from tfrecord_lite._example.validate import batch_specs, feature_specs
from tfrecord_lite._example.varints import decode_varint_runs, one_varint_each
from tfrecord_lite._example.wire import parse_example

__all__ = ["Binary", "Flat", "Nested", "decode_flat", "decode_records_flat", "decode_sequence_flat"]


class Binary(NamedTuple):
    """bytes values laid end to end: value k is data[offsets[k]:offsets[k + 1]] (Arrow's layout)."""

    data: np.ndarray  # uint8
    offsets: np.ndarray  # int64, one more than there are values

    def __len__(self) -> int:
        return len(self.offsets) - 1


class Flat(NamedTuple):
    """One feature of a batch: row i holds values[offsets[i]:offsets[i + 1]]; `valid` marks
    the rows that have the feature (None: every row)."""

    values: Any  # an int64 / float32 ndarray, Binary, or a list of bytes
    offsets: np.ndarray
    valid: np.ndarray | None

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


class Nested(NamedTuple):
    """A feature list of a batch: row i holds the steps steps[i]:steps[i + 1] of `inner`."""

    steps: np.ndarray
    inner: Flat
    valid: np.ndarray | None


def _offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _flatten(dtype: str, value: Any) -> Any:
    """A decoded value (scalar, array, list of bytes) as a flat ndarray or list of bytes."""
    if dtype != "bytes":
        return np.asarray(value, dtype=dtype).ravel()
    if isinstance(value, bytes):
        return [value]
    return value.ravel().tolist() if isinstance(value, np.ndarray) else list(value)


def _repeat(dtype: str, flat: Any, times: int) -> Any:
    return flat * times if dtype == "bytes" else np.tile(flat, times)


def _gather(
    plan: Plan, n: int, parts: list[Found], slow: dict[int, Any], view: memoryview
) -> tuple[Any, np.ndarray, np.ndarray]:
    """(values, lengths, present) of one feature: the fast paths' parts, the slow rows' values
    (None: absent) and a FixedLenFeature's default where a record lacks it. Bytes values
    come as Binary, gathered from the buffer where the fast paths left their spans."""
    spec, dtype = plan.spec, plan.spec.dtype
    extra = [Found(np.array([i]), np.array([len(f)]), f) for i, f in _flat_values(dtype, slow)]
    present = np.zeros(n, dtype=bool)
    for part in parts + extra:
        present[part.rows] = True
    if isinstance(spec, FixedLenFeature) and spec.default_value is not None and not present.all():
        missing = np.flatnonzero(~present)
        default = _flatten(dtype, spec.default_value)
        extra.append(Found(missing, np.full(len(missing), plan.size), _repeat(dtype, default, len(missing))))
    if dtype != "bytes":
        rows, counts, values = merge_found(parts + extra, dtype)
    elif not extra:  # the common case: only spans, merged as numbers are
        rows, counts, spans = merge_found(parts, "int64") if parts else (np.empty(0, np.int64),) * 2 + (None,)
        values = _gathered(view, spans)
    else:  # some values decoded one by one: bytes objects for all
        as_bytes = [Found(p.rows, p.counts, [bytes(view[a:b]) for a, b in p.values.tolist()]) for p in parts]
        rows, counts, objects = merge_found(as_bytes + extra, dtype)
        values = _joined(objects)
    lengths = np.zeros(n, dtype=np.int64)
    lengths[rows] = counts
    return values, lengths, present


def _flat_values(dtype: str, slow: dict[int, Any]) -> list[tuple[int, Any]]:
    return [(i, _flatten(dtype, value)) for i, value in slow.items() if value is not None]


def _gathered(view: memoryview, spans: np.ndarray | None) -> Binary:
    """The bytes values at `spans` ((start, end) rows) in `view`, end to end."""
    if spans is None or not len(spans):
        return Binary(np.empty(0, dtype=np.uint8), np.zeros(1, dtype=np.int64))
    data = ragged_gather(np.frombuffer(view, dtype=np.uint8), view, spans[:, 0], spans[:, 1])
    return Binary(data, _offsets(spans[:, 1] - spans[:, 0]))


def _joined(values: list[bytes]) -> Binary:
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    return Binary(np.frombuffer(b"".join(values), dtype=np.uint8), _offsets(lengths))


def _assemble_spec(plan: Plan, n: int, parts: list[Found], slow: dict[int, Any], view: memoryview) -> Flat:
    if len(parts) == 1 and len(parts[0].rows) == n and plan.spec.dtype != "bytes":
        return Flat(parts[0].values, _offsets(parts[0].counts), None)  # every record has it: the values are the column
    values, lengths, _ = _gather(plan, n, list(parts), slow, view)
    return Flat(values, _offsets(lengths), None)


def _assemble_present(plan: Plan, n: int, parts: list[Found], slow: dict[int, Any], view: memoryview) -> Flat:
    values, lengths, present = _gather(plan, n, list(parts), slow, view)
    return Flat(values, _offsets(lengths), present)


def _present_values(record: Any, features: Mapping[str, FeatureSpec]) -> dict[str, Any]:
    """The features of one record decoded without a spec (None where absent or kindless);
    only those of `features` are decoded."""
    buf, parsed = parse_example(record)
    return {key: values_of(buf, parsed[key]) if key in parsed else None for key in features}


def _raw_flat(key: str, spec: RawFeature, flat: Flat) -> Flat:
    """A RawFeature's flat column from its bytes column (one value a row, laid end to end in
    Binary): every row's length checked, then its numbers, prod(shape) a row."""
    binary = flat.values if isinstance(flat.values, Binary) else _joined(list(flat.values))
    n = len(binary)
    check_lengths(key, spec, np.diff(binary.offsets))
    data = binary.data[binary.offsets[0] : binary.offsets[-1]] if n else binary.data[:0]
    return Flat(raw_rows(spec, data, n).reshape(-1), np.arange(n + 1, dtype=np.int64) * math.prod(spec.shape), None)


_SPEC = Assembly(_assemble_spec, decode_example, "decode_arrow", spans=True, ragged=finish_flat, raw=_raw_flat)
_PRESENT = Assembly(_assemble_present, _present_values, "decode_arrow", spans=True)


# --------------------------------------------------------------------------- keys and kinds


def _kind_change(key: str, first: tuple[int, int], other: tuple[int, int]) -> FeatureError:
    (kind_a, row_a), (kind_b, row_b) = sorted([first, other], key=lambda kr: kr[1])
    err = FeatureError(
        key,
        f"{KIND_NAMES[kind_a]} in record {row_a} but {KIND_NAMES[kind_b]} in record {row_b} of the batch "
        "(a feature keeps one kind; give a spec to read one kind)",
    )
    err.batch_record = row_b  # type: ignore[attr-defined]  # placed by a reader of files (columnar.placing)
    return err


class _Keys:
    """Keys, sorted (tfx-bsl's column order), each with its kind and the first row with that kind."""

    def __init__(self, wanted: Collection[str] | None = None) -> None:
        self.kinds: dict[str, tuple[int, int]] = {}  # key -> (kind or 0, first row with that kind)
        self.wanted = wanted

    def add(self, key: str, kind: int, row: int) -> None:
        if self.wanted is not None and key not in self.wanted:
            return
        seen = self.kinds.get(key)
        if seen is None or not seen[0] or (seen[0] == kind and row < seen[1]):
            if kind or seen is None:
                self.kinds[key] = (kind, row)
        elif kind and seen[0] != kind:
            raise _kind_change(key, seen, (kind, row))

    def ordered(self) -> dict[str, int]:
        return {key: self.kinds[key][0] for key in sorted(self.kinds)}


def batch_kinds(spans: Spans, matches: list[Match], wanted: Collection[str] | None = None) -> dict[str, int]:
    """Every key of the batch's Examples (those of `wanted`, when given) with its kind (0:
    never has one), sorted; a FeatureError where a key has two kinds, a DecodeError for a
    bad record. The records of `matches` (match_layouts) share their layout's keys; the
    others are walked."""
    view, starts, ends, record = spans[:4]
    keys = _Keys(wanted)
    handled = np.zeros(len(starts), dtype=bool)
    for rows, _, layout in matches:
        handled[rows] = True
        for key, (kind, _) in layout.parsed.items():
            keys.add(key, kind, int(rows[0]))
    rest = np.flatnonzero(~handled)
    if not rest.size:
        return keys.ordered()
    buf = np.frombuffer(view, dtype=np.uint8)
    bad = np.zeros(len(rest), dtype=bool)
    entry_row, entry_start, entry_end = map_entries(buf, starts[rest], ends[rest], bad)
    key_start, key_end, ok = delimited_fields(buf, entry_start, entry_end, 0x0A)
    feature_start, feature_end, feature_ok = delimited_fields(buf, np.where(ok, key_end, entry_start), entry_end, 0x12)
    ok &= feature_ok & (feature_end == entry_end)
    listed = feature_start < feature_end  # else kindless: an empty Feature
    tag = np.where(listed, buf[feature_start], 0)
    _, list_end, list_ok = delimited_fields(buf, feature_start, feature_end, tag)
    # one list field and nothing after it: with more, the last kind wins (oneof), which the parser decides
    ok &= ~listed | (((tag == 0x0A) | (tag == 0x12) | (tag == 0x1A)) & list_ok & (list_end == feature_end))
    bad[entry_row[~ok]] = True
    good = np.flatnonzero(~bad[entry_row])
    good = good[np.argsort(entry_row[good], kind="stable")]  # the walk interleaves records: first rows first
    if good.size:
        lengths = key_end[good] - key_start[good]
        _add_entries(keys, buf, rest[entry_row[good]], key_start[good], lengths, tag[good] >> 3, bad, rest)
    for i in rest[bad].tolist():
        try:
            _, parsed = parse_example(record(i))
        except Exception as err:
            note_record(err, i, "decode_arrow")
            raise
        for key, (kind, _) in parsed.items():
            keys.add(key, kind, i)
    return keys.ordered()


def _add_entries(
    keys: _Keys,
    buf: np.ndarray,
    rows: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    kinds: np.ndarray,
    bad: np.ndarray,
    rest: np.ndarray,
) -> None:
    """Add the keys of the map entries (rows, key spans, kinds), told apart by keys.key_groups;
    a record with a key that is not UTF-8, or with a key given twice (protobuf keeps the
    last), goes to the one-by-one path (bad[k] for row rest[k])."""
    first, which = key_groups(buf, starts, lengths)
    _, once, count = np.unique(rows.astype(np.int64) * len(first) + which, return_index=True, return_counts=True)
    bad[np.searchsorted(rest, rows[once[count > 1]])] = True
    single = ~bad[np.searchsorted(rest, rows)]  # the entries of records whose keys the walk settles
    pairs, pair_first = np.unique(which[single] * 4 + kinds[single], return_index=True)
    pair_first = np.flatnonzero(single)[pair_first]
    names: dict[int, str | None] = {}
    for u, entry in enumerate(first.tolist()):
        raw = buf[starts[entry] : starts[entry] + lengths[entry]].tobytes()
        try:
            names[u] = raw.decode("utf-8")
        except UnicodeDecodeError:
            names[u] = None
    invalid = [u for u, name in names.items() if name is None]
    if invalid:
        bad[np.searchsorted(rest, rows[np.isin(which, invalid)])] = True
    for u, entry in enumerate(first.tolist()):
        name = names[u]
        if name is not None:
            keys.add(name, 0, int(rows[entry]))
    for pair, entry in zip(pairs.tolist(), pair_first.tolist(), strict=True):
        name = names[pair // 4]
        if name is not None and pair % 4:
            keys.add(name, pair % 4, int(rows[entry]))


# --------------------------------------------------------------------------- decoding


def spans_of(records: Sequence[Any]) -> Spans:
    """A list of serialized records as spans of one joined buffer: large records go into this
    thread's reused scratch buffer (no fresh pages per batch), which is safe because nothing
    decode_flat returns refers to the buffer."""
    raw, ends = join_records(records, scratch=True)
    return Spans(memoryview(raw), ends - np.diff(ends, prepend=0), ends, records.__getitem__)


def decode_records_flat(records: Sequence[Any], features: Mapping[str, FeatureSpec]) -> dict[str, Flat]:
    """A list of serialized Examples decoded per the spec as flat columns, by decode_examples'
    own path (columnar.decode_records), the last step keeping the values flat."""
    flats: dict[str, Flat] = decode_records(records, batch_specs(features), _SPEC)[0]
    return flats


def decode_flat(
    spans: Spans, features: Mapping[str, FeatureSpec] | None, wanted: Collection[str] | None = None
) -> dict[str, Flat | None]:
    """The batch's features as flat columns: per the spec (TensorFlow's semantics, as
    decode_examples), or without one every key (those of `wanted`, when given; the others
    are not decoded), None for a key that never has a kind."""
    if not len(spans.starts):
        return {}
    if features is not None:
        features = batch_specs(features)
        return decode_buffer(*spans[:3], plan_features(features), features, spans.record, _SPEC)[0]
    matches = match_layouts(np.frombuffer(spans.view, dtype=np.uint8), *spans[:3])
    kinds = batch_kinds(spans, matches, wanted)
    if sum(len(m.rows) for m in matches) == len(spans.starts):
        by_rows = _by_rows(spans, matches, kinds)
        if by_rows is not None:
            return by_rows
    specs: dict[str, FeatureSpec] = {key: _VAR_LEN[k] for key, k in kinds.items() if k}
    found = decode_buffer(*spans[:3], plan_features(specs), specs, spans.record, _PRESENT, matches)[0] if specs else {}
    return {key: found.get(key) for key in kinds}


_VAR_LEN = {kind: VarLenFeature(dtype) for kind, dtype in KIND_DTYPE.items()}


def _by_rows(spans: Spans, matches: list[Match], kinds: Mapping[str, int]) -> dict[str, Flat | None] | None:
    """decode_flat without a spec when every record matched a layout (match_layouts): each
    feature's value spans come from a table per layout, looked up for every row at once, so
    they are in row order already (nothing to merge). None when a packed int64 run does not
    decode (a varint over 10 bytes): the general path then finds the record to blame."""
    buf = np.frombuffer(spans.view, dtype=np.uint8)
    layout_of_row = np.empty(len(spans.starts), dtype=np.intp)
    for number, match in enumerate(matches):
        layout_of_row[match.rows] = number
    out: dict[str, Flat | None] = {}
    for key, kind in kinds.items():
        if not kind:
            out[key] = None
            continue
        parsed = [match.layout.parsed.get(key, (0, [])) for match in matches]
        flat = _row_column(buf, spans.view, _row_spans(spans.starts, layout_of_row, parsed, kind), kind)
        if flat is None:
            return None
        out[key] = flat
    return out


class _RowSpans(NamedTuple):
    """Where one feature's values lie, in row order: the spans (packed runs for numbers, one
    value each for bytes), how many spans each row has, the rows that have the feature (None:
    all), and whether every row has exactly one span."""

    starts: np.ndarray
    ends: np.ndarray
    counts: np.ndarray
    valid: np.ndarray | None
    one_each: bool


def _row_spans(
    starts: np.ndarray, layout_of_row: np.ndarray, parsed: list[tuple[int, list[tuple[int, int]]]], kind: int
) -> _RowSpans:
    """A feature's spans from `parsed`, its (kind, spans within the record) in each layout."""
    has = [k == kind for k, _ in parsed]
    valid = None if all(has) else np.array(has)[layout_of_row]
    per_layout = [len(chunks) for _, chunks in parsed]
    table = np.array([span for _, chunks in parsed for span in chunks], dtype=np.int64).reshape(-1, 2)
    one_each = per_layout.count(1) == len(per_layout)
    if one_each:  # span k is layout k's
        counts = np.ones(len(starts), dtype=np.int64)
        picks, base = layout_of_row, starts
    else:
        spans_in = np.array(per_layout, dtype=np.int64)
        counts = spans_in[layout_of_row]
        picks = index_ranges((np.cumsum(spans_in) - spans_in)[layout_of_row], counts)
        base = np.repeat(starts, counts)
    return _RowSpans(base + table[picks, 0], base + table[picks, 1], counts, valid, one_each)


def _row_column(buf: np.ndarray, view: memoryview, spans: _RowSpans, kind: int) -> Flat | None:
    """The Flat column of a feature's _RowSpans; None where an int64 run does not decode."""
    lengths = spans.ends - spans.starts
    counts = spans.counts
    rows = np.arange(len(counts) + 1, dtype=np.int64) if spans.one_each else None  # a span a row: _offsets(counts)
    if kind == INT64 and rows is not None:  # a packed run a row: of one varint (a label, an id)?
        single = one_varint_each(buf, spans.starts, lengths)
        if single is not None:
            return Flat(single, rows, spans.valid)
    data = ragged_gather(buf, view, spans.starts, spans.ends)
    if kind == BYTES:
        return Flat(Binary(data, _offsets(lengths)), _offsets(counts) if rows is None else rows, spans.valid)
    if kind == FLOAT:  # one packed run per row that has values (canonical layouts)
        values, run_counts = data.view("<f4").astype(np.float32, copy=False), lengths // 4
    else:
        values, run_counts, bad = decode_varint_runs(data, lengths)
        if bad.any():
            return None
    if rows is not None:  # every row has its run
        return Flat(values, _offsets(run_counts), spans.valid)
    counts[counts > 0] = run_counts
    return Flat(values, _offsets(counts), spans.valid)


# --------------------------------------------------------------------------- SequenceExamples


class _Rows:
    """One column gathered row by row: flat values, a count per row, presence."""

    def __init__(self, dtype: str | None) -> None:
        self.dtype = dtype
        self.values: list[Any] = []
        self.lengths: list[int] = []
        self.valid: list[bool] = []

    def add(self, value: Any) -> None:
        if value is None or self.dtype is None:
            self.lengths.append(0)
            self.valid.append(False)
            return
        flat = _flatten(self.dtype, value)
        self.values.append(flat)
        self.lengths.append(len(flat))
        self.valid.append(True)

    def flat(self, track_valid: bool) -> Flat:
        if self.dtype == "bytes" or self.dtype is None:
            values: Any = [v for part in self.values for v in part]
        else:
            values = np.concatenate(self.values) if self.values else np.empty(0, self.dtype)
        valid = np.array(self.valid, dtype=bool) if track_valid else None
        return Flat(values, _offsets(np.array(self.lengths, dtype=np.int64)), valid)


def _sequence_kinds(
    decoded: list[tuple[dict[str, Any], dict[str, Any]]], of_context: bool, of_lists: bool
) -> tuple[dict[str, int], dict[str, int]]:
    """The kinds of the context features and feature lists decoded without a spec (the part
    that has one is not looked at: its values may be Ragged)."""
    context, lists = _Keys(), _Keys()
    for row, (ctx, seq) in enumerate(decoded):
        for key, value in ctx.items() if of_context else ():
            context.add(key, kind_of(value), row)
        for key, steps in seq.items() if of_lists else ():
            lists.add(key, 0, row)
            for step in steps:
                lists.add(key, kind_of(step), row)
    return context.ordered(), lists.ordered()


def _decoded_sequences(
    records: Sequence[Any], context: Mapping[str, FeatureSpec] | None, lists: Mapping[str, FeatureSpec] | None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for i, record in enumerate(records):
        try:
            out.append(decode_sequence_example(record, context, lists))
        except Exception as err:
            note_record(err, i, "decode_sequence_arrow")
            raise
    return out


def decode_sequence_flat(
    records: Sequence[Any],
    context_features: Mapping[str, FeatureSpec] | None,
    sequence_features: Mapping[str, FeatureSpec] | None,
) -> tuple[dict[str, Flat | FlatRagged | None], dict[str, Flat | FlatRagged | Nested | None]]:
    """A batch of SequenceExamples as (context columns, feature list columns). Without specs,
    every key (a context key None where it never has a kind), a feature list as Nested (a
    list of steps; every step null where its steps never have a kind, so an empty feature
    list stays one);
    with specs, TensorFlow's semantics as decode_sequence_example."""
    context_features = feature_specs(context_features, "context_features")
    sequence_features = feature_specs(sequence_features, "sequence_features")
    decoded = _decoded_sequences(records, context_features, sequence_features)
    context_kinds, list_kinds = _sequence_kinds(decoded, context_features is None, sequence_features is None)
    if context_features is not None:
        context_kinds = {key: DTYPE_KIND[spec.dtype] for key, spec in context_features.items()}
    context: dict[str, Flat | FlatRagged | None] = {}
    for key, kind in context_kinds.items():
        if context_features is not None and isinstance(context_features[key], RaggedFeature):
            context[key] = _ragged_rows([ctx[key] for ctx, _ in decoded])
            continue
        rows = _Rows(KIND_DTYPE.get(kind))
        for ctx, _ in decoded:
            rows.add(ctx.get(key))
        context[key] = rows.flat(context_features is None) if kind else None
    lists: dict[str, Flat | FlatRagged | Nested | None] = {}
    if sequence_features is None:
        for key, kind in list_kinds.items():
            lists[key] = _nested(KIND_DTYPE.get(kind), [seq.get(key) for _, seq in decoded], True)
        return context, lists
    for key, spec in sequence_features.items():
        steps = [seq[key] for _, seq in decoded]
        if isinstance(spec, VarLenFeature):
            lists[key] = _nested(spec.dtype, steps, False)
        elif isinstance(spec, RaggedFeature):
            lists[key] = _ragged_rows(steps)
        else:
            rows = _Rows(spec.dtype)
            for value in steps:
                rows.add(value)
            lists[key] = rows.flat(False)
    return context, lists


def _nested(dtype: str | None, per_row: list[list[Any] | None], track_valid: bool) -> Nested:
    """Feature lists (None: absent) as steps of flat values; a kindless step is a null step
    (dtype None: a feature list whose steps never have a kind, or that has no steps)."""
    inner = _Rows(dtype)
    counts = []
    for steps in per_row:
        counts.append(len(steps or ()))
        for step in steps or ():
            inner.add(step)
    valid = np.array([steps is not None for steps in per_row], dtype=bool) if track_valid else None
    return Nested(_offsets(np.array(counts, dtype=np.int64)), inner.flat(True), valid)


def _ragged_rows(values: list[Any]) -> FlatRagged:
    """A RaggedFeature's column from each record's decoded value (an array or a Ragged; in a
    feature list, a Ragged of its steps): the records stacked, with the dimensions of innermost
    uniform rows made levels of lists too, as arrow_type has them."""
    batch = stack([_unfolded(value) for value in values])
    splits = tuple(np.asarray(s, dtype=np.int64) for s in batch.nested_row_splits)
    flat = batch.flat_values
    column: Any = flat.tolist() if flat.dtype == object else flat
    return FlatRagged(Flat(column, splits[-1], None), splits)


def _unfolded(value: Any) -> Any:
    """`value` with each array dimension past the first (innermost uniform rows) made a
    level of row splits."""
    if isinstance(value, Ragged):
        inner = _unfolded(value.values)
        return value if inner is value.values else Ragged(inner, value.row_splits)
    if not isinstance(value, np.ndarray) or value.ndim < 2:
        return value
    rows, width = value.shape[:2]
    inner = _unfolded(value.reshape((rows * width, *value.shape[2:])))
    return Ragged(inner, np.arange(rows + 1, dtype=np.int64) * width)
