"""The records of an uncompressed file through its memory map, or of an object in a store through
its RemoteBuffer, at the spans of the file's index: MappedRecords, the backend TFRecordFile
(_records/random_access.py) reads an uncompressed file with.

Strategy: record i is one slice of the map between the index's offsets, its 12-byte header compared
with the one a record of that length has (the length and its CRC checked in one comparison) and, with
verify, its data CRC checked. A file that shrinks while open: each read of the map asks the file's
size first (one fstat; one for a whole batch of records, against the batch's furthest end) and a
record past its end raises TFRecordError ("FILE changed while open: ...") instead of touching
unbacked pages (SIGBUS). An object's records come whole from the RemoteBuffer's block cache, a list
of them fetched first by a few coalesced requests.
"""

from __future__ import annotations

import functools
import mmap
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from tfrecord_lite._errors import CorruptRecordError, TFRecordError
from tfrecord_lite._index.record_index import Buffer, RecordIndex, release
from tfrecord_lite._storage.files import display_name
from tfrecord_lite._stream.scanner import too_large
from tfrecord_lite._wire.crc import masked_crc
from tfrecord_lite._wire.framing import FOOTER_SIZE, HEADER_SIZE, OVERHEAD, frame_header

_HEADER = struct.Struct("<QI")
_U32 = struct.Struct("<I")
_header_for = functools.lru_cache(maxsize=1 << 12)(frame_header)  # record length -> its 12-byte header


def int_view(offsets: np.ndarray) -> memoryview:
    """A memoryview of uint64 offsets whose items are Python ints."""
    return np.ascontiguousarray(offsets, np.uint64).data.cast("B").cast("Q")


def closed_error(name: str) -> ValueError:
    """The error of a read from a closed TFRecordFile."""
    return ValueError(f"I/O operation on a closed TFRecordFile ({name})")


def _furthest(ends: Sequence[int], positions: Sequence[int]) -> int:
    """The furthest end of the records at `positions` (0: none); a rising range's, by a slice of `ends`."""
    if isinstance(positions, range) and positions.step > 0:
        return max(ends[positions.start : positions.stop : positions.step], default=0)
    return max((ends[i] for i in positions), default=0)


