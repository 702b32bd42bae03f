"""Reading objects in S3, GCS, HTTP(S) or any other fsspec store (fsspec and its s3fs / gcsfs
are imported only when a URL is used). Every byte is read by ranged requests
(bodies.receive), which is what makes the rest simple:

  - RemoteObject.read_range retries a failed request (reset, 5xx, timeout) with
    exponential backoff, up to RETRY.attempts, asking again only for the bytes it
    still lacks, from the exact byte reached (the body arrives in chunks: _storage/bodies.py);
    after the limit a RemoteError names the URL (credentials and query strings cut)
    and the byte offset.
  - RemoteStream is the sequential file the streaming reader sees: blocks of the
    object (the first HEAD_BLOCK, then STREAM_BLOCK each) read one after the other
    through read_range, so a broken connection resumes at the byte reached and
    the GZIP / ZLIB decompressor above it never notices (its state is untouched).
    Its first block can be handed in already fetched (see _storage/prefetch.py).
  - RemoteBuffer is the random-access view TFRecordFile reads from: slices served
    from a small LRU block cache; `prefetch(spans)` coalesces the spans of many
    records into few ranges (up to MAX_RANGE bytes each) and fetches them concurrently.
    RemoteFile is a RemoteBuffer behind a seekable file, for libraries that want one.

Writing to a store is _storage/uploads.py.
"""

from __future__ import annotations

import bisect
import collections
import io
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tfrecord_lite._errors import RemoteError
from tfrecord_lite._storage.bodies import receive
from tfrecord_lite._storage.locations import FsspecOptions, filesystem, redact, scrub

STREAM_BLOCK = 8 << 20  # bytes per ranged request while streaming...
HEAD_BLOCK = 1 << 20  # ...but the first request of an object (what a prefetch holds) asks for this many
CACHE_BLOCK = 1 << 20  # random access: bytes per cached block
CACHE_BLOCKS = 16  # random access: blocks kept (16 MiB)
GAP = 1 << 20  # random access: records closer than this are fetched by one request (~ first-byte wait x bandwidth)...
MAX_RANGE = 4 << 20  # ...up to this many bytes a request
WORKERS = 16  # concurrent requests of one batch of records


@dataclass
class Retry:
    """How often a failed request is tried again, and how long to wait between tries."""

    attempts: int = 6  # tries of one request, the first included
    delay: float = 0.1  # seconds before the second try; doubled each time
    max_delay: float = 5.0

    def wait(self, attempt: int) -> None:
        time.sleep(min(self.max_delay, self.delay * 2 ** (attempt - 1)))


RETRY = Retry()

# botocore's errors for a client that cannot sign at all (imported by name: botocore is an extra)
_UNSIGNABLE = {"NoCredentialsError", "PartialCredentialsError", "NoRegionError"}


def _is_permanent(err: BaseException) -> bool:
    """An error that trying again will not fix: missing object, no permission or credentials, bad request."""
    if isinstance(err, (FileNotFoundError, PermissionError, IsADirectoryError, NotImplementedError, TypeError)):
        return True
    if any(kind.__name__ in _UNSIGNABLE for kind in type(err).__mro__):
        return True
    status = getattr(err, "status", None) or getattr(err, "code", None)
    return isinstance(status, int) and 400 <= status < 500 and status not in (408, 429)


class RemoteObject:
    """One object of a store: ranged reads with retries, its size and version (for caches)."""

    def __init__(self, url: str, storage_options: FsspecOptions = None, fs: Any = None) -> None:
        self.url = url
        self.name = redact(url)
        self.fs, self.path = filesystem(url, storage_options, fs)
        self._info: dict[str, Any] | None = None

    def info(self) -> dict[str, Any]:
        """fsspec's info of the object (size, ETag / generation, mtime), asked once."""
        if self._info is None:
            self._info = self._retrying(lambda: 0, lambda: self.fs.info(self.path))
        return self._info

    @property
    def size(self) -> int:
        return int(self.info()["size"])

    def version(self) -> str:
        """What changes when the object does: ETag or generation, else size and mtime."""
        info = self.info()
        for key in ("ETag", "etag", "generation", "md5Hash", "VersionId"):
            if info.get(key):
                return f"{key}={info[key]}"
        mtime = info.get("LastModified") or info.get("mtime") or info.get("updated") or ""
        return f"size={info['size']},mtime={mtime}"

    def read_range(self, start: int, end: int) -> bytes:
        """Bytes start..end (fewer at the end of the object). A request that breaks is asked again
        for the bytes still missing, from the exact byte reached; the retries are counted since the
        last try that brought bytes."""
        parts: list[bytes] = []
        at = start

        def rest() -> None:
            nonlocal at
            received: list[bytes] = []
            try:
                receive(self.fs, self.path, at, end, received)
            finally:
                parts.extend(received)
                at += sum(map(len, received))

        self._retrying(lambda: at, rest)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _retrying(self, offset: Any, call: Any) -> Any:
        """call(), tried again on transient failures; `offset()` is the byte reached, for messages
        and for noticing progress (a try that moved it starts the count of attempts again)."""
        attempt = 0
        while True:
            attempt += 1
            before = offset()
            try:
                return call()
            except FileNotFoundError:
                raise FileNotFoundError(f"no such object: {self.name}") from None
            except Exception as err:
                if offset() > before:
                    attempt = 1
                if _is_permanent(err) or attempt >= RETRY.attempts:
                    tries = f" after {attempt} attempts" if attempt > 1 else ""
                    cause = scrub(f"{type(err).__name__}: {err}")
                    raise RemoteError(f"reading failed{tries} ({cause})", url=self.name, offset=offset()) from None
            RETRY.wait(attempt)


