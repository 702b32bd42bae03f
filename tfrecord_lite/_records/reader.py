"""iter_records and RecordIterator: the records of one or more files, one after the
other, as bytes. Each file is a DecodedStream scanned by StreamScanner (the one
scanning loop, _stream/scanner.py); a record is copied out of the scan buffer as
bytes, the many small records of a chunk by slicing one copy of it. A local GZIP file
with a fresh sidecar index is inflated by threads from its seek points when a core is
idle (_index/parallel_inflate.py), any other compressed file by the streaming
Inflater. Over many objects in a store, the first blocks of the next ones are fetched
while one is read. Damage is raised, or skipped as the DamagePolicy says. A batch reader asks the
iterator to keep the places of the records it has read lately (`Placements`: per chunk its file,
the first record's number in it, the buffer's stream offset and the records' starts, nothing per
record), so that an error about one record of a batch names its file, number and byte offset.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import re
from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import IO, NamedTuple, cast

from tfrecord_lite._compression.inflater import Inflater
from tfrecord_lite._compression.kinds import GZIP, SUFFIX_PATTERN
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._index.parallel_inflate import parallel_inflater
from tfrecord_lite._repr import compression, describe, shown_paths
from tfrecord_lite._storage.files import (
    PathOrFile,
    display_name,
    is_file_object,
)
from tfrecord_lite._storage.locations import StorageOptions
from tfrecord_lite._storage.prefetch import PREFETCH, prefetched
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._stream.damage import Damage, DamagePolicy
from tfrecord_lite._stream.options import Compression, OnError
from tfrecord_lite._stream.scanner import MAX_RECORD_BYTES, DecodedStream, StreamInflater, StreamScanner
from tfrecord_lite._wire.framing import HEADER_SIZE

_RECORD_URL = re.compile(rf"[a-z][a-z0-9+.-]*://[^*?\[]*\.(tfrecords?|tfrec|tfr){SUFFIX_PATTERN}?$", re.I)


class _Chunk(NamedTuple):
    first: int  # the number, among all the records read, of the chunk's first record
    path: str | None
    number: int  # the first record's number in its file
    origin: int  # the stream offset of the chunk's buffer
    starts: list[int]


class Placements:
    """Where the records read lately lie, counted over all the files read (`where(i)`: the file,
    number in it and byte offset of record i). Nothing is kept until `keep(n)` says that a reader
    may ask about records up to about n before the last chunk read."""

    def __init__(self) -> None:
        self._chunks: deque[_Chunk] = deque()
        self._keep = 0
        self.total = 0  # the records read so far

    def keep(self, records: int) -> None:
        self._keep = max(self._keep, records)

    def add(self, path: str | None, number: int, origin: int, starts: list[int]) -> None:
        if self._keep:
            self._chunks.append(_Chunk(self.total, path, number, origin, starts))
            horizon = self.total - 2 * self._keep
            while len(self._chunks) > 1 and self._chunks[0].first + len(self._chunks[0].starts) <= horizon:
                self._chunks.popleft()
        self.total += len(starts)

    def where(self, index: int) -> tuple[str | None, int, int | None] | None:
        return _where_in(tuple(self._chunks), index)  # a tuple: another thread may read on meanwhile

    def frozen(self, first: int, n: int) -> Callable[[int], tuple[str | None, int, int | None] | None]:
        """`where` for records first .. first + n - 1 as they are kept now: for a batch decoded later
        (on a thread), once these places may have been dropped."""
        chunks = tuple(c for c in tuple(self._chunks) if c.first < first + n and c.first + len(c.starts) > first)
        return functools.partial(_where_in, chunks)


def _where_in(chunks: tuple[_Chunk, ...], index: int) -> tuple[str | None, int, int | None] | None:
    for chunk in chunks:
        k = index - chunk.first
        if 0 <= k < len(chunk.starts):
            return chunk.path, chunk.number + k, chunk.origin + chunk.starts[k] - HEADER_SIZE
    return None


class RecordIterator(Iterator[bytes]):
    """Iterator over the records of one or more TFRecord streams, one after the other; also a
    context manager that closes them. `path` is the file being read."""

    def __init__(
        self,
        source: PathOrFile | list[PathOrFile],
        compression: str | None = "auto",
        verify: bool = True,
        policy: DamagePolicy | None = None,
        storage_options: StorageOptions = None,
        prefetch: int = PREFETCH,
        max_record_bytes: int = MAX_RECORD_BYTES,
    ) -> None:
        self._max_record_bytes = max_record_bytes
        self._sources = source if isinstance(source, list) else [source]
        self._compression = compression
        self._policy = policy if policy is not None and not policy.raises else None
        self._storage_options = storage_options
        # URLs: the next `prefetch` objects' first blocks are fetched while one is read
        self._inputs = prefetched(self._sources, prefetch, storage_options) if len(self._sources) > 1 else None
        first = next(self._inputs) if self._inputs is not None else self._sources[0]
        self._stream = self._open(first)  # the first file's errors come now
        self.path = self._stream.path
        self._verify = verify
        self._records: Generator[bytes, None, None] = self._iter_records()
        self.placements = Placements()

    def _streams(self) -> Iterator[DecodedStream]:
        """The stream of each source in turn, the previous one closed before the next opens."""
        yield self._stream
        for source in self._inputs or ():
            self._stream.close()
            self._stream = self._open(source)
            self.path = self._stream.path
            yield self._stream

    def _open(self, source: PathOrFile) -> DecodedStream:
        """The stream of one source; one that is not even a TFRecord file is damage too when skipping."""
        return DecodedStream(
            source,
            self._compression,
            strict=self._policy is None,
            storage_options=self._storage_options,
            make_inflater=functools.partial(_inflater, source),
        )

    def _chunks(self, multiple: int = 1) -> Iterator[tuple[memoryview, list[int], list[int]]]:
        """The records a buffer at a time, file after file (see StreamScanner.chunks); with
        `multiple`, every chunk but the last holds a multiple of that many records across files."""
        chunks = self._placed_chunks(multiple)
        return chunks if multiple == 1 or len(self._sources) == 1 else _whole_multiples(chunks, multiple)

    def _placed_chunks(self, multiple: int) -> Iterator[tuple[memoryview, list[int], list[int]]]:
        for stream in self._streams():
            scanner = StreamScanner(
                stream, verify=self._verify, on_damage=self._on_damage(stream), max_record_bytes=self._max_record_bytes
            )
            for chunk in scanner.chunks(multiple):
                self.placements.add(stream.path, scanner.records - len(chunk[1]), scanner.origin, chunk[1])
                yield chunk

    def _on_damage(self, stream: DecodedStream) -> Callable[[Damage], None] | None:
        """What the error policy does with a damaged span of `stream` (None: raise)."""
        return self._policy.handler(stream.path) if self._policy is not None else None

    def _iter_records(self) -> Generator[bytes, None, None]:
        try:
            for view, starts, lengths in self._chunks():
                size = starts[-1] + lengths[-1]
                if len(starts) > 64 and size < 1024 * len(starts):  # many small records: slicing
                    chunk = view[:size].tobytes()  # bytes is cheaper than slicing views
                    records = [chunk[s : s + n] for s, n in zip(starts, lengths, strict=False)]
                    del chunk  # freed before the next chunk's copy, which then reuses its pages
                    yield from records
                else:
                    for s, n in zip(starts, lengths, strict=False):
                        yield view[s : s + n].tobytes()
        finally:  # at the end, on an error, or when dropped: the file is closed
            self._stream.close()

    def __iter__(self) -> Iterator[bytes]:
        """The records: the generator itself, so that a for loop runs at generator speed."""
        return self._records

    def __next__(self) -> bytes:
        try:
            return next(self._records)
        except StopIteration:
            self.close()
            raise
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the file (only if we opened it)."""
        self._records.close()
        self._stream.close()

    @property
    def closed(self) -> bool:
        """Whether the records are used up or the iterator was closed."""
        return inspect.getgeneratorstate(self._records) == "GEN_CLOSED"

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        where = repr(self.path) if self.path is not None else "<file object>"
        if len(self._sources) > 1:
            where = shown_paths([display_name(s) for s in self._sources])
        return describe("RecordIterator", where, compression(self._stream.compression), state)

    def __enter__(self) -> RecordIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _inflater(source: PathOrFile, raw: IO[bytes], compression: str, head: bytes) -> StreamInflater:
    """What inflates `source` (open as `raw`, `head` read): threads from its sidecar's seek points
    for a big indexed GZIP file while a core is idle (parallel_inflater), else one Inflater."""
    if compression == GZIP.name and isinstance(source, (str, os.PathLike)):
        threads = parallel_inflater(raw, os.fspath(source), head)
        if threads is not None:
            return threads
    return Inflater(raw, compression, head)


