"""The writer. Records are collected in memory and written in batches, so a small record costs
no system call and little Python work (TensorFlow's writer, Python's open() and every peer
buffer too); write() appends and counts down the bytes the batch still takes (_left). A batch's
size is chosen by its records, so a file of mixed sizes takes each path as it comes, and set so
that what it allocates is never faulted in afresh: glibc maps a block over its mmap threshold
(128 KiB until a freed mapped block raises it) anew each time, and gives a freed heap top beyond
its trim threshold back to the OS, keeping 128 KiB, so a batch between 128 KiB and a megabyte
costs a page fault every 4 KiB or nothing, by what the process allocated before. Records under
256 B on average are framed 96 KiB at a time (framing.frame_joined: three pieces, one
os.writev), longer ones a megabyte at a time; long ones (4 KiB and more) are never copied: up
to 64 KiB of them wait, then one os.writev takes each one's header, own bytes and footer
(_drain_apart). With `buffered=False`, each write() to an uncompressed file hands its record
to the kernel before it returns, so a process killed at any moment (SIGKILL included) leaves
every record whose write() returned: a local regular file is written through a shared memory
map (_storage/mapped.py; a store, no system call, and write() is _ThroughWriter's, framing
inlined into two struct.pack_into calls; the length CRC stored last, so that readers know a
stopped writer's tail, _wire/unfinished.py) once its first records show they are small;
otherwise one os.writev a record. write_buffer() frames a batch of records lying in one buffer
at once (framing.frame_buffer); write_framed() takes a batch already framed in place
(framing.fill_frames). GZIP and ZLIB files are one zlib stream over the whole file, as
TensorFlow writes them (default level, memLevel 9 like TF's ZlibOutputBuffer), so the default
output is TensorFlow's byte for byte; `level=` and `fast=True` (ISA-L or zlib-ng,
_compression/inflate.py) trade that identity for size or speed, and `seek_every=` adds
full-flush points that random access enters without stored windows.

A file is written in place, as TensorFlow does: killed midway, it holds every record pushed
to the OS so far (whole: by flush(), by a full batch, or by each write() with
`buffered=False`) and at most one torn record at its end, or the zero bytes ahead of a map,
which TFRecordWriter(append=True, truncate_partial=True) cuts off. A local path is locked
(publish.OutputLock) while the writer is open, so two writers never mix their records; a
failed write (disk full) cuts an uncompressed file back to its last complete record.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import struct
import zlib
from collections.abc import Mapping, Sequence
from typing import IO, Any

from crc32c import crc32c as _crc32c

from tfrecord_lite._compression.inflate import library
from tfrecord_lite._compression.kinds import COMPRESSED_NAMES, kind_of, normalize_compression
from tfrecord_lite._example.encode import encode_example, encode_sequence_example
from tfrecord_lite._example.validate import as_record
from tfrecord_lite._index.append import finish_append, prepare_append
from tfrecord_lite._index.gzip_index import SeekPoints
from tfrecord_lite._repr import compression, count, describe
from tfrecord_lite._storage.files import PathOrFile, display_name, is_file_object, open_binary, size_in_bytes
from tfrecord_lite._storage.locations import StorageOptions, has_scheme
from tfrecord_lite._storage.mapped import MappedFile, open_mapped
from tfrecord_lite._storage.publish import OutputLock, lock_if_possible
from tfrecord_lite._stream.options import Compression
from tfrecord_lite._wire.crc import MASK_DELTA
from tfrecord_lite._wire.framing import (
    HEADER_SIZE,
    HEADERS_BY_LENGTH,
    OVERHEAD,
    STORES,
    cached_header,
    frame_buffer,
    frame_joined,
    frame_many,
    frame_parts,
    store_of,
    store_u32,
)

_BUFFER_SIZE = 1 << 20  # a compressed stream's input a deflate call
_SHORT = 256  # records shorter than this on average are framed and written _SHORT_BATCH bytes at a time
_SHORT_BATCH = 96 << 10  # (framed): what a batch allocates then stays in the heap's top, which glibc keeps
_U32 = struct.Struct("<I").pack
_ROTATE = 0x100000001  # c * _ROTATE >> 15 is c rotated right by 15 bits (TFRecord's mask), in its low 32 bits
_DIVERT = -1  # the buffer threshold of a write-through or closed writer: write() takes _write_slow
_PROBE = 32  # write-through: records written with os.writev before the map is used, if they are small
_MAPPED_SIZE = 2048
_LARGE = 4096  # records this long on average are written from their own bytes (_drain_apart), never joined
_APART_SIZE = 1 << 16  # and held until this many bytes wait: glibc gives back to the OS a heap top over 128 KiB
_IOV_MAX = 1023  # parts a writev takes at most (IOV_MAX is 1024 on Linux and macOS), a multiple of 3


def _write_rest(fd: int, parts: tuple[bytes | bytearray | memoryview, ...], written: int) -> None:
    """Finish a short write of `parts` (the disk filling up), so that the error that stopped it is raised."""
    rest = memoryview(b"".join(parts))[written:]
    while rest:
        rest = rest[os.write(fd, rest) :]


def _join_and_write(fd: int, parts: tuple[bytes | bytearray | memoryview, ...]) -> int:
    return os.write(fd, b"".join(parts))


_writev = getattr(os, "writev", _join_and_write)  # Windows has no writev


def _compressor(compression: str, level: int | None, fast: bool) -> Any:
    """A zlib-API compressor: the stdlib with TensorFlow's settings, or the fast library."""
    lib = library() if fast else zlib
    if level is None:
        level = lib.Z_DEFAULT_COMPRESSION
    try:
        return kind_of(compression).deflater(level, lib)
    except (ValueError, zlib.error, lib.error) as err:
        raise ValueError(f"level={level} is not a valid deflate level for {lib.__name__} ({err})") from None


