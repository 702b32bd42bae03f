"""The journal of a publication, one rule for a local folder and for a store. A publication
(publish.Publication on disk, uploads.RemotePublication in a bucket) stages its files
under a hidden folder beside the output, `.NAME.publish-TOKEN/`, and commits by writing
`journal.json` there, in one atomic step (a rename on disk, one PUT in a store): the staged
name -> final name of every file, and the old files the new ones replace. The journal is
the commit mark of the output as a whole:

  - writers replay it (roll_forward) until every file has its final name and every old
    one is gone, then drop the staging folder, journal last; the next writer of the output
    finishes a killed run's journal, and removes a staging folder without one when the run
    that made it is over (recover);
  - readers that list a folder (a prefix, a glob or a folder given to resolve_inputs) see
    it as the journals say (visible): a final name whose staged file is still there is read
    from there, and a file a journal deletes is not there. A reader sees the old files
    until the journal exists and the new ones from then on, never a mix, while the
    renames run, and after a crash in the middle of them. A journal followed while no
    writer is alive (writer_alive: on disk, the output's lock `.NAME.lock` held by flock
    and naming a running process; in a store, the staging's OWNER not a dead process of
    this machine) is followed with a warning naming it: a killed run's, which the next
    writer finishes, or one planted there, which listings of the bare files do not show.

A journal is data found in a folder, so it is checked before anything is done with it
(validate): {"moves": [[staged, final, size], ...], "deletes": [name, ...]} and nothing else,
every name a plain name (no separator, no `..`, not absolute): a staged name inside its own
staging folder, a final or deleted name inside the output's folder; a staged file still
there must be a regular file of the size written down. Writers refuse a journal that does
not validate (JournalError, naming it) and touch nothing; readers log it and ignore it.

A Folder is the few operations this needs; LocalFolder is a directory, and StoreFolder a
prefix of an fsspec store. A store has no locks: its staging prefix holds OWNER, the host and
pid of the run that staged it, so that only a killed run of this machine is rolled back.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
from typing import Any, Protocol

from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._redact import log
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.atomic import fsync_folder, pid_alive

__all__ = [
    "JOURNAL",
    "OWNER",
    "STAGING",
    "Folder",
    "JournalError",
    "LocalFolder",
    "StoreFolder",
    "journal_of",
    "recover_stagings",
    "roll_forward",
    "validate",
    "visible",
]


JOURNAL = "journal.json"
STAGING = ".publish-"  # staging folders are named `.NAME.publish-TOKEN`
OWNER = "owner.json"  # in a store's staging prefix: {"host", "pid", "started"} of the run that staged it


class JournalError(TFRecordError):
    """A publication journal that does not validate: refused, nothing it names is touched."""


class Folder(Protocol):
    """A folder of files (or a prefix of objects), named relative to it ('a', 'staging/b')."""

    def entries(self, rel: str = "") -> dict[str, bool]:
        """Names directly inside `rel` -> whether each is a folder; {} when it does not exist."""

    def path(self, rel: str) -> str:
        """The path (or store path) of `rel`, as listings spell it."""

    def read(self, rel: str) -> bytes:
        """The bytes of a file; FileNotFoundError when missing."""

    def size(self, rel: str) -> int | None:
        """The size of a regular file; None when missing or not a regular file (a link, a folder)."""

    def move(self, source: str, target: str) -> None:
        """Give `source` the name `target`; nothing when `source` is gone (moved before)."""

    def remove(self, rel: str) -> None:
        """Remove a file; nothing when it is gone."""

    def drop(self, staging: str) -> None:
        """Remove a staging folder and all inside it, its journal last."""

    def abandoned(self, staging: str) -> bool:
        """Whether the run that made `staging` is over (its files may go)."""

    def writer_alive(self, staging: str) -> bool:
        """Whether the run that made `staging` may still be going (readers honour its journal)."""


def _is_staging(name: str) -> bool:
    return name.startswith(".") and STAGING in name


def is_plain_name(name: object) -> bool:
    """Whether `name` is a file name alone: no separator, not '.' or '..', not absolute, no NUL."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and not any(c in name for c in "/\\\0")
        and not os.path.isabs(name)
    )


