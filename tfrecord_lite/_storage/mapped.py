"""Write-through output at memory speed: a local regular file written through a shared memory
map (MAP_SHARED). A store into the map lands in the page cache, which belongs to the kernel, so
a record copied in is in the file even if the process is killed (SIGKILL) the next instant; no
system call per record. Not a power-loss guarantee (nothing is fsync'ed), as with os.write.

The file grows ahead of the data in chunks (1 MiB, doubling up to 64 MiB) with
os.posix_fallocate before they are mapped, so a full disk (or RLIMIT_FSIZE) is an OSError when
a chunk is added (when a whole chunk does not fit, room for the record at hand is asked for:
the disk is used to the end), never a SIGBUS on a store. finish() cuts the file back to the written length.
A process killed before that leaves the records written, then zero bytes up to the end of the
chunk: readers recognise that tail (_wire/unfinished.py) and append / salvage cut it off.

Where this cannot work (no os.posix_fallocate, as on macOS and Windows; not a regular file;
a file that cannot be opened for reading too), open_mapped returns None and the writer
hands each record to os.writev instead.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
import sys

FIRST_CHUNK = 1 << 20
LAST_CHUNK = 64 << 20
_PAGE = mmap.ALLOCATIONGRANULARITY
# Linux 5.14+: the pages made writable in one call, not by a fault every 4 KiB (constant missing before Python 3.12?)
_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23 if sys.platform.startswith("linux") else None)


class MappedFile:
    """A file opened for writing through memory maps, from `start` (its current end) on."""

    def __init__(self, fd: int, start: int) -> None:
        self._fd = fd
        self._allocated = start  # the file's size: written data, then zero bytes
        self._chunk = FIRST_CHUNK
        self.map: mmap.mmap | None = None
        self.base = start  # the file offset of map[0]

    def grow(self, written: int, needed: int) -> tuple[mmap.mmap, int, int]:
        """Map the file from the page holding offset `written` (where data ends) to at least
        `needed`, growing the file first: (the map, where `written` lies in it, its length)."""
        self.release()
        self._allocated = max(self._allocated, written)  # the file may have grown by os.write since
        base = written - written % _PAGE
        limit = max(needed, written + self._chunk)
        limit += -limit % _PAGE
        if limit > self._allocated:
            try:
                os.posix_fallocate(self._fd, self._allocated, limit - self._allocated)
            except OSError:  # a disk nearly full: room for this record only, or the error
                limit = needed + -needed % _PAGE
                if limit <= self._allocated:
                    raise
                os.posix_fallocate(self._fd, self._allocated, limit - self._allocated)
            self._allocated = limit
            self._chunk = min(self._chunk * 2, LAST_CHUNK)
        self.map = mmap.mmap(self._fd, limit - base, mmap.MAP_SHARED, offset=base)
        if _POPULATE_WRITE is not None:
            with contextlib.suppress(OSError):  # older kernels: EINVAL, faults instead
                self.map.madvise(_POPULATE_WRITE)
        self.base = base
        return self.map, written - base, limit - base

    def release(self) -> None:
        """Unmap (the data stays in the page cache, and in the file)."""
        if self.map is not None:
            self.map.close()
            self.map = None

    def finish(self, written: int) -> None:
        """Cut the file to the `written` bytes (the zero bytes ahead of them dropped)."""
        self.release()
        if self._allocated != written:
            os.ftruncate(self._fd, written)
            self._allocated = written

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.release()
        os.close(self._fd)


def open_mapped(path: str, opened: int, start: int) -> MappedFile | None:
    """A MappedFile for the local file at `path`, open for writing as descriptor `opened` and
    `start` bytes long, or None when it cannot be written through maps (then os.writev is used)."""
    if not hasattr(os, "posix_fallocate"):
        return None
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    st, want = os.fstat(fd), os.fstat(opened)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (want.st_dev, want.st_ino):
        os.close(fd)
        return None
    return MappedFile(fd, start)
