# The streaming reader. It reads a binary file (through a zlib decompressor for
# GZIP / ZLIB files) into one reused buffer (readinto: no copy, no allocation per
# chunk), hands the buffer to _framing.scan, and keeps only the incomplete tail
# for the next round, so memory stays flat in the file size: the buffer is one
# chunk, grown only for a record longer than it, and only as far as data has
# actually arrived — a corrupt length never allocates. iter_records copies each
# record out as bytes; the batched decoder reads records where they lie. Compression is recognised
# from the content (a valid first header, the gzip magic, a zlib header), never
# from the file name, and pipes work because nothing seeks.
from __future__ import annotations

import inspect
import zlib
from collections.abc import Callable, Generator, Iterator
from typing import IO

from ._errors import CorruptRecordError, TFRecordError, TruncatedRecordError
from ._files import PathOrFile, display_name, normalize_compression, open_binary
from ._framing import HEADER_SIZE, header_is_valid, scan
from ._repr import compression, describe

CHUNK_SIZE = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_WBITS = {"gzip": 31, "zlib": 15}


def sniff_compression(head: bytes) -> str:
    """'' | 'gzip' | 'zlib' | 'unknown' from the first bytes of a file (at least 12 when there are)."""
    if not head or header_is_valid(head):
        return ""
    if head[:2] == _GZIP_MAGIC:
        return "gzip"
    if len(head) >= 2 and head[0] & 0x0F == 8 and head[0] >> 4 <= 7 and (head[0] << 8 | head[1]) % 31 == 0:
        return "zlib"
    return "unknown"


class _Inflater:
    """Decompresses a GZIP / ZLIB byte stream chunk by chunk, concatenated members included."""

    def __init__(self, raw: IO[bytes], compression: str, head: bytes) -> None:
        self._raw = raw
        self._wbits = _WBITS[compression]
        self._name = compression.upper()
        self._d = zlib.decompressobj(self._wbits)
        self._pending = head  # compressed bytes not yet fed
        self._eof = False

    def read(self, size: int) -> bytes:
        """Up to `size` decompressed bytes; b'' at the clean end of the stream. Errors carry
        no offset: the reader knows which record they cut and adds it."""
        while True:
            if self._d.eof:  # a member ended: what follows is the next member, or the end
                data = self._d.unused_data or self._raw.read(CHUNK_SIZE)
                if not data:
                    return b""
                self._d = zlib.decompressobj(self._wbits)
            elif self._d.unconsumed_tail:
                data = self._d.unconsumed_tail
            elif self._pending:
                data, self._pending = self._pending, b""
            else:
                data = self._raw.read(CHUNK_SIZE)
                if not data:
                    raise TruncatedRecordError(
                        f"the {self._name} stream ends before its end marker (the file is truncated)"
                    )
            try:
                out = self._d.decompress(data, size)
            except zlib.error as err:
                raise CorruptRecordError(
                    f"corrupt {self._name} data ({err}); the offset is in the uncompressed stream"
                ) from None
            if out:
                return out


class DecodedStream:
    """The uncompressed record stream of a source: opened, its compression recognised
    from the first bytes, and inflated chunk by chunk when it is GZIP / ZLIB."""

    def __init__(self, source: PathOrFile, compression: str | None = "auto", *, strict: bool = True) -> None:
        compression = normalize_compression(compression, allow_auto=True)
        self.path = display_name(source)
        self._file, self._owned = open_binary(source, "rb")
        try:
            head = self._read_head()
            if compression == "auto":
                compression = sniff_compression(head)
            if compression == "unknown":
                if strict:
                    raise CorruptRecordError(
                        "not a TFRecord file: no valid record header at the start, and not GZIP or ZLIB data",
                        path=self.path,
                        offset=0,
                    )
                compression = ""  # read it as plain data, whose first record is damaged
        except BaseException:
            self.close()
            raise
        self.compression = compression
        if compression:
            self._pending = b""
            self._read: Callable[[int], bytes] = _Inflater(self._file, compression, head).read
        else:
            self._pending = head
            self._read = self._file.read
        self._readinto: Callable[[memoryview], int | None] | None = getattr(self._file, "readinto", None)

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

    def readinto(self, view: memoryview) -> int:
        """Fill the start of `view` with the next piece of the stream; 0 at its end. Plain files
        are read straight into it (no copy); decompressed data is copied in."""
        if self._pending:
            data, self._pending = self._pending[: len(view)], self._pending[len(view) :]
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

    def close(self) -> None:
        """Close the file (only if we opened it)."""
        if self._owned and not self._file.closed:
            self._file.close()