def validate(folder: Folder, staging: str, journal: object) -> dict[str, Any]:
    """`journal` (as parsed from `staging`'s journal.json) if it follows the schema of the module
    comment and its staged files still there have their sizes; JournalError naming it if not."""

    def refuse(why: str) -> JournalError:
        return JournalError(
            f"refused the publication journal {folder.path(f'{staging}/{JOURNAL}')}: {why}; nothing it names "
            "was touched (remove that folder if it is not the output's own)",
            path=folder.path(f"{staging}/{JOURNAL}"),
        )

    if not isinstance(journal, dict) or set(journal) != {"moves", "deletes"}:
        raise refuse('expected an object with exactly the keys "moves" and "deletes"')
    moves, deletes = journal["moves"], journal["deletes"]
    if not isinstance(moves, list) or not isinstance(deletes, list):
        raise refuse('"moves" and "deletes" must be lists')
    for move in moves:
        if not (isinstance(move, list) and len(move) == 3 and type(move[2]) is int and move[2] >= 0):
            raise refuse(f"a move must be [staged name, final name, size], found {move!r:.200}")
        if not (is_plain_name(move[0]) and move[0] != JOURNAL and is_plain_name(move[1])):
            raise refuse(f"a move names a path, not a plain file name: {move!r:.200}")
        found = folder.size(f"{staging}/{move[0]}")
        if found is not None and found != move[2]:
            raise refuse(f"the staged file {move[0]!r} holds {found} bytes, the journal says {move[2]}")
        if found is None and move[0] in folder.entries(staging):
            raise refuse(f"the staged {move[0]!r} is not a regular file")
    for name in deletes:
        if not is_plain_name(name):
            raise refuse(f"a deletion names a path, not a plain file name: {name!r:.200}")
    return journal


def journal_of(folder: Folder, staging: str) -> dict[str, Any] | None:
    """The validated journal of a staging folder, None when it has none (its publication never
    committed); JournalError when it does not validate."""
    try:
        text = folder.read(f"{staging}/{JOURNAL}")
    except FileNotFoundError:
        return None
    try:
        journal = json.loads(text)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError: validate refuses None
        journal = None
    return validate(folder, staging, journal)


def visible(folder: Folder) -> dict[str, str]:
    """{path of each file in `folder`, as readers see it: path to read it from}. Files a committed
    journal deletes are left out, and the files it publishes are in, read from their staged copy
    while it is still there (see the module comment). A journal that does not validate is logged
    and ignored."""
    entries = folder.entries()
    files = {name: name for name, is_folder in entries.items() if not is_folder}
    for staging in sorted(name for name, is_folder in entries.items() if is_folder and _is_staging(name)):
        staged = folder.entries(staging)
        try:
            journal = journal_of(folder, staging) if JOURNAL in staged else None
        except JournalError as exc:
            log.warning("%s", exc)
            continue
        if journal is None:
            continue  # not committed: none of it exists yet
        if not folder.writer_alive(staging):
            log.warning(
                "reading the output as the publication journal %s says, and no running writer holds its lock: "
                "a killed run left it (the next writer of the output finishes it), or it was planted there",
                folder.path(f"{staging}/{JOURNAL}"),
            )
        finals = {final for _, final, _ in journal["moves"]}
        for old in journal["deletes"]:
            if old not in finals:
                files.pop(old, None)
        for temp, final, _ in journal["moves"]:
            if temp in staged:
                files[final] = f"{staging}/{temp}"
    return {folder.path(final): folder.path(rel) for final, rel in files.items()}


def roll_forward(folder: Folder, staging: str, journal: dict[str, Any]) -> None:
    """Apply a validated journal: every rename not done yet, every deletion, then drop the staging."""
    for temp, final, _ in journal["moves"]:
        folder.move(f"{staging}/{temp}", final)
    finals = {final for _, final, _ in journal["moves"]}
    for old in journal["deletes"]:
        if old not in finals:
            folder.remove(old)
    folder.drop(staging)


def recover_stagings(folder: Folder, base: str, where: str) -> list[str]:
    """Finish or undo what killed runs left for the output whose staging folders are named
    `.BASE.publish-*`; one line per thing done (also logged as a warning, naming `where`)."""
    done = []
    start = f".{base}{STAGING}"
    for name in sorted(n for n, is_folder in folder.entries().items() if is_folder and n.startswith(start)):
        journal = journal_of(folder, name)
        if journal is not None:
            roll_forward(folder, name, journal)
            done.append(f"completed a write that was killed while publishing ({plural(len(journal['moves']), 'file')})")
        elif folder.abandoned(name):
            folder.drop(name)
            done.append(f"rolled back an unfinished write that was killed (removed {folder.path(name)})")
        else:
            done.append(
                f"left {folder.path(name)}: staged by a run that may still be going (another machine, or a "
                "process still alive); remove it once that run is over"
            )
    for line in done:
        log.warning("%s: %s", where, line)
    return done


