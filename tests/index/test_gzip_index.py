"""Random access into GZIP / ZLIB files: TFRecordFile on files compressed every way TensorFlow, gzip
tools and our writer make them, against the plain reading of the same records (iter_records), with
indexed_gzip's windows and with the stdlib's in-memory points; sidecars, staleness, damage, pickling,
ShardedRecords and the CLI. TensorFlow's side (its files, and it reading seek_every files) is in
tests/end_to_end/test_tf_compat.py."""

from __future__ import annotations

import itertools
import os
import pickle
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from crc32c import crc32c

import tfrecord_lite as tfr
from tfrecord_lite._index import gzip_index as _gzip_index
from tfrecord_lite._index import gzip_sidecar as _gzip_sidecar
from tfrecord_lite._wire.framing import frame_many

RNG = np.random.default_rng(140)
# compressible payloads of mixed sizes, some longer than a mark's 256 KiB span, some empty
SIZES = [*RNG.integers(0, 1200, 2500).tolist(), 300_000, 0, 400_000, *RNG.integers(0, 100, 500).tolist()]
RECORDS = [RNG.integers(0, 20, n, dtype=np.uint8).tobytes() for n in SIZES]
SPACING = 128 << 10  # small, so that these 2 MiB hold many points


def members(data: bytes, parts: int) -> bytes:
    cuts = np.linspace(0, len(data), parts + 1).astype(int).tolist()
    cuts[1] += 3  # a member boundary inside a record header
    return b"".join(zlib.compress(data[a:b], wbits=31) for a, b in itertools.pairwise(cuts))


LAYOUTS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda d: zlib.compress(d, 6, 31),  # one stream, no flush points: what TensorFlow writes
    "zlib": lambda d: zlib.compress(d, 6),
    "gzip-members": lambda d: members(d, 5),
}


