"""Opening the index of a local uncompressed TFRecord file, one way down: map the file, take
the index that is there when it is fresh (the sidecar, the index `index=` names, or the
in-memory index a pickled TFRecordFile brought along), else build one by a scan and save
it. With a DamagePolicy that skips damage, a file that does not scan cleanly is indexed
over its good records instead (tolerant.py), held in memory only.

record_index.py knows the format and each step (read, check, build, save); this module only
chooses among them, in the order above, so no layer below it is handed a function to call
back. TFRecordFile opens its file here in one call; write_text_index reads an index here
without saving one. indexed_count is the record count of an uncompressed file or object by
its index (remote_index.py finds an object's), for a reader that needs counts, not records.
"""

from __future__ import annotations

import os
import warnings

from tfrecord_lite._errors import IndexFallbackWarning, TFRecordError
from tfrecord_lite._index.record_index import (
    Buffer,
    RecordIndex,
    build_record_index,
    grown_from,
    map_uncompressed,
    read_existing_index,
    record_index_staleness,
    release,
    save_record_index,
)
from tfrecord_lite._index.remote_index import open_remote
from tfrecord_lite._index.sidecar_file import (
    IndexArg,
    check_on_stale,
    index_location,
    names_a_file,
    stale_error,
)
from tfrecord_lite._index.tolerant import build_past_damage
from tfrecord_lite._storage.locations import StorageOptions, is_url
from tfrecord_lite._storage.remote import RemoteBuffer
from tfrecord_lite._stream.damage import DamagePolicy


def open_file_index(
    path: str,
    index: IndexArg = None,
    *,
    verify: bool = True,
    on_stale: str = "rebuild",
    policy: DamagePolicy | None = None,
    prebuilt: RecordIndex | None = None,
    save: bool = True,
    action: str = "random access",
) -> tuple[Buffer, RecordIndex]:
    """(memory map, index) of the uncompressed file `path`: a fresh index that is there, else one
    built now and saved (unless not `save`).

    `index`: None / True = the sidecar beside the file; a path = that binary or text index (a new
    binary one is written there when it does not exist); False = build in memory and write
    nothing. `prebuilt` is an in-memory index (sent to a worker process) that is used when still
    fresh. `policy` (one that skips damage): a file that does not scan cleanly is indexed over its
    good records, the damage reported by the policy, and that index is never saved. `action`
    names what the map is for in the errors of a file that cannot be read so."""
    buf, st = map_uncompressed(path, action, damaged=policy is not None)
    try:
        return buf, _open_index(path, buf, st, index, verify, on_stale, policy, prebuilt, save)
    except BaseException:
        release(buf)
        raise


def indexed_count(path: str, storage_options: StorageOptions = None) -> int:
    """The records of the uncompressed file (or object) `path`, from its index: a fresh one, else
    one built now and saved (beside a local file; an object's in the local cache), as
    TFRecordFile(path) would open it."""
    buf: Buffer | RemoteBuffer
    if is_url(path):
        buf, idx = open_remote(path, None, verify=True, on_stale="rebuild", storage_options=storage_options)
    else:
        buf, idx = open_file_index(path)
    try:
        return len(idx)
    finally:
        idx.close()
        if isinstance(buf, RemoteBuffer):
            buf.close()
        else:
            release(buf)


def _open_index(
    path: str,
    buf: Buffer,
    st: os.stat_result,
    index: IndexArg,
    verify: bool,
    on_stale: str,
    policy: DamagePolicy | None,
    prebuilt: RecordIndex | None,
    save: bool,
) -> RecordIndex:
    """The index of the mapped file `path` (stat `st`), as open_file_index says."""
    check_on_stale(on_stale)
    location = index_location(path, index)
    existing, where = prebuilt, "the in-memory index"
    if existing is None and location is not None:
        where = location
        existing, location = _read_existing(path, location, buf, st, names_a_file(index))
    if existing is not None:
        reason = record_index_staleness(existing, buf, st)
        if reason is None:
            return existing
        if on_stale == "raise":
            existing.close()
            raise stale_error(where, reason, path)
        if existing.location is None or existing.location != location:  # text or in-memory: never overwrite
            location = index_location(path, index if index is None or index is False else True)
    start = existing if existing is not None and grown_from(existing, buf) else None
    try:
        fresh = _build(path, buf, st, verify, start, policy)
    finally:
        if existing is not None:
            existing.close()
    if save and location is not None and fresh.ends is None:
        save_record_index(fresh, location, like=path)
    return fresh


def _read_existing(
    path: str, location: str, buf: Buffer, st: os.stat_result, named: bool
) -> tuple[RecordIndex | None, str | None]:
    """(the index at `location`, None when there is none to use; where a new one may be saved).
    A default sidecar that is there but cannot be read is warned about, and neither used nor
    written over (the index is then built in memory); an index the caller named must be readable."""
    try:
        return read_existing_index(location, buf, st, named), location
    except OSError as err:
        if named:
            raise
        warnings.warn(
            f"{path}: its index sidecar {location} cannot be read ({err.strerror or err}); "
            "using an in-memory index built by one scan",
            IndexFallbackWarning,
            stacklevel=7,
        )
        return None, None


def _build(
    path: str, buf: Buffer, st: os.stat_result, verify: bool, start: RecordIndex | None, policy: DamagePolicy | None
) -> RecordIndex:
    """Index the file by one scan (going on after `start`, when the file grew from it). With a
    `policy` that skips damage, a file that does not index cleanly gets an index of its good
    records, the damage reported as iter_records reports it."""
    try:
        return build_record_index(buf, st, path=path, verify=verify, start=start)
    except TFRecordError:
        if policy is None:
            raise
        return build_past_damage(path, buf, st, policy, verify)