class LocalFolder:
    """A directory as a Folder. Renames are synced to disk (the directory fsynced) one by one.
    `abandoned` is always true: a local output is recovered under its lock (publish.OutputLock),
    so any staging folder found belongs to a dead run."""

    def __init__(self, where: str) -> None:
        self.where = where

    def entries(self, rel: str = "") -> dict[str, bool]:
        try:
            with os.scandir(self.path(rel) if rel else self.where or ".") as found:
                return {entry.name: entry.is_dir() for entry in found}
        except (FileNotFoundError, NotADirectoryError):
            return {}

    def path(self, rel: str) -> str:
        return os.path.join(self.where, rel)

    def read(self, rel: str) -> bytes:
        with open(self.path(rel), "rb") as fh:
            return fh.read()

    def size(self, rel: str) -> int | None:
        try:
            found = os.lstat(self.path(rel))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return found.st_size if stat.S_ISREG(found.st_mode) else None

    def move(self, source: str, target: str) -> None:
        destination = self.path(target)
        try:
            os.replace(self.path(source), destination)
        except FileNotFoundError:
            return
        fsync_folder(os.path.dirname(destination) or ".")

    def remove(self, rel: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path(rel))

    def drop(self, staging: str) -> None:
        if os.path.islink(self.path(staging)):  # a link planted under a staging name: removed, never followed
            os.unlink(self.path(staging))
            return
        shutil.rmtree(self.path(staging))

    def abandoned(self, staging: str) -> bool:
        return True

    def writer_alive(self, staging: str) -> bool:
        """The output's lock file (`.BASE.lock` beside `.BASE.publish-TOKEN`) is a regular file
        naming a running process, and it is locked (a shared flock cannot be taken)."""
        base = staging[1 : staging.index(STAGING)] if STAGING in staging else ""
        try:
            fd = os.open(self.path(f".{base}.lock"), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return False
        try:
            text = os.read(fd, 64).strip()
            if not stat.S_ISREG(os.fstat(fd).st_mode) or not text.isdigit() or not pid_alive(int(text)):
                return False
            return _flocked(fd)
        finally:
            os.close(fd)


def _flocked(fd: int) -> bool:
    """Whether another open file holds a flock on the file of `fd`."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock: the live pid is the lock
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


class StoreFolder:
    """A prefix of an fsspec store as a Folder (paths as the store spells them, no
    protocol). A staging prefix holds OWNER (host and pid of the run that made it), so
    `abandoned` can tell a killed run of this machine from a run that may still be going."""

    def __init__(self, fs: Any, where: str) -> None:
        self.fs = fs
        self.where = where.rstrip("/")

    def entries(self, rel: str = "") -> dict[str, bool]:
        where = self.path(rel) if rel else self.where
        self.fs.invalidate_cache(where)  # what is there now, not what a cached listing says
        try:
            found = self.fs.ls(where, detail=True)
        except FileNotFoundError:
            return {}
        return {str(i["name"]).rstrip("/").rpartition("/")[2]: i.get("type") == "directory" for i in found}

    def path(self, rel: str) -> str:
        return f"{self.where}/{rel}"

    def read(self, rel: str) -> bytes:
        return bytes(self.fs.cat_file(self.path(rel)))

    def size(self, rel: str) -> int | None:
        try:
            info = self.fs.info(self.path(rel))
        except FileNotFoundError:
            return None
        return int(info["size"]) if info.get("type") == "file" else None

    def move(self, source: str, target: str) -> None:
        try:
            self.fs.copy(self.path(source), self.path(target))  # a server-side copy: the object appears whole
        except FileNotFoundError:
            return  # moved before
        self.remove(source)

    def remove(self, rel: str) -> None:
        try:
            self.fs.rm_file(self.path(rel))
        except FileNotFoundError:
            pass

    def drop(self, staging: str) -> None:
        names = self.entries(staging)
        last = [name for name in (JOURNAL, OWNER) if name in names]  # never a staging prefix without them
        for name in [name for name in names if name not in last] + last:
            self.remove(f"{staging}/{name}")
        self._abort_uploads(staging)

    def _abort_uploads(self, staging: str) -> None:
        """Cancel the multipart uploads a killed run left under `staging` (S3: their parts are kept,
        invisible, until aborted). Other stores expire theirs (GCS: a week)."""
        call = getattr(self.fs, "call_s3", None)
        if call is None:
            return
        bucket, _, key = self.path(staging).partition("/")
        for upload in call("list_multipart_uploads", Bucket=bucket, Prefix=key + "/").get("Uploads", []):
            call("abort_multipart_upload", Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])

    def abandoned(self, staging: str) -> bool:
        try:
            owner = json.loads(self.read(f"{staging}/{OWNER}"))
        except (FileNotFoundError, ValueError):
            return False
        return bool(owner.get("host") == socket.gethostname() and not pid_alive(int(owner.get("pid", 0))))

    def writer_alive(self, staging: str) -> bool:
        return not self.abandoned(staging)
