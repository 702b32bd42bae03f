# tfrecord_lite.ray on a real local Ray cluster (2 CPUs, the session fixture ray_cluster): rows equal
# decode_example's, one file split into 4 read tasks yields each record once, compressed files are
# one task each, CRCs are checked, and read → filter/map → write → read back through iter_records
# keeps every value, with TF-named shards and no temporary file left, even when a write task fails.
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._engine_data import SPEC, example, write_file

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("ray_cluster")]


def assert_rows_match(rows: list[dict[str, Any]], records: list[bytes]) -> None:
    """Each Ray row equals decode_example of the record with its id (rows in any order)."""
    assert len(rows) == len(records)
    by_id = {int(row["id"]): row for row in rows}
    assert sorted(by_id) == sorted(int(tfr.decode_example(r)["id"][0]) for r in records)
    for record in records:
        expected = tfr.decode_example(record, SPEC)
        row = by_id[int(expected["id"])]
        for key, value in expected.items():
            np.testing.assert_array_equal(np.asarray(row[key]), value)


def test_read_equals_decode_example(tmp_path: Path) -> None:
    from tfrecord_lite.ray import read_tfrecords

    records = write_file(tmp_path / "a.tfrecord", range(0, 150))
    records += write_file(tmp_path / "b.tfrecord.gz", range(150, 230), "gzip")
    ds = read_tfrecords([tmp_path / "a.tfrecord", tmp_path / "b.tfrecord.gz"], features=SPEC, batch_size=64)
    assert ds.count() == 230
    assert_rows_match(ds.take_all(), records)


def test_without_a_spec_blocks_are_tfx_bsl_columns(tmp_path: Path) -> None:
    import pyarrow as pa
    import ray

    from tfrecord_lite.arrow import decode_arrow
    from tfrecord_lite.ray import read_tfrecords

    records = write_file(tmp_path / "a.tfrecord", range(40))
    blocks = ray.get(read_tfrecords(tmp_path / "a.tfrecord").to_arrow_refs())
    assert pa.concat_tables(blocks).equals(pa.Table.from_batches([decode_arrow(records)]))


def test_one_file_split_in_four_read_tasks_yields_each_record_once(tmp_path: Path) -> None:
    from tfrecord_lite.ray import TFRecordDatasource, read_tfrecords

    path = tmp_path / "big.tfrecord"
    records = write_file(path, range(1000))
    tasks = TFRecordDatasource(path, features=SPEC, batch_size=100).get_read_tasks(4)
    assert len(tasks) == 4 and [t.metadata.num_rows for t in tasks] == [250] * 4
    assert Path(f"{path}.tfrlidx").is_file()  # one scan found the ranges and saved them for the workers
    ids = [i for task in tasks for block in task() for i in block.column("id").to_pylist()]
    assert ids == list(range(1000))  # each task its own range, in order
    ds = read_tfrecords(path, features=SPEC, batch_size=100, override_num_blocks=4)
    assert_rows_match(ds.take_all(), records)


def test_more_files_than_tasks_share_the_tasks_in_order(tmp_path: Path) -> None:
    from tfrecord_lite.ray import TFRecordDatasource, read_tfrecords

    records = []
    for shard in range(6):
        records += write_file(tmp_path / f"part-{shard}.tfrecord", range(shard * 50, (shard + 1) * 50))
    tasks = TFRecordDatasource(str(tmp_path), features=SPEC, batch_size=20).get_read_tasks(2)
    assert [len(t.metadata.input_files) for t in tasks] == [3, 3]
    ids = [i for task in tasks for block in task() for i in block.column("id").to_pylist()]
    assert ids == list(range(300))
    ds = read_tfrecords(tmp_path, features=SPEC, batch_size=20, override_num_blocks=2)
    assert_rows_match(ds.take_all(), records)


