"""The streaming reader. It reads a binary file (through a zlib decompressor for
GZIP / ZLIB files) into one reused buffer (readinto: no copy, no allocation per
chunk), hands the buffer to framing.scan, and keeps only the incomplete tail
for the next round, so memory stays flat in the file size: the buffer is one
chunk, grown only for a record longer than it, and only as far as data has
actually arrived — a corrupt length never allocates. That loop is StreamScanner,
the only one in the package: it raises the first damage, or (for verify_file)
reports every damaged span and resynchronises after it. iter_records copies each
record out as bytes; the batched decoder reads records where they lie. Compression is recognised
from the content (a valid first header, the gzip magic, a zlib header), never
from the file name, and pipes work because nothing seeks.
"""

from __future__ import annotations

import inspect
import itertools
import os
import re
import stat
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, cast

from tfrecord_lite._compression.inflate import library
from tfrecord_lite._errors import CorruptRecordError, PathName, TFRecordError, TruncatedRecordError
from tfrecord_lite._index.parallel_inflate import ParallelInflater, parallel_inflater
from tfrecord_lite._repr import compression, describe, shown_paths
from tfrecord_lite._storage.files import (
    PathOrFile,
    StorageOptions,
    display_name,
    is_file_object,
    normalize_compression,
    open_binary,
)
from tfrecord_lite._storage.prefetch import PREFETCH, prefetched
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy, OnError
from tfrecord_lite._wire.framing import FOOTER_SIZE, HEADER_SIZE, OVERHEAD, header_is_valid, masked_crc, scan
from tfrecord_lite._wire.sniff import SNIFF_SIZE, inflates, not_a_tfrecord, sniff_compression

CHUNK_SIZE = 1 << 20
_STEP = 1 << 16  # compressed bytes fed to the decompressor at a time (the most fed again after damage)
_WBITS = {"gzip": 31, "zlib": 15}
_RESERVED_FLAGS = 0xE0  # bits 5-7 of a GZIP header's FLG byte (RFC 1952: a decoder must refuse them)
_RECORD_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^*?\[]*\.(tfrecords?|tfrec|tfr)(\.gz|\.zlib|\.zz)?$", re.I)


