"""read_events(follow=True) over runs being written: each record once it is whole, a torn tail
waited for, a rotated file and a new run picked up, damage still raised."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.events.test_read import event, simple
from tfrecord_lite import CorruptRecordError, DecodeError, RecordTooLargeError
from tfrecord_lite._wire.framing import frame
from tfrecord_lite.events import EventRecord, EventWriter, read_events


def take(rows: Iterator[EventRecord], n: int) -> list[tuple[str, int, float]]:
    return [(row.run, row.step, row.value) for _, row in zip(range(n), rows, strict=False)]  # no row past n


def test_follow_reads_a_run_as_it_is_written_across_rotation_and_a_torn_tail(tmp_path: Path) -> None:
    first = EventWriter(tmp_path / "run")
    for step in range(3):
        first.add_scalar("loss", float(step), step)
    first.flush()
    rows = read_events(tmp_path, follow=True, kinds="scalar")
    try:
        assert take(rows, 3) == [("run", 0, 0.0), ("run", 1, 1.0), ("run", 2, 2.0)]
        first.add_scalar("loss", 3.0, 3)
        first.flush()
        assert take(rows, 1) == [("run", 3, 3.0)]
        first.close()
        with EventWriter(tmp_path / "run") as second:  # rotation: the run goes on in a new file
            second.add_scalar("loss", 4.0, 4)
        assert take(rows, 1) == [("run", 4, 4.0)]

        # a third file whose one record arrives in two writes: nothing is read until it is whole
        with EventWriter(tmp_path / "other") as source:
            source.add_scalar("acc", 0.5, 9)
        record = Path(source.path).read_bytes()
        torn = tmp_path / "late" / "events.out.tfevents.9999999999.host"
        torn.parent.mkdir()
        torn.write_bytes(record[:-7])
        threading.Timer(0.8, lambda: torn.write_bytes(record)).start()
        got = take(rows, 2)
        assert sorted(got) == [("late", 9, 0.5), ("other", 9, 0.5)]
    finally:
        rows.close()


def test_follow_raises_on_damage_and_on_a_huge_length(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with EventWriter(run) as writer:
        writer.add_scalar("loss", 1.0, 1)
    damaged = bytearray(Path(writer.path).read_bytes())
    damaged[-6] ^= 0xFF
    Path(writer.path).write_bytes(bytes(damaged))
    with pytest.raises(CorruptRecordError, match="CRC"):
        list(read_events(tmp_path, follow=True))
    huge = frame(b"x")
    Path(writer.path).write_bytes((1 << 40).to_bytes(8, "little") + huge[8:])
    with pytest.raises(RecordTooLargeError, match="max_record_bytes"):
        list(read_events(tmp_path, follow=True, max_record_bytes=1 << 20))


def test_follow_takes_local_files_only() -> None:
    with pytest.raises(ValueError, match="local files only"):
        next(read_events("s3://bucket/logs", follow=True))


def test_follow_hands_events_that_do_not_decode_to_on_error_and_counts_them(tmp_path: Path) -> None:
    good, bad = frame(event(1, simple(b"ok", 1.0))), frame(event(2, simple(b"\xffbad", 2.0)))
    path = tmp_path / "run" / "events.out.tfevents.1"
    path.parent.mkdir()
    path.write_bytes(good + bad + good)
    errors: list[Exception] = []
    rows = read_events(tmp_path, follow=True, on_error=errors.append)
    try:
        assert take(rows, 2) == [("run", 1, 1.0), ("run", 1, 1.0)]
    finally:
        rows.close()
    assert len(errors) == 1 and getattr(errors[0], "offset", None) == len(good) and "not UTF-8" in str(errors[0])
    path.write_bytes(good + bad + bad + good)
    with pytest.raises(DecodeError, match=r"more than max_skipped=1"):
        take(read_events(tmp_path, follow=True, on_error="skip", max_skipped=1), 2)
    with pytest.raises(DecodeError, match=rf"not UTF-8.*record 1, at byte offset {len(good)}"):
        take(read_events(tmp_path, follow=True), 2)
