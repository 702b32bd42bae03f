# One meaning for "the inputs". Every reader, dataset, adapter and CLI command turns
# what the user passed into the list of files to read here, in resolve_inputs:
#
#   a path              that file (an explicitly named file that is not a TFRecord is an
#                       error; our index sidecars, DALI text indexes and label maps, which
#                       a shell glob like `out*` brings along, are passed over)
#   a list / tuple      each item resolved in turn, in the given order, duplicates dropped
#   a folder            the TFRecord files directly inside it
#   a glob              the TFRecord files it matches (`**` descends into folders)
#   a prefix            the ShardedWriter shards `prefix-NNNNN-of-NNNNN[.tfrecord][.gz|.zlib]`
#   a URL               s3://, gs://, http(s)://, ... expanded through fsspec (_expand_url)
#
# A folder, glob or prefix means its TFRecord files of any compression, in natural
# order (shard-10 after shard-9): a file whose name says TFRecord is taken as one, a
# file whose name says it is something else (sidecars, JSON, text ...) is passed over,
# and any other file is recognised by its first bytes (_sniff). What was passed over
# is said in one log line (logger "tfrecord_lite", level INFO: the CLI shows it).
# Nothing matching raises NoInputsError naming the pattern.
from __future__ import annotations

import glob
import logging
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Union

from ._errors import NoInputsError
from ._sniff import holds_records, not_a_tfrecord, read_head

__all__ = ["Sources", "natural_key", "resolve_inputs"]

log = logging.getLogger("tfrecord_lite")

Source = Union[str, "os.PathLike[str]"]
Sources = Source | Sequence[Source]
Skipped = defaultdict[str, list[str]]  # kind of file passed over -> their names
_BY_CONTENT = "other file"

_SHARD = re.compile(r"-\d{5,}-of-\d{5,}(\.tfrecords?)?(\.gz|\.zlib|\.zz)?")
_RECORD_NAME = re.compile(rf"(\.tfrecords?|\.tfrec|\.tfr)(\.gz|\.gzip|\.zlib|\.zz)?$|{_SHARD.pattern}$", re.I)
# names of files that travel with record files: passed over even when named explicitly
_COMPANIONS = ((".tfrlidx", "index sidecar"), (".labels.json", "label map"), (".idx", "DALI text index"))
# names that say "not records": passed over in folders and globs without opening them
_OTHER = (".json", ".txt", ".md", ".csv", ".tsv", ".py", ".yaml", ".yml", ".html", ".tmp", ".lock", ".png", ".jpg")


