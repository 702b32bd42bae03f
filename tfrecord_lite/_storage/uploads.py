"""Writing to a store (S3, GCS or any other fsspec store but HTTP(S), which takes no uploads).
Nothing half-written ever shows:

  - RemoteUpload writes through fsspec's buffered file (a multipart upload on S3, a
    resumable one on GCS), which only makes the object appear when it is completed
    at close(); abort() cancels it, and a crash never completes it.
  - Store.put replaces a small object (a sidecar, a label map) by one PUT: a store shows
    the old object or the new one.
  - RemotePublication is publish.Publication for a store, with the same journal
    (_storage/journal.py): files are uploaded under a hidden staging prefix `.NAME.publish-TOKEN/`,
    commit() uploads the journal (the commit point) and then gives each its final name
    (a server-side copy). A store has no atomic multi-object rename and no locks, so each
    object appears whole and readers follow the journal until the copies are done; the
    next run finishes a killed run's copies, or removes its staged objects.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import socket
import time
from typing import Any

from tfrecord_lite._storage.journal import JOURNAL, OWNER, STAGING, StoreFolder, recover_stagings, roll_forward
from tfrecord_lite._storage.locations import FsspecOptions, filesystem, redact


class RemoteUpload(io.RawIOBase):
    """A new object written through fsspec; it appears only when close() completes the upload."""

    def __init__(self, url: str, storage_options: FsspecOptions = None, fs: Any = None) -> None:
        self.name = redact(url)
        self.fs, self.path = filesystem(url, storage_options, fs)
        self._file = self.fs.open(self.path, "wb")

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return int(self._file.write(data))

    def flush(self) -> None:  # data goes out in parts as it fills them; completing is close()'s job
        pass

    def close(self) -> None:
        if not self.closed:
            try:
                self._file.close()
            finally:
                super().close()

    def abort(self) -> None:
        """Cancel the upload: a multipart / resumable upload is aborted, no object appears."""
        if self.closed:
            return
        f = self._file
        try:
            discard = getattr(f, "discard", None)
            if discard is not None:
                discard()
        finally:
            try:
                f.closed = True  # fsspec's close() (and __del__) would otherwise complete the upload
            except AttributeError:  # an io object (fsspec's memory store), which completes nothing
                pass
            if hasattr(f, "buffer"):
                f.buffer = io.BytesIO()
            super().close()


class Store:
    """The few whole-object operations writers need, on the filesystem of one URL prefix."""

    def __init__(self, url: str, storage_options: FsspecOptions = None, fs: Any = None) -> None:
        self.fs, _ = filesystem(url, storage_options, fs)
        self._options = storage_options

    def url(self, path: str) -> str:
        return str(self.fs.unstrip_protocol(path))

    def glob(self, pattern_url: str) -> list[str]:
        """URLs of the objects matching `pattern_url` (fresh: no listing cache)."""
        self.fs.invalidate_cache()
        return sorted(self.url(p) for p in self.fs.glob(self.fs._strip_protocol(pattern_url)))

    def put(self, url: str, data: bytes) -> None:
        self.fs.pipe_file(self.fs._strip_protocol(url), data)

    def exists(self, url: str) -> bool:
        return bool(self.fs.exists(self.fs._strip_protocol(url)))


class RemotePublication:
    """Objects that are published together by commit(): Publication's interface for a URL prefix.

    The journal rules of _storage/journal.py, in a store: files are uploaded under `.NAME.publish-TOKEN/`
    (with `owner.json` saying which run stages them), commit() uploads `journal.json` there (one
    PUT: the commit point) and then gives each object its final name. What a killed run left is
    finished (journal) or removed (no journal, its process dead on this machine) when the
    publication opens, or reported (`recovered`) when that run may still be going."""

    def __init__(self, target: str, storage_options: FsspecOptions = None, fs: Any = None) -> None:
        self.target = target
        self.store = Store(target, storage_options, fs)
        folder, _, base = target.rstrip("/").rpartition("/")
        self.folder = StoreFolder(self.store.fs, self.store.fs._strip_protocol(folder))
        self.staging_name = f".{base}{STAGING}{secrets.token_hex(4)}"
        self.staging = f"{folder}/{self.staging_name}"
        self.recovered = recover_stagings(self.folder, base, redact(target))
        self.committed = False
        self.closed = False
        self._moves: list[tuple[str, str]] = []
        self._deletes: list[str] = []
        owner = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time()}
        self.store.put(self.temp(OWNER), json.dumps(owner).encode())

    def temp(self, name: str) -> str:
        """A temporary object URL under the staging prefix, not published unless `move`d."""
        if "/" in name:
            raise ValueError(f"a temporary object name, not a path: {name!r}")
        return f"{self.staging}/{name}"

    def file(self, final: str) -> str:
        """A temporary object URL to write; commit() publishes it as `final`."""
        temp = self.temp(f"{len(self._moves)}-{final.rpartition('/')[2]}")
        self.move(temp, final)
        return temp

    def move(self, temp: str, final: str) -> None:
        self._moves.append((temp, final))

    def delete(self, url: str) -> None:
        self._deletes.append(url)

    def link(self, url: str, final: str) -> None:
        """Publish the existing object `url` also as `final`, in the same step (staged as a copy)."""
        temp = self.temp(f"{len(self._moves)}-{final.rpartition('/')[2]}")
        fs = self.store.fs
        fs.copy(fs._strip_protocol(url), fs._strip_protocol(temp))
        self.move(temp, final)

    def _relative(self, url: str) -> str:
        """`url` named relative to the output's folder, as a journal names it."""
        path: str = self.store.fs._strip_protocol(url)
        if not path.startswith(self.folder.where + "/") or "/" in path[len(self.folder.where) + 1 :]:
            raise ValueError(f"{redact(url)} is not beside {redact(self.target)}")
        return path[len(self.folder.where) + 1 :]

    def commit(self) -> None:
        """Upload the journal (the commit point), then give every staged object its final name,
        remove the replaced ones and drop the staging prefix (journal.roll_forward)."""
        if self.closed:
            raise ValueError(f"the publication of {redact(self.target)} is already closed")
        try:
            staged = self.folder.entries(self.staging_name)
            missing = [temp for temp, _ in self._moves if temp.rpartition("/")[2] not in staged]
            if missing:
                raise FileNotFoundError(f"staged object never written: {redact(missing[0])}")
            journal = {
                "moves": [
                    [
                        temp.rpartition("/")[2],
                        self._relative(final),
                        self.folder.size(f"{self.staging_name}/{temp.rpartition('/')[2]}"),
                    ]
                    for temp, final in self._moves
                ],
                "deletes": [self._relative(url) for url in self._deletes],
            }
            self.store.put(self.temp(JOURNAL), json.dumps(journal).encode())
        except BaseException:
            self.abort()
            raise
        self.committed = self.closed = True  # from here on the new state is the truth: roll forward
        roll_forward(self.folder, self.staging_name, journal)

    def abort(self) -> None:
        """Publish nothing: remove the staged objects. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        self.folder.drop(self.staging_name)

    def abort_for(self, exc: BaseException) -> OSError | None:
        """abort() because of `exc` (Publication's interface; no clearer error to give for a store)."""
        self.abort()
        return None

    def __enter__(self) -> RemotePublication:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