Chunk = tuple[memoryview, list[int], list[int]]


def _whole_multiples(chunks: Iterator[Chunk], multiple: int) -> Iterator[Chunk]:
    """`chunks` of several files regrouped so that each holds a multiple of `multiple` records
    (but the last): the records left at a file's end are copied and joined to the next ones, so a
    batch spans files as in tf.data. Before an error, the records held back come out first."""
    carry: list[bytes] = []
    try:
        for view, starts, lengths in chunks:
            if carry:
                need = multiple - len(carry)
                carry += [view[s : s + n].tobytes() for s, n in zip(starts[:need], lengths[:need], strict=False)]
                starts, lengths = starts[need:], lengths[need:]
                if len(carry) < multiple:
                    continue
                yield _joined(carry)
                carry = []
            whole = len(starts) - len(starts) % multiple
            if whole:
                yield view, starts[:whole], lengths[:whole]
            carry = [view[s : s + n].tobytes() for s, n in zip(starts[whole:], lengths[whole:], strict=False)]
    except TFRecordError:
        if carry:
            yield _joined(carry)
        raise
    if carry:
        yield _joined(carry)


def _joined(records: list[bytes]) -> Chunk:
    """One chunk holding `records` (payloads only: a chunk's consumers read starts and lengths)."""
    lengths = [len(r) for r in records]
    starts = list(itertools.accumulate([0, *lengths[:-1]]))
    return memoryview(b"".join(records)), starts, lengths


