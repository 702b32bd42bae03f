# Bombs: small files that claim or inflate to huge sizes. A 2 MB GZIP holding one valid 2 GiB record
# (2048 gzip members of 1 MiB of zeros, which gzip(1) reads as one stream) is counted and verified
# with flat memory (and a 1023 MiB one under a 512 MiB cap on the address space); readers that hand
# out records refuse it before holding any of it; a zlib bomb
# in a GZIP sidecar's seek-point export and a planted huge sidecar beside an object in a store are
# refused after reading no more than a genuine one can hold.
from __future__ import annotations

import os
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from crc32c import crc32c

import tfrecord_lite as tfr
from tests._records import write_records
from tfrecord_lite._errors import IndexFormatError
from tfrecord_lite._index.gzip_sidecar import read_gzip_index, window_points
from tfrecord_lite._records.verify import verify_file

MiB = 1 << 20
T = TypeVar("T")


def gzip_member(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def header(length: int) -> bytes:
    head = struct.pack("<Q", length)
    return head + struct.pack("<I", masked(crc32c(head)))


def zero_record_gzip(mib: int, *, crc_delta: int = 0, cut: bool = False) -> bytes:
    """A GZIP file of one record of `mib` MiB of zeros, a gzip member per MiB (its CRC off by
    `crc_delta`; with `cut`, its last MiB and footer missing)."""
    zeros, crc = bytes(MiB), 0
    for _ in range(mib):
        crc = crc32c(zeros, crc)
    member = gzip_member(zeros)
    footer = gzip_member(struct.pack("<I", (masked(crc) + crc_delta) & 0xFFFFFFFF))
    return gzip_member(header(mib * MiB)) + member * (mib - cut) + (b"" if cut else footer)


def peak_memory(run: Callable[[], T]) -> tuple[T, int]:
    tracemalloc.start()
    try:
        return run(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.tfrecord.gz"
    path.write_bytes(zero_record_gzip(2048))  # one valid record of 2 GiB, in about 2 MB
    assert path.stat().st_size < 3 * MiB
    return path


def test_a_2_gib_record_is_counted_and_verified_with_flat_memory(bomb: Path) -> None:
    count, peak = peak_memory(lambda: tfr.count_records(bomb, verify=True))
    assert count == 1 and peak < 32 * MiB, peak
    report, peak = peak_memory(lambda: verify_file(bomb))
    assert report.ok and report.records == 1 and peak < 32 * MiB, peak


def test_readers_refuse_a_record_above_the_limit_before_holding_it(bomb: Path) -> None:
    def read() -> Any:
        with pytest.raises(tfr.RecordTooLargeError) as info:
            list(tfr.iter_records(bomb))
        return info.value

    err, peak = peak_memory(read)
    assert peak < 32 * MiB, peak
    assert err.path == str(bomb) and err.offset == 0
    assert str(2 << 30) in str(err) and "max_record_bytes=1073741824" in str(err)


def test_random_access_refuses_it_too_unless_told_otherwise(bomb: Path, tmp_path: Path) -> None:
    def index() -> Any:
        with pytest.raises(tfr.RecordTooLargeError) as info:
            tfr.TFRecordFile(bomb)
        return info.value

    err, peak = peak_memory(index)
    assert peak < 32 * MiB and err.offset == 0 and "max_record_bytes" in str(err), peak
    records = [b"a" * 10, b"b" * (3 * MiB)]
    path = write_records(tmp_path / "long.tfrecord.gz", records, "gzip")
    with pytest.raises(tfr.RecordTooLargeError, match=f"claims {3 * MiB} bytes"):
        tfr.TFRecordFile(path, max_record_bytes=MiB)
    with tfr.TFRecordFile(path, max_record_bytes=4 * MiB) as f:
        assert list(f) == records and f[1] == records[1]


def test_the_limit_is_an_option_and_applies_to_every_record(tmp_path: Path) -> None:
    path = write_records(tmp_path / "a.tfrecord", [b"a" * 50, b"b" * 100, b"c" * 101, b"d"])
    assert list(tfr.iter_records(path, max_record_bytes=101)) == [b"a" * 50, b"b" * 100, b"c" * 101, b"d"]
    records = tfr.iter_records(path, max_record_bytes=100)
    assert [next(records), next(records)] == [b"a" * 50, b"b" * 100]
    with pytest.raises(tfr.RecordTooLargeError, match="claims 101 bytes") as info:
        next(records)
    assert info.value.offset == 2 * 16 + 150


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_long_records_stream_through_count_and_verify(tmp_path: Path, compression: str | None) -> None:
    records = [b"x" * 10, bytes(range(256)) * (12 * 1024), b"y" * 20, b"z" * (3 * MiB)]  # 3 MiB: past the buffer
    path = write_records(tmp_path / "long.tfrecord", records, compression)
    assert list(tfr.iter_records(path)) == records
    assert tfr.count_records(path, verify=True) == tfr.count_records(path) == len(records)
    report = verify_file(path)
    assert report.ok and report.records == len(records)


def test_damage_in_a_streamed_record_is_found(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tfrecord.gz"
    bad.write_bytes(
        zero_record_gzip(3, crc_delta=1) + gzip_member(header(2) + b"ok" + struct.pack("<I", masked(crc32c(b"ok"))))
    )
    report = verify_file(bad)
    assert report.records == 1 and report.bad == [(0, "payload CRC mismatch")]
    with pytest.raises(tfr.CorruptRecordError) as info:
        tfr.count_records(bad)
    assert info.value.offset == 0
    assert tfr.count_records(bad, verify=False) == 2  # only the length CRCs are checked

    cut = tmp_path / "cut.tfrecord.gz"
    cut.write_bytes(zero_record_gzip(3, cut=True))
    with pytest.raises(tfr.TruncatedRecordError, match=f"announces {3 * MiB} bytes"):
        tfr.count_records(cut)
    report = verify_file(cut)
    assert report.records == 0 and report.bad[0][0] == 0 and "truncated" in report.bad[0][1]


def test_a_zlib_bomb_in_a_sidecar_export_inflates_no_further_than_promised() -> None:
    head = struct.pack("<5sBBQQIII", b"GZIDX", 1, 0, 1000, 5000, 1 << 20, 1 << 15, 1)
    row = struct.pack("<QQBB", 10, 100, 0, 1)
    c = zlib.compressobj(9)
    blob = c.compress(head + row) + b"".join(c.compress(bytes(MiB)) for _ in range(64)) + c.flush()  # 64 MiB
    assert len(blob) < MiB

    def refuse() -> None:
        with pytest.raises(IndexFormatError, match="damaged"):
            window_points(blob, 1000)

    _, peak = peak_memory(refuse)
    assert peak < 4 * MiB, peak
    many = struct.pack("<5sBBQQIII", b"GZIDX", 1, 0, 1000, 5000, 1 << 20, 1 << 15, 1 << 30)
    with pytest.raises(IndexFormatError):  # more points than the file has bytes
        window_points(zlib.compress(many), 1000)


def test_a_planted_sidecar_export_bomb_is_not_inflated(tmp_path: Path) -> None:
    pytest.importorskip("indexed_gzip")
    path = write_records(tmp_path / "a.tfrecord.gz", [bytes([k]) * 5000 for k in range(200)], "gzip")
    with tfr.TFRecordFile(path) as f:
        expected = list(f)
    sidecar = Path(f"{path}.tfrlidx")
    index = read_gzip_index(str(sidecar))
    c = zlib.compressobj(9)
    index.blob = c.compress(
        struct.pack("<5sBBQQIII", b"GZIDX", 1, 0, 1, 1, 1, 1 << 15, 1) + struct.pack("<QQBB", 0, 0, 0, 1)
    )
    index.blob += b"".join(c.compress(bytes(MiB)) for _ in range(64)) + c.flush()
    sidecar.write_bytes(index.to_bytes())

    def read() -> list[bytes] | None:
        try:
            with tfr.TFRecordFile(path) as f:
                return [f[i] for i in range(len(f) - 1, -1, -1)][::-1]
        except IndexFormatError:
            return None  # refused: as good as read

    records, peak = peak_memory(read)
    assert records in (None, expected) and peak < 64 * MiB, peak


def test_a_planted_huge_sidecar_beside_an_object_is_read_no_further_than_an_index_can_be(
    http_server: Any, tmp_path: Path
) -> None:
    records = [b"r%d" % k for k in range(20)]
    data = write_records(tmp_path / "a.tfrecord", records).read_bytes()
    url = http_server.put("/planted.tfrecord", data)
    http_server.put("/planted.tfrecord.tfrlidx", b"0 16\n" * (4 * MiB // 5))  # a 4 MiB text index
    with tfr.TFRecordFile(url) as f:
        assert list(f) == records
    asked = [r for _, p, r in http_server.faults.gets("/planted.tfrecord.tfrlidx") if r]
    assert asked and all(int(r.rpartition("-")[2]) < 64 * 1024 for r in asked), asked

    compressed = write_records(tmp_path / "a.tfrecord.gz", records, "gzip").read_bytes()
    url = http_server.put("/planted.tfrecord.gz", compressed)
    http_server.put("/planted.tfrecord.gz.tfrlidx", bytes(8 * MiB))  # past 64 times the object, plus 1 MiB
    with tfr.TFRecordFile(url) as f:
        assert list(f) == records
    asked = [r for _, p, r in http_server.faults.gets("/planted.tfrecord.gz.tfrlidx") if r]
    assert asked and all(int(r.rpartition("-")[2]) <= 64 * len(compressed) + MiB for r in asked), asked


def test_a_record_just_under_the_limit_is_counted_and_verified_under_a_memory_cap(tmp_path: Path) -> None:
    # a GZIP record of 1023 MiB in a 1 MB file: each check streams it (its CRC computed over the
    # inflated pieces), never holding it, where the readers that hand it out hold it whole
    path = tmp_path / "long.tfrecord.gz"
    path.write_bytes(zero_record_gzip(1023))
    code = f"""
        import resource
        import tfrecord_lite as tfr
        from tfrecord_lite._records.verify import verify_file
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
        report = verify_file({str(path)!r})
        print(tfr.count_records({str(path)!r}), tfr.count_records({str(path)!r}, verify=False))
        print(report.ok, report.records)
        """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, env=os.environ
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["1", "1", "True", "1"]
