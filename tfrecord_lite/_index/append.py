"""Appending to an existing TFRecord file (TFRecordWriter(append=True)) without
breaking it or its index sidecar. Before writing, prepare_append proves that the
file ends on a complete record: O(1) with a fresh sidecar, else a walk over the
record headers (payloads unread) plus one CRC check of the last record, so a torn
write is never built upon; an incomplete tail (or the zero tail of a stopped write-through
writer, _wire/unfinished.py) is an error, or cut off on request.
After writing, finish_append extends a sidecar that was fresh before by scanning
only the new records, so a dataset that grows keeps O(1) opening.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from tfrecord_lite._errors import CorruptRecordError, PathName, TruncatedRecordError
from tfrecord_lite._index.record_index import (
    Buffer,
    build_record_index,
    grown_from,
    map_file,
    map_uncompressed,
    read_existing_index,
    record_index_staleness,
    release,
    require_uncompressed,
    save_record_index,
    scan_offsets,
)
from tfrecord_lite._index.sidecar_file import sidecar_path
from tfrecord_lite._storage.locations import has_scheme
from tfrecord_lite._wire.framing import scan
from tfrecord_lite._wire.unfinished import STOPPED, describe_tail, reader_of

_TORN = "the file ends with an incomplete record ({} bytes from this offset to the end; a write was interrupted?)"


class AppendPoint(NamedTuple):
    """Where appending starts, and the index that was fresh up to there (to extend afterwards)."""

    offset: int
    indexed: bool


def prepare_append(target: object, truncate_partial: bool = False, compression: str = "") -> AppendPoint:
    """Check that an existing file ends on a complete record before appending to it.

    With a fresh sidecar this is O(1); otherwise the record headers are walked
    (payloads are not read). A tail that is an incomplete record raises
    TruncatedRecordError unless `truncate_partial`, which cuts it off. Returns
    where new records go (for `finish_append`).
    """
    if compression:
        raise ValueError(
            "append=True needs an uncompressed file (compression=None): a GZIP / ZLIB stream cannot be "
            "checked or extended in place; write the new records to a new file (e.g. a new shard)"
        )
    if not isinstance(target, (str, os.PathLike)) or has_scheme(os.fspath(target)):
        raise ValueError(
            "append=True needs a local file path (to append to a file object, open it in 'ab' mode yourself)"
        )
    name = os.fspath(target)
    try:
        fh = open(name, "r+b")  # noqa: SIM115  # closed by the `with fh:` below; a missing file is caught here
    except FileNotFoundError:
        return AppendPoint(0, False)
    with fh:
        st = os.fstat(fh.fileno())
        buf = map_file(fh)
        try:
            require_uncompressed(buf, name, "appending")
            end, indexed = _complete_end(name, buf, st)
            if end < st.st_size and not truncate_partial:
                raise _incomplete(buf, name, end, st.st_size)
        finally:
            release(buf)
        if end < st.st_size:
            fh.truncate(end)
    return AppendPoint(end, indexed)


def _incomplete(buf: Buffer, path: str, end: int, size: int) -> TruncatedRecordError:
    """The refusal to append after the incomplete tail at `end`."""
    tail = describe_tail(reader_of(buf), end, size)
    what = f"the file ends with {tail}: {STOPPED}" if tail is not None else _TORN.format(size - end)
    return TruncatedRecordError(
        f"cannot append: {what}. Open the writer with truncate_partial=True to cut it off and append after "
        "the last complete record",
        path=path,
        offset=end,
    )


def _complete_end(path: str, buf: Buffer, st: os.stat_result) -> tuple[int, bool]:
    """Where the last complete record of the file ends, and whether the sidecar is fresh up to there."""
    idx = read_existing_index(sidecar_path(path), buf, st, named=False)
    start = 0
    if idx is not None:
        if record_index_staleness(idx, buf, st) is None:
            idx.close()
            return st.st_size, True
        if grown_from(idx, buf):
            start = idx.file_size
        idx.close()
    if len(buf) == 0:
        return 0, False
    try:
        found, end = scan_offsets(buf, start, verify=False, final=False, path=path)
    except CorruptRecordError as err:  # zero bytes where a header should be: a write-through writer's tail?
        if err.offset is None or describe_tail(reader_of(buf), err.offset, len(buf)) is None:
            raise
        with memoryview(buf)[: err.offset] as head:  # the records before it
            found, end = scan_offsets(head, start, verify=False, final=False, path=path)  # type: ignore[arg-type]
    last = int(found[-1]) if len(found) else None
    if last is not None:  # the last complete record must be whole, not a torn write padded with zeros
        scan(buf, last, verify=True, final=False, path=path, max_records=1)  # type: ignore[arg-type]
    return end, False


def finish_append(path: PathName, point: AppendPoint) -> None:
    """After appending: extend the sidecar that was fresh before, by the records written since."""
    if not point.indexed:
        return
    name = os.fspath(path)  # type: ignore[arg-type]
    location = sidecar_path(name)
    buf, st = map_uncompressed(name, "indexing")
    try:
        old = read_existing_index(location, buf, st, named=False)
        if old is None:
            return
        if old.file_size == point.offset and (len(buf) == point.offset or grown_from(old, buf)):
            new = build_record_index(buf, st, path=name, verify=False, start=old)
            new.verified = old.verified
            old.close()
            save_record_index(new, location, like=name)
        else:
            old.close()
    finally:
        release(buf)
