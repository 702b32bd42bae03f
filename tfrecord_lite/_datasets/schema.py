"""What a set of records holds: each record decoded without a spec (an Example, a
SequenceExample, a TensorBoard Event, an ExampleListWithContext, a user's own message type, or
raw bytes that are none of them), per key the kinds, value counts and
presence (collect_schema, which the CLI's `schema` prints), and from those a spec
(infer_features) that decodes every record seen.

Strategy: one pass of the single-record decoder over the first records; the statistics
are plain counters, so inference is a pure function of them. The spec is as tight as the
data allows: FixedLenFeature where every record has the same number of values of one
kind, VarLenFeature otherwise; two kinds under one key are an error naming both records.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tfrecord_lite._batches.sequence_probe import CLASH, has_feature_lists
from tfrecord_lite._datasets.messages import decode_elwc, decode_message, is_elwc, message_fields
from tfrecord_lite._errors import DecodeError, FeatureError
from tfrecord_lite._events.wire import event_fields
from tfrecord_lite._example.decode import decode_example, decode_sequence_example
from tfrecord_lite._example.ragged_spec import RaggedFeature, partitions_from_json, ragged_to_json
from tfrecord_lite._example.raw import RawFeature
from tfrecord_lite._example.spec import (
    BYTES,
    FLOAT,
    INT64,
    FeatureSpec,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
    kind_of,
)
from tfrecord_lite._example.validate import as_record
from tfrecord_lite._records.example_batches import record_spans
from tfrecord_lite._repr import plural
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, ReadOptions, StorageOptions

__all__ = [
    "Decoded",
    "FeatureStats",
    "Schema",
    "collect_schema",
    "decode_record",
    "features_from_json",
    "features_to_json",
    "infer_features",
    "infer_sequence_features",
    "schema_features",
    "schema_specs",
    "specs_from_json",
    "specs_to_json",
]

_KIND_LABELS = {BYTES: "bytes", FLOAT: "float", INT64: "int64"}
_LABEL_DTYPES = {"bytes": "bytes", "float": "float32", "int64": "int64"}


def value_kind(value: Any) -> str | None:
    """'int64' | 'float' | 'bytes' | None (a Feature with no kind) for a value decoded without spec."""
    return _KIND_LABELS.get(kind_of(value))


@dataclass
class Decoded:
    """A record decoded for display: an Example, a SequenceExample, or raw bytes that are neither."""

    kind: str  # "example" | "sequence" | "event" (a TensorBoard Event) | "elwc" | "message" | "raw"
    # Example features, SequenceExample or ExampleListWithContext context, a message's fields
    features: dict[str, Any] = field(default_factory=dict)
    feature_lists: dict[str, list[Any]] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)  # an ExampleListWithContext's
    raw: bytes = b""
    error: str = ""


def decode_record(record: bytes, mode: str | type[Any] = "auto", where: str = "") -> Decoded:
    """Decode a record for display. mode 'auto' tells a SequenceExample (it has feature lists)
    from an Example, and a TensorBoard Event and an ExampleListWithContext from both; 'example' /
    'sequence' / 'elwc' force one; 'raw' keeps the bytes; a protobuf message class decodes the
    record as that message (a DecodeError naming `where`, the record's place, if it is none)."""
    if not isinstance(mode, str):
        return Decoded("message", decode_message(record, message=mode, where=where))
    if mode == "raw":
        return Decoded("raw", raw=record)
    if mode == "auto":
        shown = event_fields(record)
        if shown is not None:
            return Decoded("event", shown)
    try:
        if mode == "elwc" or (mode == "auto" and is_elwc(record)):
            context, examples = decode_elwc(record)
            return Decoded("elwc", context, examples=examples)
        if mode == "sequence" or (mode == "auto" and has_feature_lists(record)):
            context, lists = decode_sequence_example(record)
            if lists or mode == "sequence":
                return Decoded("sequence", context, lists)
            return Decoded("example", context)  # an empty feature_lists field: the Features are all
        return Decoded("example", decode_example(record))
    except DecodeError as err:
        return Decoded("raw", raw=record, error=err.reason)


@dataclass
class FeatureStats:
    """What `schema` learns about one key: kinds seen, value counts, how many records have it."""

    key: str
    section: str  # "features" | "context" | "feature_lists" | "examples" (an ELWC's) | "fields" (a message's)
    kinds: set[str] = field(default_factory=set)
    present: int = 0
    min_values: int | None = None
    max_values: int | None = None

    first_record: dict[str, int] = field(default_factory=dict)  # kind -> first record with it

    def add(self, value: Any, record: int = 0) -> None:
        """Count one occurrence (in record number `record`); for a feature list, value counts are per step."""
        steps = value if self.section in ("feature_lists", "examples") else [value]
        self.present += 1
        for v in steps:
            kind = value_kind(v) or "none"
            self.kinds.add(kind)
            self.first_record.setdefault(kind, record)
            n = 0 if v is None else len(v)
            self.min_values = n if self.min_values is None else min(self.min_values, n)
            self.max_values = n if self.max_values is None else max(self.max_values, n)


@dataclass
class Schema:
    """Feature statistics over the first `records` records of some files."""

    records: int = 0
    raw: int = 0  # records that are not Examples
    first_raw: int | None = None
    complete: bool = True  # every record was read
    features: dict[tuple[str, str], FeatureStats] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per key (section, key, kind, present %, min/max values), sorted by key."""
        out = []
        for (section, key), st in sorted(self.features.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            out.append(
                {
                    "key": key,
                    "section": section,
                    "kind": "|".join(sorted(st.kinds)),
                    "present": st.present,
                    "present_pct": round(100.0 * st.present / self.records, 2) if self.records else 0.0,
                    "min_values": st.min_values if st.min_values is not None else 0,
                    "max_values": st.max_values if st.max_values is not None else 0,
                }
            )
        return out


def collect_schema(records: Iterable[bytes], limit: int | None = 1000, mode: str | type[Any] = "auto") -> Schema:
    """Feature keys, kinds, min/max value counts and presence over the first `limit` records (None:
    all). `mode` as decode_record's; with a message class, the message's fields (section "fields",
    nested ones by dotted path, kinds their protobuf types)."""
    schema = Schema()
    it = iter(records)
    for record in it:
        if limit is not None and schema.records >= limit:
            schema.complete = False
            break
        schema.records += 1
        if not isinstance(mode, str):
            _add_message(schema, record, mode)
            continue
        dec = decode_record(record, mode)
        if dec.kind in ("raw", "message"):
            schema.raw += 1
            schema.first_raw = schema.records - 1 if schema.first_raw is None else schema.first_raw
            continue
        groups = [("context" if dec.kind in ("sequence", "elwc") else "features", dec.features)]
        if dec.kind == "sequence":
            groups.append(("feature_lists", dec.feature_lists))
        if dec.kind == "elwc":
            groups.append(("examples", _by_key(dec.examples)))
        for section, feats in groups:
            for key, value in feats.items():
                st = schema.features.get((section, key))
                if st is None:
                    st = schema.features[(section, key)] = FeatureStats(key, section)
                st.add(value, schema.records - 1)
    return schema


def _add_message(schema: Schema, record: bytes, message: type[Any]) -> None:
    """One record of a message type counted: each field set, once per record, its value counts."""
    number = schema.records - 1
    seen: dict[str, tuple[str, int, int]] = {}  # path -> (kind, fewest, most values) in this record
    for path, kind, n in message_fields(record, message=message, where=f"record {number}"):
        _, low, high = seen.get(path, (kind, n, n))
        seen[path] = (kind, min(low, n), max(high, n))
    for path, (kind, low, high) in seen.items():
        st = schema.features.get(("fields", path))
        if st is None:
            st = schema.features[("fields", path)] = FeatureStats(path, "fields")
        st.present += 1
        st.kinds.add(kind)
        st.first_record.setdefault(kind, number)
        st.min_values = low if st.min_values is None else min(st.min_values, low)
        st.max_values = high if st.max_values is None else max(st.max_values, high)


def _by_key(examples: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """An ExampleListWithContext's examples as a SequenceExample's feature lists: per key, its
    value in each example that has it."""
    keys: dict[str, list[Any]] = {}
    for example in examples:
        for key, value in example.items():
            keys.setdefault(key, []).append(value)
    return keys


def _kind_of(stats: FeatureStats) -> str | None:
    """The one kind a key has (None: never one); two kinds are an error naming the records."""
    kinds = sorted(stats.kinds - {"none"}, key=stats.first_record.__getitem__)
    if len(kinds) > 1:
        a, b = kinds[:2]
        raise FeatureError(
            stats.key,
            f"{a} in record {stats.first_record[a]} but {b} in record {stats.first_record[b]}: "
            "a feature must keep one kind to have a spec",
        )
    return kinds[0] if kinds else None


def _spec_of(stats: FeatureStats, records: int) -> FeatureSpec | None:
    kind = _kind_of(stats)
    if kind is None:
        return None  # never has a kind: nothing to decode
    dtype = _LABEL_DTYPES[kind]
    same = stats.present == records and "none" not in stats.kinds and stats.min_values == stats.max_values
    count = stats.max_values or 0
    shape = () if count == 1 else (count,)
    if stats.section == "feature_lists":  # steps of no values: only a VarLenFeature counts them in Arrow
        return FixedLenSequenceFeature(shape, dtype) if same and count else VarLenFeature(dtype)
    return FixedLenFeature(shape, dtype) if same else VarLenFeature(dtype)


def infer_features(
    source: Any,
    *,
    max_records: int | None = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> dict[str, FeatureSpec]:
    """A spec that decodes the Examples of `source` (a path, URL, glob, list of those, or an
    iterable of serialized records), learnt from the data: FixedLenFeature([n]) (or [] for
    one value) for a key every record has with the same number of values, VarLenFeature
    otherwise; keys in sorted order. `max_records` looks at the first ones only. A key with
    two kinds is a FeatureError naming the records; a record that is not an Example, a
    DecodeError naming it; records that carry feature lists (SequenceExamples), a FeatureError
    naming one: infer_sequence_features gives their specs. The reader options (`compression`,
    `verify`, `on_error`, `max_skipped`, `storage_options`, `max_record_bytes`) are iter_records',
    for files and URLs."""
    reading = ReadOptions(
        compression=compression,
        verify=verify,
        on_error=on_error,
        max_skipped=max_skipped,
        storage_options=storage_options,
        max_record_bytes=max_record_bytes,
    )
    return schema_features(_collected(source, max_records, reading))


def infer_sequence_features(
    source: Any,
    *,
    max_records: int | None = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> tuple[dict[str, FeatureSpec], dict[str, FeatureSpec]]:
    """(context_features, sequence_features) that decode the SequenceExamples of `source` (as
    infer_features takes it; Examples count as SequenceExamples without feature lists): the
    context as infer_features infers features; a feature list FixedLenSequenceFeature([n]) (or
    [] for one value a step) where every record has it and every step the same number of
    values, VarLenFeature otherwise. A key that never has a kind is left out (nothing to
    decode); a key that is both a context feature and a feature list is a FeatureError. The
    reader options are infer_features'."""
    reading = ReadOptions(
        compression=compression,
        verify=verify,
        on_error=on_error,
        max_skipped=max_skipped,
        storage_options=storage_options,
        max_record_bytes=max_record_bytes,
    )
    return schema_specs(_collected(source, max_records, reading))


def _collected(source: Any, max_records: int | None, reading: ReadOptions) -> Schema:
    records: Iterator[bytes] = _records_of(source, reading)
    if max_records is not None:
        records = itertools.islice(records, max_records)
    return collect_schema(records, None, "auto")


def schema_features(schema: Schema) -> dict[str, FeatureSpec]:
    """The spec that decodes every record `schema` saw (see infer_features)."""
    context, lists = schema_specs(schema)
    if lists:
        first = next(iter(lists))
        raise FeatureError(
            first,
            f"is a feature list: the records are SequenceExamples (feature lists: {', '.join(lists)}); "
            "a spec of Example features would leave them out: use infer_sequence_features",
        )
    return context


def schema_specs(schema: Schema) -> tuple[dict[str, FeatureSpec], dict[str, FeatureSpec]]:
    """(features or context, feature lists): the specs that decode every record `schema` saw."""
    if schema.raw:
        raise DecodeError(
            f"{schema.raw} of {plural(schema.records, 'record')} "
            f"{'is not an Example' if schema.raw == 1 else 'are not Examples'} (first: record {schema.first_raw})"
        )
    if any(section == "fields" for section, _ in schema.features):
        raise DecodeError("the records are protobuf messages of their own type: no Example spec decodes them")
    if any(section == "examples" for section, _ in schema.features):
        raise DecodeError(
            "the records are ExampleListWithContext: their context and examples are Examples, "
            "each decoded with decode_elwc (no one spec decodes the whole record)"
        )
    sections: dict[str, dict[str, FeatureSpec]] = {"features": {}, "feature_lists": {}}
    for (section, key), stats in sorted(schema.features.items(), key=lambda kv: kv[0][1]):
        spec = _spec_of(stats, schema.records)
        if spec is not None:
            sections["feature_lists" if section == "feature_lists" else "features"][key] = spec
    context, lists = sections["features"], sections["feature_lists"]
    for key in context.keys() & lists.keys():
        raise FeatureError(key, "is both a context feature and a feature list: " + CLASH)
    return context, lists


def _records_of(source: Any, reading: ReadOptions) -> Iterator[bytes]:
    paths = isinstance(source, (str, os.PathLike)) or (
        isinstance(source, (list, tuple)) and all(isinstance(item, (str, os.PathLike)) for item in source)
    )
    if not paths and isinstance(source, Iterable) and not isinstance(source, bytes):
        yield from map(as_record, source)
        return
    for spans in record_spans(
        source,
        1024,
        reading["compression"],
        reading["verify"],
        DamagePolicy(reading["on_error"], reading["max_skipped"]),
        reading["storage_options"],
        reading["max_record_bytes"],
    ):
        yield from map(spans.record, range(len(spans.starts)))


_SPEC_CLASSES = {
    cls.__name__: cls
    for cls in (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, SparseFeature, RaggedFeature, RawFeature)
}


def features_to_json(features: Mapping[str, FeatureSpec]) -> dict[str, dict[str, Any]]:
    """A spec as JSON-ready data: {key: {"type": class name, "dtype": ..., "shape": [...]}}."""
    out: dict[str, dict[str, Any]] = {}
    for key, spec in features.items():
        entry: dict[str, Any] = {"type": type(spec).__name__, "dtype": spec.dtype}
        if isinstance(spec, RaggedFeature):
            entry.update(ragged_to_json(spec))
        elif isinstance(spec, SparseFeature):
            keys, size = spec.index_key, spec.size
            entry["index_key"] = keys if isinstance(keys, str) else list(keys)
            entry.update(value_key=spec.value_key, size=size if isinstance(size, int) else list(size))
            entry["already_sorted"] = spec.already_sorted
        elif not isinstance(spec, VarLenFeature):
            entry["shape"] = list(spec.shape)
        if isinstance(spec, FixedLenSequenceFeature):
            entry["allow_missing"] = spec.allow_missing
        if isinstance(spec, RawFeature) and not spec.little_endian:
            entry["little_endian"] = False
        out[key] = entry
    return out


def specs_to_json(context: Mapping[str, FeatureSpec], lists: Mapping[str, FeatureSpec]) -> dict[str, Any]:
    """Specs as JSON-ready data: features_to_json's, or with feature lists
    {"context_features": ..., "sequence_features": ...}."""
    if not lists:
        return features_to_json(context)
    return {"context_features": features_to_json(context), "sequence_features": features_to_json(lists)}


def specs_from_json(data: Any, where: str = "the spec") -> tuple[dict[str, FeatureSpec], dict[str, FeatureSpec] | None]:
    """(features or context, feature lists or None) from what specs_to_json wrote."""
    if isinstance(data, Mapping) and set(data) == {"context_features", "sequence_features"}:
        context = features_from_json(data["context_features"], f"{where}: context_features")
        return context, features_from_json(data["sequence_features"], f"{where}: sequence_features")
    return features_from_json(data, where), None


def features_from_json(data: Any, where: str = "the spec") -> dict[str, FeatureSpec]:
    """The spec features_to_json wrote (defaults are not kept; a spec with one is written by hand)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected a JSON object {{key: spec}}, found {type(data).__name__}")
    out: dict[str, FeatureSpec] = {}
    for key, entry in data.items():
        cls = _SPEC_CLASSES.get(str(entry.get("type"))) if isinstance(entry, Mapping) else None
        if cls is None:
            raise ValueError(
                f'{where}: {key!r} needs {{"type": one of {sorted(_SPEC_CLASSES)}, "dtype": ..., "shape": [...]}}, '
                f"found {entry!r}"
            )
        args = {name: value for name, value in entry.items() if name != "type"}
        if cls is RaggedFeature and isinstance(args.get("partitions"), list):
            args["partitions"] = partitions_from_json(args["partitions"])
        try:
            out[key] = cls(**args)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{where}: {key!r}: {err}") from None
    return out