class _Inflater:
    """Decompresses a GZIP / ZLIB byte stream chunk by chunk, concatenated members included.

    Compressed input is fed a step at a time, each step from a copy of the decompressor
    state, so that damage loses nothing before it: the step that fails is fed again from
    the copy a byte at a time, everything that inflates before the bad byte is returned,
    and the next read raises the error, which names the compressed and uncompressed
    offsets of the damage. The fastest installed library inflates (_inflate.py); ISA-L's
    state cannot be copied, so with it a failing step is replayed by the stdlib from the
    start of its member (a file that cannot seek then loses that step's partial output)."""

    def __init__(self, raw: IO[bytes], compression: str, head: bytes) -> None:
        self._raw = raw
        self._wbits = _WBITS[compression]
        self._name = compression.upper()
        self._lib = library()
        self._d = self._lib.decompressobj(self._wbits)
        self._copyable = hasattr(self._d, "copy")
        self._input = memoryview(head)  # compressed bytes not yet consumed
        self._at = 0  # compressed offset of self._input[0]
        self._member = 0  # compressed offset where the current member starts
        self._base = _tell(raw, len(head))  # file offset of compressed offset 0 (None: cannot seek)
        self._produced = 0  # uncompressed bytes returned so far
        self._salvaged = b""  # what inflated before the damage, not yet returned
        self._error: TFRecordError | None = None

    def read(self, size: int) -> bytes:
        """Up to `size` decompressed bytes; b'' at the clean end of the stream. Errors carry
        no record offset: the reader knows which record they cut and adds it."""
        while True:
            if self._salvaged:
                out, self._salvaged = self._salvaged[:size], self._salvaged[size:]
            elif self._error is not None:
                raise self._error
            else:
                inflated = self._inflate(size)
                if inflated is None:
                    return b""
                out = inflated
            if out:
                self._produced += len(out)
                return out

    def _inflate(self, size: int) -> bytes | None:
        """The output of one step of input (possibly empty); None at the clean end."""
        if not self._input:
            self._input = memoryview(self._raw.read(CHUNK_SIZE))
            if not self._input:
                if self._d.eof:
                    return None
                raise TruncatedRecordError(
                    f"the {self._name} stream ends before its end marker (the file is truncated)"
                )
        if self._d.eof:  # a member ended: what follows is the next member
            self._d = self._lib.decompressobj(self._wbits)
            self._member = self._at
        step = self._input[:_STEP]
        saved = self._d.copy() if self._copyable else None
        try:
            self._check_gzip_flags(step)
            out: bytes = self._d.decompress(step, size)
        except (zlib.error, self._lib.error) as err:
            self._salvage(saved if saved is not None else self._replayed(), step, err)
            return b""
        used = len(step) - len(self._d.unconsumed_tail) - len(self._d.unused_data)
        self._input = self._input[used:]
        self._at += used
        return out

    def _check_gzip_flags(self, step: memoryview) -> None:
        """Raise zlib's error for a GZIP member header whose reserved flag bits are set, when `step`
        holds its flag byte: the stdlib (and TensorFlow) refuse such a header, ISA-L reads past it."""
        flags_at = self._member + 3 - self._at  # the flag byte's place in `step`
        if self._wbits == _WBITS["gzip"] and 0 <= flags_at < len(step) and step[flags_at] & _RESERVED_FLAGS:
            raise zlib.error("Error -3 while decompressing data: unknown header flags set")

    def _replayed(self) -> Any:
        """A stdlib decompressor in the state at the start of the failing step, made by inflating
        its member again from the start; None when the file cannot seek."""
        if self._base is None:
            return None
        d = zlib.decompressobj(self._wbits)
        self._raw.seek(self._base + self._member)
        left = self._at - self._member
        while left:
            data = self._raw.read(min(left, CHUNK_SIZE))
            if not data:
                return None
            left -= len(data)
            while data:  # output dropped, a chunk at a time
                d.decompress(data, CHUNK_SIZE)
                data = d.unconsumed_tail
        return d

    def _salvage(self, d: Any, step: memoryview, err: Exception) -> None:
        """Feed `step` again from the state `d` (None: unknown) a byte at a time: keep what
        inflates before the bad byte, and the error that the next read raises."""
        out: list[bytes] = []
        bad = 0
        for bad in range(len(step) if d is not None else 0):
            try:
                out.append(d.decompress(step[bad : bad + 1]))
            except (zlib.error, self._lib.error):
                break
        self._salvaged = b"".join(out)
        where = self._produced + len(self._salvaged)
        self._error = CorruptRecordError(
            f"{self._name} stream damaged at compressed offset {self._at + bad} (uncompressed {where}): {err}"
        )


def _tell(raw: IO[bytes], consumed: int) -> int | None:
    """Where `raw` was before `consumed` bytes were read from it; None when it cannot seek."""
    try:
        return raw.tell() - consumed if raw.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None