class TFRecordWriter:
    """Write records to a TFRecord file (a path, a URL, or a binary file object left open on close).

    `compression`: None / "" (plain), "gzip" or "zlib", any case ("GZIP" as in TensorFlow).
    `level`: the deflate level (default: zlib's 6, as TensorFlow); `fast=True` deflates
    with ISA-L or zlib-ng when installed (`pip install 'tfrlite[fast]'`; ISA-L levels
    are 0-3). Either makes the bytes differ from TensorFlow's output; any reader,
    TensorFlow included, still reads the file.
    `seek_every` ("4M", or bytes) makes a compressed writer full-flush at the first record
    boundary after each that many uncompressed bytes and save where in `<path>.tfrlidx`:
    TFRecordFile then enters the file there without stored windows (TensorFlow reads
    the file as usual; it is a little larger, and no longer TensorFlow's bytes).
    `append=True` adds to an existing uncompressed file after checking that it ends
    on a complete record (`truncate_partial=True` cuts an incomplete last record
    off instead of refusing) and extends its index sidecar.

    The file is written in place, through a buffer of 1 MiB at most (as TensorFlow's writer): a killed
    writer leaves the records pushed to the OS by the last `flush()` or full buffer, and at
    most one incomplete record at the end (a reader raises TruncatedRecordError there;
    append=True, truncate_partial=True cuts it off). `buffered=False` (write-through) makes
    each write() to an uncompressed file hand its record to the OS before it returns, so a
    killed writer (even by SIGKILL) keeps every record whose write() returned. A local file
    is then written through a shared memory map, grown in zeroed chunks and cut to its
    records by flush() and close(): killed, it ends with zero bytes, which readers report as
    a truncated tail (TensorFlow: as a corrupted record) and append=True,
    truncate_partial=True cuts off. Other outputs get one system call per record. A compressed stream is
    always buffered (`buffered=False` is refused): what reached the file by the last
    `flush()` survives a kill; an upload appears whole or not at all (see
    docs/reliability.md). A local path is locked while the writer is open (`.NAME.lock`
    beside it; a second writer raises OutputLockedError). A write that fails (disk full)
    raises an OSError naming the file, after cutting an uncompressed file back to its
    last complete record.

    A URL (s3://, gs://, ...) is uploaded as it is written, and the object appears only
    when close() completes the upload: an exception inside `with`, a failed write or a
    crash leaves no object. `storage_options`: fsspec's options, or an fsspec filesystem.
    """

    def __init__(
        self,
        destination: PathOrFile,
        *,
        compression: Compression = None,
        append: bool = False,
        truncate_partial: bool = False,
        level: int | None = None,
        fast: bool = False,
        seek_every: int | str | None = None,
        buffered: bool = True,
        storage_options: StorageOptions = None,
    ) -> None:
        if not buffered and type(self) is TFRecordWriter:
            self.__class__ = _ThroughWriter  # whose write() stores into a map when it can
        self.compression = normalize_compression(compression)
        if not buffered and self.compression:
            raise ValueError(
                "buffered=False (each record handed to the OS as it is written) applies to uncompressed "
                "files: a GZIP / ZLIB stream is decodable only up to its last flush(); call flush() instead"
            )
        if (level is not None or fast) and not self.compression:
            named = " or ".join(repr(name) for name in COMPRESSED_NAMES)
            raise ValueError(f"level= and fast=True apply to compressed files: pass compression={named}")
        self.path = display_name(destination)
        self._file: IO[bytes] | None = None
        self._drain_at = self._left = _DIVERT  # until opened (close() may run on a writer that failed to open)
        self._lock: OutputLock | None = None
        if truncate_partial and not append:
            raise ValueError("truncate_partial=True only applies with append=True")
        if not buffered and self.path is not None and not is_file_object(destination) and has_scheme(self.path):
            raise ValueError(
                "buffered=False applies to local files and file objects: an upload appears only when closed"
            )
        if self.path is not None and not is_file_object(destination) and not has_scheme(self.path):
            self._lock = lock_if_possible(self.path)
        try:
            self._append = prepare_append(destination, truncate_partial, self.compression) if append else None
            self._file, self._owned = open_binary(destination, "ab" if append else "wb", storage_options)
        except BaseException:
            self._unlock()
            raise
        self._start = self._append.offset if self._append is not None else 0
        self._compressor = _compressor(self.compression, level, fast) if self.compression else None
        local = self._owned and isinstance(self._file, io.BufferedWriter)
        self._fd = self._file.fileno() if local else None  # written to directly, past the file object's buffer
        self._through = not buffered  # a local file: mapped or os.writev per record; a file object: write, flush
        self._mapped: MappedFile | None = None
        if self._through and self._fd is not None:
            self._mapped = open_mapped(self.path, self._fd, self._start)  # type: ignore[arg-type]
        self._map: Any = None  # the mapped part of the file (from _mapped.base), where the data ends in it, its length
        self._at = self._room = 0
        self._probing = True  # write-through: the map not yet chosen or refused (_maps_small_records)
        self._at_counted = 0  # where the data ended in the map when _drained_bytes was last brought up to date
        self._records: list[bytes] = []  # written but not yet framed
        self._drained_records = 0
        self._drained_bytes = 0
        self._seek: SeekPoints | None = None
        self._drain_at = _BUFFER_SIZE if self.compression else _APART_SIZE  # _drain then sets it by the records
        if seek_every is not None:
            if not self.compression or self.path is None or not self._owned:
                raise ValueError("seek_every= applies to a compressed file written to a local path")
            self._seek = SeekPoints(self.compression, size_in_bytes(seek_every))
            self._drain_at = min(_BUFFER_SIZE, self._seek.every)
        if self._through:
            self._drain_at = _DIVERT
        self._left = self._drain_at  # what the buffer takes before it drains: _drain_at less the payloads waiting

    @property
    def records_written(self) -> int:
        """How many records were written so far."""
        return self._drained_records + len(self._records)

    @property
    def bytes_written(self) -> int:
        """The uncompressed size of the record stream so far."""
        return self._drained_bytes + self._pending() + 16 * len(self._records) + self._at - self._at_counted

    def _pending(self) -> int:
        """The size of the payloads written but not yet framed (each framed adds 16 bytes)."""
        return self._drain_at - self._left

    def _limit(self, drain_at: int) -> None:
        """Drain from now on when `drain_at` bytes of payload wait (_DIVERT: at every write())."""
        self._left += drain_at - self._drain_at
        self._drain_at = drain_at

    def _written(self) -> int:
        """The file offset where the records handed to the OS end."""
        return self._start + self._drained_bytes + self._at - self._at_counted

    def _unmap(self) -> int:
        """Drop the map (the file keeps what was stored into it): where the data ends in the file."""
        written = self._written()
        self._drained_bytes = written - self._start
        self._map, self._at, self._room, self._at_counted = None, 0, 0, 0
        return written

    def write(self, record: Any) -> None:
        """Append one serialized record (bytes or any bytes-like object); for a dict of
        feature values use write_example."""
        if type(record) is not bytes:
            self._write_slow(record)
            return
        self._records.append(record)  # the hot path: framed in groups by _drain
        self._left -= len(record)
        if self._left <= 0:  # always, when write-through or closed (_DIVERT)
            self._drain_full()

    def _drain_full(self) -> None:
        """_drain, the buffer being full (a write-through or closed writer's record goes to _write_slow)."""
        if self._drain_at == _DIVERT:
            record = self._records.pop()
            self._left += len(record)
            self._write_slow(record)
            return
        if self._drain_at == _APART_SIZE and len(self._records) == 1 and self._compressor is None:
            self._left = self._drain_at  # a long record alone (64 KiB or more), after long ones: out at once
            self._emit_record(self._records.pop())
            return
        self._drain()

    def _emit_record(self, record: Any) -> None:
        """Write one record from its own bytes: its header, payload and footer by one os.writev."""
        n, c = len(record), _crc32c(record)  # framing inlined (frame_header / frame_footer, cached)
        footer = _U32(((c * _ROTATE >> 15) + MASK_DELTA) & 0xFFFFFFFF)
        self._emit(n + 16, HEADERS_BY_LENGTH.get(n) or cached_header(n), record, footer)
        self._drained_records += 1
        self._drained_bytes += n + 16

    def _write_slow(self, record: Any) -> None:
        """write() to a write-through or closed writer, or of anything but bytes (or to a mapped
        writer whose map is full)."""
        if self._file is None:
            raise ValueError("write to a closed TFRecordWriter")
        record = as_record(record)
        n = len(record)
        if not self._through:
            self._records.append(record)
            self._left -= n
            if self._left <= 0:
                self._drain()
        elif self._mapped is not None and self._maps_small_records():
            if self._at + n + 16 > self._room:
                self._map_more(n + 16)
            _ThroughWriter.write(self, record)  # type: ignore[arg-type]  # the store; self may be a subclass
        else:
            self._emit_record(record)

    def _maps_small_records(self) -> bool:
        """Whether to write through the map: the first records go to os.writev, then the map is used if
        they were small (under _MAPPED_SIZE on average), for which a system call each is the cost. For
        larger ones the copy into the page cache is, and a map makes it dearer (a page is zeroed first)."""
        if self._map is not None or not self._probing:
            return True
        if self._drained_records < _PROBE:
            return False
        self._probing = False
        if self._drained_bytes > _MAPPED_SIZE * self._drained_records:
            self._close_mapped()  # larger records: os.writev from now on
            return False
        return True

    def _map_more(self, size: int) -> None:
        """Map the file further, for a record of `size` bytes (the file grown first)."""
        written = self._unmap()
        try:
            self._map, self._at, self._room = self._mapped.grow(written, written + size)  # type: ignore[union-attr]
        except OSError as err:
            self._fail(err)
        self._at_counted = self._at

    def write_buffer(self, data: bytes | bytearray | memoryview, ends: Sequence[int]) -> None:
        """Append the records that lie back to back in `data` (record i ends at ends[i]), as
        write() of each would, framed at once (a batch encoder's output, say)."""
        if self._file is None:
            raise ValueError("write to a closed TFRecordWriter")
        if self._record_by_record:
            stops = [int(end) for end in ends]
            self._write_each(memoryview(data).cast("B"), [0, *stops[:-1]], stops)
            return
        self._write_run(frame_buffer(data, ends), len(ends))

    def write_framed(self, framed: Any, lengths: Sequence[int] | Any) -> None:
        """Append records already framed, back to back in the bytes-like `framed`, record i's
        payload lengths[i] bytes long: as write() of each would, without framing them again (a
        batch encoder's output framed in place by framing.fill_frames, as write_arrow does)."""
        if self._file is None:
            raise ValueError("write to a closed TFRecordWriter")
        view = memoryview(framed).cast("B")
        if self._record_by_record:
            sizes = [int(n) for n in lengths]
            starts = list(itertools.accumulate((n + OVERHEAD for n in sizes[:-1]), initial=HEADER_SIZE))
            self._write_each(view, starts, [start + n for start, n in zip(starts, sizes, strict=True)])
            return
        self._write_run(view, len(lengths))

    @property
    def _record_by_record(self) -> bool:
        """Whether a batch is written a record at a time: seek points are placed between records,
        and a map stores each record's length CRC last."""
        return self._seek is not None or self._mapped is not None

    def _write_each(self, view: memoryview, starts: Sequence[int], stops: Sequence[int]) -> None:
        for start, stop in zip(starts, stops, strict=True):
            self.write(view[start:stop].tobytes())

    def _write_run(self, framed: memoryview, count: int) -> None:
        """Write `count` framed records back to back in `framed`, after any buffered ones."""
        if self._records:
            self._drain()
        size = len(framed)
        data: bytes | memoryview = framed
        if self._compressor is not None:
            data = self._compressor.compress(framed)
        if data:
            self._emit(len(data), data)
        self._drained_records += count
        self._drained_bytes += size

    def write_example(self, values: Mapping[str, Any]) -> None:
        """Encode `values` (a dict of feature values) with encode_example and write it as one record."""
        self.write(encode_example(values))

    def write_sequence_example(self, context: Mapping[str, Any], feature_lists: Mapping[str, Any]) -> None:
        """Encode `context` and `feature_lists` ({key: [value per step]}) with encode_sequence_example
        and write it as one record."""
        self.write(encode_sequence_example(context, feature_lists))

    def _drain(self) -> None:
        """Write the buffered records: compressed, framed together and deflated (with the seek points)."""
        if self._compressor is None:
            return self._drain_plain()
        if self._seek is not None:
            self._seek.add(self._records)
        records = len(self._records)
        size = self._pending() + 16 * records
        data = self._compressor.compress(frame_many(self._records))
        self._records = []
        self._left = self._drain_at
        if self._seek is not None:
            data += self._seek.after(self._compressor, len(data), self._drained_bytes + size)
        if data:
            self._emit(len(data), data)
        self._drained_records += records
        self._drained_bytes += size

    def _drain_plain(self) -> None:
        """Write the buffered records to an uncompressed file: long ones from their own bytes
        (_drain_apart), short ones framed together in three pieces (framing.frame_joined)."""
        records = self._records
        if not records:
            return
        pending = self._pending()
        size = pending + 16 * len(records)
        if self._drain_at != _DIVERT:
            if pending >= _LARGE * len(records):  # long records: written from their own bytes
                self._limit(_APART_SIZE)
                return self._drain_apart()
            self._limit(_BUFFER_SIZE if pending >= _SHORT * len(records) else 1 + _SHORT_BATCH * pending // size)
        head, body, tail = frame_joined(records)
        self._records = []
        self._left = self._drain_at
        self._emit(size, head, body, tail)
        self._drained_records += len(records)
        self._drained_bytes += size

    def _drain_apart(self) -> None:
        """Write the buffered records, long ones, from their own bytes: each one's header, payload and
        footer are parts of one os.writev for the lot, the payloads never copied (frame_many would copy
        each once more into a buffer the size of the batch, which glibc maps and unmaps afresh while its
        mmap threshold is low: page faults on every byte, and a speed that depends on the process's past)."""
        records, self._records = self._records, []
        size = self._pending() + 16 * len(records)
        self._left = self._drain_at
        parts = frame_parts(records)
        if len(parts) <= _IOV_MAX:
            self._emit(size, *parts)
        else:
            for at in range(0, len(parts), _IOV_MAX):
                chunk = parts[at : at + _IOV_MAX]
                self._emit(sum(map(len, chunk)), *chunk)
        self._drained_records += len(records)
        self._drained_bytes += size

    def _emit(self, size: int, *parts: bytes | bytearray | memoryview) -> None:
        """Write `parts` (`size` bytes) and push them to the OS, so that a failure is seen here, after
        whole records only."""
        try:
            if self._fd is not None:
                written = _writev(self._fd, parts)
                if written < size:
                    _write_rest(self._fd, parts, written)
            else:
                for part in parts:
                    self._file.write(part)  # type: ignore[union-attr]
                self._file.flush()  # type: ignore[union-attr]
        except OSError as err:
            self._fail(err)

    def _fail(self, err: OSError) -> None:
        """Close after a failed write; an uncompressed file we own ends on its last complete record."""
        complete = self._written()
        with contextlib.suppress(OSError):
            self._close_mapped()
        with contextlib.suppress(OSError):
            if self._owned:  # an upload is cancelled rather than completed with what it got
                getattr(self._file, "abort", self._file.close)()  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            if self._owned and not self.compression and self.path is not None and self._lock is not None:
                os.truncate(self.path, complete)
        self._file = None
        self._limit(_DIVERT)
        self._unlock()
        where = self.path or "the file"
        reason = os.strerror(err.errno) if err.errno is not None else str(err)
        raise OSError(
            err.errno, f"{reason}: writing {where} failed; the records before the failed write are kept"
        ) from err

    def _close_mapped(self) -> None:
        """Unmap, cut the file to the records written (the zero bytes ahead of them), close the map's descriptor."""
        mapped, self._mapped = self._mapped, None
        written = self._unmap()
        if mapped is not None:
            try:
                mapped.finish(written)
            finally:
                mapped.close()

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def flush(self) -> None:
        """Push everything written so far to the file (a compressed stream is sync-flushed,
        so a reader sees every complete record)."""
        if self._file is None:
            return
        self._drain()
        if self._mapped is not None:  # the file cut to the records written; the next write grows it again
            written = self._unmap()
            try:
                self._mapped.finish(written)
            except OSError as err:
                self._fail(err)
        if self._compressor is not None:
            out = self._compressor.flush(zlib.Z_SYNC_FLUSH)
            if self._seek is not None:
                self._seek.wrote(len(out))
            self._emit(len(out), out)

    def close(self) -> None:
        """Finish the file; closes it only if the writer opened it. Safe to call twice."""
        if self._file is None:
            return
        try:
            self._drain()
            if self._compressor is not None:
                out = self._compressor.flush(zlib.Z_FINISH)
                self._emit(len(out), out)
            self._close_mapped()
        finally:
            if self._file is not None and self._owned:
                self._close_mapped()
                self._file.close()
            self._file = None
            self._limit(_DIVERT)
            self._unlock()
        if self._append is not None:
            finish_append(self.path, self._append)  # extend the index sidecar, if there is a fresh one
        if self._seek is not None:
            self._seek.save(self.path)  # type: ignore[arg-type]

    @property
    def closed(self) -> bool:
        return self._file is None

    def __repr__(self) -> str:
        where = repr(self.path) if self.path is not None else "<file object>"
        state = "closed" if self.closed else "open"
        written = count(self.records_written, "records written")
        return describe("TFRecordWriter", where, compression(self.compression), written, state)

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None and self._owned and hasattr(self._file, "abort"):
            self.abort()  # an upload: cancelled, so no partial object appears
            return
        self.close()

    def abort(self) -> None:
        """Stop writing and drop the output when it is an upload (no object appears); a local file
        is closed as it is. Safe to call twice, and after close()."""
        file, self._file = self._file, None
        self._limit(_DIVERT)
        try:
            self._close_mapped()
        finally:
            self._unlock()
        if file is None:
            return
        if self._owned and hasattr(file, "abort"):
            file.abort()
        elif self._owned:
            file.close()

    def __del__(self) -> None:
        file = getattr(self, "_file", None)
        if file is not None and getattr(self, "_owned", False):
            try:
                if hasattr(file, "abort"):  # an upload never closed was not finished: it never appears
                    self.abort()
                else:
                    self.close()
            except Exception:
                pass


class _ThroughWriter(TFRecordWriter):
    """A write-through TFRecordWriter (buffered=False; TFRecordWriter.__init__ makes one), whose
    write() stores into a shared map of the file (_storage/mapped.py) when it can, the framing
    inlined; else it is TFRecordWriter's. Each record's header goes in first with its length CRC
    zero, and its length CRC last: a record cut short by a kill is known by its missing length CRC
    (_wire/unfinished.py). A small record's header, payload and footer are one struct.pack_into of
    a format made for its length (no bytes built to be copied again; framing.store_of), its length CRC a
    second."""

    def write(self, record: Any) -> None:
        if type(record) is not bytes:
            self._write_slow(record)
            return
        n = len(record)
        at = self._at
        end = at + n + 16
        if end > self._room:  # also when closed or not mapped yet: _room is 0 then
            self._write_slow(record)
            return
        store, length_crc = STORES.get(n) or store_of(n)
        c = _crc32c(record)
        mm = self._map
        store(mm, at, n, record, ((c * _ROTATE >> 15) + MASK_DELTA) & 0xFFFFFFFF)  # length CRC zero
        store_u32(mm, at + 8, length_crc)
        self._at = end
        self._drained_records += 1
