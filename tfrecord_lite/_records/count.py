"""How many records? (the question TensorFlow users ask most). Per file: through its
index sidecar when one is there and fresh (O(1): the count is in the sidecar's
header; staleness is checked as for random access), else by one streaming scan that
checks every length CRC (which framing needs anyway) but not the payload CRCs, unless
verify=True, which always scans and checks both. Counting never writes a sidecar. With
on_error="skip" the scan steps over damage as the readers do (one DamagePolicy for all the
files), so the count is that of the records a reader with the same option yields.
"""

from __future__ import annotations

import os

from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._index.record_index import map_file, read_record_index, record_index_staleness, release
from tfrecord_lite._index.sidecar_file import sidecar_path
from tfrecord_lite._records.reader import sources_of
from tfrecord_lite._storage.files import PathOrFile
from tfrecord_lite._storage.locations import StorageOptions, has_scheme
from tfrecord_lite._storage.sources import Sources
from tfrecord_lite._stream.damage import DamagePolicy, OnError, as_policy
from tfrecord_lite._stream.scanner import DecodedStream, StreamScanner

__all__ = ["count_file", "count_records"]


def count_records(
    sources: PathOrFile | Sources,
    *,
    compression: str = "auto",
    verify: bool = False,
    on_error: OnError | DamagePolicy = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
) -> int:
    """The number of records in a TFRecord file, or in several (a list, folder, glob or
    ShardedWriter prefix, as iter_records takes them).

    A file with a fresh index sidecar is counted from it without reading the file; others are
    scanned once, checking the length CRCs. `verify=True` scans every file and checks the
    payload CRCs too, so a damaged record raises as it would when read. `on_error` and
    `max_skipped` are iter_records': with "skip", damaged spans are stepped over and the good
    records counted. `storage_options` are fsspec's, for URLs (or an fsspec filesystem object).
    """
    policy = as_policy(on_error, max_skipped)
    return sum(
        count_file(source, compression=compression, verify=verify, on_error=policy, storage_options=storage_options)
        for source in sources_of(sources, storage_options)
    )


def count_file(
    source: PathOrFile,
    *,
    compression: str = "auto",
    verify: bool = False,
    on_error: OnError | DamagePolicy = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
) -> int:
    """The number of records in one file or file object (see count_records)."""
    if not verify and isinstance(source, str) and not has_scheme(source) and compression in ("auto", "", None):
        indexed = _indexed_count(source)
        if indexed is not None:
            return indexed
    policy = as_policy(on_error, max_skipped)
    stream = DecodedStream(source, compression, strict=policy.raises, storage_options=storage_options)
    try:
        scanner = StreamScanner(stream, verify=verify, payloads=False, on_damage=policy.handler(stream.path))
        for _ in scanner.chunks():
            pass
        return scanner.records
    finally:
        stream.close()


def _indexed_count(path: str) -> int | None:
    """The record count of `path` from its sidecar, None when there is no fresh readable one."""
    location = sidecar_path(path)
    if not os.path.isfile(location):
        return None
    try:
        index = read_record_index(location)
    except (OSError, TFRecordError):
        return None  # unreadable or damaged: the scan answers
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            buf = map_file(fh)
        try:
            return len(index) if record_index_staleness(index, buf, st) is None else None
        finally:
            release(buf)
    finally:
        index.close()