def iter_records(
    source: PathOrFile | Sources,
    *,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    prefetch: int = PREFETCH,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> RecordIterator:
    """Iterate the records (payload bytes) of TFRecord files, one after the other.

    `source`: a path, URL or binary file object, or several files: a list, a folder, a glob
    or a ShardedWriter prefix (see docs/inputs.md). `compression`: "auto" (recognised from
    the content), None / "", "gzip" or "zlib". Both CRCs are checked; `verify=False` skips
    the payload CRC. Errors name the file and the byte offset of the bad record (in the
    uncompressed stream).

    `on_error="skip"` reads on past damage: a record with a bad payload CRC is skipped,
    after a damaged header the next valid record is searched for, and each skip is logged
    as a warning (a callable `on_error(err)` is given the error instead); a truncated tail
    or a broken GZIP / ZLIB stream ends the file. More than `max_skipped` skips (over all
    the files) raise.

    URLs (s3://, gs://, https://, any fsspec protocol, globs too) are read by ranged requests
    that resume where a broken connection stopped; `storage_options` are fsspec's options
    (or an fsspec filesystem object), and over many objects the first blocks of the next
    `prefetch` ones are fetched while one is read (see docs/cloud.md).

    A record whose header claims more than `max_record_bytes` (default 1 GiB) raises
    RecordTooLargeError before any of it is held in memory: raise the limit for trusted files.
    """
    return read_records(
        source,
        DamagePolicy(on_error, max_skipped),
        compression=compression,
        verify=verify,
        storage_options=storage_options,
        prefetch=prefetch,
        max_record_bytes=max_record_bytes,
    )


def read_records(
    source: PathOrFile | Sources,
    policy: DamagePolicy | None,
    *,
    compression: Compression = "auto",
    verify: bool = True,
    storage_options: StorageOptions = None,
    prefetch: int = PREFETCH,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> RecordIterator:
    """iter_records with a DamagePolicy already made: a command or a dataset that opens many readers
    hands each the same one, so that its `max_skipped` counts over all of them."""
    return RecordIterator(
        sources_of(source, storage_options),
        compression,
        verify,
        policy,
        storage_options=storage_options,
        prefetch=prefetch,
        max_record_bytes=max_record_bytes,
    )


def sources_of(source: PathOrFile | Sources, storage_options: StorageOptions = None) -> list[PathOrFile]:
    """What to read, one item per file: a file object or an existing file as it is (the
    single-file fast path), anything else through resolve_inputs."""
    if is_file_object(source):
        return [source]
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        if isinstance(name, str) and (os.path.isfile(name) or _RECORD_URL.match(name)):
            return [name]
    return list(resolve_inputs(cast(Sources, source), storage_options=storage_options))
