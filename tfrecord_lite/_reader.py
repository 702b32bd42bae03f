# The streaming reader. It pulls fixed-size chunks from a binary file (through a
# zlib decompressor for GZIP / ZLIB files), hands each chunk to _framing.scan,
# and keeps only the incomplete tail for the next round, so memory stays flat
# in the file size: the largest buffer is one chunk plus one record. A record
# longer than a chunk is gathered piece by piece, and only as far as data is
# actually there — a corrupt length never allocates. Compression is recognised
# from the content (a valid first header, the gzip magic, a zlib header), never
# from the file name, and pipes work because nothing seeks.
from __future__ import annotations

import zlib
from typing import IO, Callable, Iterator, List, Optional

from ._errors import CorruptRecordError, TFRecordError, TruncatedRecordError
from ._files import PathOrFile, display_name, normalize_compression, open_binary
from ._framing import HEADER_SIZE, OVERHEAD, header_is_valid, scan

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

    def __init__(self, source: PathOrFile, compression: str = "auto", *, strict: bool = True) -> None:
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

    def _read_head(self) -> bytes:
        parts: List[bytes] = []
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

    def close(self) -> None:
        """Close the file (only if we opened it)."""
        if self._owned and not self._file.closed:
            self._file.close()


class RecordIterator(Iterator[bytes]):
    """Iterator over the records of one TFRecord stream; also a context manager that closes it."""

    def __init__(self, source: PathOrFile, compression: str = "auto", verify: bool = True) -> None:
        self._stream = DecodedStream(source, compression)
        self.path = self._stream.path
        self._verify = verify
        self._records = self._records_from(self._stream.read, b"")

    def _records_from(self, read, buf: bytes) -> Iterator[bytes]:
        origin = 0  # stream offset of buf[0]
        path, verify = self.path, self._verify
        eof = False
        failure: Optional[TFRecordError] = None  # a broken compressed stream: raised after the records before it
        while True:
            try:
                starts, lengths, pos = scan(buf, 0, verify=verify, final=eof and not failure, origin=origin, path=path)
            except TFRecordError as err:  # yield the good records before the bad one first, as TF does
                assert err.offset is not None
                starts, lengths, pos = scan(memoryview(buf)[: err.offset - origin], 0, verify=verify)
                failure = err
            for s, n in zip(starts, lengths):
                yield buf[s : s + n]
            if failure:
                if failure.offset is None:  # from the decompressor: name the record it cut
                    raise type(failure)(failure.reason, path=path, offset=origin + pos)
                raise failure
            if eof:
                return
            rest = len(buf) - pos
            need = CHUNK_SIZE
            if rest >= HEADER_SIZE:  # a record longer than what is buffered: gather it (bounded by real data)
                need = max(need, int.from_bytes(buf[pos : pos + 8], "little") + OVERHEAD - rest)
            parts = [buf[pos:]]
            origin += pos
            got = 0
            while got < need:
                try:
                    data = read(min(need - got, CHUNK_SIZE))  # read(n) may allocate n: never more
                except TFRecordError as err:
                    failure = err
                    data = b""
                if not data:
                    eof = True
                    break
                parts.append(bytes(data))
                got += len(data)
            buf = b"".join(parts)

    def __iter__(self) -> "RecordIterator":
        return self

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

    def __enter__(self) -> "RecordIterator":
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