@pytest.fixture(params=["indexed_gzip", "stdlib"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(_gzip_index, "SPACING", SPACING)
    if request.param == "stdlib":
        monkeypatch.setattr(_gzip_index, "_indexed_gzip", lambda: None)
    else:
        pytest.importorskip("indexed_gzip")
    return str(request.param)


@pytest.fixture(params=sorted(LAYOUTS))
def compressed(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / f"data.tfrecord.{request.param}"
    path.write_bytes(LAYOUTS[request.param](frame_many(RECORDS)))
    return path


def check_reads(f: tfr.TFRecordFile) -> None:
    n = len(RECORDS)
    assert len(f) == n
    for i in [0, 1, n - 1, -1, -n, 2500, 2501, 2502, 2503, *RNG.integers(0, n, 20).tolist()]:
        assert f[i] == RECORDS[i], i
    assert f[2490:2510] == RECORDS[2490:2510]
    assert f[::397] == RECORDS[::397]
    picks = RNG.integers(-n, n, 40)
    assert f[picks] == [RECORDS[i] for i in picks]
    mask = RNG.random(n) < 0.01
    assert f[mask] == [r for r, m in zip(RECORDS, mask, strict=True) if m]
    assert f.offset(2501) == sum(len(r) + 16 for r in RECORDS[:2501])
    with pytest.raises(IndexError):
        f[n]


def test_records_match_the_plain_reading(compressed: Path, engine: str) -> None:
    assert list(tfr.iter_records(compressed)) == RECORDS
    with tfr.TFRecordFile(compressed) as f:
        assert type(f) is tfr.TFRecordFile and f.compression == compressed.suffix[1:].split("-")[0]
        check_reads(f)
        assert list(f) == RECORDS
        assert f.index_path == str(compressed) + ".tfrlidx"


@pytest.mark.parametrize("inflater", ["zlib", "isal"])
def test_window_points_mid_byte_and_before_stored_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inflater: str
) -> None:
    """indexed_gzip's points mostly fall inside a byte, and incompressible records make stored
    blocks, which are byte-aligned in the file: each inflater we read with must start there."""
    pytest.importorskip("indexed_gzip")
    pytest.importorskip({"zlib": "zlib", "isal": "isal"}[inflater])
    monkeypatch.setattr(_gzip_index, "SPACING", 64 << 10)
    monkeypatch.setenv("TFRECORD_LITE_INFLATE", inflater)
    rng = np.random.default_rng(7)
    records = [rng.bytes(n) if k % 3 else bytes(n) for k, n in enumerate(rng.integers(0, 40_000, 120).tolist())]
    path = tmp_path / "mixed.tfrecord.gz"
    path.write_bytes(zlib.compress(frame_many(records), 6, 31))
    with tfr.TFRecordFile(path) as f:
        index = _gzip_sidecar.read_gzip_index(str(path) + ".tfrlidx")
        points = _gzip_sidecar.window_points(index.blob, index.file_size)
        mid_byte = {p.bits for p in points if p.window is not None} - {0}
        assert {b % 2 for b in mid_byte} == {0, 1} and len(mid_byte) >= 5  # primers of both kinds
        order = rng.permutation(len(records)).tolist()
        assert [f[i] for i in order] == [records[i] for i in order]


def test_a_sidecar_with_windows_is_read_without_indexed_gzip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("indexed_gzip")
    monkeypatch.setattr(_gzip_index, "SPACING", SPACING)
    path = tmp_path / "data.tfrecord.gz"
    path.write_bytes(LAYOUTS["gzip-members"](frame_many(RECORDS)))
    tfr.write_index(path)
    monkeypatch.setattr(_gzip_index, "_indexed_gzip", lambda: None)
    with tfr.TFRecordFile(path) as f:
        check_reads(f)


def test_the_sidecar_reopens_without_a_pass_and_stays_small(compressed: Path, engine: str) -> None:
    tfr.TFRecordFile(compressed).close()
    sidecar = Path(str(compressed) + ".tfrlidx")
    stamp = sidecar.stat().st_mtime_ns
    with tfr.TFRecordFile(compressed) as f:
        check_reads(f)
    assert sidecar.stat().st_mtime_ns == stamp  # read, not rebuilt


def test_pickled_files_reopen_in_the_child(compressed: Path, engine: str) -> None:
    with tfr.TFRecordFile(compressed) as f:
        clone = pickle.loads(pickle.dumps(f))
    with clone:
        assert clone[2502] == RECORDS[2502] and len(clone) == len(RECORDS)


def test_in_memory_index_writes_nothing(compressed: Path, engine: str) -> None:
    with tfr.TFRecordFile(compressed, index=False) as f:
        assert f.index_path is None
        assert f[-2] == RECORDS[-2]
    assert not os.path.exists(str(compressed) + ".tfrlidx")


def test_a_changed_file_is_found_stale(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "x.gz"
    path.write_bytes(zlib.compress(frame_many(RECORDS[:100]), wbits=31))
    tfr.TFRecordFile(path).close()
    path.write_bytes(zlib.compress(frame_many(RECORDS[50:300]), wbits=31))
    with pytest.raises(tfr.StaleIndexError, match="out of date"):
        tfr.TFRecordFile(path, on_stale="raise")
    with tfr.TFRecordFile(path) as f:  # rebuilt
        assert len(f) == 250 and f[0] == RECORDS[50]


def test_a_damaged_sidecar_is_rebuilt(compressed: Path, engine: str) -> None:
    tfr.TFRecordFile(compressed).close()
    Path(str(compressed) + ".tfrlidx").write_bytes(b"TFRLGZX\0" + b"\0" * 80)
    with tfr.TFRecordFile(compressed) as f:
        assert f[7] == RECORDS[7]


@pytest.mark.parametrize("damage", ["first mark", "point wbits", "point offset", "windows", "point count"])
def test_a_sidecar_damaged_past_its_header_is_an_index_error(compressed: Path, engine: str, damage: str) -> None:
    # the header has a CRC, the tables after it do not: found by fuzzer/fuzz.py --target index, where a
    # damaged seek point leaked ValueError / OverflowError from zlib and a damaged export zlib.error
    sidecar = Path(str(compressed) + ".tfrlidx")
    tfr.TFRecordFile(compressed).close()
    data = bytearray(sidecar.read_bytes())
    n_marks, _, blob_size = np.frombuffer(data, "<u4", 3, 44).tolist()
    points = 68 + 16 * n_marks
    if damage == "first mark":  # record 3, not 0: record 0 was looked for after the last mark
        data[68] = 3
    elif damage == "point wbits":
        data[points + 16] ^= 0x10
    elif damage == "point offset":
        data[points + 7] = 0x7F
    elif not blob_size:
        pytest.skip("no indexed_gzip export in this sidecar")
    elif damage == "windows":
        data[-10] ^= 0xFF
    else:  # a point count that the export's bytes cannot hold, in an export that inflates
        export = bytearray(zlib.decompress(data[len(data) - blob_size :]))
        export[_gzip_sidecar._GZIDX.size - 4 : _gzip_sidecar._GZIDX.size] = (1 << 30).to_bytes(4, "little")
        blob = zlib.compress(bytes(export))
        data = data[: len(data) - blob_size] + blob
        data[52:56] = len(blob).to_bytes(4, "little")
        data[64:68] = crc32c(bytes(data[:64])).to_bytes(4, "little")
    sidecar.write_bytes(bytes(data))
    with pytest.raises(tfr.TFRecordError, match="index"), tfr.TFRecordFile(compressed, index=str(sidecar)) as f:
        f[0], f[len(f) - 1]


def test_damage_inside_the_stream_is_a_record_error(tmp_path: Path, engine: str) -> None:
    data = bytearray(frame_many(RECORDS[:500]))
    data[len(data) // 2] ^= 0xFF  # a payload byte: its CRC fails when the file is indexed
    path = tmp_path / "bad.gz"
    path.write_bytes(zlib.compress(bytes(data), wbits=31))
    with pytest.raises(tfr.CorruptRecordError) as info:
        tfr.TFRecordFile(path)
    assert info.value.path == str(path) and info.value.offset is not None


def test_a_truncated_file_is_a_truncation_error(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "cut.gz"
    path.write_bytes(zlib.compress(frame_many(RECORDS[:500]), wbits=31)[:-3000])
    with pytest.raises(tfr.TruncatedRecordError):
        tfr.TFRecordFile(path)


def test_empty_and_tiny_files(tmp_path: Path, engine: str) -> None:
    for records in ([], [b""], [b"one"]):
        path = tmp_path / f"{len(records)}.gz"
        path.write_bytes(zlib.compress(frame_many(records), wbits=31))
        with tfr.TFRecordFile(path) as f:
            assert len(f) == len(records) and f[:] == records


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
@pytest.mark.parametrize("fast", [False, True])
def test_writer_seek_points_need_no_windows(tmp_path: Path, compression: str, fast: bool) -> None:
    path = tmp_path / "seek.tfrecord.gz"
    with tfr.TFRecordWriter(path, compression=compression, seek_every="256k", fast=fast) as writer:
        for record in RECORDS:
            writer.write(record)
    assert list(tfr.iter_records(path)) == RECORDS
    index = _gzip_sidecar.read_gzip_index(str(path) + ".tfrlidx")
    assert not index.blob and len(index.points) > 3 and not _gzip_index.needs_pass(index)
    with tfr.TFRecordFile(path) as f:
        check_reads(f)


def test_seek_every_needs_a_compressed_local_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="seek_every"):
        tfr.TFRecordWriter(tmp_path / "x", seek_every="4M")
    with pytest.raises(ValueError, match="size"):
        tfr.TFRecordWriter(tmp_path / "x", compression="gzip", seek_every="four")


def test_write_index_and_sharded_records(tmp_path: Path, engine: str) -> None:
    paths = []
    for k in range(3):
        path = tmp_path / f"part-{k}.tfrecord.gz"
        path.write_bytes(zlib.compress(frame_many(RECORDS[k * 1000 : (k + 1) * 1000]), wbits=31))
        paths.append(path)
    assert tfr.write_index(paths[0]) == str(paths[0]) + ".tfrlidx"
    with tfr.ShardedRecords(sorted(str(p) for p in paths)) as shards:
        assert len(shards) == 3000
        assert shards[1500] == RECORDS[1500] and shards[[2999, 0]] == [RECORDS[2999], RECORDS[0]]


def test_cli_index_builds_the_sidecar(tmp_path: Path, engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tfrecord_lite.cli import main

    path = tmp_path / "c.tfrecord.gz"
    path.write_bytes(zlib.compress(frame_many(RECORDS[:40]), wbits=31))
    assert main(["index", str(path)]) == 0
    assert "40 records" in capsys.readouterr().out
    assert os.path.exists(str(path) + ".tfrlidx")
