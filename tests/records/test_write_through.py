# TFRecordWriter(buffered=False) on a local file writes through a shared memory map grown in zeroed
# chunks (_storage/mapped.py). A real child process is killed with SIGKILL while writing: every
# record whose write() returned is read back, the zero tail is reported as a truncated tail and cut
# off by append. Files with zero bytes that are not a writer's tail keep their corruption error.
# The reader's rule (_wire/unfinished.py) is checked on files built by the writer's own order of
# stores (length, payload and footer, length CRC last), cut at every point.
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_lite as tfr
from tests._records import write_until_full
from tfrecord_lite._wire import framing

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import os, signal, sys, time
import tfrecord_lite as tfr
path, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w = tfr.TFRecordWriter(path, buffered=False)
for i in range(count):
    w.write(bytes([i % 251]) * (size + i % 5))
print(count, flush=True)
time.sleep(60)
"""


def record(i: int, size: int = 40) -> bytes:
    return bytes([i % 251]) * (size + i % 5)


def _killed_writer(path: Path, count: int, size: int = 40) -> None:
    """A child that writes `count` records write-through, says so, and is then SIGKILLed."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), str(count), str(size)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == str(count).encode()
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL


def test_a_killed_write_through_writer_keeps_every_returned_record(tmp_path: Path) -> None:
    path = tmp_path / "log.tfrecord"
    _killed_writer(path, 5000)
    records = [record(i) for i in range(5000)]
    end = sum(len(r) + 16 for r in records)
    assert path.stat().st_size > end and path.read_bytes()[end:].count(0) == path.stat().st_size - end
    with pytest.raises(tfr.TruncatedRecordError, match=r"zero bytes to the end of the file after record #5000") as err:
        list(tfr.iter_records(path))
    assert err.value.offset == end and "truncate_partial=True" in str(err.value)
    assert list(tfr.iter_records(path, on_error="skip")) == records
    with pytest.raises(tfr.TruncatedRecordError, match="write-through writer"):
        tfr.TFRecordFile(path)
    report = tfr.verify_file(path)
    assert report.records == 5000 and report.damage[0].offset == end and "write-through" in report.damage[0].reason
    with pytest.raises(tfr.TruncatedRecordError, match=r"cannot append: the file ends with \d+ zero bytes"):
        tfr.TFRecordWriter(path, append=True)
    with tfr.TFRecordWriter(path, append=True, truncate_partial=True, buffered=False) as w:
        w.write(b"after")
    whole = tmp_path / "whole.tfrecord"
    with tfr.TFRecordWriter(whole) as w:
        for r in [*records, b"after"]:
            w.write(r)
    assert path.read_bytes() == whole.read_bytes()
    assert tfr.TFRecordFile(path)[5000] == b"after"


def test_salvage_keeps_the_records_before_a_killed_writers_tail(tmp_path: Path) -> None:
    path, rescued = tmp_path / "log.tfrecord", tmp_path / "rescued.tfrecord"
    _killed_writer(path, 100, size=1000)
    tfr.salvage(path, destination=rescued)
    assert list(tfr.iter_records(rescued)) == [record(i, 1000) for i in range(100)]


def test_a_write_through_file_is_the_buffered_file_and_is_cut_at_flush_and_close(tmp_path: Path) -> None:
    records = [record(i, i % 300) for i in range(3000)] + [bytes(3 << 20)]
    mapped, buffered = tmp_path / "mapped.tfrecord", tmp_path / "buffered.tfrecord"
    with tfr.TFRecordWriter(mapped, buffered=False) as w, tfr.TFRecordWriter(buffered) as b:
        for r in records:
            w.write(r)
            b.write(r)
        assert w.bytes_written == sum(len(r) + 16 for r in records) and w.records_written == len(records)
        w.flush()
        b.flush()
        assert mapped.read_bytes() == buffered.read_bytes()
        w.write(memoryview(b"more"))
        b.write(b"more")
    assert mapped.read_bytes() == buffered.read_bytes()


def test_a_mapped_file_is_the_buffered_file_for_records_stored_either_way(tmp_path: Path) -> None:
    """Records both sides of the length up to which a record is stored by one struct call, across map
    growth and flush(): the buffered writer's bytes and counts at every point."""
    records = [record(i, i * 37 % 4000) for i in range(1100)]  # over 2 MiB: the map grows twice
    path, plain = tmp_path / "counted.tfrecord", tmp_path / "plain.tfrecord"
    with tfr.TFRecordWriter(path, buffered=False) as w, tfr.TFRecordWriter(plain) as b:
        for i, r in enumerate(records):
            w.write(r)
            b.write(r)
            if i % 97 == 0 or i in (600, 601):
                assert (w.records_written, w.bytes_written) == (b.records_written, b.bytes_written)
            if i == 600:
                w.flush()
        assert (w.records_written, w.bytes_written) == (len(records), sum(len(r) + 16 for r in records))
    assert path.read_bytes() == plain.read_bytes()
    assert "1100 records written" in repr(w)


