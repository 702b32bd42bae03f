"""Decoding one Example or SequenceExample, sans-I/O: bytes in, dicts of numpy arrays
and bytes out, with or without a spec (TensorFlow's FixedLenFeature / VarLenFeature /
FixedLenSequenceFeature semantics, errors included).

Strategy: wire parses the record into each Feature's kind and value spans (a record
laid out as the last one of its length reuses that parse); values are then
materialised in one step each: np.frombuffer for packed floats, varints'
decode_varints for int64 lists, slices (or memoryviews, copy=False) for bytes. With a
spec, the commonest case (a FixedLenFeature of the right kind, one run of values: a
scalar int64, a float or int64 vector, one string) is read directly; every other case
and every error goes through the general apply_spec.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.ragged_build import Column, build, build_steps, single_column
from tfrecord_lite._example.ragged_spec import RaggedFeature
from tfrecord_lite._example.raw import RawFeature, raw_value
from tfrecord_lite._example.sparse import Sparse, sparse_value
from tfrecord_lite._example.spec import (
    BYTES,
    DTYPE_KIND,
    FLOAT,
    INT64,
    KIND_NAMES,
    FeatureSpec,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    SpecDict,
    VarLenFeature,
    empty_values,
    shape_values,
)
from tfrecord_lite._example.validate import as_spec, check_sparse_keys, feature_specs, missing_feature
from tfrecord_lite._example.varints import UINT64_LIMIT, decode_varints, read_varint
from tfrecord_lite._example.wire import (
    LAYOUTS,
    Parsed,
    as_bytes,
    check_dropped,
    general_example,
    leave_unchecked,
    new_layout,
    parse_sequence_example,
)
from tfrecord_lite._repr import plural

_LE_F32, _F32 = np.dtype("<f4"), np.dtype(np.float32)  # dtype objects: numpy parses no string per call


def _join(buf: bytes, chunks: list[tuple[int, int]]) -> bytes:
    if len(chunks) == 1:
        s, e = chunks[0]
        return buf[s:e]
    return b"".join([buf[s:e] for s, e in chunks])


def values_of(buf: bytes, parsed: Parsed, view: memoryview | None = None) -> Any:
    """Materialise a parsed Feature: int64 / float32 ndarray, list of bytes (of memoryviews
    into `view`, the record, when given), or None."""
    kind, chunks = parsed
    if kind == FLOAT:
        if len(chunks) == 1:
            s, e = chunks[0]
            return np.frombuffer(buf, "<f4", (e - s) >> 2, s).astype(np.float32)
        return np.frombuffer(_join(buf, chunks) if chunks else b"", "<f4").astype(np.float32)
    if kind == INT64:
        if len(chunks) == 1:
            s, e = chunks[0]
            return decode_varints(buf[s:e])
        return decode_varints(_join(buf, chunks)) if chunks else np.empty(0, np.int64)
    if kind == BYTES:
        src = buf if view is None else view
        return [src[s:e] for s, e in chunks]
    return None


def _kind_error(key: str, spec: FeatureSpec, kind: int) -> FeatureError:
    want = KIND_NAMES[spec.kind]
    return FeatureError(key, f"expected {want} ({spec.dtype}), found {KIND_NAMES[kind]}")


def apply_spec(
    key: str,
    spec: object,
    buf: bytes,
    parsed: Parsed | None,
    kindless_is_missing: bool = True,
    present: Collection[str] = (),
    view: memoryview | None = None,
    specs: Mapping[str, object] | None = None,
) -> Any:
    """Decode one Example feature per its spec, as tf.io.parse_single_example does.

    A Feature with no kind counts as missing, except in a SequenceExample's context,
    where TensorFlow takes it as present with no values (`kindless_is_missing=False`).
    `present`: the record's keys, for the error about a missing one (a SparseFeature needs
    them parsed, {key: Parsed}); `specs`: the whole spec, whose keys a SparseFeature checks.
    """
    kind = parsed[0] if parsed is not None else 0
    if isinstance(spec, VarLenFeature):
        if kind == 0:
            return empty_values(spec.dtype)
        if kind != spec.kind:
            raise _kind_error(key, spec, kind)
        return values_of(buf, parsed, view)  # type: ignore[arg-type]
    if isinstance(spec, FixedLenFeature):
        if kind == 0 and parsed is not None and not kindless_is_missing:
            return _fixed(key, spec, empty_values(spec.dtype))
        if kind == 0:
            if spec.default_value is None:
                raise missing_feature(key, present)
            return _copy(spec.default_value)
        return _fixed(key, spec, values_of(buf, _checked(key, spec, parsed), view))  # type: ignore[arg-type]
    if isinstance(spec, FixedLenSequenceFeature):
        if not spec.allow_missing:
            raise FeatureError(key, "a FixedLenSequenceFeature in an Example needs allow_missing=True")
        if kind == 0:
            return _stack(spec, empty_values(spec.dtype), 0)
        values = values_of(buf, _checked(key, spec, parsed), view)  # type: ignore[arg-type]
        inner = math.prod(spec.shape)
        if (inner == 0 and len(values)) or (inner and len(values) % inner):
            raise FeatureError(
                key, f"found {plural(len(values), 'value')}, not a multiple of {inner} (shape {list(spec.shape)})"
            )
        return _stack(spec, values, len(values) // inner if inner else 0)
    if isinstance(spec, RawFeature):
        if kind == BYTES and len(parsed[1]) != 1:  # type: ignore[index]
            raise FeatureError(key, f"a RawFeature is one bytes value, found {plural(len(parsed[1]), 'value')}")  # type: ignore[index]
        return raw_value(key, spec, apply_spec(key, spec.reads, buf, parsed, kindless_is_missing, present, view))
    if isinstance(spec, RaggedFeature):
        raise FeatureError(key, "a RaggedFeature reads several features of an Example: decode_example takes it")
    if isinstance(spec, SparseFeature):
        if not isinstance(present, Mapping):
            raise FeatureError(
                key, "a SparseFeature is read from an Example's features (decode_example / decode_examples)"
            )
        return _sparse(key, spec, buf, present, view, specs)
    return apply_spec(key, as_spec(key, spec), buf, parsed, kindless_is_missing, present, view, specs)


def _sparse(
    key: str,
    spec: SparseFeature,
    buf: bytes,
    parsed: Mapping[str, Parsed],
    view: memoryview | None,
    specs: Mapping[str, object] | None,
) -> Sparse:
    """A SparseFeature: its keys read as VarLenFeatures, put together as TensorFlow does."""
    if specs is not None:
        check_sparse_keys({k: as_spec(k, s) for k, s in specs.items()})
    parts = [(k, _INDEX) for k in spec.index_keys] + [(spec.value_key, VarLenFeature(spec.dtype))]
    decoded = []
    for part_key, part in parts:
        try:
            decoded.append(apply_spec(part_key, part, buf, parsed.get(part_key), view=view))
        except FeatureError as err:
            raise FeatureError(key, f"its key {part_key!r}: {err.detail}") from None
    return sparse_value(key, spec, decoded[:-1], decoded[-1])


_INDEX = VarLenFeature("int64")


def _checked(key: str, spec: FeatureSpec, parsed: Parsed) -> Parsed:
    if parsed[0] != spec.kind:
        raise _kind_error(key, spec, parsed[0])
    return parsed


def _check_count(key: str, spec: Any, found: int) -> None:
    size = math.prod(spec.shape)
    if found != size:
        raise FeatureError(
            key, f"expected {size} value{'s' if size != 1 else ''} for shape {list(spec.shape)}, found {found}"
        )


def _fixed(key: str, spec: Any, values: Any) -> Any:
    shape = spec.shape
    if len(values) != (math.prod(shape) if shape else 1):
        _check_count(key, spec, len(values))
    if not shape:
        return values[0]
    if len(shape) == 1 and spec.dtype != "bytes":
        return values  # already 1-D of that length
    return shape_values(values, spec.dtype, shape)


def _stack(spec: FixedLenSequenceFeature, flat: Any, steps: int) -> Any:
    """Shape flat values (steps * prod(shape) of them) as [steps, *shape]."""
    shape = (steps,) + spec.shape
    if spec.dtype == "bytes":
        arr = np.empty(len(flat), dtype=object)
        arr[:] = flat
        return arr.reshape(shape)
    return np.asarray(flat, dtype=np.dtype(spec.dtype)).reshape(shape)


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def decode_example(source: Any, features: SpecDict | None = None, *, copy: bool = True) -> dict[str, Any]:
    """Decode a serialized tf.train.Example.

    Without `features`: every feature, int64 → int64 ndarray, float → float32 ndarray,
    bytes → list of bytes, a Feature with no kind → None. With a spec dict: only those
    keys, shaped and checked like tf.io.parse_single_example (a RaggedFeature gives a
    Ragged, or an array when nothing is ragged; a SparseFeature a Sparse); TensorFlow's tf.io
    spec objects are taken as ours.

    `copy=False` gives bytes values as read-only memoryviews into the record instead of
    copies (no copy of a large image or blob). They stay valid as long as they exist: each
    keeps the whole record alive (a bytes record; any other buffer is copied to bytes first),
    so keep `bytes(v)` of the few values you hold on to across many records.
    """
    buf = source if type(source) is bytes else as_bytes(source)
    view = None if copy else memoryview(buf)
    if features is not None and type(features) is not dict:
        features = feature_specs(features)
    layout = LAYOUTS.get(len(buf))  # layout_of, inlined: this is the hot path
    if layout is None or not layout.matches(buf):
        layout = new_layout(buf)
    if layout is not None:
        parsed = layout.parsed  # shared: only read
    else:
        parsed = general_example(buf, check_dropped if features is None else leave_unchecked)
    if features is None:
        return {key: values_of(buf, p, view) for key, p in parsed.items()}
    out = {}
    get = parsed.get
    for key, spec in features.items():
        p = get(key)
        if p is None or type(spec) is not FixedLenFeature or p[0] != DTYPE_KIND[spec.dtype]:
            if type(spec) in _PLAIN:
                out[key] = apply_spec(key, spec, buf, p, present=parsed, view=view)
            else:
                out[key] = _other_spec(key, spec, buf, parsed, view, features)
            continue
        # The common case, without the detours: a FixedLenFeature of the right kind, one run
        # of values; the four commonest shapes are read directly (anything else, errors
        # included, goes through values_of and _fixed).
        kind, chunks = p
        shape = spec.shape
        if len(chunks) == 1 and len(shape) <= 1:
            s, e = chunks[0]
            if kind == INT64 and not shape:  # a scalar int64, such as a label (its last byte ends it)
                if e - s == 1:
                    out[key] = np.int64(buf[s])
                    continue
                if e - s == 2 and buf[s] >= 0x80:
                    out[key] = np.int64(buf[s] & 0x7F | buf[s + 1] << 7)
                    continue
                v, after = read_varint(buf, s, e)
                if after == e:
                    out[key] = np.int64(v - UINT64_LIMIT if v >> 63 else v)
                    continue
            elif kind == FLOAT and shape and e - s == 4 * shape[0]:  # a vector of floats
                out[key] = np.frombuffer(buf, _LE_F32, shape[0], s).astype(_F32)
                continue
            elif kind == INT64 and shape:  # a vector of int64s, such as ids
                values = decode_varints(buf[s:e])
                if len(values) == shape[0]:
                    out[key] = values
                    continue
            elif kind == BYTES and not shape:  # one string
                out[key] = buf[s:e] if view is None else view[s:e]
                continue
        out[key] = _fixed(key, spec, values_of(buf, p, view))
    return out


_PLAIN = frozenset((FixedLenFeature, VarLenFeature, FixedLenSequenceFeature))


def _other_spec(
    key: str, spec: Any, buf: bytes, parsed: dict[str, Parsed], view: memoryview | None, specs: SpecDict
) -> Any:
    """decode_example's value of a spec that is not one of the plain three: a RaggedFeature
    (ours or TensorFlow's), built from the features it reads; or what apply_spec says (a
    SparseFeature, checked against the whole `specs`)."""
    spec = as_spec(key, spec)
    if not isinstance(spec, RaggedFeature):
        return apply_spec(key, spec, buf, parsed.get(key), present=parsed, view=view, specs=specs)
    read = {
        part: single_column(apply_spec(part, var_len, buf, parsed.get(part), view=view))
        for part, var_len in spec.keys(key).items()
    }
    return build(key, spec, read[spec.value_key or key], read, 1, batch=False)


def _apply_sequence_spec(
    key: str,
    spec: FeatureSpec,
    buf: bytes,
    steps: list[Parsed] | None,
    present: Collection[str] = (),
    view: memoryview | None = None,
) -> Any:
    """Decode one feature_list per its spec, as tf.io.parse_single_sequence_example does."""
    if isinstance(spec, VarLenFeature):
        out = []
        for i, step in enumerate(steps or ()):
            if step[0] not in (0, spec.kind):
                raise FeatureError(key, f"step {i}: " + _kind_error(key, spec, step[0]).detail)
            out.append(values_of(buf, step, view) if step[0] else empty_values(spec.dtype))
        return out
    if isinstance(spec, FixedLenSequenceFeature):
        if spec.default_value is not None:
            raise FeatureError(
                key, "a FixedLenSequenceFeature in sequence_features takes no default_value (as in TensorFlow)"
            )
        if steps is None:
            if not spec.allow_missing:
                raise missing_feature(key, present, "feature_list")
            return _stack(spec, empty_values(spec.dtype), 0)
        per_step = []
        for i, step in enumerate(steps):
            try:
                values = values_of(buf, _checked(key, spec, step), view)
                _check_count(key, spec, len(values))
            except FeatureError as err:
                raise FeatureError(key, f"step {i}: {err.detail}") from None
            per_step.append(values)
        if spec.dtype == "bytes":
            flat: Any = [v for values in per_step for v in values]
        else:
            flat = np.concatenate(per_step) if per_step else empty_values(spec.dtype)
        return _stack(spec, flat, len(per_step))
    raise FeatureError(
        key, f"sequence_features take FixedLenSequenceFeature or VarLenFeature or RaggedFeature, not {spec!r}"
    )


def _ragged_steps(
    key: str, spec: RaggedFeature, buf: bytes, lists: Mapping[str, list[Parsed]], view: memoryview | None = None
) -> Any:
    """A RaggedFeature of sequence_features: the feature lists it reads, each step a row."""
    columns, steps = {}, {}
    for part, var_len in spec.keys(key).items():
        per_step = _apply_sequence_spec(part, var_len, buf, lists.get(part), view=view)
        counts = np.fromiter(map(len, per_step), dtype=np.int64, count=len(per_step))
        if var_len.dtype == "bytes":
            flat: Any = [v for values in per_step for v in values]
        else:
            flat = np.concatenate(per_step) if per_step else empty_values(var_len.dtype)
        columns[part], steps[part] = Column(flat, counts), np.array([len(per_step)], dtype=np.int64)
    return build_steps(key, spec, columns, steps, batch=False)


def decode_sequence_example(
    source: Any,
    context_features: SpecDict | None = None,
    sequence_features: SpecDict | None = None,
    *,
    copy: bool = True,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Decode a serialized tf.train.SequenceExample into (context, feature_lists).

    Without specs: context as in decode_example, feature_lists as {key: [value per step]}.
    With specs: like tf.io.parse_single_sequence_example (FixedLenSequenceFeature →
    [steps, *shape]; VarLenFeature → a list with one 1-D value array per step; a RaggedFeature
    of the context as in decode_example, of the feature lists a Ragged [steps, ...], each step
    partitioned by the same step of its partition lists).

    `copy=False` gives bytes values as read-only memoryviews into the record, as
    decode_example(copy=False) does (each keeps the whole record alive).
    """
    buf, context, lists = parse_sequence_example(source)
    view = None if copy else memoryview(buf)
    if context_features is None:
        ctx = {key: values_of(buf, p, view) for key, p in context.items()}
    else:
        ctx = {}
        specs = feature_specs(context_features, "context_features") or {}
        for key, spec in specs.items():
            if isinstance(spec, (FixedLenSequenceFeature, SparseFeature)):
                taken = "FixedLenFeature or VarLenFeature or RaggedFeature"
                raise FeatureError(key, f"context_features take {taken}, not {type(spec).__name__}")
            if isinstance(spec, RaggedFeature):
                ctx[key] = _other_spec(key, spec, buf, context, view, specs)
                continue
            ctx[key] = apply_spec(
                key, spec, buf, context.get(key), kindless_is_missing=False, present=context, view=view
            )
    if sequence_features is None:
        seq = {key: [values_of(buf, step, view) for step in steps] for key, steps in lists.items()}
    else:
        seq = {
            key: _ragged_steps(key, spec, buf, lists, view)
            if isinstance(spec, RaggedFeature)
            else _apply_sequence_spec(key, spec, buf, lists.get(key), lists, view)
            for key, spec in feature_specs(sequence_features, "sequence_features").items()  # type: ignore[union-attr]
        }
    return ctx, seq
