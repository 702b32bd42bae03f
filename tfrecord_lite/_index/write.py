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

import numpy as np

from tfrecord_lite._compression.kinds import index_kind
from tfrecord_lite._errors import PathName
from tfrecord_lite._index.file_index import open_file_index
from tfrecord_lite._index.gzip_index import build_remote_gzip_index, write_gzip_index
from tfrecord_lite._index.record_index import (
    build_record_index,
    map_uncompressed,
    record_index_bytes,
    release,
    require_uncompressed,
)
from tfrecord_lite._index.remote_index import index_object
from tfrecord_lite._index.sidecar_file import save_or_raise, sidecar_path
from tfrecord_lite._storage.atomic import write_atomic
from tfrecord_lite._storage.files import sniff_file, write_whole
from tfrecord_lite._storage.locations import StorageOptions, is_url, redact, split_options, takes_no_uploads
from tfrecord_lite._storage.remote import RemoteBuffer, RemoteObject
from tfrecord_lite._wire.framing import HEADER_SIZE
from tfrecord_lite._wire.sniff import sniff_compression


def write_index(
    tfrecord_path: PathName, index_path: PathName = None, *, verify: bool = True, storage_options: StorageOptions = None
) -> str:
    """Build the binary index sidecar of a TFRecord file by one scan; return its path. A GZIP / ZLIB
    file gets the index of its compressed stream (see TFRecordFile).

    `index_path` defaults to the sidecar beside the file (`<file>.tfrlidx`), which
    TFRecordFile then opens in O(1).

    A URL (s3://, gs://, ...) is read by one streaming pass, and its sidecar uploaded next to the
    object (`<url>.tfrlidx`, where TFRecordFile(url) looks) in one PUT: the object appears whole
    or not at all. An HTTP(S) server takes no uploads: give `index_path` (a local path or a
    store's URL) and pass it as TFRecordFile(url, index=...). `storage_options`: fsspec's
    options, or an fsspec filesystem.
    """
    path = os.fspath(tfrecord_path)  # type: ignore[arg-type]
    if is_url(path):
        target_url = os.fspath(index_path) if index_path is not None else None
        return write_remote_index(path, target_url, verify=verify, storage_options=storage_options)[0]
    target = os.fspath(index_path) if index_path is not None else sidecar_path(path)
    if index_kind(sniff_file(path)) == "seek_points":
        return write_gzip_index(path, target, verify=verify)
    buf, st = map_uncompressed(path, "indexing")
    try:
        idx = build_record_index(buf, st, path=path, verify=verify)
    finally:
        release(buf)
    return save_or_raise(record_index_bytes(idx), target, like=path)


def write_remote_index(
    url: str, target: str | None, *, verify: bool, storage_options: StorageOptions
) -> tuple[str, int]:
    """(where, record count): index the object at `url` by one pass and save the sidecar at
    `target`, by default `<url>.tfrlidx` next to it, where TFRecordFile(url) looks. A URL target is
    uploaded by one PUT (a store shows the whole object or none; S3 and GCS have no partial
    objects), a local one written through a temporary file and a rename."""
    target = target if target is not None else sidecar_path(url)
    if takes_no_uploads(target):  # refused before the pass, not after
        raise PermissionError(
            errno.EROFS,
            "an HTTP(S) server takes no uploads: give index_path= a local path or a store's URL "
            "(s3://, gs://, ...) and open the object with TFRecordFile(url, index=that)",
            redact(target),
        )
    obj = RemoteObject(url, *split_options(storage_options))
    buf = RemoteBuffer(obj, obj.size)
    try:
        head = buf[0:HEADER_SIZE]
        kind = sniff_compression(head)
        if index_kind(kind) == "seek_points":
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


def write_text_index(tfrecord_path: PathName, out_path: PathName) -> None:
    """Write the DALI / `tfrecord`-package text index of a TFRecord file: one "offset length" line per record."""
    path = os.fspath(tfrecord_path)  # type: ignore[arg-type]
    buf, idx = open_file_index(path, save=False, action="indexing")
    try:
        starts, lengths = idx.offsets[:-1].tolist(), np.diff(idx.offsets).tolist()
    finally:
        idx.close()
        release(buf)
    text = "".join(f"{s} {n}\n" for s, n in zip(starts, lengths, strict=False)).encode()
    write_atomic(os.fspath(out_path), text, like=path)  # type: ignore[arg-type]