class DecodedStream:
    """The uncompressed record stream of a source: opened, its compression recognised
    from the first bytes, and inflated chunk by chunk when it is GZIP / ZLIB."""

    def __init__(
        self,
        source: PathOrFile,
        compression: str | None = "auto",
        *,
        strict: bool = True,
        storage_options: StorageOptions = None,
        parallel: bool = False,
    ) -> None:
        compression = normalize_compression(compression, allow_auto=True)
        self.path = display_name(source)
        self._file, self._owned = open_binary(source, "rb", storage_options)
        try:
            head = self._read_head()
            if compression == "auto":
                compression = sniff_compression(head)
                if not strict and compression in _WBITS and not inflates(head, compression):
                    compression = "unknown"  # a damaged first header that looks like a zlib / gzip header
            if compression == "unknown":
                if strict:
                    raise not_a_tfrecord(self.path, head[:SNIFF_SIZE])
                compression = ""  # read it as plain data, whose first record is damaged
        except BaseException:
            self.close()
            raise
        self.compression = compression
        self.head = head[:SNIFF_SIZE]  # the file's first bytes, for the "not a TFRecord file" error
        self._parallel: ParallelInflater | None = None
        self._readinto: Callable[[memoryview], int | None] | None = getattr(self._file, "readinto", None)
        if compression == "gzip" and parallel and self._owned and isinstance(source, (str, os.PathLike)):
            self._parallel = parallel_inflater(self._file, os.fspath(source), head)
        if self._parallel is not None:  # a big GZIP file, more than one core: inflated by threads
            self._pending = b""
            self._read: Callable[[int], bytes] = self._parallel.read
            self._readinto = self._parallel.readinto
        elif compression:
            self._pending = b""
            self._read = _Inflater(self._file, compression, head).read
        else:
            self._pending = head
            self._read = self._file.read

    def _read_head(self) -> bytes:
        parts: list[bytes] = []
        size = 0
        while size < HEADER_SIZE:
            data = self._file.read(CHUNK_SIZE)
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"{self.path or 'the file object'} must be opened in binary mode")
            if not data:
                break
            parts.append(bytes(data))
            size += len(data)
        return b"".join(parts)

    def read(self, size: int = CHUNK_SIZE) -> bytes:
        """The next piece of the stream (at most about `size` bytes); b'' at its end. A damaged
        compressed stream raises CorruptRecordError / TruncatedRecordError without an offset."""
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        return self._read(size)

    def peek(self, size: int) -> bytes:
        """The next bytes of the stream, at least `size` of them unless it ends (or breaks: the next
        read raises), without consuming them."""
        try:
            while len(self._pending) < size and (data := self._read(CHUNK_SIZE)):
                self._pending += data
        except TFRecordError:
            pass
        return self._pending

    def readinto(self, view: memoryview) -> int:
        """Fill the start of `view` with the next piece of the stream; 0 at its end. Plain files
        are read straight into it (no copy); decompressed data is copied in."""
        if self._pending:
            data, self._pending = self._pending[: len(view)], self._pending[len(view) :]
        elif self._parallel is not None:
            return self._parallel.readinto(view)
        elif self.compression or self._readinto is None:
            data = self._read(len(view))
        else:
            try:
                return self._readinto(view) or 0
            except NotImplementedError:  # io.RawIOBase subclasses that define only read()
                self._readinto = None
                data = self._read(len(view))
        view[: len(data)] = data
        return len(data)

    def size(self) -> int | None:
        """The length of the stream now, when known (an uncompressed file's size); else None."""
        if self.compression:
            return None
        try:
            st = os.fstat(self._file.fileno())
        except (AttributeError, OSError, ValueError):  # a file object without a descriptor
            return None
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    def close(self) -> None:
        """Close the file (only if we opened it), after stopping the threads that inflate it."""
        if getattr(self, "_parallel", None) is not None:
            self._parallel.close()  # type: ignore[union-attr]
        if self._owned and not self._file.closed:
            self._file.close()


@dataclass(frozen=True)
class Damage:
    """A damaged span of a record stream, found by a tolerant scan (StreamScanner with on_damage).

    `offset`: where it starts in the uncompressed stream (the file offset of a plain file);
    `end`: where intact records resume, None when nothing after it can be read;
    `reason`: what is wrong, in words; `kind`: the error it raises when not skipped."""

    offset: int
    end: int | None
    reason: str
    kind: type[TFRecordError] = field(default=CorruptRecordError, compare=False, repr=False)

    @property
    def skipped(self) -> int | None:
        """How many stream bytes the span covers; None when it runs to the end of the stream."""
        return None if self.end is None else self.end - self.offset

    def error(self, path: PathName) -> TFRecordError:
        """The error naming this span in `path`, with what skipping it loses."""
        lost = "the rest of the stream" if self.end is None else f"{self.skipped} bytes, to offset {self.end}"
        return self.kind(f"{self.reason}; skipped {lost}", path=path, offset=self.offset)


