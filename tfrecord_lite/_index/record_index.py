"""Record indexes of uncompressed files, for random access. An index is the byte
offset of every record plus the end of the last one: `offsets` (uint64, count + 1
entries), so record k spans offsets[k]:offsets[k + 1] and its payload length is that
span minus 16.

Binary sidecar `<file>.tfrlidx` (sidecar_file.py: where it lives, how its header is
checked and how it is saved), little-endian, 8 bytes per record:

    64-byte header  magic "TFRLIDX\\0" | u32 version | u32 flags | u64 count |
                    u64 file_size | i64 mtime_ns | u32 edge_check | u32 0 | 12 x 0 |
                    u32 crc32c(header[0:60])
    u64 offsets[count + 1]

It is built by one `framing.scan` over a memory map of the file, `max_records`
records at a time, each batch turned into a numpy array at once (so the index
costs 8 bytes a record in memory, never a Python int each), then written to a
temporary file renamed into place (atomic.write_atomic: never torn, created with
the umask's permissions; concurrent builders each rename a whole, identical file).
Opening it is a memory map: O(1). It is fresh when the file's size and mtime are
those recorded, `edge_check` (CRC32C of the header and footer bytes of the first
and last record) still matches, and every record's valid header announces the span its
offsets give (one numpy gather, 8 bytes a record: a crafted sidecar that leaves records
out, or cuts one in two, is rebuilt rather than trusted; a damaged header is reported when
its record is read, as before). DALI / `tfrecord` text indexes ("offset length"
lines, length = 12 + data + 4) are read here too (write.py writes them). This module
offers the pieces (read, check, build, save); file_index.py chooses among them when a
file is opened (a fresh index, else a scan, else one past damage). The append
protocol that keeps a sidecar fresh across TFRecordWriter(append=True) lives in
_index/append.py.
"""

from __future__ import annotations

import errno
import mmap
import os
import struct
from typing import BinaryIO

import numpy as np
from crc32c import crc32c

from tfrecord_lite._compression.kinds import is_compressed, kind_of
from tfrecord_lite._errors import IndexFormatError, PathName, TFRecordError
from tfrecord_lite._index.sidecar_file import (
    counts_as_missing,
    file_change,
    header_size,
    pack_header,
    save_bytes,
    sidecar_path,
    unpack_header,
)
from tfrecord_lite._storage.files import open_regular
from tfrecord_lite._wire.framing import FOOTER_SIZE, HEADER_SIZE, OVERHEAD, header_is_valid, scan
from tfrecord_lite._wire.sniff import SNIFF_SIZE, inflates, not_a_tfrecord, sniff_compression

RECORD_INDEX_MAGIC = b"TFRLIDX\0"
RECORD_INDEX_VERSION = 1
FLAG_VERIFIED = 1
BATCH = 1 << 16  # records per scan batch while building
OFFSET_DTYPE = np.dtype("<u8")
_RECORD_INDEX_HEAD = struct.Struct("<8sIIQQqII12x")  # 60 bytes, then the header's own CRC
_HEAD_SIZE = header_size(_RECORD_INDEX_HEAD)
_U64 = struct.Struct("<Q")
_LARGEST = 1 << 62  # bound on a text index's numbers: their sums stay within int64

Buffer = bytes | mmap.mmap  # a mapped file, or b"" for an empty one


