# The reader options of tfrecord_lite.torch's datasets, over real files: GZIP and ZLIB shards read
# with their compression recognised or declared (a declaration their content contradicts is an
# error naming the file), and a record longer than max_record_bytes refused, in the main process
# and in a DataLoader worker. The options' names, types and defaults are the vocabulary test's.
from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tfrecord_lite._stream.options import READ_OPTIONS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from torch.utils.data import DataLoader

from tfrecord_lite.torch import IterableTFRecordDataset, TFRecordDataset

SPEC = {"id": tfr.FixedLenFeature([], "int64"), "blob": tfr.FixedLenFeature([], "string")}
LONG = 3  # the id of the record whose blob is long
BLOB = {True: 2000, False: 10}  # bytes of a blob: long or not


def write(path: Path, compression: str | None, records: int = 6) -> str:
    """`records` Examples numbered by `id`; the one numbered LONG holds a 2000-byte blob."""
    with tfr.TFRecordWriter(path, compression=compression) as writer:
        for i in range(records):
            writer.write_example({"id": i, "blob": b"x" * BLOB[i == LONG]})
    return str(path)


@pytest.fixture(params=["gzip", "zlib"])
def packed(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(a compressed file, its compression)."""
    kind = request.param
    return write(tmp_path / f"data.tfrecord.{kind}", kind.upper()), kind


@pytest.mark.parametrize("dataset_class", [TFRecordDataset, IterableTFRecordDataset])
def test_both_datasets_take_every_reader_option_by_keyword(dataset_class: type) -> None:
    params = inspect.signature(dataset_class).parameters
    assert next(iter(params)) == "source"
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(params.values())[1:])
    for name, (annotation, default) in READ_OPTIONS.items():
        assert (str(params[name].annotation), params[name].default) == (annotation, default)


@pytest.mark.parametrize("declared", ["auto", "given", "GIVEN"])
def test_a_compressed_file_reads_with_its_compression_recognised_or_declared(
    packed: tuple[str, str], declared: str
) -> None:
    path, kind = packed
    compression = {"auto": "auto", "given": kind, "GIVEN": kind.upper()}[declared]
    mapped = TFRecordDataset(path, features=SPEC, compression=compression)
    assert [int(mapped[i]["id"]) for i in range(len(mapped))] == list(range(6))
    streamed = IterableTFRecordDataset(path, features=SPEC, compression=compression, batch_size=4)
    assert [int(i) for batch in streamed for i in batch["id"]] == list(range(6))


@pytest.mark.parametrize("declared", [None, "", "other"])
def test_a_compression_the_content_contradicts_is_an_error_naming_the_file(
    packed: tuple[str, str], declared: str | None
) -> None:
    path, kind = packed
    compression = {"gzip": "zlib", "zlib": "gzip"}[kind] if declared == "other" else declared
    for read in (
        lambda: list(IterableTFRecordDataset(path, compression=compression)),
        lambda: TFRecordDataset(path, compression=compression),
    ):
        with pytest.raises(ValueError, match=rf"{path} is {kind.upper()}-compressed, but compression=") as err:
            read()  # streamed or indexed, the content is held to what was declared
        assert "compression='auto' recognises it" in str(err.value)


def test_an_uncompressed_file_declared_compressed_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "plain.tfrecord", None)
    with pytest.raises(ValueError, match=r"plain.tfrecord is uncompressed, but compression='gzip' was given"):
        TFRecordDataset(path, compression="gzip")
    assert len(TFRecordDataset(path, compression=None)) == 6
    assert len(list(IterableTFRecordDataset(path, compression=None))) == 6


def test_a_compressed_file_declared_uncompressed_is_refused_through_its_index_too(packed: tuple[str, str]) -> None:
    """Once a sidecar exists, the streaming dataset reads a file through it: the declared
    compression is still held to the content."""
    path, kind = packed
    assert len(TFRecordDataset(path)) == 6  # leaves the sidecar beside the file
    with pytest.raises(ValueError, match=rf"is {kind.upper()}-compressed, but compression=None"):
        list(IterableTFRecordDataset(path, compression=None))
    with pytest.raises(ValueError, match=rf"is {kind.upper()}-compressed, but compression=None"):
        IterableTFRecordDataset(path, compression=None, sharding="range")  # counted through the index


def test_the_map_dataset_refuses_a_longer_record_while_indexing_a_compressed_file(packed: tuple[str, str]) -> None:
    path, _ = packed
    with pytest.raises(tfr.RecordTooLargeError, match="more than max_record_bytes=1000") as err:
        TFRecordDataset(path, max_record_bytes=1000)
    assert path in str(err.value)
    ds = TFRecordDataset(path, features=SPEC, max_record_bytes=4000)
    assert len(ds[LONG]["blob"]) == BLOB[True]


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_the_streaming_dataset_refuses_a_longer_record(tmp_path: Path, compression: str | None) -> None:
    path = write(tmp_path / "data.tfrecord", compression)
    with pytest.raises(tfr.RecordTooLargeError, match="more than max_record_bytes=1000"):
        list(IterableTFRecordDataset(path, max_record_bytes=1000))
    with pytest.raises(tfr.RecordTooLargeError, match="more than max_record_bytes=1000"):
        IterableTFRecordDataset(path, max_record_bytes=1000, sharding="range", on_error="skip")  # counting
    assert [len(item["blob"]) for item in IterableTFRecordDataset(path, features=SPEC)][LONG] == BLOB[True]
    ds = IterableTFRecordDataset(path, max_record_bytes=1000)
    assert ds.max_record_bytes == 1000


def test_max_record_bytes_goes_with_the_dataset_into_a_dataloader_worker(tmp_path: Path) -> None:
    path = write(tmp_path / "data.tfrecord.gz", "gzip")
    loader = DataLoader(IterableTFRecordDataset(path, max_record_bytes=1000), batch_size=None, num_workers=1)
    with pytest.raises(tfr.RecordTooLargeError, match="more than max_record_bytes=1000"):
        list(loader)
