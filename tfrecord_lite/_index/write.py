"""Writing indexes ahead of reading: tfr.write_index and tfr.write_text_index (and CLI
`index`). write_index picks the index by what the file is: a URL is read by one
streaming pass and its sidecar uploaded in one PUT (an object appears whole or not at
all); a GZIP / ZLIB file gets the index of its compressed stream (gzip_index.py); an
uncompressed file gets its record index by one scan (record_index.py). The sidecar is
written through a temporary file and a rename; a place that takes no writes is an
error here (an opener falls back on an index in memory instead).
"""

from __future__ import annotations

import errno
import os
from typing import Any

from tfrecord_lite._compression.kinds import read_as
from tfrecord_lite._errors import PathName, TFRecordError
from tfrecord_lite._index.file_index import open_file_index
from tfrecord_lite._index.gzip_index import build_remote_gzip_index, write_gzip_index
from tfrecord_lite._index.record_index import (
    Buffer,
    RecordIndex,
    build_record_index,
    map_uncompressed,
    record_index_bytes,
    release,
    require_uncompressed,
)
from tfrecord_lite._index.remote_index import index_object
from tfrecord_lite._index.sidecar_file import save_or_raise, sidecar_path
from tfrecord_lite._index.tolerant import build_past_damage
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.atomic import write_atomic
from tfrecord_lite._storage.files import sniff_file, write_whole
from tfrecord_lite._storage.locations import is_url, redact, split_options, takes_no_uploads
from tfrecord_lite._storage.remote import RemoteBuffer, RemoteObject
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite._wire.framing import HEADER_SIZE
from tfrecord_lite._wire.sniff import sniff_compression


