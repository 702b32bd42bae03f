"""TensorBoard logs without TensorFlow: read a logdir's scalars, histograms, images, text and
hparams into rows, pandas or Arrow; tail a run while it is written; write runs TensorBoard reads.

Strategy: the code is _events/'s (the Event wire format, run discovery, tailing, tables, the
writer); this module is its public face. pandas and pyarrow are imported by `to_pandas` and
`to_arrow` when called. See docs/tensorboard.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tfrecord_lite._events.frames import arrow_table, pandas_frame
from tfrecord_lite._events.read import EventRecord, Patterns, read_columns, read_events
from tfrecord_lite._events.wire import KINDS
from tfrecord_lite._events.writer import EventWriter
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

__all__ = ["KINDS", "EventRecord", "EventWriter", "read_events", "to_arrow", "to_pandas"]


def to_pandas(
    source: Any,
    *,
    tags: Patterns = None,
    kinds: str | Sequence[str] | None = None,
    runs: Patterns = None,
    pivot: bool = False,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Any:
    """A TensorBoard log as a pandas DataFrame: one row per value (columns run, step, wall_time as
    UTC datetimes, tag, kind, value; the value column float64 when every value is a scalar), or with
    `pivot=True` one row per (run, step) and a column per tag. `tags`, `kinds` and `runs` filter as
    in `read_events`, which reads `source` with the reader options."""
    columns = read_columns(
        source, tags=tags, kinds=kinds, runs=runs, compression=compression, verify=verify, on_error=on_error,
        max_skipped=max_skipped, storage_options=storage_options, max_record_bytes=max_record_bytes,
    )  # fmt: skip
    return pandas_frame(columns, pivot)


def to_arrow(
    source: Any,
    *,
    tags: Patterns = None,
    kinds: str | Sequence[str] | None = None,
    runs: Patterns = None,
    pivot: bool = False,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Any:
    """A TensorBoard log as a pyarrow Table, long (as `to_pandas`, wall_time a UTC timestamp) or
    wide (`pivot=True`). The value column takes its kind's type (scalar float64, text string, image
    and audio binary, histograms and tensors lists, hparams JSON), so values of several kinds
    raise ValueError: pass `kinds=`."""
    columns = read_columns(
        source, tags=tags, kinds=kinds, runs=runs, compression=compression, verify=verify, on_error=on_error,
        max_skipped=max_skipped, storage_options=storage_options, max_record_bytes=max_record_bytes,
    )  # fmt: skip
    return arrow_table(columns, pivot)
