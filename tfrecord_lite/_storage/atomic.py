"""Single local files replaced all at once, and what makes a rename durable. `write_atomic`
writes a hidden temporary file named with the writer's pid (`.NAME.PID-TOKEN.tmp`), syncs
it and renames it into place: readers see the old file or the new one, never a part. A
temporary file whose writer is dead (pid_alive) is an orphan: `orphan_temps` finds those of
one output (publish.recover removes them before the output is written again),
`remove_orphans` those of a whole folder. Files are created with mode 0o666 minus the
umask, as open() creates them (never mkstemp's 0600); a file derived from another one (an
index sidecar holds offsets, a GZIP sidecar even 32 KiB windows of the uncompressed data)
is created with no permission its source lacks (`like=`): a 0600 data file gets a 0600
sidecar, from the first byte written, whatever the umask.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from typing import IO

__all__ = ["fsync_file", "fsync_folder", "orphan_temps", "pid_alive", "remove_orphans", "replacing", "write_atomic"]


def pid_alive(pid: int) -> bool:
    """Whether process `pid` of this machine runs (True where that cannot be told)."""
    if os.name != "posix":  # pragma: no cover - os.kill(pid, 0) would end the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True


def fsync_file(path: str) -> None:
    """Make the bytes of the file `path` durable (FileNotFoundError if it was never written)."""
    _fsync_path(path)


def fsync_folder(path: str) -> None:
    """Make the renames inside folder `path` durable."""
    _fsync_path(path, directory=True)


def _fsync_path(path: str, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    except OSError as err:  # some file systems cannot sync a directory
        if not directory or err.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def remove_orphans(folder: str) -> list[str]:
    """Remove the hidden temporary files of dead writers in `folder` (any output); returns them."""
    found = orphan_temps(folder, "")
    for path in found:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    return found


_TEMP = re.compile(r"\.(?P<base>.+)\.(?P<pid>[1-9][0-9]{0,8})-[0-9a-f]{8}\.tmp")  # what _temp_name makes


def orphan_temps(folder: str, base: str) -> list[str]:
    """Temporary files `.BASE<anything>.PID-TOKEN.tmp` in `folder` whose writers are dead: only
    names of the shape this module makes (TOKEN: 8 lower-case hex digits), never another
    hidden file that happens to end in digits and `.tmp`."""
    found = []
    for name in os.listdir(folder):
        match = _TEMP.fullmatch(name)
        if match and match["base"].startswith(base) and not pid_alive(int(match["pid"])):
            found.append(os.path.join(folder, name))
    return sorted(found)


def _temp_name(target: str) -> str:
    folder, base = os.path.split(target)
    return os.path.join(folder, f".{base}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def _create_new(path: str, mode: int = 0o666) -> IO[bytes]:
    """A new file opened for writing with `mode` minus the umask (open()'s 0o666 by default)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "wb")


def write_atomic(target: str, data: bytes | Callable[[IO[bytes]], None], *, like: str | None = None) -> None:
    """Replace `target` with `data` (or what `data(file)` writes) through a temporary file and
    a rename: readers see the old file or the new one, never a part. (What a killed writer
    leaves, `.NAME.PID-TOKEN.tmp`, is removed by `publish.recover` / `remove_orphans`.)
    With `like`, the file it is derived from, it gets no permission that file lacks."""
    tmp = _temp_name(target)
    mode = 0o666 if like is None else 0o666 & stat.S_IMODE(os.stat(like).st_mode)
    try:
        with _create_new(tmp, mode) as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def replacing(target: str) -> Iterator[str]:
    """write_atomic for a writer that opens the file by its name (TFRecordWriter, Parquet): the
    temporary name to write, synced and renamed to `target` when the block ends without error,
    removed when it raises (its parent folder made if missing)."""
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    tmp = _temp_name(target)
    try:
        yield tmp
        fsync_file(tmp)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
