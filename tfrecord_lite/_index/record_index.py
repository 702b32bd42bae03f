"""Record indexes for random access. An index is the byte offset of every record
plus the end of the last one: `offsets` (uint64, count + 1 entries), so record
k spans offsets[k]:offsets[k + 1] and its payload length is that span minus 16.

Binary sidecar `<file>.tfrlidx`, little-endian, 8 bytes per record:

    64-byte header  magic "TFRLIDX\\0" | u32 version | u32 flags | u64 count |
                    u64 file_size | i64 mtime_ns | u32 edge_check | u32 0 | 12 x 0 |
                    u32 crc32c(header[0:60])
    u64 offsets[count + 1]

It is built by one `framing.scan` over a memory map of the file, `max_records`
records at a time, each batch turned into a numpy array at once (so the index
costs 8 bytes a record in memory, never a Python int each), then written to a
temporary file renamed into place (publish.write_atomic: never torn, created with
the umask's permissions; concurrent builders each rename a whole, identical file).
Opening it is a memory map: O(1). It is fresh when the file's size and mtime are
those recorded and `edge_check` (CRC32C of the header and footer bytes of the first
and last record) still matches. DALI / `tfrecord`
text indexes ("offset length" lines, length = 12 + data + 4) are read and
written here too. The append protocol that keeps a sidecar fresh across
TFRecordWriter(append=True) lives in _index/append.py.
"""

from __future__ import annotations

import errno
import mmap
import os
import struct
import warnings
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, BinaryIO, Union

import numpy as np
from crc32c import crc32c

from tfrecord_lite._errors import IndexFallbackWarning, IndexFormatError, PathName, StaleIndexError, TFRecordError
from tfrecord_lite._storage.files import StorageOptions
from tfrecord_lite._storage.publish import write_atomic
from tfrecord_lite._wire.framing import FOOTER_SIZE, HEADER_SIZE, OVERHEAD, header_is_valid, scan
from tfrecord_lite._wire.sniff import SNIFF_SIZE, inflates, not_a_tfrecord, sniff_compression

if TYPE_CHECKING:
    from tfrecord_lite._stream.damage import DamagePolicy

SIDECAR_SUFFIX = ".tfrlidx"
MAGIC = b"TFRLIDX\0"
VERSION = 1
FLAG_VERIFIED = 1
BATCH = 1 << 16  # records per scan batch while building
_HEAD = struct.Struct("<8sIIQQqII12x")  # 60 bytes, then the header's own CRC
_HEAD_SIZE = 64
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_OFFSET_DTYPE = np.dtype("<u8")
_LARGEST = 1 << 62  # bound on a text index's numbers: their sums stay within int64

Buffer = bytes | mmap.mmap  # a mapped file, or b"" for an empty one
IndexArg = Union[str, "os.PathLike[str]", bool, None]


