# Hostile files: a device or a FIFO where a TFRecord file is expected, and a record header with
# a good CRC that claims far more bytes than the file holds. Each call that used to hang runs in
# a daemon thread, so a regression fails the test instead of stalling the run.
from __future__ import annotations

import errno
import gzip
import os
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite as tfr
from tfrecord_lite._records.verify import verify_file
from tfrecord_lite._wire.crc import masked_crc


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """call()'s result or exception, or a failure if it has not returned in `seconds`."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as err:
            outcome.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s"
    return outcome[0]


def refused(result: Any) -> bool:
    return isinstance(result, OSError) and result.errno == errno.ESPIPE and "not a regular file" in str(result)


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "shard.tfrecord"
    os.mkfifo(path)  # no writer: opening it to read would wait forever
    return str(path)


@pytest.mark.parametrize("device", ["/dev/zero", "fifo"])
def test_random_access_refuses_what_is_not_a_regular_file(device: str, fifo: str) -> None:
    path = fifo if device == "fifo" else device
    assert refused(within(10, lambda: tfr.TFRecordFile(path)))
    assert refused(within(10, lambda: tfr.TFRecordFile(path, on_error="skip")))
    assert refused(within(10, lambda: tfr.write_index(path)))


def test_skipping_damage_in_an_endless_device_is_refused() -> None:
    assert refused(within(10, lambda: verify_file("/dev/zero")))
    assert refused(within(10, lambda: list(tfr.iter_records("/dev/zero", on_error="skip"))))
    assert isinstance(within(10, lambda: list(tfr.iter_records("/dev/zero"))), tfr.TFRecordError)  # as before


def test_a_pipe_still_streams(tmp_path: Path, fifo: str) -> None:
    records = [b"a", b"bb", b"ccc"]
    source = tmp_path / "plain.tfrecord"
    with tfr.TFRecordWriter(str(source)) as w:
        for r in records:
            w.write(r)

    def feed() -> None:
        with open(fifo, "wb") as pipe:
            pipe.write(source.read_bytes())

    threading.Thread(target=feed, daemon=True).start()
    assert within(10, lambda: list(tfr.iter_records(fifo, on_error="skip"))) == records


def forged(tmp_path: Path, compress: bool = False, claim: int = 1 << 30, size: int = 0) -> tuple[Path, list[bytes]]:
    """100 records (of `size` bytes more); record 1's header replaced by one with a good CRC that
    claims `claim` bytes."""
    records = [b"record %d" % i + bytes(size) for i in range(100)]
    path = tmp_path / "forged.tfrecord"
    with tfr.TFRecordWriter(str(path)) as w:
        for r in records:
            w.write(r)
    data = bytearray(path.read_bytes())
    at = 16 + len(records[0])
    length = struct.pack("<Q", claim)
    data[at : at + 12] = length + struct.pack("<I", masked_crc(length))
    path.write_bytes(gzip.compress(bytes(data)) if compress else bytes(data))
    return path, records[:1] + records[2:]


@pytest.mark.parametrize("compress", [False, True])
def test_a_forged_length_past_the_end_costs_only_its_record(tmp_path: Path, compress: bool) -> None:
    path, survivors = forged(tmp_path, compress)
    assert list(tfr.iter_records(str(path), on_error="skip")) == survivors
    report = verify_file(str(path))
    assert report.records == len(survivors)
    assert [(d.offset, d.end) for d in report.damage] == [(24, 48)]
    assert "announces 1073741824 bytes" in report.damage[0].reason
    if not compress:
        assert list(tfr.TFRecordFile(str(path), on_error="skip")) == survivors
    result = tfr.salvage(str(path), destination=tmp_path / "saved.tfrecord")
    assert list(tfr.iter_records(str(tmp_path / "saved.tfrecord"))) == survivors
    assert len(result.damage) == 1


@pytest.mark.parametrize("compress", [False, True])
def test_a_forged_length_over_the_record_limit_megabytes_before_the_end(tmp_path: Path, compress: bool) -> None:
    # 3 MiB of records after the forged header: past the scan buffer, within what verify holds
    path, survivors = forged(tmp_path, compress, claim=1 << 40, size=32 << 10)
    at = 16 + len(survivors[0])
    report = verify_file(str(path))
    assert report.records == len(survivors)
    assert [(d.offset, d.end) for d in report.damage] == [(at, 2 * at)]
    assert "announces 1099511627776 bytes" in report.damage[0].reason
    if compress:  # the stream's length is unknown: a reader refuses to hold what the header claims
        with pytest.raises(tfr.RecordTooLargeError, match="claims 1099511627776 bytes"):
            list(tfr.iter_records(str(path), on_error="skip"))
    else:  # the file's size shows the claim runs past its end
        assert list(tfr.iter_records(str(path), on_error="skip")) == survivors
        with pytest.raises(tfr.RecordTooLargeError):
            list(tfr.iter_records(str(path)))
