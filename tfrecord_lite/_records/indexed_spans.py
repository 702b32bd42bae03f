"""The records of one uncompressed local file in batches of spans, framed by its index sidecar:
record_spans' batches without following the length fields record by record.

Strategy: a stream finds each record by reading the previous one's length field, one Python
step a record, which costs as much as decoding small records. A file whose sidecar is there and
fresh (the file's size and time, its first and last records) already holds every offset: each
batch's bytes are read in one call and checked at once (framing.run_is_intact: each header
announcing the indexed length, length CRCs, payload CRCs). Nothing is built or saved
here: a file without a fresh sidecar is streamed as before. The batches are those of record_spans
(`batch_size` records each, in order); where a batch does not check out (damage, or a file
changed after its sidecar was read), the stream reads the file again from that batch on, so the
records yielded and any error (its file, offset and message) are exactly the stream's.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterator

import numpy as np

from tfrecord_lite._batches.columnar import Spans
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._index.record_index import map_uncompressed, read_existing_index, record_index_staleness, release
from tfrecord_lite._index.sidecar_file import sidecar_path
from tfrecord_lite._records.example_batches import record_spans
from tfrecord_lite._stream.scanner import MAX_RECORD_BYTES
from tfrecord_lite._wire.framing import FOOTER_SIZE, HEADER_SIZE, run_is_intact


def fresh_offsets(path: str, every_header: bool = True) -> np.ndarray | None:
    """The record offsets (count + 1, the last the file's size) of the local uncompressed file
    `path` from its fresh sidecar; None when it has none, a stale or damaged one, or is no such file.
    Without `every_header`, only the file's size and time and its first and last records are
    checked (record_index_staleness), not every indexed header."""
    location = sidecar_path(path)
    if not os.path.isfile(location):
        return None
    try:
        buf, st = map_uncompressed(path, "reading")
    except (OSError, ValueError, TFRecordError):
        return None
    try:
        index = read_existing_index(location, buf, st, named=False)
        if index is None:
            return None
        try:
            if index.ends is not None or record_index_staleness(index, buf, st, every_header) is not None:
                return None
            offsets = np.array(index.offsets, dtype=np.int64)
        finally:
            index.close()
    except (OSError, ValueError, TFRecordError):
        return None
    finally:
        release(buf)
    return offsets if len(offsets) and int(offsets[-1]) == st.st_size and int(offsets[0]) == 0 else None


def file_spans(
    path: str, batch_size: int, compression: str | None, verify: bool, max_record_bytes: int = MAX_RECORD_BYTES
) -> Iterator[Spans]:
    """record_spans(path, batch_size, compression, verify) (damage raises) of a local file: framed by
    its fresh sidecar where it has one (and `compression` is "auto" or None), streamed otherwise.
    A file holding a record longer than `max_record_bytes` is streamed, which refuses it."""
    # every header is checked batch by batch (run_is_intact) before its records are yielded, and
    # from a batch where one differs the stream reads on: checking them all first too would read
    # each length field twice
    offsets = fresh_offsets(path, every_header=False) if compression in ("auto", None) else None
    if offsets is not None and len(offsets) > 1:
        longest = int(np.diff(offsets).max()) - HEADER_SIZE - FOOTER_SIZE
        offsets = offsets if longest <= max_record_bytes else None
    if offsets is None:
        yield from record_spans(path, batch_size, compression, verify, max_record_bytes=max_record_bytes)
        return
    done = 0
    for spans in offset_spans(path, offsets, batch_size, verify):
        yield spans._replace(where=functools.partial(_indexed_where, path, offsets, done))
        done += len(spans.starts)
    if done < len(offsets) - 1:  # damage, or a file changed since its sidecar was read: the stream reports it
        again = record_spans(path, batch_size, compression, verify, max_record_bytes=max_record_bytes)
        yield from itertools.islice(again, done // batch_size, None)


def _indexed_where(path: str, offsets: np.ndarray, first: int, k: int) -> tuple[str | None, int, int | None]:
    """Where record k of the batch starting at record `first` of `path` lies, by its index."""
    return path, first + k, int(offsets[first + k])


def offset_spans(path: str, offsets: np.ndarray, batch_size: int, verify: bool) -> Iterator[Spans]:
    """The records between `offsets` (a run of a file's record offsets, the end of the last one
    included), `batch_size` at a time, each batch read in one call and checked at once; it stops
    before the first batch that does not check out (the caller reads on from there its own way)."""
    with open(path, "rb") as f:
        for lo in range(0, len(offsets) - 1, batch_size):
            spans = _batch(f, offsets[lo : lo + batch_size + 1], verify)
            if spans is None:
                return
            yield spans


def _batch(f: object, offsets: np.ndarray, verify: bool) -> Spans | None:
    """The records between `offsets` (of the open file `f`), read in one call; None when they do
    not check out."""
    first = int(offsets[0])
    data = bytearray(int(offsets[-1]) - first)
    f.seek(first)  # type: ignore[attr-defined]
    if f.readinto(data) != len(data):  # type: ignore[attr-defined]
        return None
    heads = offsets[:-1] - first
    if not run_is_intact(data, heads, len(data), verify):
        return None
    view = memoryview(data)
    starts, ends = heads + HEADER_SIZE, offsets[1:] - first - FOOTER_SIZE

    def record(k: int) -> bytes:
        return bytes(view[starts[k] : ends[k]])

    return Spans(view, starts, ends, record)