def natural_key(path: str) -> list[Any]:
    """Sort key comparing digit runs as numbers, so shard-10 follows shard-9."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]


def resolve_inputs(inputs: Sources, *, storage_options: dict[str, Any] | None = None) -> list[str]:
    """The TFRecord files named by a path, a list of paths, a folder, a glob, a ShardedWriter
    prefix or a URL (see docs/inputs.md). `storage_options` go to fsspec for URLs."""
    items = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    if not items:
        raise NoInputsError("no inputs given: pass a file, a list of files, a folder, a glob or a prefix")
    found: list[str] = []
    skipped: Skipped = defaultdict(list)
    try:
        for item in items:
            name = os.fspath(item)
            if not isinstance(name, str):
                raise TypeError(f"an input is a path or URL string, not {type(name).__name__}")
            if name.startswith("file://"):
                name = name[len("file://") :]
            if "://" in name:
                found += _expand_url(name, storage_options)
            else:
                found += _expand_local(name, skipped, alone=len(items) == 1)
    finally:
        if skipped:
            where = os.fspath(items[0]) if len(items) == 1 else f"{len(items)} inputs"
            log.info("%s: skipped %s", where, _describe(skipped))
    if not found:
        raise NoInputsError(f"no TFRecord files in {', '.join(os.fspath(i) for i in items)}")
    return list(dict.fromkeys(found))


def _describe(skipped: Skipped) -> str:
    """'5 files that hold no TFRecords (3 index sidecars, 1 .json, 1 other file: LICENSE)'."""
    parts = []
    for kind, names in sorted(skipped.items()):
        plural = "s" if len(names) > 1 and kind[0].isalpha() else ""
        shown = f": {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}" if kind == _BY_CONTENT else ""
        parts.append(f"{len(names)} {kind}{plural}{shown}")
    total = sum(len(names) for names in skipped.values())
    return f"{total} file{'s' if total > 1 else ''} that hold no TFRecords ({', '.join(parts)})"


def _expand_local(name: str, skipped: Skipped, alone: bool) -> list[str]:
    """The TFRecord files `name` stands for on the local file system (skipped kinds counted)."""
    if os.path.isdir(name):
        listed = (os.path.join(name, n) for n in os.listdir(name) if not n.startswith("."))
        hits = _records_among(listed, skipped)
        if not hits:
            raise NoInputsError(f"no TFRecord files in the folder {name!r}")
        return hits
    if os.path.exists(name):
        return _explicit(name, skipped, alone)
    if glob.has_magic(name):
        hits = _records_among(glob.glob(name, recursive=True), skipped)
        if not hits:
            raise NoInputsError(f"no TFRecord files match {name!r}")
        return hits
    shards = [p for p in _shards_of(name, glob.glob(glob.escape(name) + "-*-of-*")) if os.path.isfile(p)]
    if not shards:
        raise NoInputsError(
            f"no such file, folder or ShardedWriter prefix: {name!r} (no file {name}-NNNNN-of-NNNNN.tfrecord either)"
        )
    return shards


def _explicit(path: str, skipped: Skipped, alone: bool) -> list[str]:
    """A file named explicitly: a TFRecord file, a companion among others (as a shell glob
    brings them) passed over, or an error."""
    companion = _companion(path)
    if companion is not None and not alone:
        skipped[companion].append(os.path.basename(path))
        return []
    if _RECORD_NAME.search(os.path.basename(path)) or not os.path.isfile(path):
        return [path]  # the reader checks the content when it opens it (pipes cannot be sniffed)
    head = read_head(path)
    if not holds_records(head):
        raise not_a_tfrecord(path, head)
    return [path]


def _records_among(paths: Iterable[str], skipped: Skipped) -> list[str]:
    """The TFRecord files among `paths` (by name, else by content), in natural order."""
    found = []
    for path in paths:
        if not os.path.isfile(path):
            continue  # folders inside a folder or glob are not descended into
        kind = _kind_by_name(path)
        if kind == "" or (kind is None and holds_records(read_head(path))):
            found.append(path)
        else:
            skipped[kind or _BY_CONTENT].append(os.path.basename(path))
    return sorted(found, key=natural_key)


def _shards_of(prefix: str, candidates: Iterable[str]) -> list[str]:
    """The ShardedWriter shards of `prefix` among `candidates` (any compression), in shard order."""
    base = re.escape(os.path.basename(prefix))
    pattern = re.compile(base + _SHARD.pattern)
    shards = [p for p in candidates if pattern.fullmatch(os.path.basename(p))]
    return sorted(shards, key=natural_key)


def _companion(path: str) -> str | None:
    """The kind of a file that travels with record files (a sidecar ...), else None."""
    lower = path.lower()
    return next((kind for suffix, kind in _COMPANIONS if lower.endswith(suffix)), None)


def _kind_by_name(path: str) -> str | None:
    """'' when the name says TFRecord, the kind of file when it says something else, None when
    only the content can tell."""
    companion = _companion(path)
    if companion is not None:
        return companion
    name = os.path.basename(path)
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _OTHER:
        return suffix
    return "" if _RECORD_NAME.search(name) else None


def _expand_url(url: str, storage_options: dict[str, Any] | None) -> list[str]:
    """The record files a URL stands for, through fsspec: a glob, a folder (prefix ending in '/'),
    a ShardedWriter prefix or one object. Names decide (objects are not opened to sniff them).
    HTTP(S) URLs without a pattern are taken as they are (a server lists no folders)."""
    if url.startswith(("http://", "https://")) and not glob.has_magic(url):
        return [url]
    try:
        import fsspec  # optional extra "remote"
    except ImportError:
        raise ImportError(f"reading {url!r} needs fsspec: pip install 'tfrlite[remote]'") from None
    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    if glob.has_magic(path):
        infos = list(fs.glob(path, detail=True).values())
    elif fs.isfile(path):
        return [url]
    elif fs.isdir(path):
        infos = fs.ls(path, detail=True)
    else:
        shards = fs.glob(path + "-*-of-*", detail=True)
        infos = [shards[name] for name in _shards_of(path, shards)]
    files = [i["name"] for i in infos if i.get("type") != "directory" and _kind_by_name(i["name"]) in ("", None)]
    if not files:
        raise NoInputsError(f"no TFRecord files at {url!r}")
    scheme = url.split("://", 1)[0]  # kept as the user spelled it (gs:// or gcs://)
    return [f"{scheme}://{f.lstrip('/')}" for f in sorted(files, key=natural_key)]
