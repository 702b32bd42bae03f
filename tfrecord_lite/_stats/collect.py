"""`statistics`: one streaming pass over a dataset, its features summarised batch by batch.

Strategy: the records come as spans of the reader's buffer (record_spans, over any input the
readers take: files, folders, globs, shard prefixes, URLs, GZIP / ZLIB), `batch_size` at a time.
A batch of Examples is decoded without a spec by the batch decoder into flat columns
(flat.decode_flat: numpy columns, no object per value) and each column folded into its feature's
accumulator; a batch that holds SequenceExamples is decoded by decode_sequence_flat (record by
record, so slower). Memory is bounded by the batch and the accumulators' fixed-size sketches,
whatever the size of the dataset. A progress bar (tqdm, from the `cli` extra) counts records.

Bounds against hostile data: at most MAX_FEATURES features are tracked (the first met); the
names of the others are counted (exactly up to 4096, then by a HyperLogLog) and reported as
`untracked_features`. A batch is decoded in slices whose rows times keys stays under CELL_BUDGET
(a column holds a cell per row for every key), so records each holding keys of their own cost
linear time, not rows x keys; a feature's values reach its sketches in slices of VALUE_SLICE
(features.py), so one record of millions of values costs a bounded working set.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Iterator, Mapping
from typing import Any

import numpy as np

from tfrecord_lite._batches.columnar import Spans, placing
from tfrecord_lite._batches.flat import decode_flat, decode_sequence_flat
from tfrecord_lite._batches.sequence_probe import CLASH, feature_list_rows
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.raw import RawFeature
from tfrecord_lite._example.validate import check_int, did_you_mean
from tfrecord_lite._records.example_batches import record_spans
from tfrecord_lite._records.reader import sources_of
from tfrecord_lite._redact import scrub
from tfrecord_lite._stats.features import FeatureAccumulator, raw_parts
from tfrecord_lite._stats.results import DatasetStatistics
from tfrecord_lite._stats.sketches import Distinct, hash_bytes
from tfrecord_lite._storage.file_kinds import file_kinds
from tfrecord_lite._storage.files import display_name
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

__all__ = ["statistics"]

MAX_FEATURES = 10_000  # features tracked; the names of more are only counted
CELL_BUDGET = 1 << 22  # rows x keys of one decoded slice of a batch


def statistics(
    source: Any,
    *,
    features: Collection[str] | Mapping[str, RawFeature | None] | None = None,
    max_records: int | None = None,
    top_k: int = 20,
    batch_size: int = 8192,
    progress: bool = False,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> DatasetStatistics:
    """Statistics of the Examples or SequenceExamples of `source` (anything `iter_records` reads:
    a file, a list, folder, glob or shard prefix, a URL; GZIP / ZLIB recognised), in one
    streaming pass with bounded memory. `features`: the keys to summarise (default: all);
    a dict {key: RawFeature(shape, dtype)} among them summarises those keys as arrays (their
    numbers, prod(shape) values a record; a value of another length is an error);
    `max_records`: stop after that many records (default: read everything); `top_k`: how many
    frequent values to keep per feature; `progress`: show a tqdm bar (needs the `cli` extra).
    The reader options (`compression`, `verify`, `on_error`, `max_skipped`, `storage_options`,
    `max_record_bytes`) are iter_records'."""
    check_int("top_k", top_k, 1)
    check_int("batch_size", batch_size, 1)
    if max_records is not None:
        check_int("max_records", max_records, 0)
    compression = normalize_compression(compression, allow_auto=True)
    wanted = None if features is None else _keys(features)
    raw = _raw_specs(features)
    policy = DamagePolicy(on_error, max_skipped)
    files = sources_of(source, storage_options)
    names = [display_name(f) or scrub(repr(f)) for f in files]
    pass_ = _Pass(wanted, raw)
    spans = record_spans(files, batch_size, compression, verify, policy, storage_options, max_record_bytes)
    try:
        with _bar(progress, max_records) as bar:
            for batch in pass_.limited(spans, max_records):
                pass_.add(batch)
                bar.update(len(batch.starts))
    finally:
        close = getattr(spans, "close", None)  # the files, now, when max_records stopped the pass
        if close is not None:
            close()
    pass_.check_wanted()
    return DatasetStatistics(
        files=tuple(names),
        compression=_compressions(files, compression, storage_options),
        records=pass_.records,
        bytes=pass_.bytes,
        kind=pass_.kind,
        complete=not pass_.truncated,
        skipped=policy.skipped,
        features=pass_.results(top_k),
        untracked_features=pass_.untracked.estimate(),
    )


def _keys(features: Collection[str]) -> frozenset[str]:
    if isinstance(features, (str, bytes)) or not all(isinstance(key, str) for key in features):
        raise TypeError(f"features must be a collection of feature names (str), not {features!r}")
    return frozenset(features)


def _raw_specs(features: Any) -> dict[str, RawFeature]:
    """The RawFeatures of a features= dict (its other values must be None)."""
    if not isinstance(features, Mapping):
        return {}
    for key, spec in features.items():
        if spec is not None and not isinstance(spec, RawFeature):
            raise TypeError(
                f"features: a dict names the keys that hold raw arrays, {{key: RawFeature(shape, dtype)}} "
                f"(or None); {key!r} has {spec!r}"
            )
    return {key: spec for key, spec in features.items() if spec is not None}


