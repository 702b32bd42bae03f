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
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._records.views import RecordsView, decoded_view, file_views, record_view
from tfrecord_lite._storage.sources import resolve_inputs


def show(records: Any, n: int = 5, features: Any = None) -> RecordsView:
    """The first `n` records as an object a notebook shows as a table (images as thumbnails).

    `records`: a path, folder or glob (or a list of them), a TFRecordFile, or an iterable of
    serialized records or of decoded dicts / (context, feature_lists) pairs. `features`: a spec
    mapping to decode with, or the keys to show (default: every feature).
    """
    if n < 0:
        raise ValueError(f"n must be 0 or more, not {n}")
    if isinstance(records, TFRecordFile):
        return RecordsView(list(file_views(records, n, features)), records.path)
    if isinstance(records, (str, os.PathLike)) or _is_path_list(records):
        return _show_paths(records, n, features)
    keys = list(features) if features is not None and not isinstance(features, Mapping) else None
    views = []
    for i, item in enumerate(itertools.islice(iter(records), n)):
        if isinstance(item, (bytes, bytearray, memoryview)):
            views.append(record_view(str(i), item, features))
        else:
            views.append(decoded_view(str(i), item, keys))
    return RecordsView(views, type(records).__name__)


def _is_path_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, (str, os.PathLike)) for v in value)


def _show_paths(paths: Any, n: int, features: Any) -> RecordsView:
    files = resolve_inputs(paths)
    views: list[RecordView] = []
    for path in files:
        taken = len(views)
        try:
            for i, record in enumerate(itertools.islice(iter_records(path), n - taken)):
                views.append(record_view(f"{os.path.basename(path)} #{i}", record, features))
        except TFRecordError as err:
            views.append(RecordView(f"{os.path.basename(path)} #{len(views) - taken}", {}, error=str(err)))
        if len(views) >= n:
            break
    source = os.fspath(paths) if isinstance(paths, (str, os.PathLike)) else f"{len(files)} files"
    return RecordsView(views, source)