class RecordIndex:
    """Offsets of the records of one file, memory-mapped from a sidecar or held in memory.

    `ends` is None when the records follow each other (record k ends where k + 1 starts);
    an index built past damage (_tolerant_index.py) holds the end of each record there,
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
        self.offsets = np.zeros(1, _OFFSET_DTYPE)
        mm, self._mm = self._mm, None
        if mm is not None:
            try:
                mm.close()
            except BufferError:  # a reader still holds a view; the GC unmaps it later
                pass


# ----------------------------------------------------------------- helpers


def sidecar_path(path: str | os.PathLike[str]) -> str:
    """Where the binary index of `path` lives: beside it, with `.tfrlidx` appended."""
    return os.fspath(path) + SIDECAR_SUFFIX


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
    kind = sniff_compression(head).upper()
    if damaged and (kind == "UNKNOWN" or (kind and not inflates(head, kind.lower()))):
        return
    if kind == "UNKNOWN":
        raise not_a_tfrecord(path, head)
    if kind:
        raise TFRecordError(
            f"this file is {kind}-compressed, and {action} needs an uncompressed TFRecord file "
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
        batch = np.array(starts, dtype=_OFFSET_DTYPE)
        batch -= HEADER_SIZE
        chunks.append(batch)
        pos = nxt
    found = np.concatenate(chunks) if chunks else np.zeros(0, _OFFSET_DTYPE)
    return found, pos


def _with_end(starts: np.ndarray, end: int) -> np.ndarray:
    out = np.empty(len(starts) + 1, _OFFSET_DTYPE)
    out[:-1] = starts
    out[-1] = end
    return out


def _pack_header(count: int, file_size: int, mtime_ns: int, check: int, verified: bool) -> bytes:
    head = _HEAD.pack(MAGIC, VERSION, FLAG_VERIFIED if verified else 0, count, file_size, mtime_ns, check, 0)
    return head + _U32.pack(crc32c(head))


def _is_unwritable(err: OSError) -> bool:
    return err.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT)


def sidecar_bytes(index: RecordIndex) -> bytes:
    """The binary sidecar holding `index` (what save_sidecar writes, and ShardedWriter uploads)."""
    head = _pack_header(len(index), index.file_size, index.mtime_ns, index.check, index.verified)
    return head + np.ascontiguousarray(index.offsets, _OFFSET_DTYPE).tobytes()


def save_sidecar(index: RecordIndex, target: str) -> bool:
    """Write `index` to `target` through a temporary file and an atomic rename.

    Returns False (and leaves nothing behind) when the place is not writable, so
    the caller keeps the index in memory; other I/O errors propagate.
    """

    def write(fh: IO[bytes]) -> None:
        fh.write(sidecar_bytes(index))

    if not save_bytes(write, target):
        return False
    index.location = target
    return True


def save_bytes(data: bytes | Callable[[IO[bytes]], None], target: str) -> bool:
    """write_atomic(target, data), or False (leaving nothing behind) when the place is not
    writable; other I/O errors propagate."""
    try:
        write_atomic(target, data)
    except OSError as err:
        if _is_unwritable(err):
            return False
        raise
    return True


def build_index(
    buf: Buffer,
    st: os.stat_result,
    *,
    path: PathName,
    verify: bool = True,
    start: RecordIndex | None = None,
    max_records: int = BATCH,
) -> RecordIndex:
    """Index `buf` (the mapped file `path`, stat `st`) by one scan, continuing after `start` if given."""
    done = start.offsets[:-1] if start is not None else np.zeros(0, _OFFSET_DTYPE)
    origin = start.file_size if start is not None else 0
    starts, end = scan_offsets(buf, origin, verify=verify, path=path, max_records=max_records)
    offsets = _with_end(np.concatenate([done, starts]), end)
    verified = verify and (start is None or start.verified)
    return RecordIndex(offsets, end, st.st_mtime_ns, edge_check(buf, offsets), verified)


# ----------------------------------------------------------------- loading


def read_sidecar(location: str) -> RecordIndex:
    """Memory-map a binary sidecar; IndexFormatError when it is not one or is damaged."""
    with open(location, "rb") as fh:
        if os.fstat(fh.fileno()).st_size < _HEAD_SIZE + 8:
            raise IndexFormatError("not a tfrecord_lite index file (too short)", path=location)
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return sidecar_from_buffer(mm, location)


def sidecar_from_buffer(mm: Buffer, location: str) -> RecordIndex:
    """The index held by a binary sidecar's bytes (a memory map is released with the index)."""
    try:
        if len(mm) < _HEAD_SIZE + 8:
            raise IndexFormatError("not a tfrecord_lite index file (too short)", path=location)
        if mm[:8] != MAGIC:
            raise IndexFormatError("not a tfrecord_lite index file", path=location)
        _, version, flags, count, file_size, mtime_ns, check, _ = _HEAD.unpack_from(mm, 0)
        if version != VERSION:
            raise IndexFormatError(
                f"index format version {version} is not supported (this is {VERSION})", path=location
            )
        if crc32c(mm[: _HEAD.size]) != _U32.unpack_from(mm, _HEAD.size)[0]:
            raise IndexFormatError("the index header is damaged (its CRC does not match)", path=location)
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
    offsets = np.frombuffer(mm, _OFFSET_DTYPE, count + 1, _HEAD_SIZE)
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
        return np.zeros(1, _OFFSET_DTYPE)
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
    return _with_end(starts.astype(_OFFSET_DTYPE), int(ends[-1]))


