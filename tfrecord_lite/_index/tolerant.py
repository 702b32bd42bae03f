"""Indexes built past damage, for TFRecordFile(on_error="skip" or a callable) and the
readers on it (ShardedRecords, the map-style torch dataset). The file is read once by
the StreamScanner that iter_records runs, with the caller's DamagePolicy as its
on_damage hook, so the good records found, the spans skipped and how they are reported
are exactly iter_records'. A scan that meets no damage gives an ordinary index (saved
as a sidecar as usual). One that skipped damage gives an index of the good records
only, with the end of each (they no longer follow each other), which is kept in memory
and never saved: a sidecar promises every record of its file, and one that silently
left records out would be taken for the whole file by the next reader, in "raise"
mode too. Each open of a damaged file therefore scans it again; salvage() writes a
clean copy that opens in O(1).
"""

from __future__ import annotations

import os

import numpy as np

from tfrecord_lite._index.record_index import OFFSET_DTYPE, Buffer, RecordIndex, edge_check, offsets_ending_at
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.scanner import DecodedStream, StreamScanner
from tfrecord_lite._wire.framing import HEADER_SIZE, OVERHEAD


def build_past_damage(path: str, buf: Buffer, st: os.stat_result, policy: DamagePolicy, verify: bool) -> RecordIndex:
    """The index of the good records of the mapped file `path` (stat `st`), damage skipped and
    reported by `policy`; its `ends` is None (an ordinary index) when there was no damage."""
    skipped = policy.skipped
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    stream = DecodedStream(path, "", strict=False)  # plain, as decided: a damaged first header may look compressed
    try:
        scanner = StreamScanner(stream, verify=verify, on_damage=policy.handler(path))
        for _, found, lengths in scanner.chunks():
            first = np.array(found, np.int64) + (scanner.origin - HEADER_SIZE)
            starts.append(first.astype(OFFSET_DTYPE))
            ends.append((first + np.array(lengths, np.int64) + OVERHEAD).astype(OFFSET_DTYPE))
    finally:
        stream.close()
    begin = np.concatenate(starts) if starts else np.zeros(0, OFFSET_DTYPE)
    end = np.concatenate(ends) if ends else np.zeros(0, OFFSET_DTYPE)
    offsets = offsets_ending_at(begin, int(end[-1]) if len(end) else 0)
    if policy.skipped == skipped:
        return RecordIndex(offsets, st.st_size, st.st_mtime_ns, edge_check(buf, offsets), verify)
    check = edge_check(buf, offsets, end)
    return RecordIndex(offsets, st.st_size, st.st_mtime_ns, check, verify, ends=end)
