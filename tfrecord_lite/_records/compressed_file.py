"""TFRecordFile over a GZIP / ZLIB file: the same sequence (len, [i], slices, index
lists, example()) on an index of the compressed stream (_index/gzip_index.py). f[i]
inflates the span of records around i from the nearest seek point; a slice or
an index list reads each span once for all the records it holds. Reads keep no
state (each inflates from its point with its own inflater, reading the file by
pread), so threads can share one object; pickling sends the path and options, and
a worker reopens the file from its sidecar. An object in a store (a URL) is read
the same way through a remote.RemoteBuffer (ranged reads, a block cache), its
index from the sidecar uploaded next to it (gzip_index.open_remote_index).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import Any

from tfrecord_lite._errors import IndexFormatError
from tfrecord_lite._index.gzip_index import (
    GzipIndex,
    compressed_kind,
    open_index,
    open_remote_index,
    reader,
    record_at,
    record_offset,
    records_in_span,
)
from tfrecord_lite._index.record_index import RecordIndex
from tfrecord_lite._records.random_access import TFRecordFile, _position
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._storage.files import split_options
from tfrecord_lite._storage.remote import RemoteBuffer, RemoteObject, is_url
from tfrecord_lite._wire.framing import HEADER_SIZE
from tfrecord_lite._wire.sniff import sniff_compression


class CompressedRecordFile(TFRecordFile):
    """What `TFRecordFile(path)` returns for a GZIP or ZLIB file: random access through an index
    of the compressed stream (see docs/random-access.md, "Compressed files")."""

    _reader: Any  # what reads spans of the uncompressed stream (gzip_index.reader)

    def _forget(self) -> None:
        super()._forget()
        self._reader = None

    def _release(self) -> None:
        reader = self._reader
        self._forget()
        if reader is not None:
            reader.close()

    def _open(self, prebuilt: RecordIndex | None) -> None:
        """Index the compressed stream (`prebuilt`, the offsets an uncompressed file pickles, is unused)."""
        if self._policy is not None:
            raise ValueError(
                f"on_error= skips damage while indexing an uncompressed file; {self._path} is compressed: read "
                "it with iter_records(on_error=...), or salvage() it into a clean copy"
            )
        if is_url(self._path):
            return self._open_remote_gz()
        kind = compressed_kind(self._path)
        if kind not in ("gzip", "zlib"):  # pragma: no cover - TFRecordFile sends only compressed files here
            raise IndexFormatError("not a GZIP or ZLIB file", path=self._path)
        idx = open_index(self._path, kind, self._index_arg, verify=self._verify, on_stale=self._on_stale)
        self._reader = reader(self._path, idx)
        self._idx = idx
        self._n = idx.count

    def _open_remote_gz(self) -> None:
        """An object in a store: its bytes through a RemoteBuffer (ranged reads, block cache), its
        index from the sidecar next to it (see open_remote_index)."""
        obj = RemoteObject(self._path, *split_options(self._storage_options))
        buf = RemoteBuffer(obj, obj.size)
        try:
            kind = sniff_compression(buf[0:HEADER_SIZE])
            idx = open_remote_index(
                self._path,
                buf,
                kind,
                self._index_arg,
                verify=self._verify,
                on_stale=self._on_stale,
                storage_options=self._storage_options,
            )
            self._reader = reader(obj.name, idx, buf)
        except BaseException:
            buf.close()
            raise
        self._idx = idx
        self._n = idx.count

    @property
    def compression(self) -> str:
        """'gzip' or 'zlib'."""
        return self._idx.kind if isinstance(self._idx, GzipIndex) else ""

    def __getitem__(self, key: Any) -> Any:
        if type(key) is int:
            return self._get(key)
        return super(TFRecordFile, self).__getitem__(key)

    def _index(self) -> GzipIndex:
        if not isinstance(self._idx, GzipIndex):
            raise self._closed()
        return self._idx

    def _get(self, i: int) -> bytes:
        idx = self._index()
        return record_at(self._reader.read, idx, _position(i, self._n), self._verify, self._path)

    def _take(self, positions: Iterable[int]) -> list[bytes]:
        idx = self._index()
        wanted = list(positions)
        found: dict[int, bytes] = {}
        marks = idx.mark_records
        for m, group in groupby(sorted(set(wanted)), key=lambda i: _mark_of(marks, i)):
            picks = set(group)
            if len(picks) == 1:
                (i,) = picks
                found[i] = record_at(self._reader.read, idx, i, self._verify, self._path)
                continue
            for k, record in records_in_span(self._reader.read, idx, m, self._verify, self._path):
                if k in picks:
                    found[k] = record
        return [found[i] for i in wanted]

    def __iter__(self) -> Iterator[bytes]:
        """All records in order, by streaming the file (faster than seeking)."""
        self._index()
        return iter(iter_records(self._path, verify=self._verify, storage_options=self._storage_options))

    def offset(self, i: int) -> int:
        """Offset of record `i` in the uncompressed stream (where its 12-byte header starts)."""
        return record_offset(self._reader.read, self._index(), _position(i, self._n), self._path)


def _mark_of(marks: list[int], i: int) -> int:
    return bisect.bisect_right(marks, i) - 1
