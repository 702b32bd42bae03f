"""One meaning for "the inputs". Every reader, dataset, adapter and CLI command turns
what the user passed into the list of files to read here, in resolve_inputs:

  a path              that file (an explicitly named file that is not a TFRecord is an
                      error; our index sidecars, DALI text indexes and label maps, which
                      a shell glob like `out*` brings along, are passed over)
  a list / tuple      each item resolved in turn, in the given order, duplicates dropped
  a folder            the TFRecord files directly inside it
  a glob              the TFRecord files it matches (`**` descends into folders; a file
                      reached by several paths, through links, is read once)
  a prefix            the ShardedWriter shards `prefix-NNNNN-of-NNNNN[.tfrecord][.gz|.zlib]`
  a URL               s3://, gs://, http(s)://, ... expanded through fsspec (_expand_url)

A folder, glob or prefix is listed as the journals of committed writes say (journal.visible):
the files of a write that committed and was killed while giving its files their final names
are there (read from their staged copies), those it replaces are not, and nothing of a write
that did not commit. A folder, glob or prefix means its TFRecord files of any compression, in natural
order (shard-10 after shard-9): a file whose name says TFRecord is taken as one, a
file whose name says it is something else (sidecars, JSON, text ...) is passed over,
and any other file is recognised by its first bytes (sniff). What was passed over
is said in one log line (logger "tfrecord_lite", level INFO: the CLI shows it), unless it is
only files the library writes beside records (sidecars, label maps, text indexes): those are
expected, and no news.
Nothing matching raises NoInputsError naming the pattern.
"""

from __future__ import annotations

import collections
import fnmatch
import glob
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from tfrecord_lite._compression.kinds import SUFFIX_PATTERN
from tfrecord_lite._errors import NoInputsError
from tfrecord_lite._redact import log
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.journal import LocalFolder, StoreFolder, visible
from tfrecord_lite._storage.locations import (
    StorageOptions,
    filesystem,
    is_url,
    local_path,
    redact,
    scheme,
    split_options,
)
from tfrecord_lite._wire.sniff import holds_records, not_a_tfrecord, read_head

__all__ = ["Sources", "committed_location", "natural_key", "resolve_inputs"]


Source = Union[str, "os.PathLike[str]"]
Sources = Source | Sequence[Source]
Skipped = defaultdict[str, list[str]]  # kind of file passed over -> their names
_BY_CONTENT = "other file"

_SHARD = re.compile(rf"-\d{{5,}}-of-\d{{5,}}(\.tfrecords?)?{SUFFIX_PATTERN}?")
_RECORD_NAME = re.compile(rf"(\.tfrecords?|\.tfrec|\.tfr){SUFFIX_PATTERN}?$|{_SHARD.pattern}$", re.I)
# names of files that travel with record files: passed over even when named explicitly
_COMPANIONS = ((".tfrlidx", "index sidecar"), (".labels.json", "label map"), (".idx", "DALI text index"))
_COMPANION_KINDS = {kind for _, kind in _COMPANIONS}
# names that say "not records": passed over in folders and globs without opening them
_OTHER = (".json", ".txt", ".md", ".csv", ".tsv", ".py", ".yaml", ".yml", ".html", ".tmp", ".lock", ".png", ".jpg")