class RecordIndex:
    """Offsets of the records of one file, memory-mapped from a sidecar or held in memory.

    `ends` is None when the records follow each other (record k ends where k + 1 starts);
    an index built past damage (_index/tolerant.py) holds the end of each record there,
    is kept in memory only, and its last offset is where its last good record ends."""

    __slots__ = ("_mm", "check", "ends", "file_size", "location", "mtime_ns", "offsets", "verified")

    def __init__(
        self,
        offsets: np.ndarray,
        file_size: int,
        mtime_ns: int,
        check: int,
        verified: bool,
        location: str | None = None,
        mm: mmap.mmap | None = None,
        ends: np.ndarray | None = None,
    ) -> None:
        self.offsets = offsets
        self.ends = ends
        self.file_size = file_size
        self.mtime_ns = mtime_ns
        self.check = check
        self.verified = verified
        self.location = location  # the sidecar it lives in; None when only in memory
        self._mm = mm

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def close(self) -> None:
        """Release the sidecar's memory map (safe to call twice)."""
        self.offsets = np.zeros(1, OFFSET_DTYPE)
        mm, self._mm = self._mm, None
        if mm is not None:
            try:
                mm.close()
            except BufferError:  # a reader still holds a view; the GC unmaps it later
                pass


# ----------------------------------------------------------------- helpers


def map_file(fh: BinaryIO) -> Buffer:
    """A read-only memory map of an open file (an empty bytes object for an empty file)."""
    size = os.fstat(fh.fileno()).st_size
    return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""


def release(buf: Buffer) -> None:
    """Close a memory map made by `map_file` (no-op for bytes)."""
    if isinstance(buf, mmap.mmap):
        try:
            buf.close()
        except BufferError:
            pass


def require_uncompressed(buf: Buffer, path: PathName, action: str = "random access", damaged: bool = False) -> None:
    """Raise a clear TFRecordError when `buf` holds a GZIP or ZLIB file instead of plain records,
    and the "not a TFRecord file" error when it holds no records at all. `damaged`: damage is
    skipped, so a file whose first record is damaged (even into GZIP / ZLIB look-alike bytes
    that do not inflate) is a plain file, as iter_records reads it."""
    head = bytes(buf[:SNIFF_SIZE])
    kind = sniff_compression(head)
    if damaged and (kind == "unknown" or (is_compressed(kind) and not inflates(head, kind))):
        return
    if kind == "unknown":
        raise not_a_tfrecord(path, head)
    if is_compressed(kind):
        raise TFRecordError(
            f"this file is {kind_of(kind).label}-compressed, and {action} needs an uncompressed TFRecord file "
            f"(a compressed stream cannot be entered in the middle): convert it once with "
            f"`tfrecord-lite convert IN OUT` (or copy its records with tfr.iter_records into a "
            f"tfr.TFRecordWriter without compression), or read it sequentially with tfr.iter_records",
            path=path,
        )


def edge_check(buf: Buffer, offsets: np.ndarray, ends: np.ndarray | None = None) -> int:
    """CRC32C of the header and footer bytes of the first and last record (0 when empty);
    `ends`: each record's end, when records do not follow each other (RecordIndex.ends)."""
    if len(offsets) < 2:
        return 0
    second = int(offsets[1] if ends is None else ends[0])
    first, before_last, end = int(offsets[0]), int(offsets[-2]), int(offsets[-1])
    if end > len(buf):
        return -1  # the file is shorter than the index: cannot match
    parts = (
        buf[first : first + HEADER_SIZE],
        buf[second - FOOTER_SIZE : second],
        buf[before_last : before_last + HEADER_SIZE],
        buf[end - FOOTER_SIZE : end],
    )
    return crc32c(b"".join(parts))


# ----------------------------------------------------------------- building


def scan_offsets(
    buf: Buffer,
    start: int = 0,
    *,
    verify: bool = True,
    final: bool = True,
    path: PathName = None,
    max_records: int = BATCH,
) -> tuple[np.ndarray, int]:
    """Scan the records of `buf` from `start`, `max_records` at a time; return (record offsets, end).

    Each batch of start offsets becomes a uint64 array at once, so no more than
    `max_records` Python ints are alive. Without `final` an incomplete tail is
    not an error and `end` is where it begins.
    """
    chunks: list[np.ndarray] = []
    pos = start
    size = len(buf)
    while pos < size:
        starts, _, nxt = scan(buf, pos, verify=verify, final=final, path=path, max_records=max_records)  # type: ignore[arg-type]
        if not starts:
            break
        batch = np.array(starts, dtype=OFFSET_DTYPE)
        batch -= HEADER_SIZE
        chunks.append(batch)
        pos = nxt
    found = np.concatenate(chunks) if chunks else np.zeros(0, OFFSET_DTYPE)
    return found, pos


