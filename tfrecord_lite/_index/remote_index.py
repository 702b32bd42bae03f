"""The record index of an object in a store, for TFRecordFile(url). Where it comes from,
first found wins:

  1. `index=` a path or URL: a binary sidecar or a DALI / `tfrecord` text index;
  2. the sidecar next to the object, `<url>.tfrlidx` (what ShardedWriter uploads), fetched once;
  3. the local cache: `$XDG_CACHE_HOME/tfrecord_lite/index/<sha256 of URL + version>.tfrlidx`,
     version = ETag / generation (else size + mtime), so a changed object misses the cache;
  4. one streaming scan of the object, saved into that cache.

write_index(url) (write.py) makes the sidecar of 2. and uploads it next to the object in
one PUT, for an object written by something else than ShardedWriter.

An index is fresh when it ends at the object's size and the first and last records' headers
and footers still check (edge_check, read through the RemoteBuffer, whose blocks the reads
then reuse); the object's mtime is not compared, since an uploaded sidecar was made before it.
open_remote hands TFRecordFile(url) the object's RemoteBuffer and its index in one call (an
index that a pickled TFRecordFile brought along is taken as it is).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from tfrecord_lite._errors import IndexFormatError
from tfrecord_lite._index.record_index import (
    OFFSET_DTYPE,
    RECORD_INDEX_MAGIC,
    RecordIndex,
    edge_check,
    is_record_index,
    offsets_ending_at,
    parse_text_index,
    read_record_index,
    record_index_from_buffer,
    require_uncompressed,
    save_record_index,
)
from tfrecord_lite._index.sidecar_file import (
    SIDECAR_SUFFIX,
    IndexArg,
    counts_as_missing,
    names_a_file,
    sidecar_path,
    size_change,
    stale_error,
)
from tfrecord_lite._storage.locations import StorageOptions, is_url, redact, split_options
from tfrecord_lite._storage.remote import RemoteBuffer, RemoteObject, RemoteStream
from tfrecord_lite._wire.framing import HEADER_SIZE, OVERHEAD, scan

_NO_CHECK = -2  # a text index has no edge check: its first use computes it


def cache_dir() -> Path:
    """Where indexes of objects are cached: $XDG_CACHE_HOME (else ~/.cache) / tfrecord_lite / index."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfrecord_lite" / "index"


def cache_path(obj: RemoteObject) -> Path:
    """The cache file of `obj`'s index: a new object version is a new file."""
    key = hashlib.sha256(f"{redact(obj.url)}|{obj.version()}".encode()).hexdigest()
    return cache_dir() / f"{key}{SIDECAR_SUFFIX}"


def open_remote(
    url: str,
    index: IndexArg,
    *,
    verify: bool,
    on_stale: str,
    storage_options: StorageOptions,
    prebuilt: RecordIndex | None = None,
) -> tuple[RemoteBuffer, RecordIndex]:
    """(random-access buffer, index) of the object at `url`; `prebuilt`: the in-memory index a
    pickled TFRecordFile brought along, taken as it is."""
    options, fs = split_options(storage_options)
    obj = RemoteObject(url, options, fs)
    if prebuilt is not None:
        return RemoteBuffer(obj, prebuilt.file_size), prebuilt
    buf = RemoteBuffer(obj, obj.size)
    try:
        require_uncompressed(buf[0:HEADER_SIZE], obj.name, "random access")
        return buf, _find_index(obj, buf, index, verify=verify, on_stale=on_stale, options=options, fs=fs)
    except BaseException:
        buf.close()
        raise


