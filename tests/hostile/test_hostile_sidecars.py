# Planted GZIP sidecars: an indexed_gzip export that claims no points before a zlib bomb (once
# inflated whole: decompress(tail, 0) means unlimited), one that claims more windows than the file
# can need, a record table of a single mark (once IndexError / KeyError on reads), and random
# damage anywhere in a sidecar: each is rebuilt or an IndexFormatError, never a crash.
from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
import textwrap
import warnings
import zlib
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tests._records import write_records
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._index.gzip_index import build_gzip_index
from tfrecord_lite._index.gzip_sidecar import read_gzip_index

MiB = 1 << 20


@pytest.fixture
def gz(tmp_path: Path) -> tuple[Path, list[bytes]]:
    records = [bytes([k]) * 5000 for k in range(200)]
    return write_records(tmp_path / "a.tfrecord.gz", records, "gzip"), records


def planted(path: Path, blob: bytes) -> None:
    index = build_gzip_index(str(path), "gzip")
    index.blob = blob
    Path(f"{path}.tfrlidx").write_bytes(index.to_bytes())


def read_capped(path: Path, limit: int = 700 << 20) -> subprocess.CompletedProcess[str]:
    code = f"""
        import resource, warnings
        import tfrecord_lite as tfr
        from tfrecord_lite._errors import IndexFormatError
        warnings.simplefilter("ignore")
        resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
        try:
            with tfr.TFRecordFile({str(path)!r}) as f:
                print(len(f), f[0][:1].hex())
        except IndexFormatError as err:
            print("refused", err)
        """
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, env=os.environ
    )


def bomb(head: bytes, size: int) -> bytes:
    c = zlib.compressobj(9)
    return c.compress(head) + b"".join(c.compress(bytes(MiB)) for _ in range(size // MiB)) + c.flush()


def test_an_export_claiming_no_points_is_not_inflated_whole(gz):
    path, _ = gz
    size = os.path.getsize(path)
    planted(path, bomb(struct.pack("<5sBBQQIII", b"GZIDX", 1, 0, size, 10**6, 1 << 20, 1 << 15, 0), 1024 * MiB))
    result = read_capped(path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[0] in ("200", "refused")


def test_an_export_claiming_more_windows_than_the_file_needs_is_refused(gz):
    path, _ = gz
    size = os.path.getsize(path)
    n = 49_152
    head = struct.pack("<5sBBQQIII", b"GZIDX", 1, 0, size, 1 << 40, 1 << 15, 1 << 15, n)
    rows = b"".join(struct.pack("<QQBB", min(k, size), k << 15, 0, 1) for k in range(n))
    planted(path, bomb(head + rows, n << 15))
    result = read_capped(path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[0] in ("200", "refused")


def test_a_single_mark_record_table_is_refused_and_rebuilt(gz):
    path, records = gz
    with tfr.TFRecordFile(path):
        pass
    sidecar = Path(f"{path}.tfrlidx")
    index = read_gzip_index(str(sidecar))
    index.mark_records, index.mark_offsets = index.mark_records[-1:], index.mark_offsets[-1:]
    sidecar.write_bytes(index.to_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tfr.TFRecordFile(path) as f:
            assert f[3] == records[3]
            assert f[0:10] == records[:10]


def test_random_damage_in_a_sidecar_is_rebuilt_or_refused(gz):
    path, records = gz
    with tfr.TFRecordFile(path):
        pass
    sidecar = Path(f"{path}.tfrlidx")
    genuine = sidecar.read_bytes()
    rng = random.Random(43)
    for _ in range(300):
        data = bytearray(genuine)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            data[at] = rng.randrange(256)
        sidecar.write_bytes(bytes(data))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with tfr.TFRecordFile(path) as f:
                    assert [f[i] for i in (0, 3, 199)] == [records[0], records[3], records[199]]
                    assert f[0:10] == records[:10]
        except TFRecordError:
            pass  # refused with the library's error, naming the sidecar
