"""Tailing runs that are being written: the records of their events files as they become complete.

Strategy: a poll loop over local files. Each pass lists the runs again (new runs and, in a run, new
files: TensorBoard writers rotate to a new file, and a restarted job opens one), and for every
file whose size grew since the last pass reads the bytes after the last complete record, finds
the complete records in them with the framing scan (CRCs checked as asked) and moves its offset
past them. A record still being written (a torn tail: a part of its header or payload) stays
unread until a later pass finds it whole, as TensorBoard's reader waits for it. A length field
beyond `max_record_bytes` is damage, never a wait for a gigantic record. Only the bytes after
the offset are held, so memory stays flat; each run keeps its tags' plugins across its files.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable, Iterator
from typing import Any

from tfrecord_lite._errors import RecordTooLargeError
from tfrecord_lite._events.runs import find_runs
from tfrecord_lite._events.wire import Plugins
from tfrecord_lite._storage.locations import is_url
from tfrecord_lite._wire.framing import HEADER_SIZE, scan

POLL_SECONDS = 0.5
_READ_LIMIT = 64 << 20  # the most bytes read from one file in one pass

Followed = tuple[str, str, int, int, bytes, Plugins]  # run, file, record number, offset, record, plugins


class _File:
    def __init__(self) -> None:
        self.offset = 0
        self.size = -1
        self.records = 0


def follow_runs(
    source: Any,
    wanted_run: Callable[[str], bool] | None,
    *,
    verify: bool,
    max_record_bytes: int,
    poll_seconds: float,
) -> Iterator[Followed]:
    """Every complete record of the runs of `source`, as written, forever (local files only)."""
    names = source if isinstance(source, (list, tuple)) else [source]
    if any(is_url(os.fspath(name)) for name in names):
        raise ValueError("follow=True reads local files only; a URL's log is read whole without it")
    files: dict[str, _File] = {}
    plugins: dict[str, Plugins] = {}
    while True:
        grew = False
        for run, paths in _runs_now(source).items():
            if wanted_run is not None and not wanted_run(run):
                continue
            for path in paths:
                state = files.setdefault(path, _File())
                for number, offset, record in _new_records(path, state, verify, max_record_bytes):
                    grew = True
                    yield run, path, number, offset, record, plugins.setdefault(run, {})
        if not grew:
            time.sleep(poll_seconds)


def _runs_now(source: Any) -> dict[str, list[str]]:
    try:
        return find_runs(source)
    except FileNotFoundError:  # a logdir the job has not written to yet
        return {}


def _new_records(path: str, state: _File, verify: bool, max_record_bytes: int) -> Iterator[tuple[int, int, bytes]]:
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return
    if size == state.size and size == state.offset:
        return
    state.size = size
    if size <= state.offset:
        return
    with open(path, "rb") as f:
        f.seek(state.offset)
        data = f.read(min(size - state.offset, max(_READ_LIMIT, max_record_bytes + 16)))
    _check_length(data, path, state.offset, max_record_bytes)
    starts, lengths, end = scan(data, verify=verify, origin=state.offset, path=path)
    for start, length in zip(starts, lengths, strict=True):
        yield state.records, state.offset + start - HEADER_SIZE, data[start : start + length]
        state.records += 1
    state.offset += end
    if end < len(data):
        state.size = -1  # more than one pass's worth, or a torn tail: look again next pass


def _check_length(data: bytes, path: str, offset: int, max_record_bytes: int) -> None:
    """A first record whose length field claims more than `max_record_bytes` is damage."""
    if len(data) >= HEADER_SIZE:
        (length,) = struct.unpack_from("<Q", data)
        if length > max_record_bytes:
            raise RecordTooLargeError(
                f"a record of {length:,} bytes claimed, more than max_record_bytes={max_record_bytes:,}",
                path=path,
                offset=offset,
            )
