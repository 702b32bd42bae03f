"""The scanning loop of the package, over the uncompressed stream of a file.
DecodedStream opens a path, URL or binary file object, recognises its compression from
the content (a valid first header, the gzip magic, a zlib header), never from the file
name, and inflates GZIP / ZLIB through the inflater its caller chooses (the streaming
Inflater by default); pipes work because nothing seeks. StreamScanner reads that stream
into one reused buffer (readinto: no copy, no allocation per chunk), hands the buffer
to framing.scan, and keeps only the incomplete tail for the next round, so memory
stays flat in the file size: the buffer is one chunk, grown only for a record longer
than it, and only as far as data has actually arrived — a corrupt length never
allocates, and a record whose header claims more than `max_record_bytes` (1 GiB unless the
reader is told otherwise) is refused before the buffer grows for it. A scan that needs no
payloads (count, verify) passes a record longer than the buffer through it a buffer at a time,
its CRC computed piece by piece, so memory stays flat whatever the records. It is the only
such loop: iter_records, the batched decoder, verify_file,
salvage, count_records and the index builders all run on it. It raises the first
damage, or (with an on_damage hook) reports every damaged span as a Damage and
resynchronises after it: after a bad header, and after a good header whose length runs
past the end (a forged length in front of good records). Skipping damage in a character
device (/dev/zero) is refused: nothing would end that scan. Damage in a plain stream is the
TruncatedRecordError of a stopped write-through writer when the rest of the stream is its zero
tail (_wire/unfinished.py; read with os.pread from a regular file, or found in the buffer at
the end of the stream).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from typing import IO, Protocol

from crc32c import crc32c

from tfrecord_lite._compression.inflater import Inflater
from tfrecord_lite._compression.kinds import compression_mismatch, is_compressed, normalize_compression
from tfrecord_lite._errors import CorruptRecordError, RecordTooLargeError, TFRecordError, TruncatedRecordError
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.files import PathOrFile, display_name, not_a_file, open_binary
from tfrecord_lite._storage.locations import StorageOptions
from tfrecord_lite._stream.damage import Damage
from tfrecord_lite._wire.crc import mask, masked_crc
from tfrecord_lite._wire.framing import FOOTER_SIZE, HEADER_SIZE, OVERHEAD, header_is_valid, scan
from tfrecord_lite._wire.sniff import SNIFF_SIZE, inflates, not_a_tfrecord, sniff_compression
from tfrecord_lite._wire.unfinished import ReadAt, reader_of, unfinished_tail

CHUNK_SIZE = 1 << 20  # the scan buffer, and the most a read of the stream asks for
MAX_RECORD_BYTES = 1 << 30  # the longest record a reader holds in memory unless told otherwise
# the most a batch's buffer grows by in one step beyond doubling (8192 records of 1 MiB seen
# would otherwise reserve 9 GiB at once, however short the file)
GROW_STEP = 256 << 20
# of a long record in a stream of unknown length, what a scan that needs no payloads holds, with
# on_damage, before streaming it through: a forged length closer than this to the end is resynchronised after
RESYNC_BYTES = 8 << 20


def too_large(length: int, limit: int, path: str | None, offset: int) -> RecordTooLargeError:
    """The error for a record longer than a reader's `max_record_bytes`."""
    return RecordTooLargeError(
        f"the record's header claims {length} bytes, more than max_record_bytes={limit}; if the file is "
        f"trusted, pass max_record_bytes={length} (or more) to the reader to read it",
        path=path,
        offset=offset,
    )


class StreamInflater(Protocol):
    """What inflates the file of a DecodedStream: Inflater, or what its `make_inflater` makes
    instead (one with a `readinto` method fills the scan buffer itself)."""

    def read(self, size: int) -> bytes: ...

    def close(self) -> None: ...


# (file positioned after `head`, "gzip" | "zlib", the first bytes already read from it) -> its inflater
InflaterFactory = Callable[[IO[bytes], str, bytes], StreamInflater]


