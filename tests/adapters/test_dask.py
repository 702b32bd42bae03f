# tfrecord_lite.dask on a real distributed.LocalCluster (2 worker processes, the session fixture
# dask_client): values equal decode_example's, one partition per file or per record range, meta
# from the spec or from the first file, and an error naming the file for a key the meta lacks.
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._engine_data import SPEC, example, write_file

pytestmark = [pytest.mark.dask, pytest.mark.usefixtures("dask_client")]


def test_partitions_per_file_and_values_equal_decode_example(tmp_path: Path) -> None:
    from tfrecord_lite.dask import read_tfrecords

    records = write_file(tmp_path / "a.tfrecord", range(100))
    records += write_file(tmp_path / "b.tfrecord.gz", range(100, 130), "gzip")
    records += write_file(tmp_path / "c.tfrecord", range(130, 131))
    df = read_tfrecords([tmp_path / "a.tfrecord", tmp_path / "b.tfrecord.gz", tmp_path / "c.tfrecord"], features=SPEC)
    assert df.npartitions == 3
    assert list(df.columns) == list(SPEC) and str(df.dtypes["id"]) == "int64"
    frame = df.compute()
    assert list(frame["id"]) == list(range(131))
    for record, (_, row) in zip(records, frame.iterrows(), strict=True):
        for key, value in tfr.decode_example(record, SPEC).items():
            np.testing.assert_array_equal(np.asarray(row[key]), value)


def test_one_file_in_four_record_ranges_yields_each_record_once(tmp_path: Path) -> None:
    from tfrecord_lite.dask import read_tfrecords

    write_file(tmp_path / "big.tfrecord", range(1000))
    df = read_tfrecords(tmp_path / "big.tfrecord", features=SPEC, batch_size=100, npartitions=4)
    assert df.npartitions == 4
    assert df.map_partitions(len).compute().tolist() == [250] * 4
    evens = df[df["id"] % 2 == 0]["id"].compute()
    assert evens.tolist() == list(range(0, 1000, 2))


def test_fewer_partitions_than_files_take_runs_of_neighbouring_files(tmp_path: Path) -> None:
    from tfrecord_lite.dask import read_tfrecords

    for shard in range(6):
        write_file(tmp_path / f"part-{shard}.tfrecord", range(shard * 50, (shard + 1) * 50))
    df = read_tfrecords(tmp_path, features=SPEC, npartitions=2)
    assert df.npartitions == 2
    assert df.map_partitions(len).compute().tolist() == [150, 150]
    assert df["id"].compute().tolist() == list(range(300))


def test_without_a_spec_columns_come_from_the_first_file(tmp_path: Path) -> None:
    from tfrecord_lite.arrow import decode_arrow
    from tfrecord_lite.dask import read_tfrecords

    first = write_file(tmp_path / "a.tfrecord", range(10))
    write_file(tmp_path / "b.tfrecord", range(10, 20), make=lambda i: {"id": [i]})  # the other keys missing
    df = read_tfrecords(str(tmp_path / "*.tfrecord"))
    assert list(df.columns) == decode_arrow(first).schema.names
    frame = df.compute()
    assert [int(v[0]) for v in frame["id"]] == list(range(20))
    assert frame["name"].isna().tolist() == [False] * 10 + [True] * 10


def test_a_key_the_first_file_lacks_is_an_error_naming_the_file(tmp_path: Path) -> None:
    from tfrecord_lite.dask import read_tfrecords

    write_file(tmp_path / "a.tfrecord", range(5))
    write_file(tmp_path / "b.tfrecord", range(5, 8), make=lambda i: {**example(i), "extra": [1]})
    df = read_tfrecords(str(tmp_path / "*.tfrecord"))
    with pytest.raises(tfr.FeatureError, match=r"'extra'.*b\.tfrecord"):
        df.compute()


def test_read_s3_with_storage_options(s3: Any, tmp_path: Path) -> None:
    from tfrecord_lite.dask import read_tfrecords

    records = write_file(tmp_path / "a.tfrecord", range(60))
    records += write_file(tmp_path / "b.tfrecord.gz", range(60, 100), "gzip")
    s3.fs.put(str(tmp_path / "a.tfrecord"), f"{s3.bucket}/in/a.tfrecord")
    s3.fs.put(str(tmp_path / "b.tfrecord.gz"), f"{s3.bucket}/in/b.tfrecord.gz")
    for options in (s3.storage_options, s3.filesystem()):  # fsspec's options, or a filesystem object
        df = read_tfrecords(f"{s3.bucket}/in/", features=SPEC, storage_options=options)
        assert df.npartitions == 2
        frame = df.compute()
        assert list(frame["id"]) == list(range(100))
        for record, (_, row) in zip(records, frame.iterrows(), strict=True):
            for key, value in tfr.decode_example(record, SPEC).items():
                np.testing.assert_array_equal(np.asarray(row[key]), value)
