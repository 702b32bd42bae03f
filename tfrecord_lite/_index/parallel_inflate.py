"""Inflating a big GZIP file on several cores, from the seek points of its sidecar
index. Reading a GZIP TFRecord of dense records, ISA-L's inflate was 85-90 % of the
time, in one thread (TensorFlow inflates in one thread too). A deflate stream can
only be entered where the 32 KiB of output before a point are known: the points
(and windows) that `tfrecord-lite index` / TFRecordFile save for random access
(_index/gzip_sidecar.py), or the full-flush points of TFRecordWriter(seek_every=).

Without a sidecar nothing changes. Entering at guessed block starts, as pugz and
rapidgzip do, was tried (benchmarks/RESULTS.md): in TFRecords every record copies
its framing and feature keys from the record before, so output that depends on the
unknown window never dies out, and resolving it needs a second inflate or a decoder
of our own. rapidgzip (which has one) spent 2.4x ISA-L's CPU with two threads here.

The file is cut at points into segments of at least SEGMENT bytes of output; up to
workers + 1 of them are inflated ahead (by gzip_seek's SpanInflater: pread, each from
its point with its window, ISA-L releasing the GIL) and handed out in order. The
member's CRC32 and length (its trailer) are checked over all of it. Only a fresh
sidecar of a one-member file is used (its trailer's length is the indexed length).
A segment that fails or comes out short, or a trailer that does not match, hands
the rest to the one-thread Inflater, from the start of the file with what was
already handed out dropped: errors, and the records read before them, are the
one-thread reader's; so does a child forked while a file was being read (the threads
stay in the parent). close() (and dropping the object) stops and joins the threads.
Threads pay only when a core is idle, so they start only then (by the load average),
and not for files that barely compress (inflating stored blocks is a copy).
"""

from __future__ import annotations

import os
import threading
import weakref
import zlib
from collections import deque
from collections.abc import Generator, Iterator
from typing import IO, TYPE_CHECKING, Any

from tfrecord_lite._compression.inflater import Inflater
from tfrecord_lite._compression.kinds import GZIP
from tfrecord_lite._cores import usable_cores
from tfrecord_lite._stream.scanner import CHUNK_SIZE

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from tfrecord_lite._index.gzip_seek import SpanInflater
    from tfrecord_lite._index.gzip_sidecar import GzipIndex, Point

ENV_VAR = "TFRECORD_LITE_INFLATE_THREADS"
SEGMENT = 4 << 20  # bytes of output a worker inflates at a time (at least)
MAX_THREADS = 4
STORED = 0.98  # compressed / uncompressed size above which a file is read by one thread
# Compressed bytes read and fed at a time: a segment's worth, so that a worker inflates its
# segment in about one call and takes the GIL back about once. In 256 KiB steps every step
# waited for the reading thread to let go of the GIL: dense 0.25 s a file instead of 0.22 s.
_STEP = SEGMENT
_THREADS = "tfrecord-lite-inflate"  # the threads' names start so


def threads() -> int:
    """How many threads inflate an indexed GZIP file: TFRECORD_LITE_INFLATE_THREADS, else one per
    core this process may run on (at most MAX_THREADS) while a core is idle (the 1-minute load
    average below the cores less half a one), else 1: the one-thread reader."""
    value = os.environ.get(ENV_VAR)
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"{ENV_VAR}={value!r} is not a positive whole number")
        return int(value)
    cores = usable_cores()
    return min(cores, MAX_THREADS) if os.getloadavg()[0] < cores - 0.5 else 1


def parallel_inflater(raw: IO[bytes], path: str, head: bytes) -> ParallelInflater | None:
    """A ParallelInflater for the GZIP file `path` (open as `raw`, positioned after `head`, its
    first bytes), or None when it is read by one thread: no idle core, no fresh sidecar with points
    (or a file too small to cut), a file of several members, a file that barely compresses."""
    from tfrecord_lite._errors import IndexFormatError
    from tfrecord_lite._index.gzip_index import needs_pass
    from tfrecord_lite._index.gzip_seek import SpanInflater
    from tfrecord_lite._index.gzip_sidecar import gzip_index_staleness, read_gzip_index, seek_points
    from tfrecord_lite._index.sidecar_file import sidecar_path

    try:
        fd = raw.fileno()
        size = os.fstat(fd).st_size
        if size < SEGMENT or raw.tell() != len(head) or not os.path.exists(sidecar_path(path)):
            return None
        isize = int.from_bytes(os.pread(fd, 4, size - 4), "little")
        workers = threads()
        if size > STORED * isize or workers < 2:  # (the length mod 2**32: checked again below)
            return None
        index = read_gzip_index(sidecar_path(path))
        if index.kind != GZIP.name or needs_pass(index) or gzip_index_staleness(index, path) is not None:
            return None
    except (OSError, IndexFormatError):
        return None
    if isize != index.stream_size & 0xFFFFFFFF:
        return None  # several members: the last one's length is in the trailer
    if index.file_size > STORED * index.stream_size:
        return None  # stored blocks, mostly: inflating is a copy, cheaper than handing it over
    points = seek_points(index)
    segments = _segments(points, index.stream_size)
    if len(segments) < 2 or segments[0][0].uout != 0:
        return None
    return ParallelInflater(raw, SpanInflater(path, GZIP.name, points), index, segments, workers)


