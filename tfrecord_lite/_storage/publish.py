"""Writing outputs all or nothing. A command that writes several files (shards, their index
sidecars, a label map) writes them into a hidden staging folder beside the output,
`.NAME.publish-TOKEN/`, and publishes them with one atomic step: a journal listing every
rename (and every old file to delete) is renamed into the staging folder last. Before the
journal exists nothing is visible and a crash leaves only the staging folder; once it exists
the renames are replayed until done (the journal's rules, shared with the publications in a
store and with the readers that list an output, are in _storage/journal.py). Every publication holds
the output's lock `.NAME.lock` (fcntl.flock, released by the kernel when its owner dies; the
owner's pid inside; created O_EXCL|O_NOFOLLOW, an existing one used only when it is a
regular, singly linked pid file, and named after the output's real path so that every
symlinked name of an output has one lock), so the next run on the same output knows that any staging folder it
finds belongs to a killed run: it rolls it back (no journal) or forward (journal) and says
so through logging; it also removes the temporary files that killed single-file writes of
the output left (_storage/atomic.py). A publication that publishes nothing also removes the
folders it had to create, so a failed first run leaves no empty output folder. An existing file
is renamed in the same step by staging a hard link to it (`link`) and deleting its old name, as
an append renumbering its shards does.

open_publication is where writers get a publication: Publication for a local path, and for a
URL uploads.RemotePublication, which has the same interface (and no lock: a store has none).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import stat

from tfrecord_lite._errors import PathName, TFRecordError
from tfrecord_lite._redact import log
from tfrecord_lite._storage.atomic import fsync_file, fsync_folder, orphan_temps, pid_alive, write_atomic
from tfrecord_lite._storage.journal import JOURNAL, STAGING, LocalFolder, recover_stagings, roll_forward
from tfrecord_lite._storage.locations import StorageOptions, is_url, split_options
from tfrecord_lite._storage.uploads import RemotePublication

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the lock file alone, its pid checked
    fcntl = None  # type: ignore[assignment]

__all__ = ["OutputLock", "OutputLockedError", "Publication", "open_publication", "recover"]


FOLDER_BASE = "tfrecord-lite"  # the base name of the lock and staging folders of a folder of outputs


class OutputLockedError(TFRecordError):
    """Another process is writing the same output (it holds the output's lock file)."""


def _split(target: PathName) -> tuple[str, str]:
    """(folder, base name) of an output path or prefix. An existing folder of outputs (`split -o out/`)
    is its own folder with base '': its lock and staging live inside it, on its file system. Symlinks are
    resolved, so every alias of one output has one lock."""
    path = os.path.realpath(os.fspath(target))  # type: ignore[arg-type]
    if os.path.isdir(path):
        return path, ""
    return os.path.dirname(path), os.path.basename(path)


def _hidden(base: str, rest: str) -> str:
    """The hidden name of an output's lock or staging folder: '.BASE<rest>' ('.tfrecord-lite<rest>' in a folder)."""
    return f".{base or FOLDER_BASE}{rest}"


def _read_pid(fd: int) -> int | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 64).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


