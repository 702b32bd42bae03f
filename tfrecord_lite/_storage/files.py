"""Opening what users pass as a source or destination: a local path, a URL that
fsspec understands (s3://, gs://, ..., imported only then), or a binary file
object they already opened (which we then never close). Also what a file holds,
from its first bytes (sniff_file), and sizes written as "4M" (the compression names
are _compression/kinds.py's).
A URL is read by _storage/remote.py (ranged reads that resume) and written by
_storage/uploads.py (objects that appear only complete), with `storage_options`:
fsspec options, or an fsspec filesystem object (_storage/locations.py).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from typing import IO, Any, BinaryIO, Union, cast

from tfrecord_lite._storage.atomic import write_atomic
from tfrecord_lite._storage.locations import StorageOptions, has_scheme, is_url, local_path, redact, split_options
from tfrecord_lite._storage.remote import RemoteObject, RemoteStream
from tfrecord_lite._storage.uploads import RemoteUpload, Store
from tfrecord_lite._wire.framing import HEADER_SIZE
from tfrecord_lite._wire.sniff import sniff_compression

PathOrFile = Union[str, "os.PathLike[str]", IO[bytes], Any]


def is_file_object(obj: Any) -> bool:
    return hasattr(obj, "read") or hasattr(obj, "write")


def display_name(obj: Any) -> str | None:
    """A name for error messages: the path (a URL without credentials or query), or a file object's name."""
    if isinstance(obj, (str, os.PathLike)):
        path: str | bytes = os.fspath(obj)
        if isinstance(path, bytes):
            return os.fsdecode(path)
        if has_scheme(path):
            return redact(path)
        return path
    name = getattr(obj, "name", None)
    return name if isinstance(name, str) else None


def open_binary(target: PathOrFile, mode: str, storage_options: StorageOptions = None) -> tuple[IO[bytes], bool]:
    """(binary file, whether we own it) for a path, URL or open file; mode 'rb', 'wb' or 'ab'."""
    if is_file_object(target):
        return cast(IO[bytes], target), False
    path = os.fspath(cast("str | os.PathLike[str]", target))
    if is_url(path):
        options, fs = split_options(storage_options)
        if mode == "rb":
            return cast(IO[bytes], RemoteStream(RemoteObject(path, options, fs))), True
        if mode == "wb":
            return cast(IO[bytes], RemoteUpload(path, options, fs)), True
        raise ValueError(f"objects in a store cannot be appended to: {display_name(path)}")
    return open(local_path(path) if isinstance(path, str) else path, mode), True


def read_head(target: str | os.PathLike[str], size: int, storage_options: StorageOptions = None) -> bytes:
    """The first `size` bytes of a file or object (all of it when shorter), by one read or one
    ranged request; FileNotFoundError if missing."""
    path = os.fspath(target)
    if is_url(path):
        return RemoteObject(path, *split_options(storage_options)).read_range(0, size)
    with open_regular(path, "telling what it holds") as fh:
        return fh.read(size)


def not_a_file(path: str | None, detail: str) -> OSError:
    """The error (ESPIPE) for a FIFO, device or socket where a regular file is needed."""
    err = OSError(f"not a regular file: {detail} (in {path})")
    err.errno = errno.ESPIPE
    return err


def open_regular(path: str, action: str) -> BinaryIO:
    """A local file opened for reading, or an OSError (ESPIPE) if it is not a regular file: a
    FIFO, a device or a socket has no size to index or seek in (and /dev/zero never ends). It is
    opened without blocking, so a FIFO with no writer is refused at once, not waited on."""
    fd = os.open(local_path(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):  # a folder: the caller's error says what to do
            raise not_a_file(path, f"{action} needs a regular file (iter_records streams a pipe)")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def file_size(target: str | os.PathLike[str], storage_options: StorageOptions = None) -> int:
    """The size in bytes of a local file, or of an object (asked of its store once)."""
    path = os.fspath(target)
    if is_url(path):
        return RemoteObject(path, *split_options(storage_options)).size
    return os.path.getsize(local_path(path))


def sniff_file(target: str | os.PathLike[str], storage_options: StorageOptions = None) -> str:
    """'' | 'gzip' | 'zlib' | 'unknown': what the first bytes of a file (or object) say it holds."""
    return sniff_compression(read_head(target, HEADER_SIZE, storage_options))


def read_whole(
    target: str | os.PathLike[str], storage_options: StorageOptions = None, *, limit: int | None = None
) -> bytes:
    """All the bytes of a small file or object (a label map, a manifest); FileNotFoundError if missing.
    With `limit`, no more than limit + 1 of them (more than `limit`: the caller refuses the file)."""
    path = os.fspath(target)
    if is_url(path):
        return RemoteObject(path, *split_options(storage_options)).read_range(
            0, 1 << 62 if limit is None else limit + 1
        )
    with open(local_path(path), "rb") as fh:
        return fh.read(-1 if limit is None else limit + 1)


def write_whole(target: str | os.PathLike[str], data: bytes, storage_options: StorageOptions = None) -> None:
    """Replace a small file or object with `data`, atomically: a local file through a temporary
    file and a rename, an object by one PUT (a store shows the old object or the new one)."""
    path = os.fspath(target)
    if is_url(path):
        Store(path, *split_options(storage_options)).put(path, data)
        return
    write_atomic(local_path(path), data)


_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def size_in_bytes(value: str | int) -> int:
    """'100M', '1.5G', '64k', '4096' (or an int) -> bytes (binary units); ValueError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", value) if isinstance(value, str) else None
    if not m or m.group(2).lower() not in _SIZE_UNITS or float(m.group(1)) <= 0:
        raise ValueError(f"expected a size such as 4096, 64k, 100M or 1G, got {value!r}")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


def make_output_folder(root: str, folder: str) -> None:
    """Create `folder` (at or under the output folder `root`) and refuse to write into it when it
    or a folder between it and `root` is a symbolic link: a folder of an output never leads out
    of it (IsADirectoryError naming the link; remove it, or name the real folder as the output)."""
    here = os.path.abspath(folder)
    top = os.path.abspath(root)
    while here != top and here.startswith(top + os.sep):
        if os.path.islink(here):
            raise IsADirectoryError(
                errno.ELOOP,
                f"refusing to write into {redact(here)}: a symbolic link inside the output folder {redact(top)} "
                "(it may lead outside it); remove the link, or name the real folder as the output",
                here,
            )
        here = os.path.dirname(here)
    os.makedirs(folder, exist_ok=True)
