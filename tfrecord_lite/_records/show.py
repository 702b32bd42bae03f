"""`show(...)`: the first records of a file, a folder or glob of files, a TFRecordFile, or of
records already at hand, as a RecordsView a notebook shows as a table with thumbnails.

Strategy: only the first `n` records are read (by index from a TFRecordFile, or the first records
of each file's stream until `n` are found), so showing a huge dataset costs what showing a small
one does. Each record becomes a RecordView (views.py); a file that breaks off shows its error
where its records stop.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from typing import Any

from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._html.records import RecordView
from tfrecord_lite._records.random_access import TFRecordFile
from tfrecord_lite._records.reader import read_records
from tfrecord_lite._records.views import RecordsView, decoded_view, file_views, record_view
from tfrecord_lite._storage.sources import resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, ReadOptions, StorageOptions


def show(
    source: Any,
    *,
    n: int = 5,
    features: Any = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> RecordsView:
    """The first `n` records as an object a notebook shows as a table (images as thumbnails).

    `source`: a path, folder, glob or URL (or a list of them), a TFRecordFile, or an iterable of
    serialized records or of decoded dicts / (context, feature_lists) pairs. `features`: a spec
    mapping to decode with, or the keys to show (default: every feature). The reader options are
    iter_records', for files: a damaged record raises where reading stops (the records before it
    shown, the error in its place), or with `on_error="skip"` is stepped over.
    """
    if n < 0:
        raise ValueError(f"n must be 0 or more, not {n}")
    if isinstance(source, TFRecordFile):
        return RecordsView(list(file_views(source, n, features)), source.path)
    if isinstance(source, (str, os.PathLike)) or _is_path_list(source):
        reading = ReadOptions(
            compression=compression,
            verify=verify,
            on_error=on_error,
            max_skipped=max_skipped,
            storage_options=storage_options,
            max_record_bytes=max_record_bytes,
        )
        return _show_paths(source, n, features, reading)
    keys = list(features) if features is not None and not isinstance(features, Mapping) else None
    views = []
    for i, item in enumerate(itertools.islice(iter(source), n)):
        if isinstance(item, (bytes, bytearray, memoryview)):
            views.append(record_view(str(i), item, features))
        else:
            views.append(decoded_view(str(i), item, keys))
    return RecordsView(views, type(source).__name__)


def _is_path_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, (str, os.PathLike)) for v in value)


def _show_paths(paths: Any, n: int, features: Any, reading: ReadOptions) -> RecordsView:
    files = resolve_inputs(paths, storage_options=reading.get("storage_options"))
    policy = DamagePolicy(reading.get("on_error", "raise"), reading.get("max_skipped"))  # one for every file
    views: list[RecordView] = []
    for path in files:
        taken = len(views)
        try:
            records = read_records(
                path,
                policy,
                compression=reading.get("compression", "auto"),
                verify=reading.get("verify", True),
                storage_options=reading.get("storage_options"),
                max_record_bytes=reading.get("max_record_bytes", MAX_RECORD_BYTES),
            )
            for i, record in enumerate(itertools.islice(records, n - taken)):
                views.append(record_view(f"{os.path.basename(path)} #{i}", record, features))
        except TFRecordError as err:
            views.append(RecordView(f"{os.path.basename(path)} #{len(views) - taken}", {}, error=str(err)))
        if len(views) >= n:
            break
    name = os.fspath(paths) if isinstance(paths, (str, os.PathLike)) else f"{len(files)} files"
    return RecordsView(views, name)