def test_compressed_files_are_one_task_each(tmp_path: Path) -> None:
    from tfrecord_lite.ray import TFRecordDatasource

    write_file(tmp_path / "a.tfrecord.gz", range(500), "gzip")
    write_file(tmp_path / "b.tfrecord.zlib", range(500, 900), "zlib")
    tasks = TFRecordDatasource(str(tmp_path / "*.tfrecord.*"), batch_size=10).get_read_tasks(8)
    assert [t.metadata.input_files for t in tasks] == [
        (str(tmp_path / "a.tfrecord.gz"),),
        (str(tmp_path / "b.tfrecord.zlib"),),
    ]
    assert sum(block.num_rows for t in tasks for block in t()) == 900


def test_include_paths(tmp_path: Path) -> None:
    from tfrecord_lite.ray import read_tfrecords

    write_file(tmp_path / "a.tfrecord", range(3))
    write_file(tmp_path / "b.tfrecord", range(3, 5))
    rows = read_tfrecords(str(tmp_path / "*.tfrecord"), features=SPEC, include_paths=True).take_all()
    assert sorted((int(r["id"]), os.path.basename(r["path"])) for r in rows) == [
        (0, "a.tfrecord"),
        (1, "a.tfrecord"),
        (2, "a.tfrecord"),
        (3, "b.tfrecord"),
        (4, "b.tfrecord"),
    ]


@pytest.mark.parametrize("tasks", [1, 4])  # streamed whole, or in record ranges through the index
def test_a_corrupt_record_fails_the_read_naming_file_and_offset(tmp_path: Path, tasks: int) -> None:
    from tfrecord_lite.ray import read_tfrecords

    path = tmp_path / "bad.tfrecord"
    write_file(path, range(200))
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF  # inside the last record's data
    path.write_bytes(bytes(data))
    with pytest.raises(tfr.CorruptRecordError, match=r"bad\.tfrecord.*offset|offset.*bad\.tfrecord"):
        read_tfrecords(path, batch_size=20, override_num_blocks=tasks).materialize()


def test_read_filter_map_write_read_back(tmp_path: Path) -> None:
    from tfrecord_lite.ray import read_tfrecords, write_tfrecords

    (tmp_path / "in").mkdir()
    write_file(tmp_path / "in" / "a.tfrecord", range(300))

    def double(batch: dict[str, Any]) -> dict[str, Any]:
        batch["xy"] = batch["xy"] * 2
        return batch

    ds = read_tfrecords(tmp_path / "in", features=SPEC, batch_size=50).filter(lambda r: r["id"] % 3 != 0)
    paths = write_tfrecords(ds.map_batches(double), tmp_path / "out", compression="gzip", num_rows_per_file=60)
    names = sorted(os.listdir(tmp_path / "out"))
    assert (
        names
        == [os.path.basename(p) for p in paths]
        == [f"part-{k:05d}-of-{len(paths):05d}.tfrecord.gz" for k in range(len(paths))]
    )
    counts = [sum(1 for _ in tfr.iter_records(p)) for p in paths]
    assert sum(counts) == 200 and max(counts) <= 60
    back = {}
    for path in paths:
        for record in tfr.iter_records(path):
            row = tfr.decode_example(record, SPEC)
            back[int(row["id"])] = row
    assert sorted(back) == [i for i in range(300) if i % 3 != 0]
    for i, row in back.items():
        want = tfr.decode_example(tfr.encode_example(example(i)), SPEC)
        np.testing.assert_array_equal(row["xy"], want["xy"] * 2)
        assert row["name"] == want["name"]
        np.testing.assert_array_equal(row["tags"], want["tags"])


def test_a_failed_write_leaves_no_shard_and_no_temporary_file(tmp_path: Path) -> None:
    from tfrecord_lite.ray import read_tfrecords, write_tfrecords

    write_file(tmp_path / "a.tfrecord", range(400))

    def fail_late(batch: dict[str, Any]) -> dict[str, Any]:
        if batch["id"].max() >= 350:
            raise RuntimeError("this map fails after the first rows were written")
        return batch

    ds = read_tfrecords(tmp_path / "a.tfrecord", features=SPEC, batch_size=50).map_batches(fail_late, batch_size=50)
    with pytest.raises(Exception, match="fails after the first rows"):
        write_tfrecords(ds, tmp_path / "out", ray_remote_args={"max_retries": 0})
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