def test_a_full_disk_while_growing_the_map_is_an_oserror_and_the_file_keeps_whole_records(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes posix_fallocate fail (EFBIG) as a full disk would (ENOSPC): at growth time,
    never a SIGBUS on a store."""
    path = tmp_path / "full.tfrecord"
    written, errno_, message = write_until_full(
        path, limit=3 << 20, options=", buffered=False", record="bytes([i % 251]) * 100", count=10**6
    )
    assert errno_ == errno.EFBIG and str(path) in message and "records before the failed write are kept" in message
    assert written > 0 and path.stat().st_size == written * 116 <= 3 << 20
    assert list(tfr.iter_records(path)) == [bytes([i % 251]) * 100 for i in range(written)]


def _file(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "f.tfrecord"
    path.write_bytes(data)
    return path


def _error(path: Path) -> tfr.TFRecordError:
    with pytest.raises(tfr.TFRecordError) as err:
        list(tfr.iter_records(path))
    return err.value


def test_zero_bytes_that_are_not_a_writers_tail_stay_corruption(tmp_path: Path) -> None:
    good = framing.frame_many([b"a" * 10, b"b" * 20])
    zeros_then_records = bytes(good) + bytes(64) + bytes(good)  # zeros in the middle
    err = _error(_file(tmp_path, zeros_then_records))
    assert type(err) is tfr.CorruptRecordError and err.offset == len(good)
    damaged = bytearray(good)
    damaged[-8] ^= 1  # the last record's payload
    err = _error(_file(tmp_path, bytes(damaged) + bytes(4096)))
    assert type(err) is tfr.CorruptRecordError and err.offset == len(framing.frame(b"a" * 10))
    past_the_end = bytes(good) + (1 << 20).to_bytes(8, "little") + bytes(200)  # no length CRC, runs past the end
    assert type(_error(_file(tmp_path, past_the_end))) is tfr.CorruptRecordError
    with pytest.raises(tfr.CorruptRecordError):
        tfr.TFRecordWriter(_file(tmp_path, zeros_then_records), append=True, truncate_partial=True)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.binary(max_size=60), min_size=1, max_size=12),  # a writer maps after its first 32 records
    st.binary(min_size=0, max_size=60),
    st.integers(0, 10**6),
    st.integers(0, 300),
)
def test_a_tail_cut_anywhere_in_the_writers_order_of_stores_is_a_truncated_tail(
    tmp_path_factory: pytest.TempPathFactory, records: list[bytes], last: bytes, cut: int, zeros: int
) -> None:
    """The writer stores a record's length, then payload and footer, then its length CRC; killed after
    any prefix of those stores (but the last), the file is the records before, that much of the record,
    and zeros: every reader reads the records before it and reports a truncated tail there."""
    head = bytes(framing.frame_many(records))
    whole = framing.frame(last)
    stores = [(0, whole[:8]), *((12 + i, whole[12 + i : 13 + i]) for i in range(len(whole) - 12))]
    tail = bytearray(len(whole) + zeros)
    for at, data in stores[: cut % len(stores)]:  # the length CRC (bytes 8..12) never stored
        tail[at : at + len(data)] = data
    path = tmp_path_factory.mktemp("cut") / "f.tfrecord"
    path.write_bytes(head + bytes(tail))
    err = _error(path)
    assert type(err) is tfr.TruncatedRecordError and err.offset == len(head), err
    assert "write-through writer" in err.reason
    assert list(tfr.iter_records(path, on_error="skip")) == records
    with tfr.TFRecordWriter(path, append=True, truncate_partial=True) as w:
        w.write(b"x")
    assert path.read_bytes() == head + framing.frame(b"x")
    with open(path, "ab") as fh:
        fh.write(bytes(tail))
    with open(path, "rb") as fh, pytest.raises(tfr.TruncatedRecordError, match="write-through writer"):
        list(tfr.iter_records(fh))  # a file object, read as a stream


def test_a_subclass_of_the_writer_writes_through_as_itself(tmp_path: Path) -> None:
    class Logged(tfr.TFRecordWriter):
        pass

    path = tmp_path / "sub.tfrecord"
    with Logged(path, buffered=False) as w:
        assert type(w) is Logged
        for i in range(100):
            w.write(record(i))
    assert list(tfr.iter_records(path)) == [record(i) for i in range(100)]