class RemoteStream(io.RawIOBase):
    """The object read front to back in blocks of ranged requests (see the module comment)."""

    def __init__(self, obj: RemoteObject, head: Future[bytes] | bytes | None = None, block: int | None = None) -> None:
        self.obj = obj
        self.name = obj.name
        self._block = block or STREAM_BLOCK
        self._head_size = min(self._block, HEAD_BLOCK)
        self._head = head
        self._pos = 0  # the next byte of the object to fetch
        self._data = b""
        self._at = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def _next_block(self) -> None:
        size = self._head_size if self._pos == 0 else self._block
        if self._head is not None:
            head, self._head = self._head, None
            data = head.result() if isinstance(head, Future) else head
        else:
            data = self.obj.read_range(self._pos, self._pos + size)
        self._data, self._at = data, 0
        self._pos += len(data)
        self._eof = len(data) < size  # a short block is the end of the object

    def read(self, size: int = -1) -> bytes:
        if self._at >= len(self._data):
            if self._eof:
                return b""
            self._next_block()
        n = len(self._data) - self._at if size < 0 else min(size, len(self._data) - self._at)
        out = self._data[self._at : self._at + n]
        self._at += n
        return out

    def readinto(self, view: Any) -> int:
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)


class RemoteFile(io.RawIOBase):
    """A RemoteBuffer as a seekable raw file, for libraries that want a file object: reads come
    from its block cache, so a library that reads ahead and seeks back (indexed_gzip does, after
    every chunk it inflates) fetches each block once."""

    def __init__(self, buf: RemoteBuffer) -> None:
        self.buf = buf
        self.name = buf.obj.name
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self.buf)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, view: Any) -> int:
        data = self.buf[self._pos : self._pos + len(view)]
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)


def fetch_head(obj: RemoteObject) -> bytes:
    """The object's first block (all of a small object): what a prefetch holds."""
    return obj.read_range(0, min(STREAM_BLOCK, HEAD_BLOCK))


def coalesce(spans: Iterable[tuple[int, int]], gap: int = GAP, limit: int = MAX_RANGE) -> list[tuple[int, int]]:
    """Sorted ranges covering `spans` (start, end): spans less than `gap` apart are joined while
    the range stays within `limit` bytes (a single longer span is a range of its own)."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start - merged[-1][1] <= gap and max(end, merged[-1][1]) - merged[-1][0] <= limit:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


class RemoteBuffer:
    """Random access to an object: `buf[a:b]` bytes from the ranges of the last prefetch, else
    through an LRU cache of aligned blocks (neighbours of a record read alone come free)."""

    def __init__(self, obj: RemoteObject, size: int, block: int | None = None, blocks: int = CACHE_BLOCKS) -> None:
        self.obj = obj
        self._size = size
        self._block = block or CACHE_BLOCK
        self._capacity = blocks
        self._cache: collections.OrderedDict[int, bytes] = collections.OrderedDict()
        self._pinned: list[tuple[int, bytes]] = []  # (start, data) of the last prefetch, by start
        self._pinned_starts: list[int] = []
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, key: slice) -> bytes:
        start, stop, _ = key.indices(self._size)
        if stop <= start:
            return b""
        with self._lock:
            k = bisect.bisect_right(self._pinned_starts, start) - 1
            if k >= 0:
                base, data = self._pinned[k]
                if stop <= base + len(data):
                    return data[start - base : stop - base]
        first, last = start // self._block, (stop - 1) // self._block
        base = first * self._block
        if first == last:
            return self._get_block(first)[start - base : stop - base]
        data = b"".join(self._get_block(k) for k in range(first, last + 1))
        return data[start - base : stop - base]

    def _get_block(self, k: int) -> bytes:
        with self._lock:
            data = self._cache.get(k)
            if data is not None:
                self._cache.move_to_end(k)
                return data
        data = self.obj.read_range(k * self._block, min(self._size, (k + 1) * self._block))
        with self._lock:
            self._cache[k] = data
            while len(self._cache) > self._capacity:
                self._cache.popitem(last=False)
        return data

    def prefetch(self, spans: Iterable[tuple[int, int]]) -> None:
        """Fetch `spans` (the records of a batch): nearby spans coalesced into one ranged request
        each, the requests run concurrently. They are kept until the next prefetch."""
        ranges = coalesce(spans)
        if len(ranges) > 1 and self._pool is None:
            self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="tfrecord_lite-range")
        fetched = self._pool.map(self._fetch, ranges) if len(ranges) > 1 and self._pool else map(self._fetch, ranges)
        pinned = sorted(fetched)
        with self._lock:
            self._pinned = pinned
            self._pinned_starts = [start for start, _ in pinned]

    def _fetch(self, span: tuple[int, int]) -> tuple[int, bytes]:
        return span[0], self.obj.read_range(*span)

    def close(self) -> None:
        with self._lock:
            self._cache.clear()
            self._pinned, self._pinned_starts = [], []
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