class StreamScanner:
    """The one scanning loop over a DecodedStream: iter_records, the batched decoder and
    verify_file all run on it.

    `chunks()` scans the stream a buffer at a time and yields (view, starts, lengths), the
    payload of record k being view[starts[k] : starts[k] + lengths[k]]. The buffer is reused:
    a view is valid only until the next chunk is asked for. It holds a chunk plus what is left
    of a record, and grows (as data actually arrives) only for a record longer than it.

    Damage raises the error of the first bad record, after the good records before it (as
    TensorFlow does). With `on_damage`, the scan goes on instead: a record with a bad payload
    CRC is skipped by its (CRC-checked) length, after a bad header the next valid header is
    looked for, and each damaged span is passed to `on_damage`; a truncated tail or a broken
    compressed stream ends the scan. `on_read` is told how many stream bytes each read brought.
    """

    def __init__(
        self,
        stream: DecodedStream,
        *,
        verify: bool = True,
        on_damage: Callable[[Damage], None] | None = None,
        on_read: Callable[[int], None] | None = None,
    ) -> None:
        self._stream = stream
        self.path = stream.path
        self._verify = verify
        self._on_damage = on_damage
        self._on_read = on_read
        self._view = memoryview(bytearray(CHUNK_SIZE))
        self._have = 0  # bytes in the buffer
        self._origin = 0  # stream offset of the buffer's first byte
        self._eof = False
        self._failure: TFRecordError | None = None  # a broken compressed stream: after the records before it
        self.records = 0  # records yielded so far

    @property
    def origin(self) -> int:
        """The stream offset of the buffer's first byte (of the view the last chunk gave)."""
        return self._origin

    def chunks(self, multiple: int = 1) -> Iterator[tuple[memoryview, list[int], list[int]]]:
        """(view, starts, lengths) of the records, a buffer at a time.

        With `multiple`, every chunk but the last (and one cut short by damage) holds a
        multiple of that many records (for batches): the records after the last whole
        multiple stay in the buffer, already checked, and the buffer grows until it holds
        `multiple` records.
        """
        pos = 0  # where scanning resumes in the buffer (the records before it are kept_*)
        kept_starts: list[int] = []
        kept_lengths: list[int] = []
        while True:
            data = self._fill()
            damage: TFRecordError | None = None
            try:
                final = self._eof and self._failure is None
                starts, lengths, end = scan(
                    data, pos, verify=self._verify, final=final, origin=self._origin, path=self.path
                )
            except TFRecordError as err:
                if err.offset is None:  # pragma: no cover - scan always names the offset
                    raise
                starts, lengths, end = scan(data[: err.offset - self._origin], pos, verify=self._verify)
                damage = err
            if kept_starts:
                starts, lengths = kept_starts + starts, kept_lengths + lengths
                kept_starts, kept_lengths = [], []
            done = end  # the buffer's bytes that are finished with
            if multiple > 1 and not self._eof and damage is None:
                whole = len(starts) - len(starts) % multiple
                if whole < len(starts):
                    done = starts[whole] - HEADER_SIZE
                    kept_starts = [s - done for s in starts[whole:]]
                    kept_lengths = lengths[whole:]
                    del starts[whole:], lengths[whole:]
            if starts:
                self.records += len(starts)
                yield self._view, starts, lengths
            if damage is not None:
                resume = self._skip(damage)
                if resume is None:
                    end = self._have
                    break
                pos = resume - self._origin
                continue
            if self._eof:
                break
            pos = end - done
            self._advance(done, len(kept_starts), multiple)
        self._end_of_stream(end)

    def _fill(self) -> memoryview:
        """Read until the buffer is full or the stream ends (or breaks); the buffer's data."""
        view, have = self._view, self._have
        while have < len(view) and not self._eof:
            try:
                got = self._stream.readinto(view[have:])
            except TFRecordError as err:
                self._failure, got = err, 0
            if not got:
                self._eof = True
            elif self._on_read is not None:
                self._on_read(got)
            have += got
        self._have = have
        return view[:have]

    def _advance(self, done: int, kept: int = 0, multiple: int = 1) -> None:
        """Drop the first `done` bytes of the buffer; when there are none to drop, the buffer is too
        small for one record (or `multiple` records, `kept` of them in it): a bigger one."""
        data = self._view[: self._have]
        self._origin += done
        self._have -= done
        if done:
            self._view[: self._have] = data[done:]
            return
        size = len(self._view) * 2
        if kept:  # room for `multiple` records of the size seen so far, in one step
            size = max(size, self._have // kept * multiple * 9 // 8)
        grown = memoryview(bytearray(size))
        grown[: self._have] = data
        self._view = grown

    def _skip(self, err: TFRecordError) -> int | None:
        """Raise `err`, or (with on_damage) report the damaged span; the stream offset where
        scanning resumes, None when nothing after it can be read."""
        at = err.offset or 0
        if self._on_damage is None:
            if at == 0 and isinstance(err, CorruptRecordError) and not header_is_valid(self._view[: self._have]):
                raise not_a_tfrecord(self.path, self._stream.head) from None
            raise err
        header_ok = header_is_valid(self._view[: self._have], at - self._origin)
        if isinstance(err, CorruptRecordError) and header_ok:  # the length is trustworthy: skip the record
            start = at - self._origin
            end = at + OVERHEAD + int.from_bytes(self._view[start : start + 8], "little")
            self._on_damage(Damage(at, end, "payload CRC mismatch"))
            return end
        if isinstance(err, CorruptRecordError):
            resume = self._next_header(at + 1)
            where = "no valid record header follows"
            if resume is not None:
                where = f"the next valid record header is at offset {resume}"
            self._on_damage(Damage(at, resume, f"length CRC mismatch (damaged record header); {where}"))
            return resume
        self._on_damage(Damage(at, None, err.reason, type(err)))
        return None

    def _next_header(self, offset: int) -> int | None:
        """The stream offset of the first record at or after `offset` whose length CRC and payload
        CRC are both good (or whose record runs past the end of the stream, which the scan then
        reports), reading on as needed; None when the stream ends first."""
        from tfrecord_lite._wire.resync import find_header  # numpy: only once damage is met

        pos = offset - self._origin
        while True:
            size = self._have if self._eof else self._stream.size()
            end = None if size is None else size if self._eof else size - self._origin
            hit = find_header(self._view.obj, pos, self._have - HEADER_SIZE + 1, end=end)  # type: ignore[arg-type]
            if hit >= 0:
                end = hit + OVERHEAD + int.from_bytes(self._view[hit : hit + 8], "little")
                if end > self._have and not self._eof:
                    pos = hit  # read on until the record is whole
                elif end > self._have or self._payload_is_valid(hit, end):
                    return self._origin + hit
                else:
                    pos = hit + 1
                    continue
            elif self._eof:
                return None
            else:
                pos = max(min(pos, self._have), self._have - HEADER_SIZE + 1)
            self._advance(pos)
            pos = 0
            self._fill()

    def _payload_is_valid(self, start: int, end: int) -> bool:
        """Whether the record at buffer offsets start..end has a good payload CRC."""
        footer = int.from_bytes(self._view[end - FOOTER_SIZE : end], "little")
        return masked_crc(self._view[start + HEADER_SIZE : end - FOOTER_SIZE]) == footer

    def _end_of_stream(self, end: int) -> None:
        """After the last record (which ends at buffer offset `end`): a broken compressed stream is
        raised, or reported with the decompressed bytes it cut off."""
        failure = self._failure
        if failure is None:
            return
        if self._on_damage is None:
            if failure.offset is None:  # from the decompressor: name the record it cut
                raise type(failure)(failure.reason, path=self.path, offset=self._origin + end)
            raise failure
        reason = failure.reason + f"; nothing after this point can be read ({self.records} records were)"
        if end < self._have:
            reason += f"; {self._have - end} decompressed bytes after the last complete record were lost"
        self._on_damage(Damage(self._origin + self._have, None, reason, type(failure)))


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
    ) -> None:
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
            parallel=True,
        )

    def _chunks(self, multiple: int = 1) -> Iterator[tuple[memoryview, list[int], list[int]]]:
        """The records a buffer at a time, file after file (see StreamScanner.chunks); with
        `multiple`, every chunk but the last holds a multiple of that many records across files."""
        chunks = (
            chunk
            for stream in self._streams()
            for chunk in StreamScanner(stream, verify=self._verify, on_damage=self._on_damage(stream)).chunks(multiple)
        )
        return chunks if multiple == 1 or len(self._sources) == 1 else _whole_multiples(chunks, multiple)

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
    compression: str = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    prefetch: int = PREFETCH,
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
    """
    policy = DamagePolicy(on_error, max_skipped)
    sources = sources_of(source, storage_options)
    return RecordIterator(sources, compression, verify, policy, storage_options=storage_options, prefetch=prefetch)


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