class RecordIterator(Iterator[bytes]):
    """Iterator over the records of one TFRecord stream; also a context manager that closes it."""

    def __init__(self, source: PathOrFile, compression: str | None = "auto", verify: bool = True) -> None:
        self._stream = DecodedStream(source, compression)
        self.path = self._stream.path
        self._verify = verify
        self._records: Generator[bytes, None, None] = self._iter_records()

    def _chunks(self, multiple: int = 1) -> Iterator[tuple[memoryview, list[int], list[int]]]:
        """Scan the stream a buffer at a time: yields (view, starts, lengths), the payload of
        record k being view[starts[k] : starts[k] + lengths[k]]. The buffer is reused: a view
        is valid only until the next chunk is asked for. It holds a chunk plus what is left of
        a record, and grows (as data actually arrives) only for a record longer than it.

        With `multiple`, every chunk but the last holds a multiple of that many records (for
        batches): the records after the last whole multiple stay in the buffer, already
        checked, and the buffer grows until it holds `multiple` records.
        """
        stream, path, verify = self._stream, self.path, self._verify
        size = CHUNK_SIZE
        view = memoryview(bytearray(size))
        have = 0  # bytes in the buffer
        origin = 0  # stream offset of the buffer's first byte
        checked = 0  # where the records not yet scanned start (those before are kept_*)
        kept_starts: list[int] = []
        kept_lengths: list[int] = []
        eof = False
        failure: TFRecordError | None = None  # a broken compressed stream: raised after the records before it
        while True:
            while have < size and not eof:
                try:
                    got = stream.readinto(view[have:])
                except TFRecordError as err:
                    failure, got = err, 0
                if not got:
                    eof = True
                have += got
            data = view[:have]
            try:
                starts, lengths, pos = scan(
                    data, checked, verify=verify, final=eof and not failure, origin=origin, path=path
                )
            except TFRecordError as err:  # yield the good records before the bad one first, as TF does
                assert err.offset is not None
                starts, lengths, pos = scan(data[: err.offset - origin], checked, verify=verify)
                failure = err
            if kept_starts:
                starts, lengths = kept_starts + starts, kept_lengths + lengths
                kept_starts, kept_lengths = [], []
            checked = pos
            if multiple > 1 and not eof and not failure:
                whole = len(starts) - len(starts) % multiple
                if whole < len(starts):
                    pos = starts[whole] - HEADER_SIZE
                    kept_starts = [s - pos for s in starts[whole:]]
                    kept_lengths = lengths[whole:]
                    del starts[whole:], lengths[whole:]
            if starts:
                yield view, starts, lengths
            if failure:
                if failure.offset is None:  # from the decompressor: name the record it cut
                    raise type(failure)(failure.reason, path=path, offset=origin + checked)
                raise failure
            if eof:
                return
            origin += pos
            have -= pos
            checked -= pos
            if pos:
                view[:have] = data[pos:]
            else:  # the buffer is too small for one record (or `multiple` records): a bigger one
                size *= 2
                if kept_starts:  # room for `multiple` records of the size seen so far, in one step
                    size = max(size, have // len(kept_starts) * multiple * 9 // 8)
                grown = memoryview(bytearray(size))
                grown[:have] = data
                view = grown

    def _iter_records(self) -> Generator[bytes, None, None]:
        try:
            for view, starts, lengths in self._chunks():
                if len(starts) > 64:  # many small records: slicing bytes is cheaper than slicing views
                    chunk = view[: starts[-1] + lengths[-1]].tobytes()
                    for s, n in zip(starts, lengths, strict=False):
                        yield chunk[s : s + n]
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
        return describe("RecordIterator", where, compression(self._stream.compression), state)

    def __enter__(self) -> RecordIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_records(source: PathOrFile, *, compression: str = "auto", verify: bool = True) -> RecordIterator:
    """Iterate the records (payload bytes) of a TFRecord file, path or binary file object.

    `compression`: "auto" (recognised from the content), None / "", "gzip" or "zlib".
    Both CRCs are checked; `verify=False` skips the payload CRC. Errors name the file
    and the byte offset of the bad record (in the uncompressed stream).
    """
    return RecordIterator(source, compression, verify)