def read_index_file(location: str, buf: Buffer, st: os.stat_result) -> RecordIndex:
    """Load a binary sidecar or a text index named by the caller."""
    with open(location, "rb") as fh:
        magic = fh.read(len(MAGIC))
        if magic == MAGIC:
            fh.close()
            return read_sidecar(location)
        data = magic + fh.read()
    offsets = parse_text_index(data, location)
    # a text index carries no mtime or check: it is fresh when it covers this file exactly
    return RecordIndex(offsets, int(offsets[-1]), st.st_mtime_ns, edge_check(buf, offsets), False)


def staleness(index: RecordIndex, buf: Buffer, st: os.stat_result) -> str | None:
    """Why `index` no longer describes the file (None when it does)."""
    if st.st_size != index.file_size:
        return f"the file is {st.st_size} bytes now, {index.file_size} when indexed"
    if st.st_mtime_ns != index.mtime_ns:
        return "the file was modified after it was indexed (its mtime changed)"
    if edge_check(buf, index.offsets, index.ends) != index.check or not edges_consistent(
        buf, index.offsets, index.ends
    ):
        return "the first or last record differs from the indexed one"
    return None


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


ON_STALE = ("rebuild", "raise")


def open_index(
    path: str,
    buf: Buffer,
    st: os.stat_result,
    index: IndexArg = None,
    *,
    verify: bool = True,
    on_stale: str = "rebuild",
    save: bool = True,
    prebuilt: RecordIndex | None = None,
    policy: DamagePolicy | None = None,
) -> RecordIndex:
    """The index of the mapped file `path`: a fresh existing one, else one built now (and saved).

    `index`: None / True = the sidecar beside the file; a path = that binary or
    text index (a new binary one is written there when it does not exist);
    False = build in memory and write nothing. `prebuilt` is an in-memory index
    (sent to a worker process) that is used when still fresh. With a `policy` that
    skips damage, a file that does not index cleanly gets an in-memory index of its
    good records (_tolerant_index.py), never saved.
    """
    if on_stale not in ON_STALE:
        raise ValueError(f"on_stale must be one of {ON_STALE}, not {on_stale!r}")
    location: str | None = None
    if index is None or index is True:
        location = sidecar_path(path)
    elif index is not False:
        location = os.fspath(index)
    existing, where = prebuilt, "the in-memory index"
    if existing is None and location is not None:
        explicit = index not in (None, True)
        try:
            existing, where = try_read_index(location, buf, st, explicit=explicit), location
        except OSError as err:
            if explicit:  # an index the caller named must be readable
                raise
            warnings.warn(
                f"{path}: its index sidecar {location} cannot be read ({err.strerror or err}); "
                "using an in-memory index built by one scan",
                IndexFallbackWarning,
                stacklevel=4,
            )
            location = None  # and nothing is written over it
    if existing is not None:
        reason = staleness(existing, buf, st)
        if reason is None:
            return existing
        if on_stale == "raise":
            existing.close()
            raise StaleIndexError(
                f"{where} is out of date: {reason}; open with on_stale='rebuild' to re-index", path=path
            )
        if existing.location is None or existing.location != location:  # text or in-memory: never overwrite
            location = sidecar_path(path) if index is not False else None
    start = existing if existing is not None and grown_from(existing, buf) else None
    try:
        fresh = build_index(buf, st, path=path, verify=verify, start=start)
    except TFRecordError:
        if policy is None or policy.raises:
            raise
        from tfrecord_lite._index.tolerant import build_past_damage

        fresh = build_past_damage(path, buf, st, policy, verify)
    finally:
        if existing is not None:
            existing.close()
    if save and location is not None and fresh.ends is None:
        save_sidecar(fresh, location)
    return fresh


