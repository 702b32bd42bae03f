"""Batched, columnar SequenceExample decoding — the counterpart of tf.io.parse_sequence_example.

Strategy: the batch's records are joined into one buffer and parsed in lockstep with
numpy, one protobuf level of every record at once, as lockstep parses Examples: the
SequenceExample (a `context` Features field, then a `feature_lists` FeatureLists field),
the FeatureLists' map entries (key, FeatureList), each FeatureList's steps (repeated
Feature, found by sequence_steps: a list whose steps all have one encoded size at a constant
stride, with no walk; any other walked, every list at once, a step a turn) and each walked
step's values. The steps of every requested list across the batch are then gathered and
decoded at once (a strided list's by sequence_steps.strided_values; otherwise
lockstep.gather_numbers for numbers, or an id a step read in place; bytes values sliced out
of the join; the two kinds of list merged in row order), and checked against their spec
with numpy (kinds, values per step, a missing list), so the Python cost is per batch,
feature and step turn, not per record or step. The context is an Example in all but name:
the record's bytes up to the end of its context field are exactly an Example holding the
context, so columnar.decode_buffer decodes it, with the numpy assembly of decode_examples.

Any record that is not laid out canonically, or that does not fit its spec (the
single-record path raises the error it deserves), and any whose context holds a Feature
with no kind under a key with a default (a SequenceExample's context takes it as present
with no values, where an Example takes it as missing), is decoded by the single-record
decoder (decode.decode_sequence_example), in record order, inside decode_buffer's slow path:
results and errors are those of decode_sequence_example, record by record, and an error says
which record it is about. (One corner aside: of a key given twice, the replaced entry is not
checked for an overlong varint, as TensorFlow's parser does not check it either; no writer
repeats a key.) Each spec type is one entry of _SEQUENCE (checks and assembly) or _CONTEXT;
a type in neither raises a clear error. A RaggedFeature is read as the VarLenFeatures of its
keys (ragged_spec.components), in the context as decode_examples reads it, in the feature
lists each step a row partitioned by the same step of its partition lists (build_steps).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from tfrecord_lite._batches.columnar import (
    Assembly,
    assembly_for,
    decode_buffer,
    decode_records,
    note_record,
    plan_features,
)
from tfrecord_lite._batches.joins import join_records
from tfrecord_lite._batches.keys import index_ranges, match_keys
from tfrecord_lite._batches.lockstep import (
    Span,
    _bytes_values,
    _parse_batch,
    _repeated,
    ascii_keys,
    delimited_fields,
    gather_numbers,
)
from tfrecord_lite._batches.sequence_steps import (
    WALK_PAD,
    Strided,
    step_spans,
    strided_lists,
    strided_values,
    walk_steps,
)
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.decode import decode_sequence_example
from tfrecord_lite._example.ragged import Ragged
from tfrecord_lite._example.ragged_build import Column, build_steps
from tfrecord_lite._example.ragged_spec import RaggedFeature, components
from tfrecord_lite._example.spec import (
    BYTES,
    INT64,
    FeatureSpec,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SpecDict,
    VarLenFeature,
)
from tfrecord_lite._example.validate import feature_specs
from tfrecord_lite._example.varints import one_varint_each
from tfrecord_lite._example.wire import as_bytes

_CALLER = "decode_sequence_examples"
Decoded = tuple[dict[str, Any], dict[str, Any], dict[str, np.ndarray]]  # context, feature_lists, lengths


class Steps(NamedTuple):
    """One feature list in some records: the rows that have it (ascending), the steps of each,
    the values of each step (flat, row by row), and the values, flat (an ndarray, or a list
    of bytes)."""

    rows: np.ndarray
    steps: np.ndarray
    counts: np.ndarray
    values: Any


def decode_sequence_examples(
    source: Sequence[Any],
    context_features: SpecDict | None = None,
    sequence_features: SpecDict | None = None,
    *,
    copy: bool = True,
) -> Decoded:
    """Decode a batch of serialized SequenceExamples by columns, like tf.io.parse_sequence_example:
    `(context, feature_lists, lengths)`.

    context: as decode_examples decodes an Example's features (FixedLenFeature → [batch,
    *shape], defaults filled in; VarLenFeature → Ragged, or a list of lists of bytes).
    feature_lists: FixedLenSequenceFeature → [batch, max steps, *shape], shorter sequences
    padded with zeros (b"" for bytes), and its number of steps per record in
    `lengths[key]` (int64 [batch]); VarLenFeature → Ragged(Ragged(values, step_splits),
    record_splits) (batch → steps → values), for bytes a list per record of a list per step
    of bytes values. Errors are those decode_sequence_example raises for the offending record.

    `copy=False` gives bytes values as read-only memoryviews into one copy of the batch's
    records joined, as decode_examples(copy=False) does (bytes for a record that takes the
    single-record path).
    """
    records = source if isinstance(source, (list, tuple)) else list(source)
    context_specs = checked_context_specs(context_features)
    sequence_specs = checked_sequence_specs(sequence_features)
    assembly = assembly_for(copy, {**context_specs, **sequence_specs})
    return decode_sequence_records(records, context_specs, sequence_specs, assembly)[0]


def decode_sequence_records(
    records: Sequence[Any],
    context_specs: dict[str, FeatureSpec],
    sequence_specs: dict[str, FeatureSpec],
    assembly: Assembly,
) -> tuple[Decoded, list[int]]:
    """decode_sequence_examples with its specs checked, plus the indices of the records that
    took the single-record path."""
    context_read, sequence_read = components(context_specs), components(sequence_specs)  # RaggedFeature: its keys
    if not records:
        context = decode_records([], context_specs, assembly)[0]
        return (context, *_assemble(sequence_specs, sequence_read, 0, {}, {})), []
    if assembly.views:
        records = [as_bytes(r) for r in records]
    raw, ends = join_records([*records, WALK_PAD])
    ends = ends[:-1]
    starts = ends - np.diff(ends, prepend=0)
    batch = _Batch(np.frombuffer(raw, dtype=np.uint8), memoryview(raw), starts, ends)
    text = batch.view if assembly.views else raw
    bad = np.zeros(len(records), dtype=bool)
    context_end, lists_start, lists_end = _top_level(batch, bad)
    found = _feature_lists(batch, text, lists_start, lists_end, sequence_read, bad)
    defaults = [k for k, s in context_specs.items() if type(s) is FixedLenFeature and s.default_value is not None]
    if defaults:  # decode_buffer would take a Feature with no kind there for a missing one
        bad |= _kindless(batch, context_end, defaults)
    slow_lists: dict[int, dict[str, Any]] = {}

    def slow(i: int, _: Any) -> dict[str, Any]:
        context, slow_lists[i] = decode_sequence_example(records[i], context_read, sequence_read)
        return context

    if context_specs:
        values = batch.view if assembly.views else None
        context, _ = decode_buffer(
            raw, starts, context_end, plan_features(context_specs), context_specs, int,
            assembly._replace(slow=slow, caller=_CALLER), values=values, force_slow=bad,
        )  # fmt: skip
    else:
        context = {}
        for i in np.flatnonzero(bad).tolist():
            try:
                slow(i, None)
            except Exception as err:
                note_record(err, i, _CALLER)
                raise
    lists = _assemble(sequence_specs, sequence_read, len(records), found, slow_lists)
    return (context, *lists), sorted(slow_lists)


class _Batch(NamedTuple):
    buf: np.ndarray
    view: memoryview
    starts: np.ndarray
    ends: np.ndarray


def checked_context_specs(features: SpecDict | None) -> dict[str, FeatureSpec]:
    """The context's spec mapping, checked whole (None: no context features)."""
    specs = feature_specs(features, "context_features") or {}
    for key, spec in specs.items():
        if type(spec) is FixedLenSequenceFeature:
            raise FeatureError(key, f"context_features take {_names(_CONTEXT)}, not FixedLenSequenceFeature")
        if type(spec) not in _CONTEXT:
            raise _not_yet(key, spec, "context_features", _CONTEXT)
    return specs


