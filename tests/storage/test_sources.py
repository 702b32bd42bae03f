"""One input resolver: what a path, list, folder, glob, prefix or URL means, what is skipped,
and the one "not a TFRecord file" error wherever a non-record file is met."""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._records import write_records
from tests.conftest import DATA_DIR
from tfrecord_lite._records.verify import verify_file
from tfrecord_lite._storage.sources import resolve_inputs

TFX = DATA_DIR / "tfx"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0\0\0\rIHDR" + bytes(64)


def oracle_count(path: Path) -> int:
    return len(json.loads(Path(str(path) + ".json").read_text())["records"])


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A folder of record files of every compression and naming, among files that are not records."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    write_records(folder / "part-10.tfrecord", [b"p10"])
    write_records(folder / "part-9.tfrecord", [b"p9"])
    tfr.write_index(folder / "part-9.tfrecord")  # a sidecar
    write_records(folder / "part-2.tfrecord.gz", [b"p2"], "gzip")
    write_records(folder / "zlib-data.zz", [b"z"], "zlib")
    write_records(folder / "no_extension", [b"bare"])  # recognised by its content
    (folder / "notes.txt").write_text("hello")
    (folder / "LICENSE").write_text("Apache License\nVersion 2.0\n")
    (folder / "photo.bin").write_bytes(PNG)
    (folder / "words.gz").write_bytes(gzip.compress(b"just text"))
    (folder / "part-10.tfrecord.idx").write_text("0 19\n")
    (folder / "ds.labels.json").write_text('{"a": 0}')
    (folder / "sub").mkdir()
    write_records(folder / "sub" / "deep.tfrecord", [b"deep"])
    return folder


EXPECTED = ["no_extension", "part-2.tfrecord.gz", "part-9.tfrecord", "part-10.tfrecord", "zlib-data.zz"]


def names(paths: list[str]) -> list[str]:
    return [os.path.basename(p) for p in paths]


def test_a_folder_means_its_record_files_of_any_compression_in_natural_order(
    mixed: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="tfrecord_lite"):
        assert names(resolve_inputs(mixed)) == EXPECTED
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1
    for kind in ("skipped 4 files that hold", "1 .txt file,", "3 other files: LICENSE, photo.bin"):
        assert kind in lines[0], lines[0]
    assert "sidecar" not in lines[0] and "label map" not in lines[0]  # what the library writes is no news
    assert [r for r in tfr.iter_records(mixed)] == [b"bare", b"p2", b"p9", b"p10", b"z"]
    assert tfr.count_records(mixed) == 5


def test_a_glob_a_prefix_and_a_list(mixed: Path, tmp_path: Path) -> None:
    assert names(resolve_inputs(str(mixed / "part-*"))) == EXPECTED[1:4]
    deep = resolve_inputs(str(mixed / "**" / "*.tfrecord"))
    assert names(deep) == ["part-9.tfrecord", "part-10.tfrecord", "deep.tfrecord"]
    with tfr.ShardedWriter(tmp_path / "out" / "train", num_shards=3, compression="gzip", suffix=".tfrecord.gz") as w:
        for k in range(7):
            w.write(b"%d" % k)
    prefix = str(tmp_path / "out" / "train")
    assert resolve_inputs(prefix) == w.paths
    assert sorted(tfr.iter_records(prefix)) == sorted(b"%d" % k for k in range(7))
    given = [str(mixed / "part-10.tfrecord"), str(mixed / "no_extension"), str(mixed / "part-10.tfrecord")]
    assert resolve_inputs(given) == given[:2]  # in the given order, duplicates dropped
    assert list(tfr.iter_records(given)) == [b"p10", b"bare"]
    assert resolve_inputs("file://" + str(mixed / "part-9.tfrecord")) == [str(mixed / "part-9.tfrecord")]


