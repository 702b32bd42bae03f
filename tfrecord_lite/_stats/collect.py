"""`statistics`: one streaming pass over a dataset, its features summarised batch by batch.

Strategy: the records come as spans of the reader's buffer (record_spans, over any input the
readers take: files, folders, globs, shard prefixes, URLs, GZIP / ZLIB), `batch_size` at a time.
A batch of Examples is decoded without a spec by the batch decoder into flat columns
(flat.decode_flat: numpy columns, no object per value) and each column folded into its feature's
accumulator; a batch that holds SequenceExamples is decoded by decode_sequence_flat (record by
record, so slower). Memory is bounded by the batch and the accumulators' fixed-size sketches,
whatever the size of the dataset. A progress bar (tqdm, from the `cli` extra) counts records.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from typing import Any

from tfrecord_lite._batches.columnar import Spans, placing
from tfrecord_lite._batches.flat import decode_flat, decode_sequence_flat
from tfrecord_lite._batches.sequence_probe import CLASH, feature_list_rows
from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._errors import FeatureError
from tfrecord_lite._example.validate import check_int, did_you_mean
from tfrecord_lite._records.example_batches import record_spans
from tfrecord_lite._records.reader import sources_of
from tfrecord_lite._redact import scrub
from tfrecord_lite._stats.features import FeatureAccumulator
from tfrecord_lite._stats.results import DatasetStatistics
from tfrecord_lite._storage.file_kinds import file_kinds
from tfrecord_lite._storage.files import display_name
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

__all__ = ["statistics"]


def statistics(
    source: Any,
    *,
    features: Collection[str] | None = None,
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
    policy = DamagePolicy(on_error, max_skipped)
    files = sources_of(source, storage_options)
    names = [display_name(f) or scrub(repr(f)) for f in files]
    pass_ = _Pass(wanted)
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
    )


def _keys(features: Collection[str]) -> frozenset[str]:
    if isinstance(features, (str, bytes)) or not all(isinstance(key, str) for key in features):
        raise TypeError(f"features must be a collection of feature names (str), not {features!r}")
    return frozenset(features)


class _Pass:
    """The accumulators of one pass, keyed by (is a feature list, name)."""

    def __init__(self, wanted: frozenset[str] | None) -> None:
        self.wanted = wanted
        self.records = self.bytes = 0
        self.sequences = False
        self.truncated = False  # records were left unread (max_records)
        self.features: dict[tuple[bool, str], FeatureAccumulator] = {}
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
        with placing(batch.where):
            self._add(batch, n)

    def _add(self, batch: Spans, n: int) -> None:
        self.records += n
        self.bytes += int((batch.ends - batch.starts).sum())
        if feature_list_rows(*batch[:3]).any():
            self.sequences = True
            context, lists = decode_sequence_flat([batch.record(i) for i in range(n)], None, None)
            self._fold(context, False, n)
            self._fold(lists, True, n)
        else:
            if self.present is None and self.wanted is not None:
                self.present = set(decode_flat(batch, None, None))
            self._fold(decode_flat(batch, None, self.wanted), False, n)

    def _fold(self, columns: dict[str, Any], is_list: bool, rows: int) -> None:
        for name, column in columns.items():
            if self.wanted is not None and name not in self.wanted:
                continue
            accumulator = self.features.get((is_list, name))
            if accumulator is None:
                if (not is_list, name) in self.features:
                    raise FeatureError(name, "is both a context feature and a feature list: " + CLASH)
                accumulator = self.features[is_list, name] = FeatureAccumulator(name, is_list)
            accumulator.add(column, rows)

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