def checked_sequence_specs(features: SpecDict | None) -> dict[str, FeatureSpec]:
    """The feature lists' spec mapping, checked whole (None: no feature lists)."""
    specs = feature_specs(features, "sequence_features") or {}
    for key, spec in specs.items():
        if type(spec) is FixedLenFeature:
            raise FeatureError(key, f"sequence_features take {_names(_TAKEN)}, not FixedLenFeature")
        if type(spec) not in _TAKEN:
            raise _not_yet(key, spec, "sequence_features", _TAKEN)
        if isinstance(spec, FixedLenSequenceFeature) and spec.default_value is not None:
            raise FeatureError(
                key, "a FixedLenSequenceFeature in sequence_features takes no default_value (as in TensorFlow)"
            )
    return specs


def _names(table: Iterable[type]) -> str:
    return " or ".join(t.__name__ for t in table)


def _not_yet(key: str, spec: object, part: str, table: Iterable[type]) -> FeatureError:
    name = type(spec).__name__
    return FeatureError(key, f"{name} is not supported in sequence examples yet: {part} take {_names(table)}")


def _top_level(batch: _Batch, bad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each record's context field ends (its context is the Example up to there), and
    the span of its FeatureLists; a record laid out otherwise than [context][feature_lists]
    is marked in `bad` (with an empty context and no lists)."""
    buf, _, starts, ends = batch
    pos = starts.copy()
    context_end = starts.copy()
    lists_start, lists_end = starts.copy(), starts.copy()
    for tag, into in ((0x0A, None), (0x12, (lists_start, lists_end))):
        rows = np.flatnonzero((pos < ends) & (buf[pos] == tag))
        s, e, ok = delimited_fields(buf, pos[rows], ends[rows], tag)
        bad[rows[~ok]] = True
        rows, s, e = rows[ok], s[ok], e[ok]
        pos[rows] = e
        if into is None:
            context_end[rows] = e
        else:
            into[0][rows], into[1][rows] = s, e
    bad |= pos != ends
    context_end[bad] = starts[bad]
    lists_end[bad] = lists_start[bad]
    return context_end, lists_start, lists_end


def _kindless(batch: _Batch, context_end: np.ndarray, keys: list[str]) -> np.ndarray:
    """The records whose context holds a Feature with no kind under one of `keys` (or that the
    lockstep parser leaves to the single-record path)."""
    buf, view, starts, _ = batch
    bad = np.zeros(len(starts), dtype=bool)
    columns, _ = _parse_batch(buf, view, starts, context_end, [k.encode("utf-8", "surrogatepass") for k in keys], bad)
    for column in columns:
        bad[column.rows[column.kinds == 0]] = True
    return bad


class _Lists(NamedTuple):
    """The feature lists of the batch, parsed: each entry's row, key and walked steps; each
    walked step's kind and the span of its values (steps of an entry consecutive), and the
    bytes values; where each entry's list starts, and which lists are strided (not walked)."""

    entry_row: np.ndarray
    key_start: np.ndarray
    key_len: np.ndarray
    ok: np.ndarray
    first_step: np.ndarray
    kinds: np.ndarray
    list_start: np.ndarray
    list_end: np.ndarray
    bytes_values: Any
    lists_at: np.ndarray
    strided: Strided


def _parse_lists(batch: _Batch, lists_start: np.ndarray, lists_end: np.ndarray, bad: np.ndarray) -> _Lists:
    """Parse every FeatureLists down to its steps' values; marks non-canonical records in `bad`.
    Every key and every step of every list is checked, requested or not, as the single-record
    decoder checks them."""
    buf, view, _, _ = batch
    rows = np.flatnonzero(lists_start < lists_end)
    entry_bad = np.zeros(len(rows), dtype=bool)
    owner, entry_start, entry_end = _repeated(buf, lists_start[rows], lists_end[rows], entry_bad)
    bad[rows[entry_bad]] = True
    entry_row = rows[owner]
    # Entry: key (field 1) then value (field 2, a FeatureList), nothing else.
    key_start, key_end, ok = delimited_fields(buf, entry_start, entry_end, 0x0A)
    ok &= key_end < entry_end
    list_start, list_end, list_ok = delimited_fields(buf, np.where(ok, key_end, entry_start), entry_end, 0x12)
    ok &= list_ok & (list_end == entry_end)
    key_len = ascii_keys(buf, view, key_start, key_end, ok)
    # FeatureList: a run of Features (field 1), the steps.
    list_start, list_end = np.where(ok, list_start, 0), np.where(ok, list_end, 0)
    strided = strided_lists(buf, list_start, list_end)  # their steps are not walked
    walked = strided.stride == 0
    steps_bad = np.zeros(len(entry_start), dtype=bool)
    step_owner, step_start, step_end = walk_steps(
        buf, np.where(walked, list_start, 0), np.where(walked, list_end, 0), steps_bad
    )
    ok &= ~steps_bad
    first_step = np.zeros(len(entry_start) + 1, dtype=np.int64)
    np.cumsum(np.bincount(step_owner, minlength=len(entry_start)), out=first_step[1:])
    step_ok = np.ones(len(step_start), dtype=bool)
    kinds, value_start, value_end = step_spans(buf, step_start, step_end, step_ok)
    values = _bytes_values(buf, np.flatnonzero(step_ok & (kinds == BYTES)), value_start, value_end, len(kinds), step_ok)
    ok[step_owner[~step_ok]] = False
    bad[entry_row[~ok]] = True
    return _Lists(
        entry_row, key_start, key_len, ok, first_step, kinds, value_start, value_end, values, list_start, strided
    )


def _feature_lists(
    batch: _Batch,
    text: Any,
    lists_start: np.ndarray,
    lists_end: np.ndarray,
    specs: Mapping[str, FeatureSpec],
    bad: np.ndarray,
) -> dict[str, Steps]:
    """The steps of each requested feature list in the records the batch path accepts (others
    are marked in `bad`)."""
    if not specs:
        return {}
    parsed = _parse_lists(batch, lists_start, lists_end, bad)
    keys = [key.encode("utf-8", "surrogatepass") for key in specs]
    matched = match_keys(batch.buf, keys, parsed.key_start, parsed.key_len, parsed.entry_row, parsed.ok)
    found = {}
    for (key, spec), (rows, entries) in zip(specs.items(), matched, strict=True):
        strided = parsed.strided.stride[entries] > 0
        walked = _walked_steps(batch, text, spec, parsed, rows[~strided], entries[~strided], bad)
        found[key] = _with_strided(batch, spec, parsed, walked, rows[strided], entries[strided], bad)
        if _SEQUENCE[type(spec)].required(spec):
            missing = np.ones(len(bad), dtype=bool)
            missing[rows] = False
            bad |= missing
    return found


def _walked_steps(
    batch: _Batch, text: Any, spec: FeatureSpec, parsed: _Lists, rows: np.ndarray, entries: np.ndarray, bad: np.ndarray
) -> Steps:
    """The steps of the walked lists `entries` (of the records `rows`); marks in `bad` the
    records with a step that does not fit `spec`."""
    if not len(entries):
        return _no_steps(spec)
    first = parsed.first_step[entries]
    steps = parsed.first_step[entries + 1] - first
    step_ids = index_ranges(first, steps)
    kinds = parsed.kinds[step_ids]
    step_bad = np.zeros(len(step_ids), dtype=bool)
    counts, values = _step_values(batch, text, spec, parsed, step_ids, kinds, step_bad)
    step_bad |= _SEQUENCE[type(spec)].steps_bad(spec, kinds, counts)
    bad[np.repeat(rows, steps)[step_bad]] = True
    return Steps(rows, steps, counts, values)


def _with_strided(
    batch: _Batch,
    spec: FeatureSpec,
    parsed: _Lists,
    walked: Steps,
    rows: np.ndarray,
    entries: np.ndarray,
    bad: np.ndarray,
) -> Steps:
    """`walked` and the steps of the strided lists `entries` (of the records `rows`), in row
    order; marks in `bad` the records whose strided list does not fit `spec` (a list's steps
    are alike: one check a list)."""
    if not len(entries):
        return walked
    strided = parsed.strided
    kinds, per_step = strided.kinds[entries], strided.per_step[entries]
    bad[rows[_SEQUENCE[type(spec)].steps_bad(spec, kinds, per_step)]] = True
    counts, values, wrong = strided_values(batch.buf, strided, parsed.lists_at[entries], entries, spec.kind, spec.dtype)
    bad[rows[wrong]] = True
    steps = Steps(rows, strided.steps[entries], counts, values)
    if not len(walked.rows):
        return steps
    rows, per_row, counts = (np.concatenate([a, b]) for a, b in zip(walked[:3], steps[:3], strict=True))
    flat = walked.values + values if spec.kind == BYTES else np.concatenate([walked.values, values])
    return _sorted(Steps(rows, per_row, counts, flat))


def _step_values(
    batch: _Batch,
    text: Any,
    spec: FeatureSpec,
    parsed: _Lists,
    step_ids: np.ndarray,
    kinds: np.ndarray,
    step_bad: np.ndarray,
) -> tuple[np.ndarray, Any]:
    """(values per step, the values flat) of the steps `step_ids`; a step of another kind than
    the spec's counts as empty (its record is marked bad already)."""
    usable = kinds == spec.kind
    if spec.kind == BYTES:
        found = parsed.bytes_values
        first = np.where(usable, found.first[step_ids], 0)
        counts = np.where(usable, found.first[step_ids + 1] - first, 0)
        index = index_ranges(first, counts)
        starts, ends = found.starts[index].tolist(), found.ends[index].tolist()
        return counts, [text[s:e] for s, e in zip(starts, ends, strict=False)]
    starts = np.where(usable, parsed.list_start[step_ids], 0)
    ends = np.where(usable, parsed.list_end[step_ids], 0)
    if spec.kind == INT64 and isinstance(spec, FixedLenSequenceFeature) and math.prod(spec.shape) == 1:
        values = one_varint_each(batch.buf, starts, ends - starts)  # an id a step: read in place
        if values is not None:
            return np.ones(len(starts), dtype=np.int64), values
    numbers = gather_numbers(batch.buf, batch.view, spec.kind, [Span(np.arange(len(starts)), starts, ends)], step_bad)
    return numbers.counts, numbers.values


def _fixed_steps_bad(spec: Any, kinds: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """A FixedLenSequenceFeature's steps are all of its kind, with prod(shape) values each."""
    bad: np.ndarray = (kinds != spec.kind) | (counts != math.prod(spec.shape))
    return bad


def _var_steps_bad(spec: Any, kinds: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """A VarLenFeature's steps are of its kind, or have none (no values)."""
    bad: np.ndarray = (kinds != spec.kind) & (kinds != 0)
    return bad


def _assemble(
    specs: Mapping[str, FeatureSpec],
    read: Mapping[str, FeatureSpec],
    n: int,
    found: dict[str, Steps],
    slow: dict[int, dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The feature lists and lengths: the batch path's steps and the slow records' values merged,
    for the lists `read`; a RaggedFeature built from the lists it reads."""
    lists: dict[str, Any] = {}
    lengths: dict[str, np.ndarray] = {}
    merged: dict[str, Steps] = {}
    for key, spec in read.items():
        steps = merged[key] = found[key] if key in found else _no_steps(spec)
        if slow:
            steps = merged[key] = _merged(spec, _without(steps, list(slow)), {i: d[key] for i, d in slow.items()})
        rule = _SEQUENCE[type(spec)]
        if specs.get(key) == spec:  # asked for, not only read by a RaggedFeature
            lists[key] = rule.assemble(spec, n, steps)
            if rule.lengths:
                lengths[key] = _per_row(n, steps)
    for key, spec in specs.items():
        if isinstance(spec, RaggedFeature):
            parts = {part: merged[part] for part in spec.keys(key)}
            columns = {part: Column(s.values, s.counts) for part, s in parts.items()}
            lists[key] = build_steps(key, spec, columns, {p: _per_row(n, s) for p, s in parts.items()}, batch=True)
    return {key: lists[key] for key in specs}, lengths


def _no_steps(spec: FeatureSpec) -> Steps:
    empty = np.empty(0, dtype=np.int64)
    return Steps(empty, empty, empty, [] if spec.kind == BYTES else np.empty(0, dtype=spec.dtype))


def _without(steps: Steps, rows: list[int]) -> Steps:
    """`steps` without the records `rows`."""
    keep = ~np.isin(steps.rows, rows)
    keep_step = np.repeat(keep, steps.steps)
    keep_value = np.repeat(keep_step, steps.counts)
    values = steps.values
    values = (
        [values[i] for i in np.flatnonzero(keep_value).tolist()] if isinstance(values, list) else values[keep_value]
    )
    return Steps(steps.rows[keep], steps.steps[keep], steps.counts[keep_step], values)


def _merged(spec: FeatureSpec, steps: Steps, decoded: dict[int, Any]) -> Steps:
    """`steps` and the single-record decoder's values of other records, as one Steps in row order."""
    rows = list(decoded)
    per_step: list[Any] = []
    for value in decoded.values():
        if isinstance(spec, FixedLenSequenceFeature):  # [steps, *shape]
            per_step.extend(value.reshape(len(value), math.prod(spec.shape)))
        else:  # a list of per-step values
            per_step.extend(value)
    counts = np.array([len(v) for v in per_step], dtype=np.int64)
    if spec.kind == BYTES:
        flat: Any = [v for step in per_step for v in step]
    else:
        flat = np.concatenate([np.asarray(v, dtype=spec.dtype) for v in per_step] or [np.empty(0, spec.dtype)])
    slow_steps = np.array([len(v) for v in decoded.values()], dtype=np.int64)
    both = Steps(
        np.concatenate([steps.rows, np.array(rows, dtype=np.int64)]),
        np.concatenate([steps.steps, slow_steps]),
        np.concatenate([steps.counts, counts]),
        steps.values + flat if spec.kind == BYTES else np.concatenate([steps.values, flat]),
    )
    return _sorted(both)


def _sorted(steps: Steps) -> Steps:
    """`steps` with its rows in ascending order."""
    order = np.argsort(steps.rows, kind="stable")
    first_step = np.cumsum(steps.steps) - steps.steps
    step_order = index_ranges(first_step[order], steps.steps[order])
    if len(steps.counts) and (steps.counts == 1).all():  # a value a step (an id): the same order
        value_order = step_order
    else:
        value_first = np.cumsum(steps.counts) - steps.counts
        value_order = index_ranges(value_first[step_order], steps.counts[step_order])
    values = steps.values
    values = [values[i] for i in value_order.tolist()] if isinstance(values, list) else values[value_order]
    return Steps(steps.rows[order], steps.steps[order], steps.counts[step_order], values)


def _per_row(n: int, steps: Steps) -> np.ndarray:
    lengths = np.zeros(n, dtype=np.int64)
    lengths[steps.rows] = steps.steps
    return lengths


def _dense(spec: FeatureSpec, n: int, steps: Steps) -> np.ndarray:
    """[n, max steps, *shape], padded with zeros / b"" (TensorFlow takes no default here)."""
    assert isinstance(spec, FixedLenSequenceFeature)
    is_bytes = spec.kind == BYTES
    width = int(steps.steps.max()) if len(steps.steps) else 0
    out = np.zeros((n, width, *spec.shape), dtype=object if is_bytes else spec.dtype)
    if is_bytes:
        out[...] = b""
    size = math.prod(spec.shape)
    total = int(steps.steps.sum())
    if total and size:
        values = steps.values
        if is_bytes:
            values = np.fromiter(values, dtype=object, count=len(values))
        slots = index_ranges(steps.rows * width, steps.steps)  # of the n * width steps, those there are
        out.reshape(n * width, size)[slots] = values.reshape(total, size)
    return out


def _nested(spec: FeatureSpec, n: int, steps: Steps) -> Any:
    """Ragged(Ragged(values, step_splits), record_splits); for bytes, a list per record of a list per step."""
    record_splits = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(_per_row(n, steps), out=record_splits[1:])
    step_splits = np.zeros(len(steps.counts) + 1, dtype=np.int64)
    np.cumsum(steps.counts, out=step_splits[1:])
    if spec.kind == BYTES:
        per_step = [
            steps.values[a:b] for a, b in zip(step_splits[:-1].tolist(), step_splits[1:].tolist(), strict=False)
        ]
        return [per_step[a:b] for a, b in zip(record_splits[:-1].tolist(), record_splits[1:].tolist(), strict=False)]
    inner = Ragged(np.asarray(steps.values, dtype=spec.dtype), step_splits)
    return Ragged(cast(Any, inner), record_splits)


class _ListRule(NamedTuple):
    """What a feature list's spec type asks: which steps do not fit it (from their kinds and
    value counts), whether a record must have the list, how the column is assembled from the
    steps, and whether `lengths` holds its steps per record (as TensorFlow's does)."""

    steps_bad: Callable[[Any, np.ndarray, np.ndarray], np.ndarray]
    required: Callable[[Any], bool]
    assemble: Callable[[Any, int, Steps], Any]
    lengths: bool


# The spec types each part of a SequenceExample takes (decode_buffer decodes the context).
_CONTEXT = {FixedLenFeature: None, VarLenFeature: None, RaggedFeature: None}
_SEQUENCE: dict[type, _ListRule] = {
    FixedLenSequenceFeature: _ListRule(_fixed_steps_bad, lambda spec: not spec.allow_missing, _dense, True),
    VarLenFeature: _ListRule(_var_steps_bad, lambda spec: False, _nested, False),
}
_TAKEN = (*_SEQUENCE, RaggedFeature)  # RaggedFeature: as the VarLenFeatures it reads
