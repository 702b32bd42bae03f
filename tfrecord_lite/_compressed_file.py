# TFRecordFile over a GZIP / ZLIB file: the same sequence (len, [i], slices, index
# lists, example()) on an index of the compressed stream (_gzip_index.py). f[i]
# inflates the span of records around i from the nearest seek point; a slice or
# an index list reads each span once for all the records it holds. Reads keep no
# state (each inflates from its point with its own inflater, reading the file by
# pread), so threads can share one object; pickling sends the path and options, and
# a worker reopens the file from its sidecar. An object in a store (a URL) is read
# the same way through a _remote.RemoteBuffer (ranged reads, a block cache), its
# index from the sidecar uploaded next to it (_gzip_index.open_remote_index).
from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import Any

from ._errors import PathName
from ._files import StorageOptions, split_options
from ._framing import HEADER_SIZE
from ._gzip_index import (
    GzipIndex,
    compressed_kind,
    open_index,
    open_remote_index,
    reader,
    record_at,
    record_offset,
    records_in_span,
)
from ._random_access import TFRecordFile, _position
from ._reader import iter_records
from ._remote import RemoteBuffer, RemoteObject, is_url
from ._sidecar import IndexArg, IndexFormatError
from ._skipping import DamagePolicy, OnError
from ._sniff import sniff_compression


class CompressedRecordFile(TFRecordFile):
    """What `TFRecordFile(path)` returns for a GZIP or ZLIB file: random access through an index
    of the compressed stream (see docs/random-access.md, "Compressed files")."""

    def __init__(
        self,
        path: PathName,
        index: IndexArg = None,
        *,
        verify: bool = True,
        on_stale: str = "rebuild",
        on_error: OnError | DamagePolicy = "raise",
        max_skipped: int | None = None,
        storage_options: StorageOptions = None,
    ) -> None:
        if not (on_error if isinstance(on_error, DamagePolicy) else DamagePolicy(on_error, max_skipped)).raises:
            raise ValueError(
                f"on_error= skips damage while indexing an uncompressed file; {path} is compressed: read it "
                "with iter_records(on_error=...), or salvage() it into a clean copy"
            )
        self._path = str(path)
        self._index_arg = index if isinstance(index, (bool, type(None))) else str(index)
        self._verify = verify
        self._on_stale = on_stale
        self._storage_options = storage_options
        self._lock = threading.Lock()
        self._gz: GzipIndex | None = None
        self._reader: Any = None
        self._open_gz()

    def _open_gz(self) -> None:
        if is_url(self._path):
            return self._open_remote_gz()
        kind = compressed_kind(self._path)
        if kind not in ("gzip", "zlib"):  # pragma: no cover - TFRecordFile sends only compressed files here
            raise IndexFormatError("not a GZIP or ZLIB file", path=self._path)
        idx = open_index(self._path, kind, self._index_arg, verify=self._verify, on_stale=self._on_stale)
        self._reader = reader(self._path, idx)
        self._gz = idx
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
        self._gz = idx
        self._n = idx.count

    @property
    def index_path(self) -> str | None:
        return self._gz.location if self._gz is not None else None

    @property
    def compression(self) -> str:
        """'gzip' or 'zlib'."""
        return self._gz.kind if self._gz is not None else ""

    def __getitem__(self, key: Any) -> Any:
        if type(key) is int:
            return self._get(key)
        return super(TFRecordFile, self).__getitem__(key)

    def _index(self) -> GzipIndex:
        if self._gz is None:
            raise self._closed()
        return self._gz

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

    def close(self) -> None:
        with self._lock:
            rd, self._reader = self._reader, None
            self._gz = None
            self._n = 0
            if rd is not None:
                rd.close()

    @property
    def closed(self) -> bool:
        return self._gz is None

    def __getstate__(self) -> dict[str, Any]:
        return {
            "path": self._path,
            "index": self._index_arg,
            "verify": self._verify,
            "on_stale": self._on_stale,
            "storage_options": self._storage_options,
            "closed": self.closed,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._path = state["path"]
        self._index_arg = state["index"]
        self._verify = state["verify"]
        self._on_stale = state["on_stale"]
        self._storage_options = state.get("storage_options")
        self._lock = threading.Lock()
        self._gz, self._reader, self._n = None, None, 0
        if not state["closed"]:
            self._open_gz()


def _mark_of(marks: list[int], i: int) -> int:
    return bisect.bisect_right(marks, i) - 1
