"""The reader options where they are new (docs/conventions.md), each on a real file: TFRecordFile's
compression, max_record_bytes through the batch readers, statistics, schema inference, show, verify,
salvage and the index writers; and the Example / SequenceExample symmetry of the writers, the random
access readers and the decoders. The vocabulary test holds the names; these hold what they do."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr

BIG = 2 << 20  # a record longer than the scan buffer, which max_record_bytes can refuse
LIMIT = 1 << 20 | 1 << 19
SPEC = {"k": tfr.FixedLenFeature([], "int64")}


def write(path: Path, compression: str | None = None, n: int = 4, big: bool = False) -> Path:
    with tfr.TFRecordWriter(path, compression=compression) as w:
        for k in range(n):
            w.write_example({"k": k, "blob": b"x" * (BIG if big and k == n - 1 else 3)})
    return path


def flip_payload(path: Path, record: int) -> None:
    """Flip the last byte of record `record`'s payload, inside its "blob" value (an uncompressed file):
    the record still decodes, only its CRC tells."""
    with tfr.TFRecordFile(path, index=False) as f:
        at = f.offset(record) + 12 + len(f[record]) - 1
    data = bytearray(path.read_bytes())
    data[at] ^= 1
    path.write_bytes(bytes(data))


def test_tfrecord_file_checks_or_forces_the_compression_it_is_given(tmp_path: Path) -> None:
    gz = write(tmp_path / "a.tfrecord.gz", "gzip")
    with tfr.TFRecordFile(gz, compression="GZIP", index=False) as f:
        assert f.compression == "gzip" and len(f) == 4
    with pytest.raises(ValueError, match=r"is GZIP-compressed, but compression='zlib' was given"):
        tfr.TFRecordFile(gz, compression="zlib")
    with pytest.raises(ValueError, match=r"is GZIP-compressed, but compression=None was given"):
        tfr.TFRecordFile(gz, compression=None)
    plain = write(tmp_path / "a.tfrecord")
    with pytest.raises(ValueError, match="is uncompressed, but compression="):
        tfr.TFRecordFile(plain, compression="gzip")
    with tfr.TFRecordFile(plain, compression=None) as f:
        assert f.compression == "" and f.example(3, SPEC)["k"] == 3


def test_sharded_records_take_every_reader_option(tmp_path: Path) -> None:
    with tfr.ShardedWriter(tmp_path / "p", num_shards=2, compression="gzip") as w:
        for k in range(6):
            w.write_example({"k": k})
    with tfr.ShardedRecords(str(tmp_path / "p"), compression="gzip", max_record_bytes=1 << 20) as records:
        assert sorted(int(records.example(i, SPEC)["k"]) for i in range(len(records))) == list(range(6))
    with pytest.raises(ValueError, match="is GZIP-compressed, but compression="):
        tfr.ShardedRecords(str(tmp_path / "p"), compression=None)


def test_max_record_bytes_reaches_every_streaming_reader(tmp_path: Path) -> None:
    path = write(tmp_path / "big.tfrecord.gz", "gzip", big=True)
    readers = [
        lambda **o: list(tfr.iter_records(path, **o)),
        lambda **o: list(tfr.iter_example_batches(path, features=SPEC, **o)),
        lambda **o: list(tfr.iter_sequence_example_batches(path, context_features=SPEC, **o)),
        lambda **o: tfr.statistics(path, **o),
        lambda **o: tfr.infer_features(path, **o),
        lambda **o: tfr.infer_sequence_features(path, **o),
    ]
    for read in readers:
        read()  # the default limit (1 GiB) takes it
        with pytest.raises(tfr.RecordTooLargeError):
            read(max_record_bytes=LIMIT)
    shown = tfr.show(path, n=5, max_record_bytes=LIMIT)
    assert len(shown) == 4 and "max_record_bytes" in (shown.views[-1].error or "")  # the error in its place
    # counting and verifying hold no record: a longer one streams through them, in flat memory
    assert tfr.verify_file(path, max_record_bytes=LIMIT).ok
    assert tfr.count_records(path, max_record_bytes=LIMIT) == 4


def test_a_flipped_payload_byte_raises_in_every_reader_unless_verify_is_false(tmp_path: Path) -> None:
    path = write(tmp_path / "a.tfrecord", n=6)
    flip_payload(path, 2)
    for read in (
        lambda **o: tfr.count_records(path, **o),
        lambda **o: tfr.statistics(path, **o),
        lambda **o: tfr.infer_features(path, **o),
        lambda **o: list(tfr.iter_example_batches(path, features=SPEC, **o)),
        lambda **o: tfr.write_text_index(path, destination=tmp_path / "a.idx", **o),
    ):
        with pytest.raises(tfr.CorruptRecordError, match="data CRC"):
            read()
        read(verify=False)
    assert tfr.statistics(path, on_error="skip").skipped == 1
    shown = tfr.show(path, n=6, on_error="skip")
    assert [v.features["k"].tolist() for v in shown.views] == [[0], [1], [3], [4], [5]]


def test_write_text_index_lists_the_good_records_past_damage(tmp_path: Path) -> None:
    path = write(tmp_path / "a.tfrecord", n=5)
    clean = tmp_path / "clean.idx"
    tfr.write_text_index(path, destination=clean)
    flip_payload(path, 1)
    seen: list[tfr.TFRecordError] = []
    tfr.write_text_index(path, destination=tmp_path / "skipped.idx", on_error=seen.append)
    lines = clean.read_text().splitlines()
    assert (tmp_path / "skipped.idx").read_text().splitlines() == lines[:1] + lines[2:] and len(seen) == 1
    with pytest.raises(ValueError, match="uncompressed files only"):
        tfr.write_text_index(write(tmp_path / "b.tfrecord.gz", "gzip"), destination=tmp_path / "b.idx")


def test_write_index_checks_its_options(tmp_path: Path) -> None:
    gz = write(tmp_path / "a.tfrecord.gz", "gzip", big=True)
    with pytest.raises(ValueError, match="is GZIP-compressed, but compression="):
        tfr.write_index(gz, compression=None)
    with pytest.raises(tfr.RecordTooLargeError):
        tfr.write_index(gz, destination=tmp_path / "a.idx", max_record_bytes=LIMIT)
    assert tfr.write_index(gz, destination=tmp_path / "a.idx", compression="gzip") == str(tmp_path / "a.idx")
    plain = write(tmp_path / "b.tfrecord")
    flip_payload(plain, 1)
    seen: list[tfr.TFRecordError] = []
    with pytest.raises(ValueError, match="1 damaged span found; an index sidecar describes"):
        tfr.write_index(plain, on_error=seen.append)
    assert len(seen) == 1
    tfr.write_index(plain, verify=False)  # the payloads are not checked: it indexes


@pytest.mark.parametrize(("source", "kept"), [(None, ""), ("gzip", "gzip"), ("zlib", "zlib")])
def test_salvage_reads_the_source_compression_and_keeps_it(tmp_path: Path, source: str | None, kept: str) -> None:
    path = write(tmp_path / "a.tfrecord", source, n=3)
    report = tfr.salvage(path, destination=tmp_path / "out.tfrecord", compression=source)
    assert report.compression == kept and report.records == 3
    with tfr.TFRecordFile(tmp_path / "out.tfrecord", index=False) as f:
        assert f.compression == kept
    tfr.salvage(path, destination=tmp_path / "plain.tfrecord", output_compression=None)
    with tfr.TFRecordFile(tmp_path / "plain.tfrecord", index=False) as f:
        assert f.compression == "" and len(f) == 3


def test_salvage_refuses_a_record_longer_than_max_record_bytes(tmp_path: Path) -> None:
    path = write(tmp_path / "a.tfrecord.gz", "gzip", big=True)
    with pytest.raises(tfr.RecordTooLargeError):
        tfr.salvage(path, destination=tmp_path / "out.tfrecord", max_record_bytes=LIMIT)


def test_the_writers_signature_is_its_own() -> None:
    params = inspect.signature(tfr.TFRecordWriter).parameters
    assert list(params)[:2] == ["destination", "compression"]
    assert params["compression"].kind is inspect.Parameter.KEYWORD_ONLY and params["compression"].default is None
    assert {"append", "truncate_partial", "level", "fast", "seek_every", "buffered", "storage_options"} <= set(params)


@pytest.mark.parametrize("buffered", [True, False])
def test_every_writer_writes_sequence_examples(tmp_path: Path, buffered: bool) -> None:
    context_spec = {"id": tfr.FixedLenFeature([], "int64")}
    lists_spec = {"frames": tfr.FixedLenSequenceFeature([2], "float32")}
    path = tmp_path / "clips.tfrecord"
    with tfr.TFRecordWriter(path, buffered=buffered) as w:
        assert type(w).__name__ == ("TFRecordWriter" if buffered else "_ThroughWriter")
        for k in range(3):
            w.write_sequence_example({"id": k}, {"frames": [[k, 1.0]] * (k + 1)})
    with tfr.ShardedWriter(tmp_path / "clips", num_shards=2) as shards:
        for k in range(3):
            shards.write_sequence_example({"id": k}, {"frames": [[k, 1.0]] * (k + 1)})
    with tfr.TFRecordFile(path) as f, tfr.ShardedRecords(str(tmp_path / "clips")) as sharded:
        for records in (f, sharded):
            found = {}
            for i in range(3):
                context, lists = records.sequence_example(i, context_spec, lists_spec)
                found[int(context["id"])] = lists["frames"]
            assert all(found[k].shape == (k + 1, 2) and found[k][0, 0] == k for k in range(3))
        context, lists = f.sequence_example(1)  # without specs: every feature
        assert context["id"].tolist() == [1] and len(lists["frames"]) == 2


def test_decode_sequence_example_copy_false_gives_views_into_the_record() -> None:
    record = tfr.encode_sequence_example({"name": b"clip"}, {"words": [[b"a", b"bc"], [b"def"]]})
    copied = tfr.decode_sequence_example(record)
    viewed = tfr.decode_sequence_example(record, copy=False)
    assert isinstance(copied[0]["name"][0], bytes) and isinstance(viewed[0]["name"][0], memoryview)
    assert [[bytes(v) for v in step] for step in viewed[1]["words"]] == [[b"a", b"bc"], [b"def"]]
    specs = (
        {"name": tfr.FixedLenFeature([], "bytes")},
        {"words": tfr.VarLenFeature("bytes")},
    )
    context, lists = tfr.decode_sequence_example(record, *specs, copy=False)
    assert isinstance(context["name"], memoryview) and bytes(context["name"]) == b"clip"
    assert all(isinstance(v, memoryview) for step in lists["words"] for v in step)
    assert viewed[0]["name"][0].readonly
    same = tfr.decode_sequence_example(record, *specs)
    assert same[0]["name"] == b"clip" and np.array_equal(
        np.array([bytes(v) for v in lists["words"][0]]), np.array(same[1]["words"][0])
    )


def test_a_records_view_is_named_for_what_it_shows(tmp_path: Path) -> None:
    path = write(tmp_path / "a.tfrecord")
    view = tfr.show(path, n=2)
    assert view.name == str(path) and repr(view) == f"RecordsView({str(path)!r}, 2 records)"


def test_sharded_records_refuse_a_record_longer_than_max_record_bytes(tmp_path: Path) -> None:
    write(tmp_path / "p-00000-of-00001.tfrecord.gz", "gzip", big=True)
    with pytest.raises(tfr.RecordTooLargeError):  # while its shard is indexed, as TFRecordFile
        tfr.ShardedRecords(str(tmp_path / "p"), max_record_bytes=LIMIT)
    with tfr.ShardedRecords(str(tmp_path / "p")) as records:
        assert len(records) == 4


def test_schema_inference_and_show_take_the_reader_options(tmp_path: Path) -> None:
    path = write(tmp_path / "a.tfrecord", n=6)
    flip_payload(path, 2)
    assert set(tfr.infer_features(path, on_error="skip")) == {"k", "blob"}
    context, lists = tfr.infer_sequence_features(path, on_error=lambda err: None, max_skipped=1)
    assert set(context) == {"k", "blob"} and lists == {}
    assert len(tfr.show(path, n=6, verify=False)) == 6
    gz = write(tmp_path / "b.tfrecord.gz", "gzip")
    assert set(tfr.infer_features(gz, compression="gzip")) == {"k", "blob"}
    assert len(tfr.show(gz, compression="GZIP")) == 4
    with pytest.raises(ValueError, match="is GZIP-compressed, but compression=None was given"):
        tfr.infer_features(gz, compression=None)


def test_write_text_index_reads_and_writes_urls_with_storage_options(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    store = fsspec.filesystem("memory")
    url = "memory://options/a.tfrecord"
    with tfr.TFRecordWriter(url, storage_options={"skip_instance_cache": True}) as w:
        w.write(b"abc")
        w.write(b"de")
    tfr.write_text_index(url, destination="memory://options/a.idx", storage_options=store)
    assert store.cat("memory://options/a.idx") == b"0 19\n19 18\n"
    tfr.write_text_index(url, destination=tmp_path / "a.idx", storage_options=store)
    assert (tmp_path / "a.idx").read_text() == "0 19\n19 18\n"


def test_tfrecord_file_refuses_a_longer_record_when_opened_whatever_the_file(tmp_path: Path) -> None:
    plain = tmp_path / "long.tfrecord"
    with tfr.TFRecordWriter(plain) as w:
        w.write(b"a" * 10)
        w.write(b"b" * 5000)
    with pytest.raises(tfr.RecordTooLargeError, match="claims 5000 bytes, more than max_record_bytes=1000") as err:
        tfr.TFRecordFile(plain, max_record_bytes=1000)
    assert err.value.path == str(plain) and err.value.offset == 26  # the second record's header
    with tfr.TFRecordFile(plain, max_record_bytes=5000) as f:
        assert len(f[1]) == 5000
    with pytest.raises(tfr.RecordTooLargeError):
        tfr.ShardedRecords(plain, max_record_bytes=4999)