def offsets_ending_at(starts: np.ndarray, end: int) -> np.ndarray:
    """Index offsets: the records' `starts`, then the `end` of the last one."""
    out = np.empty(len(starts) + 1, OFFSET_DTYPE)
    out[:-1] = starts
    out[-1] = end
    return out


def record_index_bytes(index: RecordIndex) -> bytes:
    """The binary sidecar holding `index` (what save_record_index writes, and ShardedWriter uploads)."""
    flags = FLAG_VERIFIED if index.verified else 0
    fields = (len(index), index.file_size, index.mtime_ns, index.check, 0)
    head = pack_header(_RECORD_INDEX_HEAD, RECORD_INDEX_MAGIC, RECORD_INDEX_VERSION, flags, *fields)
    return head + np.ascontiguousarray(index.offsets, OFFSET_DTYPE).tobytes()


def save_record_index(index: RecordIndex, target: str, *, like: str | None = None) -> bool:
    """Write `index` to `target` through a temporary file and an atomic rename (`like`: the
    indexed file, whose permissions the sidecar never widens).

    Returns False (and leaves nothing behind) when the place is not writable, so
    the caller keeps the index in memory; other I/O errors propagate.
    """

    if not save_bytes(record_index_bytes(index), target, like=like):
        return False
    index.location = target
    return True


def build_record_index(
    buf: Buffer,
    st: os.stat_result,
    *,
    path: PathName,
    verify: bool = True,
    start: RecordIndex | None = None,
    max_records: int = BATCH,
) -> RecordIndex:
    """Index `buf` (the mapped file `path`, stat `st`) by one scan, continuing after `start` if given."""
    done = start.offsets[:-1] if start is not None else np.zeros(0, OFFSET_DTYPE)
    origin = start.file_size if start is not None else 0
    starts, end = scan_offsets(buf, origin, verify=verify, path=path, max_records=max_records)
    offsets = offsets_ending_at(np.concatenate([done, starts]), end)
    verified = verify and (start is None or start.verified)
    return RecordIndex(offsets, end, st.st_mtime_ns, edge_check(buf, offsets), verified)


# ----------------------------------------------------------------- loading


def read_record_index(location: str) -> RecordIndex:
    """Memory-map a binary sidecar; IndexFormatError when it is not one or is damaged."""
    with open(location, "rb") as fh:
        if os.fstat(fh.fileno()).st_size < _HEAD_SIZE + 8:
            raise IndexFormatError("not a tfrecord_lite index file (too short)", path=location)
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return record_index_from_buffer(mm, location)


def record_index_from_buffer(mm: Buffer, location: str) -> RecordIndex:
    """The index held by a binary sidecar's bytes (a memory map is released with the index)."""
    try:
        if len(mm) < _HEAD_SIZE + 8:
            raise IndexFormatError("not a tfrecord_lite index file (too short)", path=location)
        fields = unpack_header(
            mm, _RECORD_INDEX_HEAD, RECORD_INDEX_MAGIC, RECORD_INDEX_VERSION, location, "not a tfrecord_lite index file"
        )
        _, _, flags, count, file_size, mtime_ns, check, _ = fields
        if len(mm) != _HEAD_SIZE + 8 * (count + 1):
            raise IndexFormatError(
                f"the index should be {_HEAD_SIZE + 8 * (count + 1)} bytes for {count} records, but is {len(mm)}",
                path=location,
            )
        if _U64.unpack_from(mm, _HEAD_SIZE)[0] != 0 or _U64.unpack_from(mm, len(mm) - 8)[0] != file_size:
            raise IndexFormatError("the index's first or end offset disagrees with its header", path=location)
    except BaseException:
        release(mm)
        raise
    offsets = np.frombuffer(mm, OFFSET_DTYPE, count + 1, _HEAD_SIZE)
    if (offsets[1:] <= offsets[:-1]).any() or (offsets[1:] - offsets[:-1] < OVERHEAD).any():
        release(mm)
        raise IndexFormatError(f"the index's offsets are not {OVERHEAD} bytes or more apart, in order", path=location)
    mapped = mm if isinstance(mm, mmap.mmap) else None
    return RecordIndex(offsets, file_size, mtime_ns, check, bool(flags & FLAG_VERIFIED), location, mapped)


