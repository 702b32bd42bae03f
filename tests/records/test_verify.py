# verify_file and the tolerant StreamScanner under it: real files damaged at known
# places (a payload byte, a length byte, a cut tail, a cut GZIP stream), with records
# large enough that the damage and the search for the next header cross the reader's
# buffer boundaries. The expected offsets come from walking the raw headers of the
# intact file, independently of the library.
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._records import record_starts
from tfrecord_lite._records.verify import verify_file
from tfrecord_lite._stream.damage import Damage
from tfrecord_lite._stream.scanner import CHUNK_SIZE, DecodedStream, StreamScanner

SIZES = [10, 300_000, 5, 700_000, 0, 64, 900_000, 450_000, 33, 1_200_000, 7, 20]


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, list[bytes]]:
    rng = np.random.default_rng(5)
    records = [rng.bytes(n) for n in SIZES]
    path = tmp_path_factory.mktemp("verify") / "intact.tfrecord"
    with tfr.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)
    data = path.read_bytes()
    assert len(data) > 3 * CHUNK_SIZE
    return data, records


def record_offsets(data: bytes) -> list[int]:
    """Where each record of intact `data` starts, and where the last one ends."""
    return [*record_starts(data), len(data)]


def damaged(data: bytes) -> bytes:
    offs = record_offsets(data)
    bad = bytearray(data)
    bad[offs[3] + 12 + 500] ^= 0xFF  # payload of record 3
    bad[offs[6] + 2] ^= 0x01  # length field of record 6 (900 kB: the next header is a buffer away)
    return bytes(bad[: offs[-2] + 9])  # the last record cut inside its header


def scan_all(path: Path) -> tuple[list[bytes], list[Damage]]:
    found: list[Damage] = []
    stream = DecodedStream(str(path), strict=False)
    try:
        records = [
            view[s : s + n].tobytes()
            for view, starts, lengths in StreamScanner(stream, on_damage=found.append).chunks()
            for s, n in zip(starts, lengths, strict=True)
        ]
    finally:
        stream.close()
    return records, found


def test_every_damage_is_reported_and_every_good_record_kept(intact, tmp_path: Path) -> None:
    data, records = intact
    offs = record_offsets(data)
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(damaged(data))
    got, found = scan_all(path)
    assert got == [r for i, r in enumerate(records) if i not in (3, 6, len(records) - 1)]
    assert [(d.offset, d.end) for d in found] == [(offs[3], offs[4]), (offs[6], offs[7]), (offs[-2], None)]
    assert found[0].reason == "payload CRC mismatch"
    assert found[1].reason.startswith("length CRC mismatch") and f"header is at offset {offs[7]}" in found[1].reason
    assert "truncated" in found[2].reason

    seen: list[int] = []
    report = verify_file(path, on_progress=seen.append)
    assert report.records == len(records) - 3 and not report.ok
    assert report.damage == found and report.bad == [(d.offset, d.reason) for d in found]
    assert sum(seen) == path.stat().st_size
    assert verify_file(tmp_path / "damaged.tfrecord").path == str(path)


def test_a_broken_gzip_stream_ends_the_scan(intact, tmp_path: Path) -> None:
    data, records = intact
    offs = record_offsets(data)
    packed = gzip.compress(damaged(data), compresslevel=1)
    path = tmp_path / "cut.tfrecord.gz"
    path.write_bytes(packed[: len(packed) * 3 // 4])  # the stream ends before its end marker
    got, found = scan_all(path)
    assert [(d.offset, d.end) for d in found[:2]] == [(offs[3], offs[4]), (offs[6], offs[7])]
    last = found[-1]
    assert last.end is None and "nothing after this point can be read" in last.reason
    assert got == [r for i, r in enumerate(records[: len(got) + 2]) if i not in (3, 6)]
    lost = last.offset - record_offsets(data)[len(got) + 2]  # decompressed bytes of the record it cut
    assert lost > 0 and f"{lost} decompressed bytes after the last complete record were lost" in last.reason
    report = verify_file(path)
    assert report.compression == "gzip" and report.records == len(got) and report.damage == found


def test_a_header_damaged_to_the_end_has_no_resume_point(intact, tmp_path: Path) -> None:
    data, _ = intact
    offs = record_offsets(data)
    bad = bytearray(data[: offs[10]])
    bad[offs[9] + 1] ^= 0x01  # the last record's header: nothing valid follows it
    path = tmp_path / "tail.tfrecord"
    path.write_bytes(bytes(bad))
    report = verify_file(path)
    assert report.records == 9
    assert [(d.offset, d.end) for d in report.damage] == [(offs[9], None)]
    assert report.damage[0].reason.endswith("no valid record header follows")


def test_without_on_damage_the_first_damage_is_raised_after_the_good_records(intact, tmp_path: Path) -> None:
    data, records = intact
    offs = record_offsets(data)
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(damaged(data))
    got: list[bytes] = []
    with pytest.raises(tfr.CorruptRecordError) as info:
        got.extend(tfr.iter_records(path))  # keeps what came before the error
    assert got == records[:3]
    assert info.value.offset == offs[3]