class MappedRecords:
    """The records of an uncompressed file through its memory map (or of an object through its
    RemoteBuffer), at the spans its index gives: how TFRecordFile reads an uncompressed file.
    `at` / `ends` (where record i starts / ends) and `read(start, end)` make TFRecordFile's f[i]."""

    compression = ""

    def __init__(self, buf: Buffer, index: RecordIndex, path: str, verify: bool, *, remote: bool = False) -> None:
        self._buf: Buffer | None = buf
        self.index = index
        self._path = path
        self._verify = verify
        self.at = int_view(index.offsets)  # offsets as Python ints, faster to index than numpy
        self.ends = self.at[1:] if index.ends is None else int_view(index.ends)  # where record i ends
        self.read: Callable[[int, int], bytes] = self._read_remote if remote else self._read_mapped
        self._opened = len(buf)  # bytes mapped: the file's size when opened
        self._size_now: Callable[[], int] = buf.size if isinstance(buf, mmap.mmap) else buf.__len__

    @property
    def location(self) -> str | None:
        """The binary sidecar of the index, or None when it is held in memory."""
        return self.index.location

    @property
    def _name(self) -> str:
        """The file or object as errors name it (a URL without its secrets)."""
        return display_name(self._path) or self._path

    def __len__(self) -> int:
        return len(self.index)

    def get(self, i: int) -> bytes:
        """Record `i` (in range)."""
        return self.read(self.at[i], self.ends[i])

    def take(self, positions: Iterable[int]) -> list[bytes]:
        """The records at `positions` (in range); a mapped file's size is asked once for them all."""
        at, ends, read = self.at, self.ends, self.read
        if read == self._read_mapped:
            positions = positions if isinstance(positions, range) else list(positions)
            furthest = _furthest(ends, positions)
            if self._buf is not None and furthest > self._size_now():  # the file shrank (SIGBUS past its end)
                raise self._changed()
            read_sized = self._read_sized
            return [read_sized(at[i], ends[i]) for i in positions]
        prefetch = getattr(self._buf, "prefetch", None)
        if prefetch is not None:  # an object in a store: fetch the records' spans first, few requests
            positions = list(positions)
            prefetch([(at[i], ends[i]) for i in positions])
        return [read(at[i], ends[i]) for i in positions]

    def __iter__(self) -> Iterator[bytes]:
        at, ends, read = self.at, self.ends, self.read
        for i in range(len(self.index)):
            yield read(at[i], ends[i])

    def offset(self, i: int) -> int:
        """Byte offset of record `i` (in range) in the file."""
        return self.at[i]

    def refuse_longer_than(self, limit: int) -> None:
        """RecordTooLargeError for the first record the index says is longer than `limit` (a reader's
        max_record_bytes), before any record is read: one numpy pass over the index."""
        n = len(self.index)
        starts = self.index.offsets[:n]
        ends = self.index.offsets[1 : n + 1] if self.index.ends is None else self.index.ends[:n]
        over = np.flatnonzero(ends - starts - OVERHEAD > limit)
        if over.size:
            start = int(starts[over[0]])
            raise too_large(int(ends[over[0]]) - start - OVERHEAD, limit, self._name, start)

    def _read_mapped(self, start: int, end: int) -> bytes:
        if self._buf is not None and end > self._size_now():  # the file shrank: touching the map past its end is SIGBUS
            raise self._changed()
        return self._read_sized(start, end)

    def _read_sized(self, start: int, end: int) -> bytes:
        """_read_mapped once the file is known to reach `end`."""
        buf = self._buf
        if buf is None:
            raise closed_error(self._name)
        length = end - start - OVERHEAD
        # the header must be exactly the one a record of the indexed length has: this checks
        # the length against the index and the length CRC in one comparison
        if length < 0 or buf[start : start + HEADER_SIZE] != _header_for(length):
            self._bad_header(buf, start, end)
        data: bytes = buf[start + HEADER_SIZE : end - FOOTER_SIZE]
        if self._verify and masked_crc(data) != _U32.unpack_from(buf, end - FOOTER_SIZE)[0]:
            raise CorruptRecordError("corrupted record: the data CRC does not match", path=self._path, offset=start)
        return data

    def _changed(self) -> TFRecordError:
        now, was = self._size_now(), self._opened
        return TFRecordError(f"{self._name} changed while open: {now} bytes now, {was} when opened; open it again")

    def _read_remote(self, start: int, end: int) -> bytes:
        """_read_mapped for an object in a store: the record comes whole from the RemoteBuffer's cache."""
        buf = self._buf
        if buf is None:
            raise closed_error(self._name)
        record = buf[start:end]
        length = end - start - OVERHEAD
        if length < 0 or len(record) != end - start or record[:HEADER_SIZE] != _header_for(length):
            announced = _HEADER.unpack_from(record)[0] if len(record) >= HEADER_SIZE else None
            reason = "corrupted record: the length CRC does not match"
            if len(record) != end - start or length < 0:
                reason = f"the index entry for this record is damaged (it spans {start}..{end} of {len(buf)} bytes)"
            elif announced != length:
                reason = (
                    f"the record header announces {announced} bytes of data, the index {length}: "
                    "the object was changed after indexing, or the record is damaged"
                )
            raise CorruptRecordError(reason, path=self._name, offset=start)
        data = record[HEADER_SIZE:-FOOTER_SIZE]
        if self._verify and masked_crc(data) != _U32.unpack_from(record, length + HEADER_SIZE)[0]:
            raise CorruptRecordError("corrupted record: the data CRC does not match", path=self._name, offset=start)
        return data

    def _bad_header(self, buf: Buffer, start: int, end: int) -> None:
        """Raise the CorruptRecordError that says what is wrong with the header at `start`."""
        if end > len(buf) or end - start < OVERHEAD:
            reason = f"the index entry for this record is damaged (it spans {start}..{end} of {len(buf)} bytes)"
        elif _HEADER.unpack_from(buf, start)[0] != end - start - OVERHEAD:
            announced = _HEADER.unpack_from(buf, start)[0]
            reason = (
                f"the record header announces {announced} bytes of data, the index {end - start - OVERHEAD}: "
                "the file was changed after indexing, or the record is damaged"
            )
        else:
            reason = "corrupted record: the length CRC does not match"
        raise CorruptRecordError(reason, path=self._path, offset=start)

    def close(self) -> None:
        """Release the views, the index and the map (or what reads the object)."""
        buf, self._buf = self._buf, None
        self.ends.release()  # first: a map cannot close while views of it are held
        self.at.release()
        self.index.close()
        if isinstance(buf, (bytes, mmap.mmap)):
            release(buf)
        elif buf is not None:  # a RemoteBuffer
            buf.close()