def parse_text_index(data: bytes, location: PathName = None) -> np.ndarray:
    """Offsets (count + 1, uint64) from a DALI / `tfrecord` text index ("offset length" lines)."""
    try:
        pairs = np.array(data.split(), dtype=np.int64)
    except (ValueError, OverflowError):
        pairs = None
    if pairs is None or (pairs.size and (pairs.min() < 0 or pairs.max() >= _LARGEST)):
        raise IndexFormatError(
            "a text index holds one 'offset length' pair of integers (0 to 2**62) per line", path=location
        )
    if len(pairs) % 2:
        raise IndexFormatError("a text index holds one 'offset length' pair per line (odd count)", path=location)
    starts, lengths = pairs[0::2], pairs[1::2]
    if len(starts) == 0:
        return np.zeros(1, OFFSET_DTYPE)
    ends = starts + lengths
    bad = np.flatnonzero(lengths < OVERHEAD)
    gaps = np.flatnonzero(starts[1:] != ends[:-1])
    if starts[0] != 0 or len(bad) or len(gaps):
        line = 1 if starts[0] != 0 else int(min(bad[:1].tolist() + (gaps[:1] + 1).tolist())) + 1
        raise IndexFormatError(
            f"text index line {line}: records must follow each other from offset 0, each at least "
            f"{OVERHEAD} bytes (12-byte header + data + 4-byte CRC)",
            path=location,
        )
    return offsets_ending_at(starts.astype(OFFSET_DTYPE), int(ends[-1]))


def is_record_index(head: bytes) -> bool:
    """Whether an index file that starts with `head` is a binary sidecar (else a text index)."""
    return head[: len(RECORD_INDEX_MAGIC)] == RECORD_INDEX_MAGIC


def read_named_index(location: str, buf: Buffer, st: os.stat_result) -> RecordIndex:
    """Load a binary sidecar or a text index named by the caller."""
    with open(location, "rb") as fh:
        magic = fh.read(len(RECORD_INDEX_MAGIC))
        if is_record_index(magic):
            fh.close()
            return read_record_index(location)
        data = magic + fh.read()
    offsets = parse_text_index(data, location)
    # a text index carries no mtime or check: it is fresh when it covers this file exactly
    return RecordIndex(offsets, int(offsets[-1]), st.st_mtime_ns, edge_check(buf, offsets), False)


def record_index_staleness(
    index: RecordIndex, buf: Buffer, st: os.stat_result, every_header: bool = True
) -> str | None:
    """Why `index` no longer describes the file (None when it does). Without `every_header`, the
    headers between the first and last records are not checked here (for a reader that checks
    each record's header as it reads, and falls back to the stream where one differs)."""
    changed = file_change(st, index.file_size, index.mtime_ns)
    if changed is not None:
        return changed
    if edge_check(buf, index.offsets, index.ends) != index.check or not edges_consistent(
        buf, index.offsets, index.ends
    ):
        return "the first or last record differs from the indexed one"
    if every_header and index.ends is None and not follows_records(buf, index.offsets):
        return "its offsets do not follow the file's records (a record's header announces another length)"
    return None


