"""The tail that a write-through writer (TFRecordWriter(buffered=False) on a local file, which
writes through a shared memory map grown in chunks; _storage/mapped.py) leaves when it is killed
before close() cuts the file to its records: every record whose write() returned, then zero
bytes to the end of the chunk, with at most one unfinished record first. The writer stores a
record with its length CRC left zero and that CRC last, so that record has a zero length CRC.

unfinished_tail says whether the bytes from an offset to the end of the file are such a tail,
exactly: either every byte is zero, or the header there has a zero length CRC, its length fits
in the file, and every byte after that record is zero. The bytes are read through `read_at` in
bounded chunks, so a long tail is never held at once. Readers raise TruncatedRecordError with
its reason there (the class of a truncated last record: skipping readers stop cleanly, and
append=True, truncate_partial=True cuts it off), where a header damaged in the middle of a
file, or zeros after a damaged record, stay CorruptRecordError.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable

from tfrecord_lite._repr import plural

ReadAt = Callable[[int, int], "bytes | bytearray | memoryview"]  # (offset, size) -> the bytes there (fewer at the end)

_CHUNK = 1 << 20
_ZEROS = bytes(_CHUNK)


def reader_of(buf: bytes | bytearray | memoryview | mmap.mmap) -> ReadAt:
    """read_at over a buffer that holds the file (or its end; offsets are then the buffer's); no view
    of it is kept, so that a map can be closed."""
    return lambda offset, size: buf[offset : offset + size]


STOPPED = "a write-through writer (buffered=False) stopped before it closed"


def unfinished_tail(read_at: ReadAt, offset: int, end: int, records: int | None = None) -> str | None:
    """The reason to report when the bytes from `offset` to `end` (the end of the file) are the tail
    of a write-through writer that stopped before it closed; None when they are not. `records`: how
    many records come before `offset`, for the message, when known."""
    what = describe_tail(read_at, offset, end)
    if what is None:
        return None
    after = "" if records is None else " at the start of the file" if records == 0 else f" after record #{records}"
    return (
        f"{what}{after}: {STOPPED}; append with truncate_partial=True or run `tfrecord-lite salvage` to keep "
        "the records before it"
    )


def describe_tail(read_at: ReadAt, offset: int, end: int) -> str | None:
    """What the bytes from `offset` to `end` are when they are a write-through writer's tail (as
    "N zero bytes to the end of the file"); None when they are not."""
    if offset >= end:
        return None
    head = bytes(read_at(offset, min(16, end - offset)))
    if _zero_from(read_at, offset, end):
        what = f"{plural(end - offset, 'zero byte')} to the end of the file"
    elif len(head) >= 12 and head[8:12] == bytes(4):
        stop = offset + 16 + int.from_bytes(head[:8], "little")
        if stop > end or not _zero_from(read_at, stop, end):
            return None
        what = (
            f"a record without its length CRC (unfinished, {stop - offset} bytes) and "
            f"{plural(end - stop, 'zero byte')} to the end of the file"
        )
    else:
        return None
    return what


def _zero_from(read_at: ReadAt, offset: int, end: int) -> bool:
    """Whether every byte from `offset` to `end` is zero, read a chunk at a time."""
    while offset < end:
        size = min(_CHUNK, end - offset)
        data = read_at(offset, size)
        if len(data) != size or bytes(data) != _ZEROS[:size]:
            return False
        offset += size
    return True
