"""The records of a GZIP / ZLIB file for TFRecordFile: the same sequence (len, [i],
slices, index lists, iteration, offsets) on an index of the compressed stream
(_index/gzip_sidecar.py). f[i] inflates the span of records around i from the nearest
seek point (_index/gzip_seek.py); a slice or an index list reads each span once for all
the records it holds; iterating streams the file, faster than seeking. Reads keep no
state (each inflates from its point with its own inflater, reading the file by pread),
so threads can share one object; pickling sends the path and options, and a worker
reopens the file from its sidecar. An object in a store (a URL) is read the same way
through a RemoteBuffer (ranged reads, a block cache), its index from the sidecar
uploaded next to it (gzip_index.open_remote_gzip_index).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from itertools import groupby

from tfrecord_lite._compression.kinds import index_kind
from tfrecord_lite._errors import IndexFormatError
from tfrecord_lite._index.gzip_index import (
    open_gzip_index,
    open_remote_gzip_index,
)
from tfrecord_lite._index.gzip_seek import SpanInflater, record_at, record_offset, records_in_span, span_inflater
from tfrecord_lite._index.gzip_sidecar import GzipIndex
from tfrecord_lite._index.sidecar_file import IndexArg
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._storage.files import sniff_file
from tfrecord_lite._storage.locations import StorageOptions, is_url, split_options
from tfrecord_lite._storage.remote import RemoteBuffer, RemoteObject
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.scanner import MAX_RECORD_BYTES
from tfrecord_lite._wire.framing import HEADER_SIZE
from tfrecord_lite._wire.sniff import sniff_compression


class CompressedRecords:
    """The records of a GZIP or ZLIB file, through an index of its compressed stream (see
    docs/random-access.md, "Compressed files"): how TFRecordFile reads a compressed file."""

    def __init__(
        self, path: str, index: GzipIndex, spans: SpanInflater, verify: bool, storage_options: StorageOptions
    ) -> None:
        self._path = path
        self._index = index
        self._spans = spans  # reads spans of the uncompressed stream
        self._verify = verify
        self._storage_options = storage_options

    @property
    def compression(self) -> str:
        """'gzip' or 'zlib'."""
        return self._index.kind

    @property
    def location(self) -> str | None:
        """The sidecar of the index, or None when it is held in memory."""
        return self._index.location

    def __len__(self) -> int:
        return self._index.count

    def get(self, i: int) -> bytes:
        """Record `i` (in range)."""
        return record_at(self._spans.read, self._index, i, self._verify, self._path)

    def take(self, positions: Iterable[int]) -> list[bytes]:
        """The records at `positions` (in range), each span between marks inflated once."""
        idx = self._index
        wanted = list(positions)
        found: dict[int, bytes] = {}
        marks = idx.mark_records
        for m, group in groupby(sorted(set(wanted)), key=lambda i: _mark_of(marks, i)):
            picks = set(group)
            if len(picks) == 1:
                (i,) = picks
                found[i] = record_at(self._spans.read, idx, i, self._verify, self._path)
                continue
            for k, record in records_in_span(self._spans.read, idx, m, self._verify, self._path):
                if k in picks:
                    found[k] = record
        return [found[i] for i in wanted]

    def __iter__(self) -> Iterator[bytes]:
        """All records in order, by streaming the file (faster than seeking)."""
        return iter(iter_records(self._path, verify=self._verify, storage_options=self._storage_options))

    def offset(self, i: int) -> int:
        """Offset of record `i` (in range) in the uncompressed stream (where its 12-byte header starts)."""
        return record_offset(self._spans.read, self._index, i, self._path)

    def close(self) -> None:
        self._spans.close()


def open_compressed(
    path: str,
    index: IndexArg,
    *,
    verify: bool,
    on_stale: str,
    policy: DamagePolicy | None,
    storage_options: StorageOptions,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> CompressedRecords:
    """The records of the compressed file (or object) `path`, through its index: a fresh sidecar,
    else one pass over the file (refusing a record longer than `max_record_bytes`)."""
    if policy is not None:
        raise ValueError(
            f"on_error= skips damage while indexing an uncompressed file; {path} is compressed: read "
            "it with iter_records(on_error=...), or salvage() it into a clean copy"
        )
    if is_url(path):
        return _open_object(path, index, verify, on_stale, storage_options, max_record_bytes)
    kind = sniff_file(path)
    if index_kind(kind) != "seek_points":  # pragma: no cover - TFRecordFile sends only compressed files here
        raise IndexFormatError("not a GZIP or ZLIB file", path=path)
    idx = open_gzip_index(path, kind, index, verify=verify, on_stale=on_stale, max_record_bytes=max_record_bytes)
    return CompressedRecords(path, idx, span_inflater(path, idx), verify, storage_options)


def _open_object(
    url: str, index: IndexArg, verify: bool, on_stale: str, storage_options: StorageOptions, max_record_bytes: int
) -> CompressedRecords:
    """An object in a store: its bytes through a RemoteBuffer (ranged reads, block cache), its
    index from the sidecar next to it (see open_remote_gzip_index)."""
    obj = RemoteObject(url, *split_options(storage_options))
    buf = RemoteBuffer(obj, obj.size)
    try:
        kind = sniff_compression(buf[0:HEADER_SIZE])
        idx = open_remote_gzip_index(
            url,
            buf,
            kind,
            index,
            verify=verify,
            on_stale=on_stale,
            storage_options=storage_options,
            max_record_bytes=max_record_bytes,
        )
        spans = span_inflater(obj.name, idx, buf)
    except BaseException:
        buf.close()
        raise
    return CompressedRecords(url, idx, spans, verify, storage_options)


def _mark_of(marks: list[int], i: int) -> int:
    return bisect.bisect_right(marks, i) - 1