def sink_that_dies_once(marker: Path, path: str | Path, **options: Any) -> Any:
    """The real TFRecordDatasink, whose first write task dies (its process exits) in the middle of
    its file or upload; Ray retries the task on another worker. `marker` tells that it died."""
    from tfrecord_lite.ray import TFRecordDatasink

    class DiesOnce(TFRecordDatasink):
        def _rows(self, blocks: Any) -> Any:
            for i, record in enumerate(super()._rows(blocks)):
                if i == 30 and not marker.exists():
                    marker.touch()
                    os._exit(1)
                yield record

    return DiesOnce(path, **options)


def test_a_write_task_retried_after_its_worker_died_leaves_only_complete_shards(tmp_path: Path) -> None:
    import ray

    marker = tmp_path / "died-once"
    sink = sink_that_dies_once(marker, tmp_path / "out")
    ray.data.range(400, override_num_blocks=4).write_datasink(sink)
    assert marker.exists()
    assert sorted(os.listdir(tmp_path / "out")) == sorted(os.path.basename(p) for p in sink.paths)
    ids = sorted(int(tfr.decode_example(r)["id"][0]) for p in sink.paths for r in tfr.iter_records(p))
    assert ids == list(range(400))


def test_write_refuses_a_folder_that_holds_shards(tmp_path: Path) -> None:
    import ray

    from tfrecord_lite.ray import write_tfrecords

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "part-00000-of-00001.tfrecord").write_bytes(b"")
    with pytest.raises(FileExistsError, match="already holds shards"):
        write_tfrecords(ray.data.range(3), tmp_path / "out")


# ----------------------------------------------------------------------------- object stores (moto's S3)


def objects(s3: Any, prefix: str) -> list[str]:
    """The objects under `prefix` as s3:// URLs (not the empty folder marker pyarrow's create_dir leaves)."""
    return sorted(f"s3://{key}" for key in s3.fs.find(f"{s3.bucket}/{prefix}") if not key.endswith("/"))


def upload(s3: Any, local: Path, key: str) -> str:
    s3.fs.put(str(local), f"{s3.bucket}/{key}")
    return f"{s3.bucket}/{key}"