def test_nothing_matching_names_the_pattern(mixed: Path, tmp_path: Path) -> None:
    for pattern, words in (
        (str(mixed / "*.nothing"), "no TFRecord files match"),
        (str(tmp_path / "missing" / "prefix"), "no such file, folder or ShardedWriter prefix"),
        (str(mixed / "sub" / "*.txt"), "no TFRecord files match"),
    ):
        with pytest.raises(tfr.NoInputsError, match=words) as info:
            resolve_inputs(pattern)
        assert pattern in str(info.value) and isinstance(info.value, FileNotFoundError)
    (tmp_path / "empty").mkdir()
    with pytest.raises(tfr.NoInputsError, match="no TFRecord files in the folder"):
        tfr.ShardedRecords(tmp_path / "empty")
    with pytest.raises(tfr.NoInputsError, match="no inputs given"):
        resolve_inputs([])


def test_an_explicit_file_that_holds_no_records_is_an_error(mixed: Path) -> None:
    with pytest.raises(tfr.NotTFRecordError, match="looks like a PNG image"):
        resolve_inputs(mixed / "photo.bin")
    with pytest.raises(tfr.NotTFRecordError, match="GZIP data that does not hold TFRecords"):
        resolve_inputs(mixed / "words.gz")
    with pytest.raises(tfr.NotTFRecordError, match="index sidecar"):
        resolve_inputs(str(mixed / "part-9.tfrecord.tfrlidx"))  # named alone: an error
    # among other files (as a shell glob `part-9*` gives them) the sidecar is passed over
    both = [str(mixed / "part-9.tfrecord"), str(mixed / "part-9.tfrecord.tfrlidx")]
    assert resolve_inputs(both) == both[:1]


def test_the_same_not_a_tfrecord_message_everywhere(tmp_path: Path) -> None:
    png = tmp_path / "image.png"
    png.write_bytes(PNG)
    messages = set()
    for attempt in (
        lambda: list(tfr.iter_records(png)),
        lambda: list(tfr.iter_records(str(png), compression=None)),
        lambda: tfr.TFRecordFile(png),
        lambda: tfr.write_index(png),
        lambda: tfr.count_records(png),
        lambda: resolve_inputs([str(png)]),
    ):
        with pytest.raises(tfr.NotTFRecordError) as info:
            attempt()
        messages.add(str(info.value))
    assert len(messages) == 1, messages
    (message,) = messages
    assert str(png) in message and "looks like a PNG image" in message and "not a TFRecord file" in message
    report = verify_file(png)
    assert report.records == 0 and report.bad == [(0, tfr.NotTFRecordError(message).reason.split(" (in ")[0])]
    proc = run_cli("verify", str(png), cwd=tmp_path)
    assert proc.returncode == 1 and message in proc.stderr


def test_a_folder_given_to_TFRecordFile_says_what_to_use(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError, match="ShardedRecords"):
        tfr.TFRecordFile(tmp_path)


