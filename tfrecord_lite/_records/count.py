"""How many records? (the question TensorFlow users ask most). Per file: by one streaming
scan that checks every length and payload CRC, as every reader does (verify=True, the
default), so a damaged file raises here as it would when read. verify=False is the fast
path: a file whose index sidecar is there and fresh is counted from the sidecar's header
(O(1), staleness checked as for random access), any other by a scan of the record
headers that checks the length CRCs (which framing needs anyway) but not the payloads.
Counting never writes a sidecar. With on_error="skip" the scan steps over damage as the
readers do (one DamagePolicy for all the files), so the count is that of the records a
reader with the same options yields.
"""

from __future__ import annotations

import os

from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._index.record_index import map_file, read_record_index, record_index_staleness, release
from tfrecord_lite._index.sidecar_file import sidecar_path
from tfrecord_lite._records.reader import sources_of
from tfrecord_lite._storage.files import PathOrFile
from tfrecord_lite._storage.locations import has_scheme
from tfrecord_lite._storage.sources import Sources
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite._stream.scanner import DecodedStream, StreamScanner

__all__ = ["count_file", "count_records"]


def count_records(
    source: PathOrFile | Sources,
    *,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> int:
    """The number of records in a TFRecord file, or in several (a list, folder, glob or
    ShardedWriter prefix, as iter_records takes them).

    Every file is scanned once and every CRC checked, as every reader does: a damaged record
    raises here as it would when read. `verify=False` is the fast path: a file with a fresh
    index sidecar is counted from it without reading the file, others by a scan that checks
    the length CRCs but not the payloads. `on_error` and `max_skipped` are iter_records': with
    "skip", damaged spans are stepped over and the good records counted. `storage_options` are
    fsspec's, for URLs (or an fsspec filesystem object). Counting holds no record in memory, so
    `max_record_bytes` refuses none: a longer record is streamed through, its CRC checked on the way.
    """
    policy = DamagePolicy(on_error, max_skipped)
    return sum(
        count_file(
            path,
            policy,
            compression=compression,
            verify=verify,
            storage_options=storage_options,
            max_record_bytes=max_record_bytes,
        )
        for path in sources_of(source, storage_options)
    )


def count_file(
    source: PathOrFile,
    policy: DamagePolicy,
    *,
    compression: Compression = "auto",
    verify: bool = True,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> int:
    """The number of records in one file or file object (see count_records); `policy` is shared
    by every file a command counts."""
    if not verify and isinstance(source, str) and not has_scheme(source) and compression in ("auto", "", None):
        indexed = _indexed_count(source)
        if indexed is not None:
            return indexed
    stream = DecodedStream(source, compression, strict=policy.raises, storage_options=storage_options)
    try:
        scanner = StreamScanner(
            stream,
            verify=verify,
            payloads=False,
            on_damage=policy.handler(stream.path),
            max_record_bytes=max_record_bytes,
        )
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