def _find_index(
    obj: RemoteObject, buf: RemoteBuffer, index: IndexArg, *, verify: bool, on_stale: str, options: object, fs: object
) -> RecordIndex:
    candidates: list[tuple[str, RecordIndex | None]] = []
    if names_a_file(index):
        location = os.fspath(index)  # type: ignore[arg-type]
        candidates.append((redact(location), _load(location, options, fs, obj.size, named=True)))
    elif index is not False:
        candidates.append((sidecar_path(obj.name), _load(sidecar_path(obj.url), options, fs, obj.size, named=False)))
    cached = cache_path(obj) if index is not False else None
    if cached is not None and cached.exists():
        candidates.append((str(cached), _load(str(cached), None, None, obj.size, named=False)))
    for where, found in candidates:
        if found is None:
            continue
        reason = _staleness(found, buf)
        if reason is None:
            return found
        found.close()
        if on_stale == "raise":
            raise stale_error(where, reason, obj.name)
    fresh = index_object(buf, verify=verify)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        save_record_index(fresh, str(cached))
    return fresh


def index_object(buf: RemoteBuffer, *, verify: bool) -> RecordIndex:
    """The index of an uncompressed object (`buf` its RemoteBuffer), by one streaming scan."""
    offsets = scan_object(buf.obj, verify=verify)
    return RecordIndex(offsets, int(offsets[-1]), 0, edge_check(buf, offsets), verify)  # type: ignore[arg-type]


def _load(location: str, options: object, fs: object, object_size: int, *, named: bool) -> RecordIndex | None:
    """The index at a local path or URL; None when it is missing (or damaged) and not `named` by the caller."""
    try:
        return _read(location, options, fs, object_size)
    except (FileNotFoundError, IndexFormatError) as err:
        if counts_as_missing(err, named, missing_ok=not named):
            return None
        raise


def largest_index(object_size: int) -> int:
    """The most bytes an index of an object of `object_size` bytes can hold: a binary sidecar's
    header and 8 bytes per record, or a text index's line per record ("offset length", CRLF),
    a record being 16 bytes at least."""
    records = object_size // OVERHEAD + 1
    return max(64 + 8 * (records + 1), records * (2 * len(str(object_size)) + 3)) + 64


def _read(location: str, options: object, fs: object, object_size: int) -> RecordIndex:
    """The binary sidecar or text index at a local path or URL, of an object of `object_size` bytes:
    read no further than such an index can reach (a huge planted file is refused, never held)."""
    limit = largest_index(object_size)
    if not is_url(location):
        with open(location, "rb") as fh:
            if is_record_index(fh.read(len(RECORD_INDEX_MAGIC))):
                return read_record_index(location)
            fh.seek(0)
            data = fh.read(limit + 1)
    else:
        data = RemoteObject(location, options, fs).read_range(0, limit + 1)  # type: ignore[arg-type]
    if len(data) > limit:
        raise IndexFormatError(
            f"an index of an object of {object_size} bytes holds at most {limit} bytes; this one is longer",
            path=redact(location),
        )
    if is_url(location) and is_record_index(data):
        return record_index_from_buffer(data, redact(location))
    offsets = parse_text_index(data, redact(location))
    return RecordIndex(offsets, int(offsets[-1]), 0, _NO_CHECK, False)


def _staleness(index: RecordIndex, buf: RemoteBuffer) -> str | None:
    """Why `index` does not describe the object (None when it does)."""
    changed = size_change(len(buf), index.file_size, "object")
    if changed is not None:
        return changed
    check = edge_check(buf, index.offsets)  # type: ignore[arg-type]
    if index.check == _NO_CHECK:
        index.check = check
    elif check != index.check:
        return "the first or last record differs from the indexed one"
    return None


def scan_object(obj: RemoteObject, *, verify: bool) -> np.ndarray:
    """Record offsets (count + 1) of the object, by one streaming read."""
    stream = RemoteStream(obj)
    parts: list[np.ndarray] = []
    origin = 0  # object offset of `pending`'s first byte
    pending = b""
    while True:
        data = stream.read()
        final = not data
        buf = pending + data
        starts, _, end = scan(buf, 0, verify=verify, final=final, origin=origin, path=obj.name)
        if starts:
            parts.append((np.array(starts, np.int64) + (origin - HEADER_SIZE)).astype(OFFSET_DTYPE))
        origin += end
        pending = buf[end:]
        if final:
            break
    return offsets_ending_at(np.concatenate(parts) if parts else np.zeros(0, OFFSET_DTYPE), origin)
