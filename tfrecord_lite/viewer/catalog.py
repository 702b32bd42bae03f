"""What the viewer shows of a dataset: its files opened for random access, one global record
number over all of them, the damage found in them, labels, and searches.

Strategy: every file is a TFRecordFile, so record N is found by a binary search over the files'
first record numbers and read at its offset through the file's index (its sidecar, built and
saved on first use where the folder is writable): page 10,000 opens as fast as page 1. A file
that does not index cleanly is opened again over its good records only, each damaged span kept
with its file, byte offset and the number of the record it precedes; a record damaged after
indexing is shown as its error where it is read. Label counts and searches are streaming scans:
counts over the first records only (said on the page), searches a bounded number of records per
request, handing back a cursor to continue from. The overview's statistics are tfr.statistics
of the first STATS_SAMPLE records, computed once: the statistics and the label counts are each
computed under a lock, so concurrent overview requests wait for the one pass instead of each
running their own. Records longer than LONG_RECORD (or of unknown length: the last of a file)
are read one at a time under a lock: a record of 1 GiB costs about twice that while it is read
from a GZIP file, and two requests for it at once held 4 GiB. A prepared TensorFlow Datasets
folder (tfds.py) is the shards of its splits in their order, each split a range of record
numbers, its ClassLabel the label counted and named.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from tfrecord_lite._datasets.typed_views import typed_view
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._events.runs import Runs
from tfrecord_lite._html.records import RecordView, image_uris
from tfrecord_lite._html.values import esc, text_of
from tfrecord_lite._images.label_maps import label_map_beside
from tfrecord_lite._records.random_access import TFRecordFile, open_with_policy
from tfrecord_lite._redact import log, redact, scrub
from tfrecord_lite._stats.collect import statistics
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite.viewer.logs import Log, log_paths
from tfrecord_lite.viewer.tfds import SplitRange, class_label, shard_files, split_of, split_ranges, tfds_info

LABEL_KEYS = ("image/class/label", "label", "image/class/text", "class", "labels")
TEXT_KEY = "image/class/text"  # a record's class name, beside its id
LABEL_SAMPLE = 10_000  # records whose labels the overview counts
SEARCH_BUDGET = 10_000  # records one search request scans at most
STATS_SAMPLE = 100_000  # records the overview's statistics summarise
LONG_RECORD = 64 << 20  # records longer than this (or of unknown length) are read one at a time


@dataclass(frozen=True)
class DamageReport:
    """A damaged span: its `path`, byte `offset`, the global number of the record after it
    (`record`: the first record read past the damage), and what is wrong."""

    path: str
    offset: int | None
    record: int
    reason: str


@dataclass(frozen=True)
class SearchResult:
    """The records a search found, and where to continue (None: the end was reached)."""

    found: list[int]
    scanned: int
    next_start: int | None


class Catalog:
    """The files of `source` (a path, folder, glob, URL or list), for the viewer. A folder that
    holds dataset_info.json is a prepared TensorFlow Datasets folder: its splits' shards, in the
    order of its splits (`splits`, `split_of`), its ClassLabel's names as the labels' names.

    A TensorBoard log (a logdir, run folder or events files) is shown as its runs and tags too
    (`log`), each record as its event; records of TF Ranking's ExampleListWithContext as their
    context and examples; `message` (a protobuf message class, generated or made by
    `load_message_class`) shows every record as that message's fields.

    `statistics=False` leaves the overview's statistics out. The reader options are iter_records':
    with on_error="raise" (the default) a damaged file raises its error (file and offset) here;
    with "skip" or a callable its good records are shown and each damaged span is listed in
    `damage` (and on the overview), logged or given to the callable; more than `max_skipped` of
    them over all the files raise. `compression` is recognised from the content; one given must
    be each file's (ValueError naming both)."""

    def __init__(
        self,
        source: Any,
        *,
        statistics: bool = True,
        message: type[Any] | None = None,
        compression: Compression = "auto",
        verify: bool = True,
        on_error: OnError = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        DamagePolicy(on_error, max_skipped)  # a wrong on_error or max_skipped fails here
        self._options: dict[str, Any] = {
            "compression": compression,
            "verify": verify,
            "storage_options": storage_options,
            "max_record_bytes": max_record_bytes,
        }
        self._skips = on_error != "raise"
        self._found: list[TFRecordError] = []
        self._policy = DamagePolicy(_listing(on_error, self._found), max_skipped)  # one count over every file
        self.tfds = tfds_info(source, storage_options)  # a TFDS folder's DatasetInfo, else None
        runs: Runs | None = None
        if self.tfds is not None:
            self.paths: list[Any] = shard_files(self.tfds)
        else:
            self.paths, runs = log_paths(source, storage_options)
        self.message = message
        self.log = None if runs is None else Log(runs, self._options, self._skips)
        statistics = statistics and self.log is None and message is None  # Example statistics mean nothing there
        self._statistics: str | None = None if statistics else ""
        self.damage: list[DamageReport] = []
        self.files: list[TFRecordFile] = []
        for path in self.paths:
            self.files.append(self._open(path, int(sum(len(f) for f in self.files))))
        self.starts = np.cumsum([0] + [len(f) for f in self.files])
        self._labels: tuple[str, Counter[str], int] | None = None
        self._statistics_lock = threading.Lock()
        self._labels_lock = threading.Lock()
        self._long_record_lock = threading.Lock()
        self.label_names: dict[str, str] = {}  # label id -> class name, where the records or a label map say
        self.label_key = ""  # the key whose values the overview counts, when the dataset says which
        self.splits: list[SplitRange] = []  # a TFDS folder's splits, as ranges of record numbers
        if self.tfds is not None:
            self.splits = split_ranges(self.tfds, [len(f) for f in self.files])
            label = class_label(self.tfds)
            if label is not None:
                self.label_key = label[0]
                self.label_names.update((str(i), name) for i, name in enumerate(label[1]))

    def _open(self, path: str, first: int) -> TFRecordFile:
        try:
            return self._file(path, None)
        except TFRecordError:
            if not self._skips:
                raise
            self._found.clear()
            f = self._file(path, self._policy)
            for err in self._found:
                before = bisect.bisect_left(range(len(f)), err.offset or 0, key=f.offset)
                self.damage.append(DamageReport(redact(path), err.offset, first + before, scrub(err.reason)))
            return f

    def _file(self, path: str, policy: DamagePolicy | None) -> TFRecordFile:
        """The file opened with the catalog's reader options; damage raises, or `policy` skips it."""
        index = False if self.log is not None else None  # no sidecar in a logdir: TensorBoard reads every *tfevents*
        if policy is None:
            return TFRecordFile(path, index=index, **self._options)
        return open_with_policy(path, policy, index=index, **self._options)

    def __len__(self) -> int:
        return int(self.starts[-1])

    def split_of(self, i: int) -> tuple[str, int] | None:
        """(split, number within it) of record `i` of a TFDS folder; None for other sources."""
        return split_of(self.splits, i)

    def close(self) -> None:
        for f in self.files:
            f.close()

    def locate(self, i: int) -> tuple[TFRecordFile, int]:
        """The file holding global record `i` and its number there (IndexError outside)."""
        if not 0 <= i < len(self):
            raise IndexError(f"record {i} is out of range: the dataset holds {len(self)} records")
        k = int(np.searchsorted(self.starts, i, side="right")) - 1
        return self.files[k], i - int(self.starts[k])

    def view(self, i: int, href: str | None = None) -> RecordView:
        """Record `i` decoded for showing, or the error that reading it raised (file and offset)."""
        f, local = self.locate(i)
        label = f"#{i}"
        try:
            with self._reading(f, local):
                data = f[local]
            log = self.log
            plugins = None if log is None else lambda: log.event_plugins(f.path)
            return typed_view(label, data, message=self.message, plugins=plugins, href=href)
        except TFRecordError as err:
            return RecordView(
                label, {}, error=scrub(f"record {i} ({redact(f.path)}, record {local}): {err}"), href=href
            )

    def _reading(self, f: TFRecordFile, local: int) -> contextlib.AbstractContextManager[Any]:
        """The lock that long records are read under (nothing for a record known to be short)."""
        if local + 1 < len(f) and f.offset(local + 1) - f.offset(local) <= LONG_RECORD:
            return contextlib.nullcontext()
        return self._long_record_lock

    def decoded(self, start: int, stop: int) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """(number, features) of records start..stop-1 that read and decode."""
        for i in range(max(0, start), min(stop, len(self))):
            view = self.view(i)
            if view.error is None:
                yield i, view.features

    def statistics_html(self) -> str:
        """tfr.statistics of the first STATS_SAMPLE records as HTML (computed once; damage skipped)."""
        with self._statistics_lock:
            return self._statistics_once()

    def _statistics_once(self) -> str:
        if self._statistics is None:
            try:
                stats = statistics(
                    self.paths,
                    max_records=STATS_SAMPLE,
                    on_error="skip" if self._skips else "raise",  # the damage is listed already
                    **self._options,
                )
                self._statistics = f"<h3>Statistics of the first {stats.records} records</h3>{stats.to_html()}"
            except TFRecordError as err:
                self._statistics = f'<p class="damage">statistics: {esc(err)}</p>'
        return self._statistics

    # -- labels

    def labels(self) -> tuple[str, Counter[str], int]:
        """(label key, counts of its values, records counted) over the first LABEL_SAMPLE records."""
        with self._labels_lock:
            return self._labels_once()

    def _labels_once(self) -> tuple[str, Counter[str], int]:
        if self._labels is None:
            counts: Counter[str] = Counter()
            key = self.label_key
            scanned = 0
            for _, features in self.decoded(0, LABEL_SAMPLE):
                scanned += 1
                key = key or next((k for k in LABEL_KEYS if k in features), "")
                if key and key in features:
                    label = as_texts(features[key])[:1]
                    counts.update(label)
                    name = as_texts(features.get(TEXT_KEY, []))[:1]
                    if label and name and label[0] != name[0]:
                        self.label_names.setdefault(label[0], name[0])
            self._labels = (key, counts, scanned)
            self._name_from_label_map()
        return self._labels

    def _name_from_label_map(self) -> None:
        """Class names of the label ids the records do not name, from the label map beside the shards."""
        try:
            found = label_map_beside([p for p in self.paths if isinstance(p, str)], self._options["storage_options"])
        except (OSError, ValueError):
            return
        for name, label in found.items():
            self.label_names.setdefault(str(label), name)

    # -- searching

    def search(self, key: str, value: str, start: int = 0, limit: int = 50, *, images: bool = False) -> SearchResult:
        """Records from `start` on whose `key` holds `value` (a number equal to it, or text holding
        it); at most `limit` found and SEARCH_BUDGET scanned. `images`: only records with one."""
        found: list[int] = []
        stop = min(len(self), start + SEARCH_BUDGET)
        i = start
        for i, features in self.decoded(start, stop):
            if key in features and matches(features[key], value) and (not images or first_image(features)):
                found.append(i)
                if len(found) >= limit:
                    break
        end = i + 1 if len(found) >= limit else stop
        return SearchResult(found, end - start, end if end < len(self) else None)


def _listing(on_error: OnError, found: list[TFRecordError]) -> Callable[[TFRecordError], object]:
    """An on_error callable that keeps each error in `found`, then does what `on_error` says."""

    def listed(err: TFRecordError) -> object:
        found.append(err)
        if callable(on_error):
            return on_error(err)
        log.warning("skipped damaged data: %s", err)
        return None

    return listed


def as_texts(value: Any) -> list[str]:
    """A feature's values as strings (text decoded, numbers written out)."""
    if isinstance(value, list):
        return [text_of(bytes(v)) or bytes(v).hex() for v in value if isinstance(v, (bytes, bytearray, memoryview))]
    if isinstance(value, np.ndarray):
        return [str(v) for v in value.reshape(-1)[:1000].tolist()]
    return []


def matches(value: Any, wanted: str) -> bool:
    """Whether a feature value holds `wanted`: a number equal to it, or text containing it."""
    if isinstance(value, np.ndarray) and value.size:
        try:
            number = float(wanted)
        except ValueError:
            return False
        return bool(np.any(value == number))
    return any(wanted in text for text in as_texts(value))


def first_image(features: Mapping[str, Any]) -> tuple[str, str] | None:
    """(key, data URI) of the first image a record holds, or None."""
    for key, value in features.items():
        uris = image_uris(value, features)
        if uris:
            return key, uris[0]
    return None


def file_size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None