def write_index(
    source: PathName,
    *,
    destination: PathName = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> str:
    """Build the binary index sidecar of a TFRecord file by one scan; return its path. A GZIP / ZLIB
    file gets the index of its compressed stream (see TFRecordFile).

    `destination` defaults to the sidecar beside the file (`<file>.tfrlidx`), which
    TFRecordFile then opens in O(1).

    A URL (s3://, gs://, ...) is read by one streaming pass, and its sidecar uploaded next to the
    object (`<url>.tfrlidx`, where TFRecordFile(url) looks) in one PUT: the object appears whole
    or not at all. An HTTP(S) server takes no uploads: give `destination` (a local path or a
    store's URL) and pass it as TFRecordFile(url, index=...). `storage_options`: fsspec's
    options, or an fsspec filesystem.

    The reader options are iter_records': `compression` is checked against the file's first
    bytes, `verify` checks every payload CRC while indexing, and `max_record_bytes` bounds a
    GZIP / ZLIB file's records (inflated while indexed). A sidecar describes records that follow
    each other, so damage is never indexed past: with `on_error="skip"` or a callable, every
    damaged span of a local uncompressed file is reported (logged, or given to the callable, up
    to `max_skipped`) and then ValueError says to salvage() the file first.
    """
    path = os.fspath(source)  # type: ignore[arg-type]
    policy = DamagePolicy(on_error, max_skipped)
    if is_url(path):
        target_url = os.fspath(destination) if destination is not None else None
        return write_remote_index(
            path, target_url, compression=compression, verify=verify, storage_options=storage_options
        )[0]
    target = os.fspath(destination) if destination is not None else sidecar_path(path)
    kind = read_as(compression, sniff_file(path), path)
    if kind:
        return write_gzip_index(path, target, verify=verify, max_record_bytes=max_record_bytes)
    buf, st = map_uncompressed(path, "indexing", damaged=not policy.raises)
    try:
        idx = _clean_index(path, buf, st, verify, policy)
    finally:
        release(buf)
    return save_or_raise(record_index_bytes(idx), target, like=path)


def _clean_index(path: str, buf: Buffer, st: os.stat_result, verify: bool, policy: DamagePolicy) -> RecordIndex:
    """The record index of the mapped file `path`; damage raises, or (a policy that skips) is
    reported span by span before ValueError refuses to save an index of a damaged file."""
    try:
        return build_record_index(buf, st, path=path, verify=verify)
    except TFRecordError:
        if policy.raises:
            raise
    skipped = policy.skipped
    build_past_damage(path, buf, st, policy, verify)  # reports each damaged span as the policy says
    raise ValueError(
        f"{path}: {plural(policy.skipped - skipped, 'damaged span')} found; an index sidecar describes a "
        "file whose records follow each other: salvage() it into a clean copy and index that, or open it "
        "with TFRecordFile(on_error=...), which indexes its good records in memory"
    )


def write_remote_index(
    url: str, target: str | None, *, compression: Compression = "auto", verify: bool, storage_options: StorageOptions
) -> tuple[str, int]:
    """(where, record count): index the object at `url` by one pass and save the sidecar at
    `target`, by default `<url>.tfrlidx` next to it, where TFRecordFile(url) looks. A URL target is
    uploaded by one PUT (a store shows the whole object or none; S3 and GCS have no partial
    objects), a local one written through a temporary file and a rename."""
    target = target if target is not None else sidecar_path(url)
    if takes_no_uploads(target):  # refused before the pass, not after
        raise PermissionError(
            errno.EROFS,
            "an HTTP(S) server takes no uploads: give destination= a local path or a store's URL "
            "(s3://, gs://, ...) and open the object with TFRecordFile(url, index=that)",
            redact(target),
        )
    obj = RemoteObject(url, *split_options(storage_options))
    buf = RemoteBuffer(obj, obj.size)
    try:
        head = buf[0:HEADER_SIZE]
        kind = read_as(compression, sniff_compression(head), redact(url))
        if kind:
            gz = build_remote_gzip_index(buf, kind, verify=verify)
            data, count = gz.to_bytes(), gz.count
        else:
            require_uncompressed(head, obj.name, "indexing")
            index = index_object(buf, verify=verify)
            data, count = record_index_bytes(index), len(index)
    finally:
        buf.close()
    write_whole(target, data, storage_options)
    return target, count


def write_text_index(
    source: PathName,
    *,
    destination: PathName,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> None:
    """Write the DALI / `tfrecord`-package text index of an uncompressed TFRecord file: one
    "offset length" line per record (a format for uncompressed files only: `compression` may be
    "auto" or None). `source` may be a URL (read by ranged requests) and `destination` too
    (written in one PUT), with `storage_options` for fsspec. `verify` checks every payload CRC;
    with `on_error="skip"` or a callable, damaged spans are reported as iter_records reports them
    (up to `max_skipped`) and only the good records listed, which such an index can say.
    `max_record_bytes` is taken as every reader takes it; records are not held while indexed."""
    path = os.fspath(source)  # type: ignore[arg-type]
    policy = DamagePolicy(on_error, max_skipped)
    if is_url(path):
        obj = RemoteObject(path, *split_options(storage_options))
        buf: Any = RemoteBuffer(obj, obj.size)
        try:
            head = buf[0:HEADER_SIZE]
            if read_as(compression, sniff_compression(head), redact(path)):
                raise ValueError(f"{redact(path)}: a text index lists the records of uncompressed files only")
            require_uncompressed(head, obj.name, "indexing")
            starts, ends = _spans(index_object(buf, verify=verify))
        finally:
            buf.close()
    else:
        if read_as(compression, sniff_file(path), path):
            raise ValueError(f"{path}: a text index lists the records of uncompressed files only")
        skipping = None if policy.raises else policy
        buf, idx = open_file_index(path, verify=verify, policy=skipping, save=False, action="indexing")
        try:
            starts, ends = _spans(idx)
        finally:
            release(buf)
    text = "".join(f"{s} {e - s}\n" for s, e in zip(starts, ends, strict=True)).encode()
    target = os.fspath(destination)  # type: ignore[arg-type]
    if is_url(target):
        write_whole(target, text, storage_options)
    else:
        write_atomic(target, text, like=None if is_url(path) else path)


def _spans(index: RecordIndex) -> tuple[list[int], list[int]]:
    """(starts, ends) of every record of `index`."""
    try:
        starts = index.offsets[:-1].tolist()
        ends = (index.offsets[1:] if index.ends is None else index.ends).tolist()
    finally:
        index.close()
    return starts, ends