class DecodedStream:
    """The uncompressed record stream of a source: opened, its compression recognised
    from the first bytes, and inflated chunk by chunk when it is GZIP / ZLIB by `inflater`,
    which `make_inflater` makes (Inflater, unless the caller has a faster one for the file)."""

    def __init__(
        self,
        source: PathOrFile,
        compression: str | None = "auto",
        *,
        strict: bool = True,
        storage_options: StorageOptions = None,
        make_inflater: InflaterFactory = Inflater,
    ) -> None:
        given, compression = compression, normalize_compression(compression, allow_auto=True)
        self.path = display_name(source)
        self._file, self._owned = open_binary(source, "rb", storage_options)
        try:
            head = self._read_head()
            found = sniff_compression(head)
            if compression == "auto":
                compression = found
                if not strict and is_compressed(compression) and not inflates(head, compression):
                    compression = "unknown"  # a damaged first header that looks like a zlib / gzip header
            if compression == "unknown":
                if strict:
                    raise not_a_tfrecord(self.path, head[:SNIFF_SIZE])
                compression = ""  # read it as plain data, whose first record is damaged
            elif strict and len(head) >= HEADER_SIZE and found not in (compression, "unknown"):
                raise compression_mismatch(self.path or "the stream", given, found)  # a named one is held to it
        except BaseException:
            self.close()
            raise
        self.compression = compression
        self.head = head[:SNIFF_SIZE]  # the file's first bytes, for the "not a TFRecord file" error
        self.inflater: StreamInflater | None = None  # None: a plain file
        self._readinto: Callable[[memoryview], int | None] | None = getattr(self._file, "readinto", None)
        if compression:
            self.inflater = make_inflater(self._file, compression, head)
            self._pending = b""
            self._read: Callable[[int], bytes] = self.inflater.read
            self._readinto = getattr(self.inflater, "readinto", None)  # None: read, then copied in
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
        are read straight into it (no copy); decompressed data is copied in (by the inflater's
        own readinto when it has one)."""
        if self._pending:
            data, self._pending = self._pending[: len(view)], self._pending[len(view) :]
        elif self._readinto is None:
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

    def read_at(self) -> ReadAt | None:
        """Reading at an offset without moving through the stream (os.pread), for a plain regular
        file with a descriptor; else None."""
        if self.size() is None or not hasattr(os, "pread"):
            return None
        fd = self._file.fileno()
        return lambda offset, size: os.pread(fd, size, offset)

    def is_device(self) -> bool:
        """Whether the source is a character device (/dev/zero, /dev/urandom, a terminal): one that
        may never end, unlike a file or a pipe."""
        try:
            return stat.S_ISCHR(os.fstat(self._file.fileno()).st_mode)
        except (AttributeError, OSError, ValueError):  # a file object without a descriptor
            return False

    def close(self) -> None:
        """Close the file (only if we opened it), after its inflater (which may run threads)."""
        if getattr(self, "inflater", None) is not None:
            self.inflater.close()  # type: ignore[union-attr]
        if self._owned and not self._file.closed:
            self._file.close()


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

    A record longer than `max_record_bytes` raises RecordTooLargeError before it is held. With
    `payloads=False` (count, verify: only `records` and the damage matter) a record longer than
    the buffer is checked as it streams through instead, never held, and not yielded. With
    `on_damage`, a header whose length runs past the end is damage resynchronised after: in a
    file of known size that is seen before anything is held (whatever the limit); in a stream
    of unknown length a scan without payloads holds up to RESYNC_BYTES of a long record before
    streaming it, so a forged length closer than that to the end is resynchronised after too.
    """

    def __init__(
        self,
        stream: DecodedStream,
        *,
        verify: bool = True,
        on_damage: Callable[[Damage], None] | None = None,
        on_read: Callable[[int], None] | None = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
        payloads: bool = True,
    ) -> None:
        self._stream = stream
        self._limit = max_record_bytes
        self._payloads = payloads
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
        if self._on_damage is not None and self._stream.is_device():
            raise not_a_file(self.path, "skipping damage in a device such as /dev/zero might never end")
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
                damage = self._unfinished(err, self.records + len(kept_starts) + len(starts))
            if kept_starts:
                starts, lengths = kept_starts + starts, kept_lengths + lengths
                kept_starts, kept_lengths = [], []
            refused = self._refused(starts, lengths)
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
            if refused is not None:
                raise refused
            if damage is not None:
                resume = self._skip(damage)
                if resume is None:
                    end = self._have
                    break
                pos = resume - self._origin
                continue
            if self._eof:
                break
            if done == 0 and not kept_starts:  # a record longer than the buffer (its header checked)
                length = int.from_bytes(self._view[:8], "little")
                if self._runs_past_end(length):  # a forged length: resynchronise after it
                    resume = self._skip(self._truncated(self._origin, length, self._stream_left() - HEADER_SIZE))
                    if resume is None:
                        end = self._have
                        break
                    pos = resume - self._origin
                    continue
                if not self._payloads and not self._held_for_resync():
                    pos = end = 0
                    if self._pass_long_record():
                        continue
                    break
                if self._payloads:
                    self._refuse_longer(length)
            pos = end - done
            self._advance(done, len(kept_starts), multiple)
        self._end_of_stream(end)

    def _unfinished(self, err: TFRecordError, records: int) -> TFRecordError:
        """`err`, or the TruncatedRecordError for the tail a write-through writer left (zero bytes,
        _wire/unfinished.py) when the plain stream from its offset on is one, read in chunks from
        the file or, at the end of the stream, from the buffer; `records` come before it."""
        at = err.offset
        if at is None or self._stream.compression or isinstance(err, RecordTooLargeError):
            return err
        reason = None
        if self._eof and self._failure is None:
            reason = unfinished_tail(reader_of(self._view), at - self._origin, self._have, records)
        elif (read_at := self._stream.read_at()) is not None:
            reason = unfinished_tail(read_at, at, self._stream.size() or 0, records)
        return err if reason is None else TruncatedRecordError(reason, path=self.path, offset=at)

    def _refused(self, starts: list[int], lengths: list[int]) -> RecordTooLargeError | None:
        """The error for the first record of a chunk longer than the limit, the records from it on
        dropped from the chunk; None when there is none (a limit above the buffer: none can be)."""
        if self._limit >= len(self._view) or not self._payloads or not lengths or max(lengths) <= self._limit:
            return None
        k = next(k for k, n in enumerate(lengths) if n > self._limit)
        err = too_large(lengths[k], self._limit, self.path, self._origin + starts[k] - HEADER_SIZE)
        del starts[k:], lengths[k:]
        return err

    def _runs_past_end(self, length: int) -> bool:
        """Whether, skipping damage in a stream of known length (a plain file), the record at the
        buffer's start claims more than is left of it: damage, not a record to hold or stream."""
        if self._on_damage is None or self._stream.size() is None:
            return False
        return OVERHEAD + length > self._stream_left()

    def _stream_left(self) -> int:
        """The bytes of a stream of known length from the buffer's start on."""
        return (self._stream.size() or 0) - self._origin

    def _held_for_resync(self) -> bool:
        """Whether a scan that needs no payloads, skipping damage in a stream of unknown length, still
        holds the long record at the buffer's start (the buffer growing as data arrives, up to
        RESYNC_BYTES) rather than streaming it through: if the stream ends inside it, the bytes held
        are searched for the next record."""
        return self._on_damage is not None and self._stream.size() is None and len(self._view) < RESYNC_BYTES

    def _truncated(self, at: int, length: int, data: int) -> TruncatedRecordError:
        """The error for the record at `at` whose header claims `length` bytes of data when only
        `data` bytes follow its header (as framing.scan words it)."""
        return TruncatedRecordError(
            f"truncated record: its header announces {plural(length, 'byte')} of data, but only "
            f"{max(0, data)} of the {length + FOOTER_SIZE} bytes of data and CRC are there",
            path=self.path,
            offset=at,
        )

    def _refuse_longer(self, length: int) -> None:
        """Raise for the record at the buffer's start when it is longer than the limit."""
        if length > self._limit:
            raise too_large(length, self._limit, self.path, self._origin)

    def _pass_long_record(self) -> bool:
        """Let the record at the buffer's start, longer than the buffer, stream through it: its
        payload CRC computed piece by piece (when verifying), the buffer then holding what follows.
        Whether the stream goes on after it (a truncated record or a broken stream ends it)."""
        at, length = self._origin, int.from_bytes(self._view[:8], "little")
        data_end, total = HEADER_SIZE + length, OVERHEAD + length
        got, crc, footer = 0, 0, b""
        while True:
            take = min(self._have, total - got)
            lo, hi = max(got, HEADER_SIZE), min(got + take, data_end)
            if self._verify and lo < hi:
                crc = crc32c(self._view[lo - got : hi - got], crc)
            if got + take > data_end:
                footer += bytes(self._view[max(0, data_end - got) : take])
            got += take
            if take:
                self._advance(take)
            if got == total:
                break
            if self._eof:
                return self._cut_long_record(at, length, got)
            self._fill()
        if self._verify and mask(crc) != int.from_bytes(footer, "little"):
            if self._on_damage is None:
                raise CorruptRecordError("corrupted record: the data CRC does not match", path=self.path, offset=at)
            self._on_damage(Damage(at, at + total, "payload CRC mismatch"))
        else:
            self.records += 1
        return True

    def _cut_long_record(self, at: int, length: int, got: int) -> bool:
        """The stream ended `got` bytes into a long record: a broken compressed stream is reported
        as such after the loop; else the record is truncated. False: nothing follows."""
        if self._failure is not None:
            return False
        err = self._truncated(at, length, got - HEADER_SIZE)
        if self._on_damage is None:
            raise err
        self._on_damage(Damage(at, None, err.reason, TruncatedRecordError))
        return False

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
        if kept:  # room for `multiple` records of the size seen so far, in one step up to GROW_STEP
            size = max(size, min(self._have // kept * multiple * 9 // 8, self._have + GROW_STEP))
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
        if isinstance(err, TruncatedRecordError) and header_ok:
            # a good header whose length runs past the end: a truncated tail, or a forged
            # length in front of good records, which resynchronising finds
            resume = self._next_header(at + 1)
            if resume is not None:
                reason = f"{err.reason}; the next valid record header is at offset {resume}"
                self._on_damage(Damage(at, resume, reason, type(err)))
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
        were = "was" if self.records == 1 else "were"
        reason = failure.reason + f"; nothing after this point can be read ({plural(self.records, 'record')} {were})"
        if end < self._have:
            reason += f"; {self._have - end} decompressed bytes after the last complete record were lost"
        self._on_damage(Damage(self._origin + self._have, None, reason, type(failure)))