def test_urls_expand_through_fsspec(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    base = "memory://bucket/ds"
    for k in (0, 1, 2):
        with fs.open(f"/bucket/ds/train-{k:05d}-of-00003.tfrecord", "wb") as fh:
            fh.write(Path(write_records(tmp_path / f"{k}.tfrecord", [b"r%d" % k])).read_bytes())
    with fs.open("/bucket/ds/train-00000-of-00003.tfrecord.tfrlidx", "wb") as fh:
        fh.write(b"TFRLIDX\0")
    expected = [f"{base}/train-{k:05d}-of-00003.tfrecord" for k in range(3)]
    assert resolve_inputs(f"{base}/train") == expected  # a prefix
    assert resolve_inputs(f"{base}/*") == expected  # a glob: the sidecar is passed over
    assert resolve_inputs(base) == expected  # a folder
    assert list(tfr.iter_records(f"{base}/train")) == [b"r0", b"r1", b"r2"]
    with pytest.raises(tfr.NoInputsError, match="memory://bucket/none"):
        resolve_inputs("memory://bucket/none*")


def test_torch_datasets_read_a_folder_of_gzip_shards(tmp_path: Path) -> None:
    torch_module = pytest.importorskip("tfrecord_lite.torch")
    for k in range(5):
        write_records(tmp_path / f"s{k}.tfrecord.gz", [tfr.encode_example({"k": [k]})], "gzip")
    write_records(tmp_path / "plain.tfrecord", [tfr.encode_example({"k": [5]})])
    ds = torch_module.IterableTFRecordDataset(tmp_path, features={"k": tfr.FixedLenFeature([], "int64")})
    assert sorted(int(x["k"]) for x in ds) == list(range(6))


def test_cli_count_takes_a_shell_glob_a_prefix_and_the_tfx_folder(tmp_path: Path) -> None:
    with tfr.ShardedWriter(tmp_path / "out", num_shards=4) as w:
        for k in range(10):
            w.write(b"%d" % k)
    proc = run_cli("count", "out*", cwd=tmp_path, shell=True)  # the shell expands it, sidecars included
    assert proc.returncode == 0 and proc.stdout.strip() == "10", proc.stderr
    assert proc.stderr == ""  # the sidecars the library wrote are no news
    assert run_cli("count", "out", cwd=tmp_path).stdout.strip() == "10"
    assert run_cli("count", "-q", "out*", cwd=tmp_path, shell=True).stderr == ""
    total = sum(oracle_count(p) for p in TFX.glob("*.tfrecord*") if not p.name.endswith(".json"))
    proc = run_cli("count", str(TFX), cwd=tmp_path)
    assert proc.returncode == 0 and int(proc.stdout) == total, proc.stderr
    assert "LICENSE" in proc.stderr and ".json" in proc.stderr
    copy = shutil.copytree(TFX, tmp_path / "tfx")
    proc = run_cli("count", str(copy) + "/*", cwd=tmp_path, shell=True)  # LICENSE named explicitly
    assert proc.returncode == 1 and "not a TFRecord file" in proc.stderr


def test_example_batches_span_files(tmp_path: Path) -> None:
    sizes = [5, 1, 8, 0, 3]  # records per file: 17, in batches of 4 -> 4, 4, 4, 4, 1
    k = 0
    for n, size in enumerate(sizes):
        with tfr.TFRecordWriter(tmp_path / f"part-{n}.tfrecord") as w:
            for _ in range(size):
                w.write_example({"k": [k], "tags": np.arange(k % 3, dtype=np.int64)})
                k += 1
    spec = {"k": tfr.FixedLenFeature([], "int64"), "tags": tfr.VarLenFeature("int64")}
    batches = list(tfr.iter_example_batches(tmp_path, features=spec, batch_size=4))
    assert [len(b["k"]) for b in batches] == [4, 4, 4, 4, 1]
    assert [int(x) for b in batches for x in b["k"]] == list(range(17))
    records = list(tfr.iter_records(tmp_path))
    for i, batch in enumerate(batches):
        expected = tfr.decode_examples(records[4 * i : 4 * i + 4], spec)
        assert batch["k"].tolist() == expected["k"].tolist()
        assert batch["tags"].to_list() == expected["tags"].to_list()


def test_example_batches_across_files_yield_what_precedes_damage(tmp_path: Path) -> None:
    for name, n in (("a.tfrecord", 5), ("b.tfrecord", 2)):
        with tfr.TFRecordWriter(tmp_path / name) as w:
            for k in range(n):
                w.write_example({"k": [k]})
    data = (tmp_path / "b.tfrecord").read_bytes()
    (tmp_path / "b.tfrecord").write_bytes(data[: len(data) - 5])  # its second record is cut
    batches = tfr.iter_example_batches(tmp_path, features={"k": tfr.FixedLenFeature([], "int64")}, batch_size=4)
    assert next(batches)["k"].tolist() == [0, 1, 2, 3]
    assert next(batches)["k"].tolist() == [4, 0]  # held back for the next batch, then given before the error
    with pytest.raises(tfr.TruncatedRecordError):
        next(batches)
