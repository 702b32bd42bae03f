"""A batch's records in one buffer, and its bytes values sliced back out: the records
joined (small ones afresh, larger ones into a buffer reused per thread, large ones with
their long values left out), and the slicers that give a value at an offset into that
join as bytes or as a memoryview, from the join or from the record that holds it.
columnar's batch decoder works on the join; this module is only where the bytes lie.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

_PAD = bytes(16)  # after the joined records, so that reading a varint never runs off the buffer


def join_records(records: Sequence[Any], *, scratch: bool = False) -> tuple[Any, np.ndarray]:
    """The records joined (plus padding) and the offset of each record's end. With `scratch`,
    large records are joined into this thread's scratch buffer (see _Scratch): the caller
    must be done with the result before it joins again."""
    lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
    total = int(lengths.sum())
    if scratch and total >= _LARGE_RECORD * len(records) > 0:
        ends = np.cumsum(lengths)
        try:
            return SCRATCH.join(records, ends - lengths, ends), ends
        except ValueError:  # bytes-like objects whose len() is not their size
            return join_records([memoryview(r).cast("B") for r in records], scratch=True)
    raw = b"".join([*records, _PAD])
    if total != len(raw) - len(_PAD):  # bytes-like objects whose len() is not their size
        lengths = np.fromiter((memoryview(r).nbytes for r in records), dtype=np.int64, count=len(records))
    return raw, np.cumsum(lengths)


def all_bytes(records: Sequence[Any]) -> bool:
    return set(map(type, records)) <= {bytes}


Skip = Sequence[tuple[int, int]]  # spans of a record left out of a join


class _Scratch(threading.local):
    """A buffer per thread that large records are joined into. A fresh b"".join of 64 MiB of
    images costs as much as copying them twice (the kernel zeroes each new page), and the
    list path copies every value out of the joined buffer anyway (nothing decoded refers to
    it), so the buffer can be used again by the next batch. Kept up to _SCRATCH_KEPT bytes."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def join(
        self, records: Sequence[Any], starts: np.ndarray, ends: np.ndarray, skips: Sequence[Skip] = ()
    ) -> memoryview:
        """The records at starts..ends of the buffer, then _PAD; a ValueError where a
        record's size is not ends - starts. With `skips`, the spans skips[i] of record i are left
        out (their bytes in the buffer are left as they were: nothing may read them)."""
        size = int(ends[-1]) + len(_PAD)
        buffer = self.buffer if len(self.buffer) >= size else bytearray(size)
        if size <= _SCRATCH_KEPT:
            self.buffer = buffer
        view = memoryview(buffer)
        rows = zip(records, starts.tolist(), ends.tolist(), skips or itertools.repeat(()), strict=False)
        for record, start, end, skip in rows:
            if skip:
                data, pos = memoryview(record), 0
                for s, e in skip:
                    view[start + pos : start + s] = data[pos:s]
                    pos = e
                view[start + pos : end] = data[pos:]
            else:
                view[start:end] = record
        view[size - len(_PAD) : size] = _PAD
        return view[:size]


_LARGE_RECORD = 4096  # average bytes a record from which a batch is joined into the scratch buffer
SPARSE_RECORD = 1 << 15  # average bytes a record from which long bytes values are not joined (columnar._decode_sparse)
SPARSE_VALUE = 1 << 10  # bytes a value from which columnar._decode_sparse leaves it out of the join
_SCRATCH_KEPT = 256 << 20
SCRATCH = _Scratch()


class RecordSlicer:
    """text[a:b] for offsets into the joined records, sliced from the record that holds them
    (with `views`, as a memoryview into it)."""

    __slots__ = ("records", "starts")

    def __init__(self, records: Sequence[bytes], starts: list[int], *, views: bool = False) -> None:
        self.records: Sequence[Any] = [memoryview(r) for r in records] if views else records
        self.starts = starts

    def __getitem__(self, key: slice) -> Any:
        i = bisect.bisect_right(self.starts, key.start) - 1
        at = self.starts[i]
        return self.records[i][key.start - at : key.stop - at]


class ViewSlicer:
    """view[a:b] as bytes, for code written to slice a bytes object."""

    __slots__ = ("view",)

    def __init__(self, view: memoryview) -> None:
        self.view = view

    def __getitem__(self, key: slice) -> bytes:
        return self.view[key].tobytes()
