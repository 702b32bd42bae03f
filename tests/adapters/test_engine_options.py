# The reader options on the engines' readers (Ray, Dask, HF): each takes compression, verify,
# on_error, max_skipped, storage_options and max_record_bytes by the names and meanings of
# iter_records, handed to every task. The oracle of a skipped read: iter_records(on_error="skip").
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite as tfr
from tests._engine_data import SPEC, write_file
from tests._records import record_starts


def _damaged(folder: Path) -> tuple[list[Path], list[int]]:
    """Two files of 40 Examples (ids 0..39, 40..79), a payload byte of one record of each flipped;
    the files, and the ids that a skipping read leaves."""
    folder.mkdir(exist_ok=True)
    files = []
    for k, lost in enumerate((7, 53)):
        path = folder / f"part-{k}.tfrecord"
        write_file(path, range(40 * k, 40 * (k + 1)))
        data = bytearray(path.read_bytes())
        data[record_starts(bytes(data))[lost - 40 * k] + 14] ^= 0xFF
        path.write_bytes(bytes(data))
        files.append(path)
    return files, [i for i in range(80) if i not in (7, 53)]


def _long(folder: Path) -> Path:
    """A file whose third record is 10,000 bytes long."""
    path = folder / "long.tfrecord"
    records = [tfr.encode_example({"id": [i], "blob": [b"x" * (10_000 if i == 2 else 10)]}) for i in range(4)]
    with tfr.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    return path


def _ids(frame: Any) -> list[int]:
    return sorted(int(i) for i in frame)


@pytest.mark.dask
@pytest.mark.usefixtures("dask_client")
def test_dask_skips_counts_and_refuses_by_the_options(tmp_path: Path) -> None:
    from tfrecord_lite.dask import read_tfrecords

    files, kept = _damaged(tmp_path / "d")
    oracle = [r for p in files for r in tfr.iter_records(p, on_error="skip")]
    assert _ids(tfr.decode_example(r, SPEC)["id"] for r in oracle) == kept
    with pytest.raises(tfr.CorruptRecordError, match=r"part-[01]\.tfrecord"):  # partitions run in parallel
        read_tfrecords(files, features=SPEC).compute()
    skipped = read_tfrecords(files, features=SPEC, on_error="skip", npartitions=4)  # files read whole
    assert skipped.npartitions == 2 and _ids(skipped["id"].compute()) == kept
    assert _ids(read_tfrecords(files, features=SPEC, on_error="skip", max_skipped=1)["id"].compute()) == kept
    with pytest.raises(tfr.CorruptRecordError, match="max_skipped=0"):
        read_tfrecords(files, features=SPEC, on_error="skip", max_skipped=0).compute()
    with pytest.raises(ValueError, match="on_error must be"):
        read_tfrecords(files, features=SPEC, on_error="ignore")
    long = _long(tmp_path)
    with pytest.raises(tfr.RecordTooLargeError):
        read_tfrecords(long, max_record_bytes=1000).compute()
    assert len(read_tfrecords(long, max_record_bytes=20_000).compute()) == 4
    with pytest.raises(ValueError, match="is uncompressed, but compression='gzip' was given"):
        read_tfrecords(long, compression="gzip").compute()


@pytest.mark.hf
def test_hf_skips_and_refuses_by_the_options(tmp_path: Path) -> None:
    from tfrecord_lite.hf import to_hf_dataset

    files, kept = _damaged(tmp_path / "d")
    cache = tmp_path / "cache"
    with pytest.raises(tfr.CorruptRecordError, match=r"part-0\.tfrecord"):  # the reader's error, unwrapped
        to_hf_dataset(files, features=SPEC, cache_dir=cache)
    ds = to_hf_dataset(files, features=SPEC, cache_dir=cache, on_error="skip")  # another cache: other options
    assert _ids(ds["id"]) == kept
    stream = to_hf_dataset(files, features=SPEC, on_error="skip", max_skipped=1, streaming=True)
    assert _ids(row["id"] for row in stream) == kept
    assert _ids(to_hf_dataset(files, cache_dir=cache, on_error="skip")["id"]) == kept  # the spec inferred past it
    long = _long(tmp_path)
    with pytest.raises(tfr.RecordTooLargeError):
        list(to_hf_dataset(long, streaming=True, max_record_bytes=1000))
    assert len(to_hf_dataset(long, cache_dir=cache, max_record_bytes=20_000, verify=False)) == 4


@pytest.mark.ray
@pytest.mark.usefixtures("ray_cluster")
def test_ray_skips_counts_and_refuses_by_the_options(tmp_path: Path) -> None:
    from tfrecord_lite.ray import read_tfrecords, write_tfrecords

    files, kept = _damaged(tmp_path / "d")
    with pytest.raises(Exception, match=r"part-[01]\.tfrecord"):  # tasks run in parallel
        read_tfrecords(files, features=SPEC).materialize()
    skipped = read_tfrecords(files, features=SPEC, on_error="skip", max_skipped=1, override_num_blocks=4)
    assert _ids(row["id"] for row in skipped.iter_rows()) == kept
    long = _long(tmp_path)
    with pytest.raises(Exception, match=r"RecordTooLarge|longer than|max_record_bytes"):
        read_tfrecords(long, max_record_bytes=1000).materialize()
    with pytest.raises(ValueError, match="not both"):
        read_tfrecords(long, storage_options={}, filesystem=object())
    written = write_tfrecords(skipped, tmp_path / "out", compression="gzip", storage_options={})
    assert sorted(int(x) for p in written for x in _read_ids(p)) == kept


def _read_ids(path: str) -> list[int]:
    return [int(tfr.decode_example(r, {"id": SPEC["id"]})["id"]) for r in tfr.iter_records(path)]
