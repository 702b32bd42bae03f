# Where a compressed file ends: one rule in every reader. Concatenated GZIP members (ZLIB streams)
# are one stream, as gzip(1) reads them; anything else after the end of one (plain records, zeros,
# garbage) is an error naming the file; a file cut anywhere (its trailer too: CRC32 + ISIZE) is an
# error, never a shorter dataset. Readers: streaming, count, verify, random access (with and
# without indexed_gzip, which builds the seek points), the `index` command, each inflater.
from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tfrecord_lite._index import gzip_index
from tfrecord_lite._records.verify import verify_file
from tfrecord_lite._wire.framing import frame_many

RECORDS = [bytes([k % 251]) * (300 + 41 * k) for k in range(100)]
WBITS = {"gzip": 31, "zlib": 15}


def compressed(kind: str, records: list[bytes]) -> bytes:
    return zlib.compress(frame_many(records), 6, WBITS[kind])


def readers(path: Path) -> dict[str, Callable[[], int]]:
    def random_access() -> int:
        with tfr.TFRecordFile(path) as f:
            return len(f)

    def verified() -> int:
        report = verify_file(path)
        if not report.ok:
            raise tfr.TFRecordError(f"damage reported: {report.bad}", path=report.path)
        return report.records

    return {
        "iter_records": lambda: len(list(tfr.iter_records(path))),
        "count": lambda: tfr.count_records(path),
        "count verify": lambda: tfr.count_records(path, verify=True),
        "TFRecordFile": random_access,
        "verify": verified,
    }


def outcomes(path: Path) -> dict[str, int | str]:
    found: dict[str, int | str] = {}
    for name, read in readers(path).items():
        try:
            found[name] = read()
        except tfr.TFRecordError as err:
            found[name] = "error" if str(path) in str(err) else f"an error without the file's name: {err}"
        for sidecar in path.parent.glob("*.tfrlidx"):
            sidecar.unlink()
    return found


@pytest.fixture(params=["stdlib", "indexed_gzip"])
def seek_points(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Who makes the seek points of random access, a point every 16 KiB of the stream."""
    monkeypatch.setattr(gzip_index, "SPACING", 16 << 10)
    if request.param == "indexed_gzip":
        pytest.importorskip("indexed_gzip")
    else:
        monkeypatch.setattr(gzip_index, "_indexed_gzip", lambda: None)
    return str(request.param)


@pytest.mark.parametrize("kind", ["gzip", "zlib"])
def test_concatenated_members_are_one_stream_in_every_reader(tmp_path: Path, kind: str, seek_points: str) -> None:
    path = tmp_path / f"two.tfrecord.{kind}"
    path.write_bytes(compressed(kind, RECORDS[:50]) + compressed(kind, RECORDS[50:]))
    assert set(outcomes(path).values()) == {100}
    with tfr.TFRecordFile(path) as f:
        assert f.index_path is not None and len(f) == 100
    with tfr.TFRecordFile(path) as f:  # from the sidecar: its points, across the members
        assert [f[i] for i in range(99, -1, -1)] == RECORDS[::-1] and list(f) == RECORDS


@pytest.mark.parametrize("tail", ["plain records", "zeros", "garbage", "one byte"])
@pytest.mark.parametrize("kind", ["gzip", "zlib"])
def test_anything_else_after_the_end_is_an_error_in_every_reader(
    tmp_path: Path, kind: str, tail: str, seek_points: str
) -> None:
    after = {
        "plain records": frame_many(RECORDS[:3]),
        "zeros": bytes(64),
        "garbage": b"garbage!" * 8,
        "one byte": b"\x1f",
    }
    path = tmp_path / f"tail.tfrecord.{kind}"
    path.write_bytes(compressed(kind, RECORDS) + after[tail])
    assert set(outcomes(path).values()) == {"error"}, outcomes(path)
    end = len(compressed(kind, RECORDS))
    with pytest.raises(tfr.CorruptRecordError, match=f"ends at compressed offset {end}, and what follows is not"):
        list(tfr.iter_records(path))
    with pytest.raises(tfr.CorruptRecordError, match=f"ends at compressed offset {end}, and what follows is not"):
        tfr.TFRecordFile(path)


@pytest.mark.parametrize("inflater", ["zlib", "isal", "zlib-ng"])
def test_a_cut_file_is_never_a_shorter_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inflater: str, seek_points: str
) -> None:
    pytest.importorskip({"zlib": "zlib", "isal": "isal", "zlib-ng": "zlib_ng"}[inflater])
    monkeypatch.setenv("TFRECORD_LITE_INFLATE", inflater)
    data = compressed("gzip", RECORDS)
    cuts = sorted({*range(len(data) - 12, len(data)), *range(10, len(data), len(data) // 25)})  # the trailer too
    path = tmp_path / "cut.tfrecord.gz"
    silent = []
    for cut in cuts:
        path.write_bytes(data[:cut])
        found = outcomes(path)
        if set(found.values()) != {"error"}:
            silent.append((cut, found))
    assert not silent


def test_the_index_command_refuses_a_cut_file(tmp_path: Path) -> None:
    data = compressed("gzip", RECORDS)
    path = tmp_path / "cut.tfrecord.gz"
    path.write_bytes(data[:-3])  # inside the trailer: every record is there, the ISIZE is not
    proc = run_cli("index", str(path))
    assert proc.returncode != 0 and str(path) in proc.stderr, proc
    assert not os.path.exists(f"{path}.tfrlidx")
