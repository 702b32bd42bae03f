"""An Example that does not fit the spec is named where it lies, whichever reader decodes it: the
file, the record's number in that file and its byte offset (the error's `path`, `record`, `offset`
and its message), also after pickling (DataLoader workers), and `convert` reports it as bad data
(exit 1) or, with --on-error skip, skips it as it skips damage."""

from __future__ import annotations

import gc
import json
import pickle
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._threads import pool_threads, wait_for_threads

SPEC = {"x": tfr.FixedLenFeature([3], "int64")}
pytestmark = pytest.mark.threads  # the located errors of threaded reads too


@pytest.fixture(autouse=True)
def _threads_end() -> Iterator[None]:
    """The threads of a read that failed (num_threads) end once it is dropped, not in a later test."""
    before = pool_threads()
    yield
    gc.collect()
    assert wait_for_threads(before) <= before  # an earlier test's threads may end meanwhile


BAD = 5  # the record with two values


def write(path: Path, n: int = 10, bad: int | None = BAD, pad: int = 0) -> None:
    """n Examples, record `bad` with 2 values of x where the others have 3."""
    with tfr.TFRecordWriter(str(path)) as writer:
        for i in range(n):
            writer.write_example({"x": [1, 2] if i == bad else [1, 2, 3], "pad": b"p" * pad})


def _offsets(path: Path) -> list[int]:
    data, at, out = path.read_bytes(), 0, []
    while at < len(data):
        out.append(at)
        at += 12 + int.from_bytes(data[at : at + 8], "little") + 4
    return out


def assert_placed(err: BaseException, path: Path, record: int, offset: int) -> None:
    assert isinstance(err, tfr.TFRecordError)
    assert (err.path, err.record, err.offset) == (str(path), record, offset), str(err)
    assert f"in {path}, record {record}, at byte offset {offset}" in str(err)
    assert "of the batch passed to" not in "".join(getattr(err, "__notes__", []))
    again = pickle.loads(pickle.dumps(err))
    assert (again.path, again.record, again.offset, str(again)) == (err.path, err.record, err.offset, str(err))


@pytest.mark.parametrize("pad", [0, 40_000], ids=["small records", "large records"])
def test_batch_decoder_names_file_record_and_offset(tmp_path: Path, pad: int) -> None:
    path = tmp_path / "a.tfrecord"
    write(path, pad=pad)
    with pytest.raises(tfr.FeatureError) as caught:
        for _ in tfr.iter_example_batches(str(path), features=SPEC, batch_size=4):
            pass
    assert_placed(caught.value, path, BAD, _offsets(path)[BAD])


def test_the_record_is_numbered_in_its_own_file(tmp_path: Path) -> None:
    good, bad = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    write(good, n=7, bad=None)
    write(bad, n=9, bad=3)
    with pytest.raises(tfr.FeatureError) as caught:
        for _ in tfr.iter_example_batches([str(good), str(bad)], features=SPEC, batch_size=4):
            pass
    assert_placed(caught.value, bad, 3, _offsets(bad)[3])


def test_a_wrong_dtype_is_placed_too(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    write(path, bad=None)
    with pytest.raises(tfr.FeatureError) as caught:
        for _ in tfr.iter_example_batches(str(path), features={"pad": tfr.FixedLenFeature([], "int64")}):
            pass
    assert_placed(caught.value, path, 0, 0)


def test_arrow_reader_names_the_record(tmp_path: Path) -> None:
    arrow = pytest.importorskip("tfrecord_lite.arrow")
    path = tmp_path / "a.tfrecord"
    write(path)
    with pytest.raises(tfr.FeatureError) as caught:
        list(arrow.iter_arrow_batches(str(path), features=SPEC, batch_size=4))
    assert_placed(caught.value, path, BAD, _offsets(path)[BAD])


def test_arrow_reader_skips_the_record_with_on_error_skip(tmp_path: Path) -> None:
    arrow = pytest.importorskip("tfrecord_lite.arrow")
    path = tmp_path / "a.tfrecord"
    write(path)
    seen: list[Any] = []
    batches = list(arrow.iter_arrow_batches(str(path), features=SPEC, batch_size=4, on_error=seen.append))
    assert sum(b.num_rows for b in batches) == 9
    assert len(seen) == 1
    assert_placed(seen[0], path, BAD, _offsets(path)[BAD])


def test_statistics_name_the_record_whose_kind_changes(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    with tfr.TFRecordWriter(str(path)) as writer:
        for _ in range(6):
            writer.write_example({"x": [1, 2, 3]})
        writer.write_example({"x": [b"a"]})
    with pytest.raises(tfr.FeatureError) as caught:
        tfr.statistics(str(path))
    assert_placed(caught.value, path, 6, _offsets(path)[6])


@pytest.mark.torch
def test_torch_dataset_names_the_record(tmp_path: Path) -> None:
    torch_ds = pytest.importorskip("tfrecord_lite.torch")
    from torch.utils.data import DataLoader

    good, bad = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    write(good, n=7, bad=None)
    write(bad)
    dataset = torch_ds.TFRecordDataset([str(good), str(bad)], features=SPEC)
    for read in (lambda: dataset[7 + BAD], lambda: dataset[[0, 7 + BAD]], lambda: list(DataLoader(dataset, 4))):
        with pytest.raises(tfr.FeatureError) as caught:
            read()
        assert_placed(caught.value, bad, BAD, _offsets(bad)[BAD])


def test_convert_reports_bad_data_and_skips_it_on_request(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "big.tfrecord"
    write(path)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"x": {"type": "FixedLenFeature", "shape": [3], "dtype": "int64"}}))
    failed = run_cli("convert", str(path), str(tmp_path / "big.parquet"), "--features", str(spec))
    assert failed.returncode == 1, failed.stderr
    assert f"in {path}, record {BAD}, at byte offset {_offsets(path)[BAD]}" in failed.stderr
    assert "big.parquet" not in failed.stderr
    out = tmp_path / "skipped.parquet"
    skipped = run_cli("convert", str(path), str(out), "--features", str(spec), "--on-error", "skip")
    assert skipped.returncode == 0, skipped.stderr
    assert f"record {BAD}" in skipped.stderr
    import pyarrow.parquet as pq

    assert pq.read_table(out).num_rows == 9


