"""`show(...)`: the first records of a file, a folder or glob of files, a TFRecordFile, or of
records already at hand, as a RecordsView a notebook shows as a table with thumbnails.

Strategy: only the first `n` records are read (by index from a TFRecordFile, or the first records
of each file's stream until `n` are found), so showing a huge dataset costs what showing a small
one does. Each record becomes a RecordView (views.py); a file that breaks off shows its error
where its records stop.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tfrecord_lite._datasets.typed_views import typed_view
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._html.records import RecordView
from tfrecord_lite._records.random_access import TFRecordFile
from tfrecord_lite._records.reader import read_records
from tfrecord_lite._records.views import RecordsView, decoded_view, record_view
from tfrecord_lite._storage.sources import resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, ReadOptions, StorageOptions


def show(
    source: Any,
    *,
    n: int = 5,
    features: Any = None,
    message: type[Any] | None = None,
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
    mapping to decode with, or the keys to show (default: every feature). `message`: a protobuf
    message class (generated, or made by `load_message_class`) every record is shown as, field by
    field; without it, TensorBoard Events and ExampleListWithContexts are recognised and shown as
    their values, and their context and examples. The reader options are
    iter_records', for files: a damaged record raises where reading stops (the records before it
    shown, the error in its place), or with `on_error="skip"` is stepped over.
    """
    if n < 0:
        raise ValueError(f"n must be 0 or more, not {n}")
    if message is not None and features is not None:
        raise ValueError("give features (an Example's spec or keys) or message (a message class), not both")
    view = functools.partial(_view, features=features, message=message)
    if isinstance(source, TFRecordFile):
        return RecordsView(list(_file_views(source, n, view)), source.path)
    if isinstance(source, (str, os.PathLike)) or _is_path_list(source):
        reading = ReadOptions(
            compression=compression,
            verify=verify,
            on_error=on_error,
            max_skipped=max_skipped,
            storage_options=storage_options,
            max_record_bytes=max_record_bytes,
        )
        return _show_paths(source, n, view, reading)
    keys = list(features) if features is not None and not isinstance(features, Mapping) else None
    views = []
    for i, item in enumerate(itertools.islice(iter(source), n)):
        if isinstance(item, (bytes, bytearray, memoryview)):
            views.append(view(str(i), item))
        else:
            views.append(decoded_view(str(i), item, keys))
    return RecordsView(views, type(source).__name__)


def _view(label: str, record: Any, *, features: Any, message: type[Any] | None) -> RecordView:
    """One record shown: decoded with `features` as an Example, else as its type."""
    if features is not None:
        return record_view(label, record, features)
    return typed_view(label, bytes(record), message=message)


def _file_views(f: TFRecordFile, n: int, view: Callable[[str, Any], RecordView]) -> Iterator[RecordView]:
    for i in range(min(n, len(f))):
        try:
            yield view(str(i), f[i])
        except TFRecordError as err:  # a record damaged after indexing: its CRC check failed
            yield RecordView(str(i), {}, error=str(err))


def _is_path_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, (str, os.PathLike)) for v in value)


def _show_paths(paths: Any, n: int, view: Callable[[str, Any], RecordView], reading: ReadOptions) -> RecordsView:
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
                views.append(view(f"{os.path.basename(path)} #{i}", record))
        except TFRecordError as err:
            views.append(RecordView(f"{os.path.basename(path)} #{len(views) - taken}", {}, error=str(err)))
        if len(views) >= n:
            break
    name = os.fspath(paths) if isinstance(paths, (str, os.PathLike)) else f"{len(files)} files"
    return RecordsView(views, name)