def _segments(points: list[Point], end: int) -> list[tuple[Point, int]]:
    """(point, bytes of output from it) of segments that start at points at least SEGMENT apart
    (the last one at least SEGMENT / 2 before `end`, the stream's length)."""
    starts = [points[0]]
    for point in sorted(points[1:], key=lambda p: p.uout):
        if point.uout - starts[-1].uout >= SEGMENT and end - point.uout >= SEGMENT // 2:
            starts.append(point)
    ends = [p.uout for p in starts[1:]] + [end]
    return [(p, stop - p.uout) for p, stop in zip(starts, ends, strict=True)]


class ParallelInflater:
    """The decompressed stream of an indexed GZIP file, inflated by `workers` threads; `read` and
    `read` as Inflater's, and `readinto`. Errors come from the one-thread Inflater it falls back on."""

    def __init__(
        self, raw: IO[bytes], spans: SpanInflater, index: GzipIndex, segments: list[tuple[Point, int]], workers: int
    ) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from tfrecord_lite._compression.inflate import library

        self._raw, self._spans, self._index, self._segments = raw, spans, index, segments
        self._lib = library()
        self._workers = workers
        self._closing = threading.Event()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix=_THREADS)
        self._pending: deque[Future[list[bytes]]] = deque()
        self._submitted = 0
        self._pid = os.getpid()
        self._pieces = self._output()
        self._view = memoryview(b"")
        weakref.finalize(self, _stop, self._closing, self._pool, spans)

    def read(self, size: int) -> bytes:
        """Up to `size` decompressed bytes; b'' at the end."""
        return self._next(size).tobytes()

    def readinto(self, view: memoryview) -> int:
        """The next decompressed bytes copied into the start of `view`; 0 at the end."""
        data = self._next(len(view))
        view[: len(data)] = data
        return len(data)

    def _next(self, size: int) -> memoryview:
        while not self._view:
            piece = next(self._pieces, None)
            if piece is None:
                return self._view
            self._view = memoryview(piece)
        out, self._view = self._view[:size], self._view[size:]
        return out

    def close(self) -> None:
        """Stop the threads (and wait for them) and close what they read."""
        _stop(self._closing, self._pool, self._spans)
        self._pieces.close()

    def _output(self) -> Generator[bytes, None, None]:
        crc = total = 0
        for _, want in self._segments:
            if os.getpid() != self._pid:  # a forked child: the threads stayed in the parent
                yield from self._fallback(total)
                return
            self._submit()
            pieces = self._pending.popleft().result()
            if sum(map(len, pieces)) != want:
                yield from self._fallback(total)
                return
            for piece in pieces:
                crc = self._lib.crc32(piece, crc)
                total += len(piece)
                yield piece
        _stop(self._closing, self._pool, self._spans)
        trailer = os.pread(self._raw.fileno(), 8, self._index.file_size - 8)
        if trailer != crc.to_bytes(4, "little") + (total & 0xFFFFFFFF).to_bytes(4, "little"):
            yield from self._fallback(total)

    def _submit(self) -> None:
        """Keep workers + 1 segments inflating or inflated ahead of the reader."""
        while len(self._pending) <= self._workers and self._submitted < len(self._segments):
            point, want = self._segments[self._submitted]
            self._pending.append(self._pool.submit(self._inflate, point, want))
            self._submitted += 1

    def _inflate(self, point: Point, want: int) -> list[bytes]:
        """The `want` bytes of output from `point`, in pieces (fewer when stopped or damaged)."""
        d: Any = None  # made at the first chunk, which tells a GZIP header's flags
        pieces: list[bytes] = []
        try:
            for chunk in self._spans.feed(point, _STEP):
                d = point.decompressor(chunk) if d is None else d
                while chunk and want and not d.eof and not self._closing.is_set():
                    pieces.append(d.decompress(chunk, want))
                    want -= len(pieces[-1])
                    chunk = d.unconsumed_tail
                if not want or d.eof or self._closing.is_set():
                    break
        except (self._lib.error, zlib.error, OSError):
            pass
        return pieces

    def _fallback(self, drop: int) -> Iterator[bytes]:
        """The one-thread inflater from the start of the file, its first `drop` bytes dropped."""
        _stop(self._closing, self._pool, self._spans)
        self._raw.seek(0)
        inflater = Inflater(self._raw, GZIP.name, b"")
        while drop:
            dropped = len(inflater.read(min(drop, CHUNK_SIZE)))
            if not dropped:
                break
            drop -= dropped
        while data := inflater.read(CHUNK_SIZE):
            yield data


def _stop(closing: threading.Event, pool: ThreadPoolExecutor, spans: SpanInflater) -> None:
    """Stop the threads and wait for them, unless this is one of them (the garbage collector may
    drop an inflater in any thread): they stop at their next step then, and find the file closed."""
    closing.set()
    pool.shutdown(wait=not threading.current_thread().name.startswith(_THREADS), cancel_futures=True)
    spans.close()
