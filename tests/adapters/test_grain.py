# Grain's random-access data source protocol (__len__, __getitem__, picklable, safe to share between
# threads) on TFRecordFile and ShardedRecords, exercised by the real `grain` library: a MapDataset
# pipeline in this process, and a DataLoader whose 2 worker processes each receive the source pickled.
from __future__ import annotations

from pathlib import Path

import pytest

import tfrecord_lite as tfr

pytestmark = pytest.mark.grain


def write_shards(folder: Path, counts: list[int]) -> list[dict[str, list[int]]]:
    """Shards of Examples {"id": [i]} with consecutive ids; returns every Example, in order."""
    examples = [{"id": [i]} for i in range(sum(counts))]
    start = 0
    for number, n in enumerate(counts):
        path = folder / f"part-{number:05d}-of-{len(counts):05d}.tfrecord"
        with tfr.TFRecordWriter(path) as writer:
            for example in examples[start : start + n]:
                writer.write(tfr.encode_example(example))
        start += n
    return examples


def decode_id(record: bytes) -> int:
    return int(tfr.decode_example(record)["id"][0])


def test_map_dataset_over_a_file(tmp_path: Path) -> None:
    import grain

    write_shards(tmp_path, [50])
    source = tfr.TFRecordFile(tmp_path / "part-00000-of-00001.tfrecord")
    ds = grain.MapDataset.source(source).map(decode_id)
    assert len(ds) == 50
    assert [ds[i] for i in range(50)] == list(range(50))
    shuffled = list(grain.MapDataset.source(source).shuffle(seed=7).map(decode_id))
    assert sorted(shuffled) == list(range(50)) and shuffled != list(range(50))


def test_threads_share_one_source(tmp_path: Path) -> None:
    import grain

    write_shards(tmp_path, [300, 200])
    source = tfr.ShardedRecords(str(tmp_path / "part-*"))
    options = grain.ReadOptions(num_threads=4, prefetch_buffer_size=64)
    ids = list(grain.MapDataset.source(source).map(decode_id).to_iter_dataset(options))
    assert ids == list(range(500))


@pytest.mark.parametrize("kind", ["file", "shards"])
def test_data_loader_with_two_workers_yields_every_record_once(tmp_path: Path, kind: str) -> None:
    import grain

    counts = [120] if kind == "file" else [70, 0, 45, 30]
    write_shards(tmp_path, counts)
    paths = sorted(str(p) for p in tmp_path.glob("part-*.tfrecord"))
    source = tfr.TFRecordFile(paths[0]) if kind == "file" else tfr.ShardedRecords(paths)
    sampler = grain.samplers.IndexSampler(
        num_records=len(source), shard_options=grain.sharding.NoSharding(), shuffle=True, num_epochs=1, seed=3
    )
    loader = grain.DataLoader(data_source=source, sampler=sampler, worker_count=2)
    ids = [decode_id(record) for record in loader]
    assert sorted(ids) == list(range(sum(counts)))
    assert ids != sorted(ids)  # in the sampler's shuffled order
