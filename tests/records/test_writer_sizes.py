"""The buffered writer on records of every size: small ones framed together in one buffer, long ones
written from their own bytes (one os.writev for a run of them, never joined). Either way the file is
exactly the framed records, in order, and a full disk leaves whole records only."""

from __future__ import annotations

import errno
import io
import random
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._records import write_until_full
from tfrecord_lite._wire import framing

ROOT = Path(__file__).resolve().parents[2]


def _records(sizes: list[int], seed: int = 0) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(n) for n in sizes]


MIXES = {
    "tiny": [0, 1, 7] * 400,
    "1 KiB": [1024] * 2500,
    "64 KiB": [64 << 10] * 40,
    "1 MiB": [1 << 20] * 5,
    "small then long": [10] * 100 + [300 << 10] + [10] * 100,
    "long and tiny alternating": [80 << 10, 3] * 30,
    "a run longer than one writev takes": [1] * 1500 + [12 << 20] + [1] * 5,
    "around the threshold": [4095, 4096, 4097, 65535, 65536, 65537] * 20,
    "short batches, then longer, then short": [110] * 3000 + [300] * 1500 + [16] * 8000,
}


@pytest.mark.parametrize("mix", MIXES)
def test_records_of_every_size_are_the_framed_records(tmp_path: Path, mix: str) -> None:
    records = _records(MIXES[mix])
    expected = b"".join(framing.frame(r) for r in records)
    path = tmp_path / "sizes.tfrecord"
    sink = io.BytesIO()
    with tfr.TFRecordWriter(path) as on_disk, tfr.TFRecordWriter(sink) as to_object:
        for i, record in enumerate(records):
            on_disk.write(record)
            to_object.write(memoryview(record) if i % 3 == 1 else record)  # the slow path too
            if i == len(records) // 2:
                on_disk.flush()
                assert path.read_bytes() == expected[: sum(len(r) + 16 for r in records[: i + 1])]
        assert on_disk.records_written == len(records) and on_disk.bytes_written == len(expected)
    assert path.read_bytes() == expected and sink.getvalue() == expected
    assert list(tfr.iter_records(path)) == records


def test_long_records_then_a_batch_keep_their_order(tmp_path: Path) -> None:
    long = _records([100 << 10] * 3, seed=1)
    batch = [b"a", b"bb", b"ccc"]
    path = tmp_path / "order.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        w.write(long[0])
        w.write(b"x")
        w.write_buffer(b"".join(batch), [1, 3, 6])
        w.write(long[1])
        w.write_framed(framing.frame_many(batch), [1, 2, 3])
        w.write(long[2])
    assert list(tfr.iter_records(path)) == [long[0], b"x", *batch, long[1], *batch, long[2]]


def test_a_full_disk_under_long_records_keeps_whole_records(tmp_path: Path) -> None:
    """RLIMIT_FSIZE fails a write as a full disk would; the file is cut back to its last whole record."""
    path = tmp_path / "full.tfrecord"
    written, errno_, message = write_until_full(
        path, limit=1 << 20, options="", record="bytes([i]) * (40 << 10)", count=100
    )
    assert errno_ == errno.EFBIG and str(path) in message and "records before the failed write are kept" in message
    got = list(tfr.iter_records(path))
    assert 0 < len(got) <= written and got == [bytes([i]) * (40 << 10) for i in range(len(got))]
    assert path.stat().st_size == len(got) * ((40 << 10) + 16) <= 1 << 20


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_long_records_into_a_compressed_stream_with_seek_points_every_64_kib(tmp_path: Path, compression: str) -> None:
    records = _records(MIXES["long and tiny alternating"] + MIXES["64 KiB"][:5], seed=2)
    path = tmp_path / f"seek.tfrecord.{compression}"
    with tfr.TFRecordWriter(path, compression=compression, seek_every=1 << 16) as w:
        for record in records:
            w.write(record)
    assert list(tfr.iter_records(path)) == records
    with tfr.TFRecordFile(path) as f:
        assert [f[i] for i in (0, 31, len(records) - 1)] == [records[0], records[31], records[-1]]