class _Pass:
    """The accumulators of one pass, keyed by (is a feature list, name)."""

    def __init__(self, wanted: frozenset[str] | None, raw: Mapping[str, RawFeature] | None = None) -> None:
        self.wanted = wanted
        self.raw = raw or {}
        self.records = self.bytes = 0
        self.sequences = False
        self.truncated = False  # records were left unread (max_records)
        self.features: dict[tuple[bool, str], FeatureAccumulator] = {}
        self.untracked = Distinct()  # names of the features past MAX_FEATURES
        self.rows = 1024  # rows decoded at once: CELL_BUDGET over the keys the last slice held
        self.present: set[str] | None = None  # every key of the first batch, when only some are wanted

    def check_wanted(self) -> None:
        """A wanted key that no record has is an error naming the close keys the records have."""
        if self.wanted is None or not self.records:
            return
        found = {name for _, name in self.features}
        for key in sorted(self.wanted - found):
            raise FeatureError(key, f"no record has this feature{did_you_mean(key, self.present or ()) or ''}")

    def limited(self, spans: Iterator[Spans], max_records: int | None) -> Iterator[Spans]:
        """The batches, the last one cut so that at most max_records records come out."""
        left = max_records
        for batch in spans:
            if left is not None:
                if left <= 0 or len(batch.starts) > left:
                    self.truncated = True
                if left <= 0:
                    return
                batch = batch._replace(starts=batch.starts[:left], ends=batch.ends[:left])
                left -= len(batch.starts)
            yield batch

    def add(self, batch: Spans) -> None:
        n = len(batch.starts)
        if not n:
            return
        self.records += n
        self.bytes += int((batch.ends - batch.starts).sum())
        first = 0
        while first < n:
            stop = min(n, first + self.rows)
            with placing(None if batch.where is None else functools.partial(_shifted, batch.where, first)):
                keys = self._decode(_slice(batch, first, stop))
            self.rows = max(1, CELL_BUDGET // max(keys, 1))
            first = stop

    def _decode(self, batch: Spans) -> int:
        """Fold in a slice of a batch; the number of keys it held."""
        n = len(batch.starts)
        if feature_list_rows(*batch[:3]).any():
            self.sequences = True
            context, lists = decode_sequence_flat([batch.record(i) for i in range(n)], None, None)
            self._fold(context, False, n)
            self._fold(lists, True, n)
            return len(context) + len(lists)
        if self.present is None and self.wanted is not None:
            self.present = set(decode_flat(batch, None, None))
        columns = decode_flat(batch, None, self.wanted)
        self._fold(columns, False, n)
        return len(columns)

    def _fold(self, columns: dict[str, Any], is_list: bool, rows: int) -> None:
        untracked: list[str] = []
        for name, column in columns.items():
            if self.wanted is not None and name not in self.wanted:
                continue
            accumulator = self.features.get((is_list, name))
            if accumulator is None:
                if (not is_list, name) in self.features:
                    raise FeatureError(name, "is both a context feature and a feature list: " + CLASH)
                if len(self.features) >= MAX_FEATURES:
                    untracked.append(name)
                    continue
                accumulator = self.features[is_list, name] = FeatureAccumulator(name, is_list)
            spec = self.raw.get(name)
            if spec is None:
                accumulator.add(column, rows)
                continue
            for part, part_rows in raw_parts(name, spec, column, rows):
                accumulator.add(part, part_rows)
        if untracked:
            self.untracked.add(_name_hashes(untracked))

    @property
    def kind(self) -> str:
        if not self.records:
            return "empty"
        return "sequence_example" if self.sequences else "example"

    def results(self, top_k: int) -> tuple[Any, ...]:
        context = "context" if self.sequences else "features"
        ordered = sorted(self.features.items(), key=lambda item: (item[0][0], item[0][1]))
        return tuple(
            acc.result(self.records, "feature_lists" if is_list else context, top_k) for (is_list, _), acc in ordered
        )


def _shifted(where: Any, first: int, k: int) -> Any:
    """Where record k of a slice starting at record `first` of a batch lies."""
    return where(first + k)


def _slice(batch: Spans, start: int, stop: int) -> Spans:
    """Records start..stop-1 of a batch, numbered from 0."""
    if start == 0 and stop == len(batch.starts):
        return batch
    record = batch.record
    return batch._replace(
        starts=batch.starts[start:stop], ends=batch.ends[start:stop], record=lambda k: record(start + k)
    )


def _name_hashes(names: list[str]) -> Any:
    encoded = [name.encode("utf-8", "surrogatepass") for name in names]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return hash_bytes(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)


def _compressions(files: list[Any], compression: str, storage_options: StorageOptions) -> tuple[str | None, ...]:
    paths = [os.fspath(f) for f in files if isinstance(f, (str, os.PathLike))]
    kinds = iter(file_kinds(paths, compression, storage_options))
    return tuple(next(kinds) if isinstance(f, (str, os.PathLike)) else None for f in files)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _bar(progress: bool, total: int | None) -> Any:
    if not progress:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        raise ImportError("progress=True needs tqdm: pip install 'tfrlite[cli]'") from None
    return tqdm(total=total, unit="rec", unit_scale=True, desc="statistics", leave=False)
