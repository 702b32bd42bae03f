"""What every index sidecar shares, whatever it indexes: the record offsets of an
uncompressed file (record_index.py) or the seek points of a GZIP / ZLIB one
(gzip_sidecar.py).

A sidecar lives beside its file, `<file>.tfrlidx` (next to an object in a store,
`<url>.tfrlidx`), or where `index=` names it; index=False keeps the index in memory. A
TensorBoard events file gets no sidecar by default (index=True or a named file still make
one): TensorBoard reads every file whose name holds "tfevents", a sidecar beside it too.
Its header opens with an 8-byte magic, which says the kind, and a u32 format version,
and ends with the CRC32C of the bytes before it: unpack_header checks all three, so a
sidecar of the other kind, of an unknown version or with a damaged header is an
IndexFormatError. A damaged default sidecar is rebuilt like a stale one; an index the
caller named must be valid (counts_as_missing: the one rule of which read errors mean that
there is no index to use, for every kind's reader). An index is fresh while the file has the size (and, for a
local file, the mtime) recorded in it and its kind's check of the file's edges still
matches; a stale index is rebuilt, or raises StaleIndexError with on_stale="raise".
Sidecars are written through a temporary file renamed into place
(atomic.write_atomic: never torn), with no permission their data file lacks; a place
that is not writable leaves the index in memory.
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Callable
from typing import IO, Any, Union

from crc32c import crc32c

from tfrecord_lite._errors import IndexFormatError, PathName, StaleIndexError
from tfrecord_lite._storage.atomic import write_atomic

SIDECAR_SUFFIX = ".tfrlidx"
EVENTS_MARK = "tfevents"  # TensorBoard takes every file whose name holds this for an events file
ON_STALE = ("rebuild", "raise")
IndexArg = Union[str, "os.PathLike[str]", bool, None]
_CRC = struct.Struct("<I")


def sidecar_path(path: str | os.PathLike[str]) -> str:
    """Where the index of `path` (a file, or an object's URL) lives by default: beside it, with
    `.tfrlidx` appended."""
    return os.fspath(path) + SIDECAR_SUFFIX


def index_location(path: str, index: IndexArg) -> str | None:
    """Where the index of `path` is read and saved: its sidecar (index None or True), the file
    `index` names, or nowhere (False, or None for an events file)."""
    if index is None and EVENTS_MARK in os.path.basename(os.fspath(path)):
        return None
    if index is None or index is True:
        return sidecar_path(path)
    if index is False:
        return None
    return os.fspath(index)


def names_a_file(index: IndexArg) -> bool:
    """Whether the caller named the index file (then it must be valid), rather than leaving the
    choice to the default sidecar or to none."""
    return isinstance(index, (str, os.PathLike))


def check_on_stale(on_stale: str) -> None:
    if on_stale not in ON_STALE:
        raise ValueError(f"on_stale must be one of {ON_STALE}, not {on_stale!r}")


def stale_error(where: str, reason: str, path: PathName) -> StaleIndexError:
    """The error of an index found out of date (`reason`) with on_stale="raise"."""
    return StaleIndexError(f"{where} is out of date: {reason}; open with on_stale='rebuild' to re-index", path=path)


def size_change(size: int, indexed: int, what: str = "file") -> str | None:
    """Why a file (or an "object") of `size` bytes is not the one of `indexed` bytes (None when
    the sizes agree)."""
    return f"the {what} is {size} bytes now, {indexed} when indexed" if size != indexed else None


def file_change(st: os.stat_result, file_size: int, mtime_ns: int) -> str | None:
    """Why a local file (stat `st`) no longer has the size and mtime of its index (None when it has)."""
    if st.st_size != file_size:
        return size_change(st.st_size, file_size)
    if st.st_mtime_ns != mtime_ns:
        return "the file was modified after it was indexed (its mtime changed)"
    return None


# ----------------------------------------------------------------- the header


def header_size(head: struct.Struct) -> int:
    """Bytes of a header whose fields `head` packs: the fields, then their CRC."""
    return head.size + _CRC.size


def pack_header(head: struct.Struct, *fields: Any) -> bytes:
    """`fields` (the magic and the version first) packed by `head`, then their CRC32C."""
    packed = head.pack(*fields)
    return packed + _CRC.pack(crc32c(packed))


def unpack_header(
    data: Any, head: struct.Struct, magic: bytes, version: int, location: PathName, not_one: str
) -> tuple[Any, ...]:
    """The fields of the header that opens `data` (a sidecar's bytes or a map of them), its
    magic, version and CRC checked: else IndexFormatError, `not_one` when the magic is not there."""
    if len(data) < header_size(head) or data[: len(magic)] != magic:
        raise IndexFormatError(not_one, path=location)
    fields = head.unpack_from(data, 0)
    if fields[1] != version:
        raise IndexFormatError(f"index format version {fields[1]} is not supported (this is {version})", path=location)
    if crc32c(data[: head.size]) != _CRC.unpack_from(data, head.size)[0]:
        raise IndexFormatError("the index header is damaged (its CRC does not match)", path=location)
    return fields


# ----------------------------------------------------------------- reading and saving


def counts_as_missing(err: OSError | IndexFormatError, named: bool, missing_ok: bool = True) -> bool:
    """Whether `err`, met while reading an index, means there is no index to use rather than a
    failure to report: nothing is there (unless not `missing_ok`), or the index is damaged and
    the caller has not `named` it (a damaged sidecar is rebuilt)."""
    if isinstance(err, FileNotFoundError):
        return missing_ok
    return isinstance(err, IndexFormatError) and not named


def save_bytes(data: bytes | Callable[[IO[bytes]], None], target: str, *, like: str | None = None) -> bool:
    """write_atomic(target, data, like=...) (`like`: the data file, whose permissions the index
    never widens), or False (leaving nothing behind) when the place is not writable; other I/O
    errors propagate."""
    try:
        write_atomic(target, data, like=like)
    except OSError as err:
        if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT):
            return False
        raise
    return True


def save_or_raise(data: bytes | Callable[[IO[bytes]], None], target: str, *, like: str | None = None) -> str:
    """save_bytes, raising PermissionError when the place is not writable; returns `target`."""
    if not save_bytes(data, target, like=like):
        raise PermissionError(errno.EACCES, "cannot write the index here (read-only?)", target)
    return target