def test_convert_inferring_names_the_files_of_a_kind_change(tmp_path: Path) -> None:
    first, second = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    write(first, n=4, bad=None)
    with tfr.TFRecordWriter(str(second)) as writer:
        writer.write_example({"x": [1]})
        writer.write_example({"x": [b"text"]})
    done = run_cli("convert", str(first), str(second), str(tmp_path / "out.parquet"))
    assert done.returncode == 1, done.stderr
    assert f"record 0 of {first}" in done.stderr and f"record 1 of {second}" in done.stderr


STREAMS: dict[str, dict[str, Any]] = {
    "plain": {},
    "batched": {"batch_size": 4},
    "indexed range": {"sharding": "range"},
    "gzip": {"compression": "gzip"},
    "threads": {"num_threads": 2},
    "threads, batched": {"num_threads": 2, "batch_size": 4},
    "shuffled": {"shuffle": True, "shuffle_buffer": 8, "seed": 3},
    "shuffled, batched": {"shuffle": True, "shuffle_buffer": 8, "batch_size": 3},
    "resumed": {"batch_size": 2},
}


def shards(tmp_path: Path, gzip: bool = False) -> tuple[Path, Path]:
    """A good shard of 7 records and one of 10 whose record BAD does not fit SPEC (GZIP: the
    offsets are those of the uncompressed stream, which a plain copy holds)."""
    good, bad = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    write(good, n=7, bad=None)
    write(bad)
    if gzip:
        import gzip as gz

        for path in (good, bad):
            path.with_suffix(".tfrecord.gz").write_bytes(gz.compress(path.read_bytes()))
    return good, bad


@pytest.mark.torch
@pytest.mark.parametrize("how", list(STREAMS))
def test_streaming_dataset_names_the_record(tmp_path: Path, how: str) -> None:
    torch_ds = pytest.importorskip("tfrecord_lite.torch")
    options = dict(STREAMS[how])
    good, bad = shards(tmp_path, gzip="compression" in options)
    files = [str(good), str(bad)] if "compression" not in options else [f"{good}.gz", f"{bad}.gz"]
    dataset = torch_ds.IterableTFRecordDataset(files, features=SPEC, **options)
    if how == "resumed":
        dataset.load_state_dict({"epoch": 0, "yielded": 6, "consumer": 0, "consumers": 1})
    with pytest.raises(tfr.FeatureError) as caught:
        list(dataset)
    path = Path(files[1])
    assert_placed(caught.value, path, BAD, _offsets(bad)[BAD])


@pytest.mark.torch
def test_mixed_dataset_names_the_record(tmp_path: Path) -> None:
    torch_ds = pytest.importorskip("tfrecord_lite.torch")
    good, bad = shards(tmp_path)
    mixed = torch_ds.MixedTFRecordDataset(
        [torch_ds.IterableTFRecordDataset(str(p), features=SPEC) for p in (good, bad)], seed=1
    )
    with pytest.raises(tfr.FeatureError) as caught:
        list(mixed)
    assert_placed(caught.value, bad, BAD, _offsets(bad)[BAD])