class OutputLock:
    """The exclusive lock of an output: `.NAME.lock` beside it, holding the owner's pid.

    Taken at construction; a lock held by a running process raises OutputLockedError, a
    lock left by a dead one is taken over (`stale_pid` says whose it was), and a lock
    file that is a link or holds anything but a pid is refused (OutputLockedError), untouched. `release()`
    removes the file."""

    def __init__(self, target: PathName) -> None:
        folder, base = _split(target)
        self.target = os.fspath(target)  # type: ignore[arg-type]
        self.path = os.path.join(folder, _hidden(base, ".lock"))
        self.stale_pid: int | None = None
        self._fd: int | None = None
        if not os.path.isdir(folder):
            raise FileNotFoundError(errno.ENOENT, "no such folder", folder)
        while self._fd is None:
            self._fd = self._try_acquire()
        if self.stale_pid is not None:
            log.warning("%s: took over the lock of pid %d, which is no longer running", self.target, self.stale_pid)

    def _try_acquire(self) -> int | None:
        """The locked descriptor, or None when the lock file was replaced meanwhile (try again)."""
        try:
            fd = self._open()
        except FileNotFoundError:  # removed between the two opens: try again
            return None
        try:
            owner = _read_pid(fd)
            self._lock(fd, owner)
            if os.fstat(fd).st_ino != os.stat(self.path, follow_symlinks=False).st_ino:  # released and unlinked
                os.close(fd)
                return None
        except FileNotFoundError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        self.stale_pid = owner if owner is not None and owner != os.getpid() else None
        os.ftruncate(fd, 0)  # a pid file, checked by _open: nothing else is ever truncated
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd

    def _open(self) -> int:
        """The lock file created (O_EXCL), else the existing one opened; never through a symlink
        (O_NOFOLLOW), and only if it is what a lock file is: a regular file of one link holding a pid."""
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | nofollow, 0o666)
        except FileExistsError:
            pass
        try:
            fd = os.open(self.path, os.O_RDWR | nofollow)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise self._not_a_lock("it is a symbolic link") from None
        found = os.fstat(fd)
        why = "it is not a regular file" if not stat.S_ISREG(found.st_mode) else ""
        why = why or ("it has other names (hard links)" if found.st_nlink > 1 else "")
        if not why and (found.st_size > 64 or (found.st_size and _read_pid(fd) is None)):
            why = "it holds something other than a process id"
        if why:
            os.close(fd)
            raise self._not_a_lock(why)
        return fd

    def _not_a_lock(self, why: str) -> OutputLockedError:
        return OutputLockedError(
            f"refusing the lock file {self.path} of {self.target}: {why}; a lock file is created by the writer. "
            "Remove it if it is not yours",
            path=self.target,
        )

    def _lock(self, fd: int, owner: int | None) -> None:
        if fcntl is None:  # pragma: no cover - no flock: a live pid in the file is the lock
            if owner is not None and owner != os.getpid() and pid_alive(owner):
                raise self._locked_error(owner)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise self._locked_error(_read_pid(fd)) from None

    def _locked_error(self, owner: int | None) -> OutputLockedError:
        who = f"process {owner}" if owner is not None else "another process"
        return OutputLockedError(
            f"{self.target} is being written by {who} (lock file {self.path}); wait until it is done. "
            "Two writers on one output at once would mix their files",
            path=self.target,
        )

    def release(self) -> None:
        """Unlock and remove the lock file. Safe to call twice."""
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # while still locked, so a waiter never locks a removed file
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutputLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_if_possible(path: str) -> OutputLock | None:
    """The lock of a local file about to be written; none where no lock file can be made (read-only folder)."""
    try:
        return OutputLock(path)
    except PermissionError:
        return None
    except OSError as err:
        if err.errno == errno.EROFS:
            return None
        raise


