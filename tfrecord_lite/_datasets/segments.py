"""Reading a streaming plan's segments (record ranges of shards, _datasets/plan.py), without torch.

A segment of an uncompressed file is read through the file's index when that costs no extra
pass (it starts inside the file, or the sidecar exists); every other segment is streamed, and a
policy that skips damage always streams (an index has no place for a damaged record). A resumed
position skips whole segments, and into the next one, by their known lengths instead of reading
them. Streamed objects of a store have their first blocks fetched `prefetch` segments ahead.
Indexed files are opened through the caller's `open_file`, which may keep them open from one
epoch to the next (a persistent DataLoader worker reads each sidecar once). A shard's count
comes from its index alone (_index/file_index.py), or from one pass over its stream: counting
opens no file for random access. Read `placed`, each record comes with its place (file, number in
it, byte offset: from the index, or from the stream reader's Placements), for naming a record that
an error is about; reading that way costs a tuple a record, so it is done only to find one.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

from tfrecord_lite._datasets.plan import Segment
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._index.file_index import indexed_count
from tfrecord_lite._index.sidecar_file import sidecar_path
from tfrecord_lite._records.random_access import TFRecordFile
from tfrecord_lite._records.reader import RecordIterator, iter_records
from tfrecord_lite._storage.locations import StorageOptions, is_url
from tfrecord_lite._storage.prefetch import prefetched
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES

Place = tuple[str | None, int, int | None]
"""Where a record lies: its file, its number in that file, its byte offset (None: not known)."""


class ShardOptions(TypedDict):
    """How every shard is opened, whichever way it is read: where it is, the longest record it may hold."""

    storage_options: StorageOptions
    max_record_bytes: int


NO_OPTIONS: ShardOptions = {"storage_options": None, "max_record_bytes": MAX_RECORD_BYTES}


def open_plain(path: str, verify: bool = True, options: ShardOptions = NO_OPTIONS) -> TFRecordFile:
    """A shard taken as uncompressed, opened through its index. The index reads a compressed file too, so one
    is refused here: it was declared uncompressed (compression=None), as a stream of it would be read."""
    return TFRecordFile(path, compression=None, verify=verify, **options)


def count_shard(
    path: str, kind: str, skipping: bool = False, verify: bool = True, options: ShardOptions = NO_OPTIONS
) -> int:
    """Records in one shard as the streaming dataset reads them: from its index when uncompressed
    (built and saved now if need be: reading uses it), else by one pass over the stream (also
    when damage is skipped: then the good records, found as reading will find them)."""
    if kind == "" and not skipping:
        return indexed_count(path, options["storage_options"])
    policy = DamagePolicy(_ignore) if skipping else None
    return sum(1 for _ in RecordIterator(path, kind, verify and skipping, policy, **options))


def _ignore(err: TFRecordError) -> None:
    """The on_error of counting passes: reading reports the damage."""


def _indexed(path: str, kind: str, seg: Segment, policy: DamagePolicy | None = None) -> bool:
    """Whether a segment is read through the file's index: an uncompressed file whose segment starts
    inside it, or whose index sidecar already exists; otherwise it is streamed, and no index is built
    just for reading it. With a policy that skips damage, files are always streamed (an index has no
    place for a damaged record)."""
    if kind != "" or (policy is not None and not policy.raises):
        return False
    return seg.start > 0 or seg.stop is not None or (not is_url(path) and os.path.exists(sidecar_path(path)))


def _read_segment(
    path: str,
    kind: str,
    seg: Segment,
    verify: bool,
    policy: DamagePolicy | None = None,
    options: ShardOptions = NO_OPTIONS,
    stream: Any = None,
    open_file: Callable[[str], TFRecordFile] | None = None,
    placed: bool = False,
) -> Iterator[Any]:
    """The raw records of one segment (see _indexed); `stream` is the file already opened (prefetched),
    `open_file` opens an indexed file and keeps it (else it is opened here and closed after); `placed`:
    (record, Place) pairs."""
    source = stream if stream is not None else path
    if policy is not None and not policy.raises:
        records = RecordIterator(source, kind, verify, policy, **options)
        yield from itertools.islice(_streamed(records, placed), seg.start, seg.stop)
    elif _indexed(path, kind, seg):
        if open_file is not None:
            yield from _indexed_records(open_file(path), seg, placed)
        else:
            with open_plain(path, verify, options) as f:
                yield from _indexed_records(f, seg, placed)
    else:
        records = iter_records(source, compression=kind or "", verify=verify, **options)
        yield from itertools.islice(_streamed(records, placed), seg.start, seg.stop)


def _streamed(records: RecordIterator, placed: bool) -> Iterator[Any]:
    """`records`, or with `placed` each with its Place (the reader keeps where its last chunks lie)."""
    if not placed:
        return records
    records.placements.keep(1)
    return ((record, records.placements.where(i)) for i, record in enumerate(records))


def _indexed_records(f: TFRecordFile, seg: Segment, placed: bool = False, chunk: int = 256) -> Iterator[Any]:
    """A segment's records read through the index, `chunk` at a time (`placed`: with their Place)."""
    stop = len(f) if seg.stop is None else seg.stop
    for start in range(seg.start, stop, chunk):
        records = f[start : min(start + chunk, stop)]
        if placed:
            yield from ((record, (f.path, i, f.offset(i))) for i, record in enumerate(records, start))
        else:
            yield from records


def skip_segments(
    segments: list[Segment], skip: int, segment_len: Callable[[Segment], int | None]
) -> tuple[list[Segment], int]:
    """The segments left after skipping `skip` records, and what is still to skip by reading: whole
    segments of known length are dropped and the next one starts later, without reading them."""
    segments = list(segments)
    while segments and skip:
        n = segment_len(segments[0])
        if n is None:
            break
        if skip >= n:
            skip -= n
            segments.pop(0)
        else:
            seg = segments[0]
            segments[0] = Segment(seg.shard, seg.start + skip, seg.start + n)
            skip = 0
    return segments, skip


def read_segments(
    paths: list[str],
    kinds: list[str],
    segments: list[Segment],
    verify: bool,
    policy: DamagePolicy | None,
    options: ShardOptions,
    prefetch: int,
    open_file: Callable[[str], TFRecordFile] | None = None,
    placed: bool = False,
) -> Iterator[Any]:
    """The raw records of `segments` in order; streamed objects of a store are fetched `prefetch` ahead;
    indexed files are opened by `open_file` when given; `placed`: (record, Place) pairs."""
    streamed = [None if _indexed(paths[s.shard], kinds[s.shard], s, policy) else paths[s.shard] for s in segments]
    streams = prefetched(streamed, prefetch, options["storage_options"])
    return itertools.chain.from_iterable(
        _read_segment(paths[s.shard], kinds[s.shard], s, verify, policy, options, stream, open_file, placed)
        for s, stream in zip(segments, streams, strict=True)
    )
