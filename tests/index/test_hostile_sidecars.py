# Crafted binary sidecars: a fresh-looking header (right size, mtime and edge check) over offsets
# that leave records out or cut one in two. Such a sidecar is rebuilt, never trusted; records keep
# their positions. The sidecars are written here from a real one's fields.
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr
from tfrecord_lite._index.record_index import RecordIndex, read_record_index, record_index_bytes


def shard(tmp_path: Path) -> tuple[str, list[bytes]]:
    records = [b"record %02d" % i + b"." * (i % 3) for i in range(10)]
    path = tmp_path / "shard.tfrecord"
    with tfr.TFRecordWriter(str(path)) as w:
        for r in records:
            w.write(r)
    tfr.write_index(str(path))
    return str(path), records


def forge(path: str, offsets: list[int]) -> None:
    """Replace the sidecar of `path` by one holding `offsets`, its header otherwise the real one's."""
    real = read_record_index(path + ".tfrlidx")
    fake = RecordIndex(np.array(offsets, np.uint64), real.file_size, real.mtime_ns, real.check, real.verified)
    data = record_index_bytes(fake)
    real.close()
    Path(path + ".tfrlidx").write_bytes(data)


def real_offsets(path: str) -> list[int]:
    index = read_record_index(path + ".tfrlidx")
    try:
        return [int(x) for x in index.offsets]
    finally:
        index.close()


def crafted(offsets: list[int]) -> dict[str, list[int]]:
    middle = (offsets[3] + offsets[4]) // 2
    return {
        "records left out": offsets[:4] + offsets[7:],
        "a record cut in two": offsets[:4] + [middle] + offsets[4:],
        "offsets backwards": offsets[:4] + [offsets[5], offsets[4]] + offsets[6:],
    }


@pytest.mark.parametrize("how", ["records left out", "a record cut in two", "offsets backwards"])
def test_a_crafted_sidecar_is_rebuilt_not_trusted(tmp_path: Path, how: str) -> None:
    path, records = shard(tmp_path)
    offsets = real_offsets(path)
    forge(path, crafted(offsets)[how])
    with tfr.TFRecordFile(path) as f:
        assert len(f) == len(records)
        assert f[3:8] == records[3:8]
    assert real_offsets(path) == offsets  # the sidecar was written again, right
    assert tfr.count_records(path, verify=False) == len(records)


def test_a_crafted_sidecar_is_stale_to_a_reader_that_will_not_rebuild(tmp_path: Path) -> None:
    path, _ = shard(tmp_path)
    forge(path, crafted(real_offsets(path))["records left out"])
    with pytest.raises(tfr.StaleIndexError, match="do not follow the file's records"):
        tfr.TFRecordFile(path, on_stale="raise")
    assert tfr.count_records(path, verify=False) == 10  # counted by a scan, not from the sidecar