def natural_key(path: str) -> list[Any]:
    """Sort key comparing digit runs as numbers, so shard-10 follows shard-9."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]


def resolve_inputs(source: Sources, *, storage_options: StorageOptions = None) -> list[str]:
    """The TFRecord files named by `source`: a path, a list of paths, a folder, a glob, a
    ShardedWriter prefix or a URL (see docs/inputs.md). `storage_options` go to fsspec for URLs
    (or are an fsspec filesystem object to use)."""
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if not items:
        raise NoInputsError("no inputs given: pass a file, a list of files, a folder, a glob or a prefix")
    found: list[str] = []
    skipped: Skipped = defaultdict(list)
    try:
        for item in items:
            name = os.fspath(item)
            if not isinstance(name, str):
                raise TypeError(f"an input is a path or URL string, not {type(name).__name__}")
            name = local_path(name)
            if is_url(name):
                found += _expand_url(name, storage_options)
            else:
                found += _expand_local(name, skipped, alone=len(items) == 1)
    finally:
        news = {kind: names for kind, names in skipped.items() if kind not in _COMPANION_KINDS}
        if news:
            skipped = defaultdict(list, news)
            where = os.fspath(items[0]) if len(items) == 1 else f"{len(items)} inputs"
            log.info("%s: skipped %s", where, _describe(skipped))
    if not found:
        raise NoInputsError(f"no TFRecord files in {', '.join(os.fspath(i) for i in items)}")
    return list(dict.fromkeys(found))


def _describe(skipped: Skipped) -> str:
    """'2 files that hold no TFRecords (1 .json file, 1 other file: LICENSE)'; '1 file that holds ...'."""
    parts = []
    for kind, names in sorted(skipped.items()):
        shown = f": {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}" if kind == _BY_CONTENT else ""
        noun = kind if kind[0].isalpha() else f"{kind} file"
        parts.append(plural(len(names), noun) + shown)
    total = sum(len(names) for names in skipped.values())
    verb = "holds" if total == 1 else "hold"
    return f"{plural(total, 'file')} that {verb} no TFRecords ({', '.join(parts)})"


def _expand_local(name: str, skipped: Skipped, alone: bool) -> list[str]:
    """The TFRecord files `name` stands for on the local file system (skipped kinds counted)."""
    if os.path.isdir(name):
        where = visible(LocalFolder(name))
        hits = _records_among(_unhidden(where), skipped, where)
        if not hits:
            raise NoInputsError(f"no TFRecord files in the folder {name!r}")
        return [where[hit] for hit in hits]
    if os.path.exists(name):
        return _explicit(name, skipped, alone)
    folder = os.path.dirname(name)
    if glob.has_magic(name):
        if glob.has_magic(folder) or "**" in name:  # matches in many folders: as glob lists them
            listed = _recursive_glob(name) if "**" in name.split(os.sep) else glob.glob(name)
            hits = _records_among(listed, skipped, {})
            where = {hit: hit for hit in hits}
        else:
            where = visible(LocalFolder(folder))
            hits = _records_among(_matching(where, name), skipped, where)
        if not hits:
            raise NoInputsError(f"no TFRecord files match {name!r}")
        return [where[hit] for hit in hits]
    where = visible(LocalFolder(folder))
    shards = _shards_of(name, where)
    if not shards:
        raise NoInputsError(
            f"no such file, folder or ShardedWriter prefix: {name!r} (no file {name}-NNNNN-of-NNNNN.tfrecord either)"
        )
    return [where[shard] for shard in shards]


def _recursive_glob(pattern: str) -> list[str]:
    """What glob.glob(pattern, recursive=True) lists, each file once: glob follows links to
    folders, so a link back up the tree lists every file below it once per turn of the loop
    (up to the system's limit on links, and doubling with each such link). Here the folders
    are walked nearest first, each entered once by its real path, and a file reached by
    several names is listed once, by the shortest."""
    parts = pattern.split(os.sep)
    first = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    root = os.sep.join(parts[:first]) or (os.sep if first == 1 else "")
    wanted = parts[first:]
    hidden = any(part.startswith(".") for part in wanted)
    shortest: dict[str, str] = {}
    for path in _walk_files(root, hidden):
        relative = os.path.relpath(path, root) if root else path
        if _parts_match(relative.split(os.sep), wanted):
            real = os.path.realpath(path)
            shortest.setdefault(real, path)  # nearest first: the first name is the shortest
    return list(shortest.values())


def _walk_files(root: str, hidden: bool) -> list[str]:
    """Every entry that is not a folder under `root`, breadth first, links to folders followed but
    each folder entered once (by its real path); hidden names only when `hidden`."""
    seen: set[str] = set()
    queue = collections.deque([root])
    files: list[str] = []
    while queue:
        folder = queue.popleft()
        real = os.path.realpath(folder or os.curdir)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder or os.curdir), key=lambda e: natural_key(e.name))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") and not hidden:
                continue
            path = os.path.join(folder, entry.name)
            try:
                (queue if entry.is_dir() else files).append(path)
            except OSError:
                continue
    return files


def _parts_match(parts: list[str], patterns: list[str]) -> bool:
    """Whether a path's parts match a glob's parts, '**' standing for any number of parts (none
    hidden), as glob.glob(recursive=True) matches them."""
    states = _past_stars({0}, patterns)
    for part in parts:
        after = set()
        for j in states:
            if j == len(patterns):
                continue
            if patterns[j] == "**":
                if not part.startswith("."):
                    after.add(j)
            elif fnmatch.fnmatchcase(part, patterns[j]) and (not part.startswith(".") or patterns[j].startswith(".")):
                after.add(j + 1)
        states = _past_stars(after, patterns)
        if not states:
            return False
    return len(patterns) in states


def _past_stars(states: set[int], patterns: list[str]) -> set[int]:
    """`states` and every state reached from them by letting a '**' stand for no part."""
    out = set(states)
    todo = list(states)
    while todo:
        j = todo.pop()
        if j < len(patterns) and patterns[j] == "**" and j + 1 not in out:
            out.add(j + 1)
            todo.append(j + 1)
    return out


def _unhidden(paths: Iterable[str]) -> list[str]:
    return [path for path in paths if not os.path.basename(path).startswith(".")]


def _matching(paths: Iterable[str], pattern: str) -> list[str]:
    """The `paths` (of one folder) that the glob `pattern` matches, hidden ones only when its
    last part starts with '.', as glob.glob and fsspec's glob list them."""
    shown = paths if os.path.basename(pattern).startswith(".") else _unhidden(paths)
    return [path for path in shown if fnmatch.fnmatchcase(path, pattern)]


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


def _records_among(paths: Iterable[str], skipped: Skipped, where: Mapping[str, str]) -> list[str]:
    """The TFRecord files among `paths` (by name, else by content), in natural order; `where`
    says where to read a path from when not from itself (see journal.visible)."""
    found = []
    for path in paths:
        actual = where.get(path, path)
        if not os.path.isfile(actual):
            continue  # folders inside a folder or glob are not descended into
        kind = _kind_by_name(path)
        if kind == "" or (kind is None and holds_records(read_head(actual))):
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


def _expand_url(url: str, storage_options: StorageOptions) -> list[str]:
    """The record files a URL stands for, through fsspec: a glob, a folder (prefix ending in '/'),
    a ShardedWriter prefix or one object. Names decide (objects are not opened to sniff them).
    HTTP(S) URLs without a pattern are taken as they are (a server lists no folders)."""
    if url.startswith(("http://", "https://")) and not glob.has_magic(url.split("?", 1)[0]):
        return [url]  # a query string (a signed URL's) is no pattern
    fs, path = filesystem(url, *split_options(storage_options))
    fs.invalidate_cache()  # list what is there now, not what a cached listing says
    folder = path.rstrip("/").rpartition("/")[0]
    if glob.has_magic(path) and (glob.has_magic(folder) or "**" in path or not folder):
        infos = fs.glob(path, detail=True).items()  # matches in many folders: as fsspec lists them
        where = {name: name for name, info in infos if info.get("type") != "directory"}
        names = list(where)
    elif glob.has_magic(path):
        where = visible(StoreFolder(fs, folder))
        names = _matching(where, path)
    elif fs.isfile(path):
        return [url]
    elif fs.isdir(path):
        where = visible(StoreFolder(fs, path))
        names = _unhidden(where)
    else:
        where = visible(StoreFolder(fs, folder))
        names = _shards_of(path, where)
    files = [name for name in names if _kind_by_name(name) in ("", None)]
    if not files:
        raise NoInputsError(f"no TFRecord files at {redact(url)!r}")
    spelled = scheme(url)  # kept as the user spelled it (gs:// or gcs://)
    return [f"{spelled}://{where[f].lstrip('/')}" for f in sorted(files, key=natural_key)]


def committed_location(path: str, storage_options: StorageOptions = None) -> str:
    """Where readers read the file or object `path` from: its staged copy while a committed write
    is still giving it its final name (journal.visible), else `path` itself."""
    if not is_url(path):
        path = local_path(path)
        return visible(LocalFolder(os.path.dirname(path))).get(path, path)
    fs, name = filesystem(path, *split_options(storage_options))
    where = visible(StoreFolder(fs, name.rpartition("/")[0]))
    return f"{scheme(path)}://{where.get(name, name).lstrip('/')}"