def try_read_index(location: str, buf: Buffer, st: os.stat_result, explicit: bool) -> RecordIndex | None:
    """Read the index at `location`; a missing one is None, and so is a damaged default sidecar.
    A default sidecar that is there but cannot be read raises OSError (one that is not a regular
    file, a folder or a FIFO, is not opened: a FIFO would block)."""
    if not explicit and os.path.lexists(location) and not os.path.isfile(location):
        raise OSError(errno.EINVAL, "not a regular file", location)
    try:
        return read_index_file(location, buf, st) if explicit else read_sidecar(location)
    except FileNotFoundError:
        return None
    except IndexFormatError:
        if explicit:
            raise
        return None  # a damaged sidecar of ours is rebuilt like a stale one


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
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        buf = map_file(fh)
    try:
        require_uncompressed(buf, path, action, damaged)
    except BaseException:
        release(buf)
        raise
    return buf, st


def write_index(
    tfrecord_path: PathName, index_path: PathName = None, *, verify: bool = True, storage_options: StorageOptions = None
) -> str:
    """Build the binary index sidecar of a TFRecord file by one scan; return its path. A GZIP / ZLIB
    file gets the index of its compressed stream (see TFRecordFile).

    `index_path` defaults to the sidecar beside the file (`<file>.tfrlidx`), which
    TFRecordFile then opens in O(1).

    A URL (s3://, gs://, ...) is read by one streaming pass, and its sidecar uploaded next to the
    object (`<url>.tfrlidx`, where TFRecordFile(url) looks) in one PUT: the object appears whole
    or not at all. An HTTP(S) server takes no uploads: give `index_path` (a local path or a
    store's URL) and pass it as TFRecordFile(url, index=...). `storage_options`: fsspec's
    options, or an fsspec filesystem.
    """
    path = os.fspath(tfrecord_path)  # type: ignore[arg-type]
    if "://" in path and not path.startswith("file://"):
        from tfrecord_lite._index.remote_index import write_remote_index

        target_url = os.fspath(index_path) if index_path is not None else None
        return write_remote_index(path, target_url, verify=verify, storage_options=storage_options)[0]
    target = os.fspath(index_path) if index_path is not None else sidecar_path(path)
    from tfrecord_lite._index.gzip_index import (  # a GZIP / ZLIB file has its own index
        compressed_kind,
        write_gzip_index,
    )

    if compressed_kind(path) in ("gzip", "zlib"):
        return write_gzip_index(path, target, verify=verify)
    buf, st = map_uncompressed(path, "indexing")
    try:
        idx = build_index(buf, st, path=path, verify=verify)
    finally:
        release(buf)
    if not save_sidecar(idx, target):
        raise PermissionError(errno.EACCES, "cannot write the index here (read-only?)", target)
    return target


def save_offsets(tfrecord_path: str, offsets: np.ndarray, *, verified: bool = False) -> bool:
    """Save the sidecar of a file whose record offsets (count + 1) the caller knows, e.g. its writer."""
    buf, st = map_uncompressed(tfrecord_path, "indexing")
    try:
        offsets = np.asarray(offsets, _OFFSET_DTYPE)
        if int(offsets[-1]) != st.st_size or not edges_consistent(buf, offsets):
            raise ValueError(f"the offsets given do not describe {tfrecord_path}")
        idx = RecordIndex(offsets, st.st_size, st.st_mtime_ns, edge_check(buf, offsets), verified)
    finally:
        release(buf)
    return save_sidecar(idx, sidecar_path(tfrecord_path))


def write_text_index(tfrecord_path: PathName, out_path: PathName) -> None:
    """Write the DALI / `tfrecord`-package text index of a TFRecord file: one "offset length" line per record."""
    path = os.fspath(tfrecord_path)  # type: ignore[arg-type]
    buf, st = map_uncompressed(path, "indexing")
    try:
        idx = open_index(path, buf, st, None, save=False)
        starts, lengths = idx.offsets[:-1].tolist(), np.diff(idx.offsets).tolist()
        idx.close()
    finally:
        release(buf)
    text = "".join(f"{s} {n}\n" for s, n in zip(starts, lengths, strict=False)).encode()
    write_atomic(os.fspath(out_path), text)  # type: ignore[arg-type]