def test_read_s3_urls_with_the_workers_credentials(s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tfrecord_lite.ray import read_tfrecords

    records = write_file(tmp_path / "a.tfrecord", range(120))
    records += write_file(tmp_path / "b.tfrecord.gz", range(120, 200), "gzip")
    upload(s3, tmp_path / "a.tfrecord", "data/a.tfrecord")
    upload(s3, tmp_path / "b.tfrecord.gz", "data/b.tfrecord.gz")
    env = s3.environment
    for key, value in env.items():
        monkeypatch.setenv(key, value)  # the driver lists the folder
    ds = read_tfrecords(
        f"{s3.bucket}/data/",
        features=SPEC,
        batch_size=32,
        runtime_env={"env_vars": env},  # a Ray read knob
    )
    assert_rows_match(ds.take_all(), records)


@pytest.mark.parametrize("kind", ["pyarrow", "fsspec"])
def test_read_through_a_filesystem_object(s3: Any, tmp_path: Path, kind: str) -> None:
    from tfrecord_lite.ray import read_tfrecords

    records = write_file(tmp_path / "a.tfrecord", range(50))
    records += write_file(tmp_path / "b.tfrecord.zlib", range(50, 90), "zlib")
    upload(s3, tmp_path / "a.tfrecord", "in/a.tfrecord")
    upload(s3, tmp_path / "b.tfrecord.zlib", "in/b.tfrecord.zlib")
    if kind == "pyarrow":
        fs = pyarrow_s3(s3)
        where = s3.bucket.removeprefix("s3://") + "/in"  # pyarrow's paths have no scheme
    else:
        fs, where = s3.filesystem(), f"{s3.bucket}/in/*.tfrecord*"
    ds = read_tfrecords(where, features=SPEC, batch_size=16, include_paths=True, filesystem=fs)
    rows = ds.take_all()
    assert_rows_match(rows, records)
    assert {os.path.basename(row["path"]) for row in rows} == {"a.tfrecord", "b.tfrecord.zlib"}


def test_write_s3_shards_appear_only_complete(s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tfrecord_lite.ray import read_tfrecords, write_tfrecords

    env = s3.environment
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    remote_args, no_retries = {"runtime_env": {"env_vars": env}}, {"max_retries": 0}
    records = write_file(tmp_path / "a.tfrecord", range(300))
    ds = read_tfrecords(tmp_path / "a.tfrecord", features=SPEC, batch_size=50)

    def fail_late(batch: dict[str, Any]) -> dict[str, Any]:
        if batch["id"].max() >= 250:
            raise RuntimeError("this map fails after the first shards were uploaded")
        return batch

    failing = ds.map_batches(fail_late, batch_size=50)
    with pytest.raises(Exception, match="fails after the first shards"):
        write_tfrecords(failing, f"{s3.bucket}/out", num_rows_per_file=40, ray_remote_args=remote_args | no_retries)
    assert objects(s3, "out") == []  # neither a shard nor a temporary object

    paths = write_tfrecords(ds, f"{s3.bucket}/out", num_rows_per_file=40, ray_remote_args=remote_args)
    assert objects(s3, "out") == sorted(paths) and len(paths) == 8
    assert all(p.endswith(f"-of-{len(paths):05d}.tfrecord") for p in paths)
    back = [r for p in paths for r in tfr.iter_records(p, storage_options=s3.storage_options)]
    assert sorted(back) == sorted(records)  # the framing, byte for byte


def test_an_interrupted_s3_write_task_deletes_its_uploads(s3: Any) -> None:
    """Ray cancels a running task by raising KeyboardInterrupt in it; leaving the `with` of a stream
    completes its upload, so the task itself must delete what it wrote."""
    import pyarrow as pa
    from ray.data._internal.execution.interfaces.task_context import TaskContext

    from tfrecord_lite.ray import TFRecordDatasink

    def blocks() -> Any:
        yield pa.table({"id": pa.array(range(100), pa.int64())})
        raise KeyboardInterrupt  # in the middle of the third file

    sink = TFRecordDatasink(f"{s3.bucket}/out", num_rows_per_file=40, filesystem=pyarrow_s3(s3))
    sink.on_write_start()
    with pytest.raises(KeyboardInterrupt):
        sink.write(blocks(), TaskContext(task_idx=3, op_name="Write"))
    assert objects(s3, "out") == []


def pyarrow_s3(s3: Any) -> Any:
    import pyarrow.fs as pafs

    return pafs.S3FileSystem(
        access_key=s3.storage_options["key"],
        secret_key=s3.storage_options["secret"],
        endpoint_override=s3.endpoint,
        region="us-east-1",
    )


def test_write_through_a_pyarrow_filesystem_object(s3: Any, tmp_path: Path) -> None:
    from tfrecord_lite.ray import read_tfrecords, write_tfrecords

    fs = pyarrow_s3(s3)
    records = write_file(tmp_path / "a.tfrecord", range(100))
    ds = read_tfrecords(tmp_path / "a.tfrecord", features=SPEC)
    paths = write_tfrecords(ds, f"{s3.bucket}/out", compression="gzip", filesystem=fs)
    back = [r for p in paths for r in tfr.iter_records(p, storage_options=s3.storage_options)]
    assert sorted(back) == sorted(records)
    assert_rows_match(read_tfrecords(f"{s3.bucket}/out", features=SPEC, filesystem=fs).take_all(), records)


def test_an_s3_write_task_that_dies_mid_upload_leaves_only_complete_shards(s3: Any, tmp_path: Path) -> None:
    import ray

    marker = tmp_path / "died-once"
    sink = sink_that_dies_once(marker, f"{s3.bucket}/out", filesystem=pyarrow_s3(s3))
    ray.data.range(400, override_num_blocks=4).write_datasink(sink)
    assert marker.exists()
    assert objects(s3, "out") == sorted(sink.paths)  # no torn or temporary object
    ids = [tfr.decode_example(r)["id"][0] for p in sink.paths for r in tfr.iter_records(p, storage_options=s3.fs)]
    assert sorted(int(i) for i in ids) == list(range(400))