def follows_records(buf: Buffer, offsets: np.ndarray) -> bool:
    """Whether the indexed records follow each other as the file frames them: where a record's
    header is valid, it announces the length its offsets give (offset + framed length = next
    offset), so no record is left out or cut in two. A header whose length CRC fails is damage in
    the file, not a false index: reading that record reports it. One numpy gather of the length
    fields, 8 bytes a record; only the headers that disagree are checked one by one."""
    if len(offsets) < 2:
        return True
    spans = np.diff(offsets.astype(np.int64))
    if (spans < OVERHEAD).any() or int(offsets[-1]) > len(buf):
        return False
    data = np.frombuffer(buf, np.uint8)
    words = np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))  # the 8 bytes at each offset
    starts = offsets[:-1].astype(np.int64)
    disagree = np.flatnonzero(words[starts] != (spans - OVERHEAD).astype(np.uint64))
    return not any(header_is_valid(buf, int(starts[k])) for k in disagree.tolist())  # type: ignore[arg-type]


def edges_consistent(buf: Buffer, offsets: np.ndarray, ends: np.ndarray | None = None) -> bool:
    """The first and last indexed records have valid headers announcing the indexed lengths."""
    for k in {0, len(offsets) - 2} if len(offsets) > 1 else ():
        start, end = int(offsets[k]), int(offsets[k + 1] if ends is None else ends[k])
        if (
            end > len(buf)
            or not header_is_valid(buf, start)  # type: ignore[arg-type]
            or _U64.unpack_from(buf, start)[0] != end - start - OVERHEAD
        ):
            return False
    return True


def grown_from(index: RecordIndex, buf: Buffer) -> bool:
    """The file only grew since `index` was made: the indexed part checks and a record follows it."""
    return (
        len(buf) > index.file_size
        and index.ends is None
        and edge_check(buf, index.offsets) == index.check
        and edges_consistent(buf, index.offsets)
        and header_is_valid(buf, index.file_size)  # type: ignore[arg-type]
    )


def read_existing_index(location: str, buf: Buffer, st: os.stat_result, named: bool) -> RecordIndex | None:
    """Read the index at `location` (one the caller `named`: a binary sidecar or a text index);
    a missing one is None, and so is a damaged default sidecar. A default sidecar that is there
    but cannot be read raises OSError (one that is not a regular file, a folder or a FIFO, is not
    opened: a FIFO would block)."""
    if not named and os.path.lexists(location) and not os.path.isfile(location):
        raise OSError(errno.EINVAL, "not a regular file", location)
    try:
        return read_named_index(location, buf, st) if named else read_record_index(location)
    except (FileNotFoundError, IndexFormatError) as err:
        if counts_as_missing(err, named):
            return None
        raise


def map_uncompressed(path: str, action: str, damaged: bool = False) -> tuple[Buffer, os.stat_result]:
    """Memory-map an uncompressed TFRecord file for reading (TFRecordError if it is compressed;
    `damaged` as require_uncompressed's)."""
    if os.path.isdir(path):
        raise IsADirectoryError(
            errno.EISDIR,
            f"this is a folder, and {action} needs one TFRecord file: tfr.ShardedRecords(folder) "
            "reads the TFRecord files in a folder",
            path,
        )
    with open_regular(path, action) as fh:
        st = os.fstat(fh.fileno())
        buf = map_file(fh)
    try:
        require_uncompressed(buf, path, action, damaged)
    except BaseException:
        release(buf)
        raise
    return buf, st


def save_offsets(tfrecord_path: str, offsets: np.ndarray, *, verified: bool = False) -> bool:
    """Save the sidecar of a file whose record offsets (count + 1) the caller knows, e.g. its writer."""
    buf, st = map_uncompressed(tfrecord_path, "indexing")
    try:
        offsets = np.asarray(offsets, OFFSET_DTYPE)
        if int(offsets[-1]) != st.st_size or not edges_consistent(buf, offsets):
            raise ValueError(f"the offsets given do not describe {tfrecord_path}")
        idx = RecordIndex(offsets, st.st_size, st.st_mtime_ns, edge_check(buf, offsets), verified)
    finally:
        release(buf)
    return save_record_index(idx, sidecar_path(tfrecord_path), like=tfrecord_path)
