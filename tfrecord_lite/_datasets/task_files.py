"""The files of a distributed write (a Spark job): each task writes its parts under hidden
temporary names, the driver gives them their final names once every task has succeeded, and a
failed job leaves nothing behind.

Strategy: a write is named by a job id. A task's part goes to `.<job>-<task>-<attempt>-<n>.tmp` in
the folder of its final name (`part-<task>-<job>-c<n><suffix>`: unique per job, so appending never
collides with earlier parts), with its index sidecar beside it under a temporary name too (from
the records' lengths, which the task knows, for a local uncompressed part), and the task returns
(temporary, final) pairs. Readers list no hidden file, so until the commit nothing of the write is
visible. The commit renames every sidecar then every part (a rename within a folder is atomic
locally; in a store it is a copy then a delete, and a part appears whole), then, when overwriting,
deletes what the root held before but this write's parts. A failed task deletes its own files; the
driver's abort deletes the pairs it was sent and sweeps the root for any other temporary file of
the job (a task killed outright). Local paths go through os, URLs through fsspec (with the
caller's storage options).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from tfrecord_lite._index.record_index import save_offsets
from tfrecord_lite._index.sidecar_file import sidecar_path
from tfrecord_lite._index.write import write_index
from tfrecord_lite._storage.files import make_output_folder
from tfrecord_lite._storage.locations import StorageOptions, filesystem, is_url, split_options


@dataclass(frozen=True)
class Part:
    """One part written by a task: where it is, where it goes, and its sidecar's temporary name."""

    temp: str
    final: str
    temp_index: str | None = None


class JobFolder:
    """The root folder of one write, local or in a store, and the file operations a job needs."""

    def __init__(self, root: str, job: str, storage_options: StorageOptions = None) -> None:
        self.root = root.rstrip("/")
        self.job = job
        self.storage_options = storage_options
        self._fs = None
        if is_url(root):
            options, given = split_options(storage_options)
            self._fs = filesystem(root, options, given)[0]

    def part(self, folder: str, task: int, attempt: int, number: int, suffix: str) -> Part:
        """The names of a task's `number`-th part in `folder` (relative to the root; "" the root)."""
        where = f"{self.root}/{folder}" if folder else self.root
        if self._fs is None:
            make_output_folder(self.root, where)
        temp = f"{where}/.{self.job}-{task}-{attempt}-{number}.tmp"
        return Part(temp, f"{where}/part-{task:05d}-{self.job}-c{number:03d}{suffix}")

    def indexed(self, part: Part, lengths: Sequence[int] | np.ndarray | None = None) -> Part:
        """`part` with its sidecar written beside its temporary file: from the `lengths` of its
        records where the writer knows them (a local uncompressed part), else by one scan."""
        if lengths is not None and self._fs is None:
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(np.asarray(lengths, dtype=np.int64) + 16, out=offsets[1:])
            save_offsets(part.temp, offsets, verified=True)
            return Part(part.temp, part.final, sidecar_path(part.temp))
        temp_index = part.temp + ".idx.tmp"
        write_index(part.temp, destination=temp_index, storage_options=self.storage_options)
        return Part(part.temp, part.final, temp_index)

    def commit(self, parts: Sequence[Part], overwrite: bool) -> None:
        """Give every part (and sidecar) its final name; with `overwrite`, then delete what the
        root held before, but this write's parts."""
        before = self.files() if overwrite else []
        for part in parts:
            if part.temp_index is not None:
                self._move(part.temp_index, sidecar_path(part.final))
        for part in parts:
            self._move(part.temp, part.final)
        kept = {part.final for part in parts} | {sidecar_path(part.final) for part in parts}
        self.delete(path for path in before if path not in kept and not self.is_temp(path))

    def abort(self, parts: Iterable[Part]) -> None:
        """Delete `parts` and every other temporary file of this job under the root."""
        self.delete(name for part in parts for name in (part.temp, part.temp_index) if name)
        self.delete(path for path in self.files() if self.is_temp(path))

    def is_temp(self, path: str) -> bool:
        return f".{self.job}-" in os.path.basename(path)  # its parts, sidecars and their writers' lock files

    def files(self) -> list[str]:
        """Every file under the root (none when it does not exist)."""
        if self._fs is None:
            return [os.path.join(folder, name) for folder, _, names in os.walk(self.root) for name in names]
        path = self._fs._strip_protocol(self.root)
        if not self._fs.exists(path):
            return []
        protocol = self._fs.protocol if isinstance(self._fs.protocol, str) else self._fs.protocol[0]
        return [f"{protocol}://{name}" for name in self._fs.find(path)]

    def exists(self) -> bool:
        """Whether the root holds any file."""
        return bool(self.files())

    def _move(self, source: str, target: str) -> None:
        if self._fs is None:
            os.replace(source, target)
        else:
            self._fs.mv(source, target)

    def delete(self, paths: Iterable[str]) -> None:
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                if self._fs is None:
                    os.remove(path)
                else:
                    self._fs.rm_file(path)