class Publication:
    """Files that appear together: written under temporary names, published by `commit()`.

    `target` is the output (a file, a shard prefix or a folder); it is locked while the
    publication is open (OutputLockedError if another process writes it), and what a
    killed earlier run left is rolled back or forward first (`recovered` lists it). Use
    `file(final)` for a temporary path that becomes `final`, `delete(path)` for an old
    file to remove in the same step, then `commit()`; `abort()` (or an exception in a
    `with` block) removes every temporary file and publishes nothing.
    """

    def __init__(self, target: PathName) -> None:
        self.target = os.fspath(target)  # type: ignore[arg-type]
        self.folder, self.base = _split(target)
        self._made = _missing_folders(self.folder)  # removed again when nothing is published
        os.makedirs(self.folder, exist_ok=True)
        self.lock = OutputLock(target)
        self.committed = False
        self.closed = False
        self._moves: list[tuple[str, str]] = []
        self._deletes: list[str] = []
        try:
            self.recovered = recover(target, locked=True)
            self.staging = os.path.join(self.folder, _hidden(self.base, STAGING + secrets.token_hex(4)))
            os.mkdir(self.staging)
        except BaseException:
            self.lock.release()
            self._remove_made_folders()
            raise

    def temp(self, name: str) -> str:
        """A temporary path in the staging folder, not published unless `move`d."""
        if os.sep in name or (os.altsep and os.altsep in name):
            raise ValueError(f"a temporary file name, not a path: {name!r}")
        return os.path.join(self.staging, name)

    def file(self, final: PathName) -> str:
        """A temporary path to write; it is published as `final` by commit()."""
        final = os.fspath(final)  # type: ignore[arg-type]
        temp = self.temp(f"{len(self._moves)}-{os.path.basename(final)}")
        self.move(temp, final)
        return temp

    def move(self, temp: str, final: PathName) -> None:
        """Publish the temporary file `temp` (from `temp()`) as `final`, a file of the output's folder."""
        self._moves.append((temp, self._inside(final)))

    def link(self, path: PathName, final: PathName) -> None:
        """Publish the existing file `path` of the output's folder also as `final`, in the same step as
        the other files (staged as a hard link, or a copy where the file system has none); `delete`
        the old name to rename it."""
        path = os.fspath(path)  # type: ignore[arg-type]
        temp = self.temp(f"{len(self._moves)}-{os.path.basename(os.fspath(final))}")  # type: ignore[arg-type]
        try:
            os.link(path, temp)
        except OSError:
            shutil.copy2(path, temp)
        self.move(temp, final)

    def delete(self, path: PathName) -> None:
        """Remove `path` (an old file of the output's folder that the new ones replace) when publishing."""
        self._deletes.append(self._inside(path))

    def _inside(self, path: PathName) -> str:
        """`path` made absolute, checked to be a file directly in the output's folder (a journal names no other)."""
        found = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))  # type: ignore[arg-type]
        if os.path.dirname(found) != self.folder:
            raise ValueError(f"{os.fspath(path)!r} is not in the folder of {self.target} ({self.folder})")  # type: ignore[arg-type]
        return found

    def commit(self) -> None:
        """Publish every file at once (the journal is the atomic step), then unlock."""
        if self.closed:
            raise ValueError(f"the publication of {self.target} is already closed")
        try:
            for temp, _ in self._moves:
                fsync_file(temp)  # FileNotFoundError for a file that was never written
            finals = {final for _, final in self._moves}
            journal = {
                "moves": [[os.path.basename(t), os.path.basename(f), os.path.getsize(t)] for t, f in self._moves],
                "deletes": [os.path.basename(p) for p in self._deletes if p not in finals],
            }
            write_atomic(os.path.join(self.staging, JOURNAL), json.dumps(journal).encode())
            fsync_folder(self.staging)
        except BaseException:
            self.abort()
            raise
        self.committed = True  # from here on the new state is the truth: roll forward
        try:
            roll_forward(LocalFolder(self.folder), os.path.basename(self.staging), journal)
        finally:
            self.closed = True
            self.lock.release()

    def abort(self) -> None:
        """Publish nothing: remove the staging folder and unlock. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        try:
            shutil.rmtree(self.staging, ignore_errors=True)
        finally:
            self.lock.release()
            self._remove_made_folders()

    def _remove_made_folders(self) -> None:
        """The folders this publication created, removed when they are still empty (a failed first
        run leaves no empty output folder behind)."""
        for folder in self._made:
            try:
                os.rmdir(folder)
            except OSError:
                return  # not empty (another writer's files), or gone: leave it and its parents

    def __enter__(self) -> Publication:
        return self

    def __del__(self) -> None:  # never committed: publish nothing, unlock
        with contextlib.suppress(Exception):
            if not getattr(self, "closed", True):
                self.abort()

    def __exit__(self, exc_type: object, exc: BaseException | None, traceback: object) -> None:
        if exc is None:
            self.commit()
            return
        clearer = self.abort_for(exc)
        if clearer is not None:
            raise clearer from exc

    def abort_for(self, exc: BaseException) -> OSError | None:
        """abort() because of `exc`; for a full disk, an OSError that says what happened to the output."""
        self.abort()
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            return OSError(
                exc.errno,
                f"{os.strerror(exc.errno or 0)}: writing {self.target} failed; nothing was published, "
                "the previous files are unchanged and the temporary ones removed",
            )
        return None


def _missing_folders(folder: str) -> list[str]:
    """The folders from `folder` up that do not exist yet, deepest first."""
    missing = []
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return missing


def recover(target: PathName, *, locked: bool = False) -> list[str]:
    """Finish or undo what killed runs left for `target`; returns one line per thing done.

    A staging folder with a journal is rolled forward (its files published), one without
    is removed, as are temporary files of dead writers. Takes the output's lock unless
    `locked` says the caller holds it."""
    if not locked:
        with OutputLock(target):
            return recover(target, locked=True)
    folder, base = _split(target)
    if not os.path.isdir(folder):
        return []
    done = recover_stagings(LocalFolder(folder), base or FOLDER_BASE, os.fspath(target))  # type: ignore[arg-type]
    for path in orphan_temps(folder, base):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        done.append(f"removed {path}, a temporary file of a killed run")
        log.warning("%s: %s", os.fspath(target), done[-1])  # type: ignore[arg-type]
    return done


def open_publication(target: str, storage_options: StorageOptions = None) -> Publication | RemotePublication:
    """A publication of `target`: a Publication for a local path, a RemotePublication (the same
    interface, uploads.py) for a URL."""
    if is_url(target):
        return RemotePublication(target, *split_options(storage_options))
    return Publication(target)
