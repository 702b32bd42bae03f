"""The runs of a TensorBoard logdir, found as TensorBoard finds them.

Strategy: a run is every folder, at any depth under the logdir, that directly holds a file whose
name contains "tfevents"; its name is the folder's path relative to the logdir ("/"-separated,
"." for the logdir itself), and its files are read in the order of their names (an events file's
name starts with the time it was opened, so this is the order they were written in). A source
that is itself an events file is one run named "."; a list of sources is the runs of each.
Local folders are walked with os.walk (hidden folders too, as TensorBoard does, symlinks not
followed); a URL's tree is listed once with its fsspec filesystem's `find`.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from typing import Any

from tfrecord_lite._index.sidecar_file import EVENTS_MARK, SIDECAR_SUFFIX
from tfrecord_lite._redact import redact
from tfrecord_lite._storage.locations import StorageOptions, filesystem, is_url, split_options
from tfrecord_lite._storage.sources import natural_key

Runs = dict[str, list[str]]  # run name -> its events files, in reading order


def is_events_file(name: str) -> bool:
    """Whether a file's name says it is an events file (a hidden file never is: a lock, a partial
    download; nor an index sidecar of one)."""
    base = posixpath.basename(name.replace(os.sep, "/"))
    return EVENTS_MARK in base and not base.startswith(".") and not base.endswith(SIDECAR_SUFFIX)


def find_runs(source: Any, storage_options: StorageOptions = None) -> Runs:
    """The runs of `source` (a logdir, a run folder, an events file, or a list of them), in the
    order of their names; FileNotFoundError when `source` does not exist or holds no events file."""
    if isinstance(source, (list, tuple)):
        runs: Runs = {}
        for one in source:
            for run, files in find_runs(one, storage_options).items():
                runs.setdefault(run, []).extend(files)
        return runs
    name = os.fspath(source)
    found = _remote_runs(name, storage_options) if is_url(name) else _local_runs(name)
    if not found:
        raise FileNotFoundError(f"no TensorBoard events file (a name holding {EVENTS_MARK!r}) in {redact(name)}")
    return {run: sorted(files, key=_file_order) for run, files in sorted(found.items())}


def _file_order(path: str) -> list[Any]:
    return natural_key(posixpath.basename(path.replace(os.sep, "/")))


def _local_runs(root: str) -> Runs:
    if os.path.isfile(root):
        return {".": [root]}
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no such file or directory: {root}")
    runs: Runs = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        events = [os.path.join(folder, f) for f in files if is_events_file(f)]
        if events:
            rel = os.path.relpath(folder, root)
            runs[rel.replace(os.sep, "/")] = [f for f in events if os.path.isfile(f)]
    return runs


def _remote_runs(url: str, storage_options: StorageOptions) -> Runs:
    options, given = split_options(storage_options)
    fs, path = filesystem(url, options, given)
    protocol = url.split("://", 1)[0]
    if fs.isfile(path):
        return {".": [url]}
    runs: Runs = {}
    root = path.rstrip("/")
    for found in _names(fs.find(root)):
        if is_events_file(found):
            rel = posixpath.relpath(posixpath.dirname(found), root)
            runs.setdefault(rel, []).append(f"{protocol}://{found.lstrip('/')}" if protocol != "file" else found)
    return runs


def _names(listing: Iterable[Any]) -> list[str]:
    return [str(item) for item in listing]