@pytest.mark.torch
@pytest.mark.parametrize("batch_size", [None, 4])
def test_streaming_dataset_in_workers_names_the_record(tmp_path: Path, batch_size: int | None) -> None:
    torch_ds = pytest.importorskip("tfrecord_lite.torch")
    from torch.utils.data import DataLoader

    good, bad = shards(tmp_path)
    dataset = torch_ds.IterableTFRecordDataset([str(good), str(bad)], features=SPEC, batch_size=batch_size)
    batching: dict[str, Any] = {"batch_size": 2, "collate_fn": dataset.collate_fn}
    if batch_size:
        batching = {"batch_size": None}
    where = f"in {bad}, record {BAD}, at byte offset {_offsets(bad)[BAD]}"
    # torch raises the worker's error again (a RuntimeError where it cannot remake it), with its message
    with pytest.raises((tfr.FeatureError, RuntimeError), match=re.escape(where)):
        list(DataLoader(dataset, num_workers=2, **batching))


@pytest.mark.parametrize("shard", [None, (0, 1)], ids=["streamed", "a shard, through the index"])
def test_compat_loader_notes_the_record_and_keeps_the_package_message(tmp_path: Path, shard: Any) -> None:
    from tfrecord_lite.compat.tfrecord import reader

    path = tmp_path / "a.tfrecord"
    with tfr.TFRecordWriter(str(path)) as writer:
        for i in range(10):
            writer.write_example({"x": [0.5] if i == BAD else [i]})
    with pytest.raises(TypeError) as caught:
        list(reader.example_loader(str(path), None, {"x": "int"}, shard=shard))
    assert str(caught.value) == "Incompatible type 'int' for `x` (should be 'float')."  # the package's
    note = f"(in {path}, record {BAD}, at byte offset {_offsets(path)[BAD]})"
    if sys.version_info >= (3, 11):
        assert caught.value.__notes__ == [note]


def test_statistics_name_the_record_a_raw_feature_does_not_fit(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    raw = bytes(24)  # three int64 numbers
    with tfr.TFRecordWriter(str(path)) as writer:
        for i in range(10):
            writer.write_example({"raw": [raw, raw] if i == BAD else [raw]})
    with pytest.raises(tfr.FeatureError) as caught:
        tfr.statistics(str(path), features={"raw": tfr.RawFeature([3], "int64")})
    assert_placed(caught.value, path, BAD, _offsets(path)[BAD])


@pytest.mark.torch
def test_torch_dataset_on_threads_names_the_record(tmp_path: Path) -> None:
    torch_ds = pytest.importorskip("tfrecord_lite.torch")
    from torch.utils.data import DataLoader

    good, bad = shards(tmp_path)
    kept = torch_ds.TFRecordDataset([str(good), str(bad)], features=SPEC, num_threads=2, transform=_same)
    dataset = torch_ds.TFRecordDataset([str(good), str(bad)], features=SPEC, num_threads=2)
    for read in (lambda: kept[list(range(17))], lambda: list(DataLoader(dataset, 16, collate_fn=dataset.collate_fn))):
        with pytest.raises(tfr.FeatureError) as caught:
            read()
        assert_placed(caught.value, bad, BAD, _offsets(bad)[BAD])


def _same(item: Any) -> Any:
    return item


@pytest.mark.parametrize("pad", [0, 40_000], ids=["small records", "large records"])
def test_batch_decoder_on_threads_names_file_record_and_offset(tmp_path: Path, pad: int) -> None:
    path = tmp_path / "a.tfrecord"
    write(path, n=40, bad=33, pad=pad)
    with pytest.raises(tfr.FeatureError) as caught:
        for _ in tfr.iter_example_batches(str(path), features=SPEC, batch_size=2, num_threads=2):
            pass
    assert_placed(caught.value, path, 33, _offsets(path)[33])


def test_sequence_batches_on_threads_name_file_record_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "s.tfrecord"
    with tfr.TFRecordWriter(str(path)) as writer:
        for i in range(40):
            writer.write(tfr.encode_sequence_example({"c": [1]}, {"f": [[b"a"]] if i == 33 else [[1, 2, 3]]}))
    lists = {"f": tfr.FixedLenSequenceFeature([3], "int64")}
    with pytest.raises(tfr.FeatureError) as caught:
        for _ in tfr.iter_sequence_example_batches(str(path), sequence_features=lists, batch_size=2, num_threads=2):
            pass
    assert_placed(caught.value, path, 33, _offsets(path)[33])


@pytest.mark.torch
@pytest.mark.parametrize("num_threads", [1, 2])
def test_batches_of_large_records_name_the_record(tmp_path: Path, num_threads: int) -> None:
    """Batches of records of over 4 KiB are decoded record by record, not by columns: the same place."""
    torch_ds = pytest.importorskip("tfrecord_lite.torch")
    path = tmp_path / "a.tfrecord"
    write(path, pad=10_000)
    streamed = torch_ds.IterableTFRecordDataset(str(path), features=SPEC, batch_size=3, num_threads=num_threads)
    mapped = torch_ds.TFRecordDataset(str(path), features=SPEC, num_threads=num_threads)
    for read in (lambda: list(streamed), lambda: mapped[list(range(3, 9))]):
        with pytest.raises(tfr.FeatureError) as caught:
            read()
        assert_placed(caught.value, path, BAD, _offsets(path)[BAD])
