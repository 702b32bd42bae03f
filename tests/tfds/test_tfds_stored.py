"""tfrecord_lite.tfds without TensorFlow: the stored TFDS folders of tests/data/tfds read and compared
with what TFDS decoded from them (expected.json.gz, see its PROVENANCE.md); the same folders served
by the test S3 server; Arrow and Hugging Face conversions equal to load()."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests._tfds_builders import canonical
from tfrecord_lite import tfds

STORED = Path(__file__).resolve().parents[1] / "data" / "tfds"
EXPECTED = json.loads(gzip.decompress((STORED / "expected.json.gz").read_bytes()))
CASES = [(name, split) for name, splits in EXPECTED.items() for split in splits]


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize(("name", "split"), CASES)
def test_stored_folders_read_as_tfds_decoded_them(data: Path, name: str, split: str) -> None:
    pytest.importorskip("PIL")
    if name == "everything":
        pytest.importorskip("simplejpeg")  # its JPEGs decode to TensorFlow's pixels by simplejpeg only
    examples = tfds.load(data / name, split=split)
    expected = EXPECTED[name][split]
    assert len(examples) == len(expected)
    assert [jsonable(canonical(ex)) for ex in examples] == expected
    assert [jsonable(canonical(examples[i])) for i in range(len(examples))] == expected


def test_threads_decode_the_same_examples_in_the_same_order(data: Path) -> None:
    pytest.importorskip("PIL")
    pytest.importorskip("simplejpeg")
    expected = EXPECTED["everything"]["train+test"]
    assert [
        jsonable(canonical(ex)) for ex in tfds.load(data / "everything", split="train+test", num_threads=3)
    ] == expected
    with pytest.raises(ValueError, match="num_threads"):
        tfds.load(data / "everything", num_threads=0)


def test_info_of_the_stored_folder(data: Path) -> None:
    info = tfds.info(data / "everything")
    assert (info.name, info.version, info.file_format) == ("everything", "1.2.0", "tfrecord")
    assert {k: (s.num_examples, len(s.files)) for k, s in info.splits.items()} == {"train": (20, 2), "test": (8, 2)}
    assert info.class_names("label") == ["cat", "dog", "bird"]
    assert repr(info) == (
        f"DatasetInfo('everything', version='1.2.0', file_format='tfrecord', splits={{'train': 20, 'test': 8}}, "
        f"source={str(data / 'everything')!r})"
    )
    assert repr(info.splits["test"]).startswith("SplitInfo('test', 8 examples, files=[")
    assert info.class_names("objects/kind") == ["0", "1", "2", "3"]
    assert "'image': Image(shape=(8, 6, 3), dtype=uint8)" in str(info)
    # in features.json's order (TFDS writes it sorted)
    assert info.feature_keys("Image") == [
        "deep",
        "depth",
        "frames",
        "gray_jpeg",
        "image",
        "labeled",
        "rgba",
    ]  # features.json order
    assert info.feature_keys("ClassLabel") == ["label", "objects/kind"]
    assert "nested/b/c" in info.feature_keys() and "objects" not in info.feature_keys()
    assert info.feature("objects/bbox").kind == "BBoxFeature" and info.feature("video").kind == "Video"
    with pytest.raises(KeyError, match="no feature 'nope'"):
        info.feature("nope")


@pytest.mark.object_store
def test_a_folder_on_s3_loads_and_info_takes_two_reads(s3: Any) -> None:

    pytest.importorskip("PIL")
    prefix = f"{s3.bucket}/data/everything/1.2.0"
    for path in (STORED / "everything").iterdir():
        s3.fs.pipe(f"{prefix}/{path.name}", path.read_bytes())
    s3.faults.reset()
    info = tfds.info(prefix, storage_options=s3.storage_options)
    assert len(s3.faults.requests) <= 2, s3.faults.requests
    assert info.splits["train"].files[0] == f"{prefix}/everything-train.tfrecord-00000-of-00002"
    examples = tfds.load(prefix, split="train+test", storage_options=s3.storage_options)
    expected = EXPECTED["everything"]["train+test"]
    assert [jsonable(canonical(ex)) for ex in examples] == expected
    assert jsonable(canonical(examples[len(examples) - 1])) == expected[-1]


def test_arrow_table_equals_load(data: Path) -> None:
    pytest.importorskip("pyarrow")
    for decode in (False, True):
        table = tfds.to_arrow(data / "everything", split="train[:40%]", decode=decode)
        examples = tfds.load(data / "everything", split="train[:40%]", decode=decode)
        rows = table.to_pylist()
        assert len(rows) == len(examples) == 8
        for row, example in zip(rows, examples, strict=True):
            assert row == plain(example)
        expected = "binary" if not decode else "list<item: list<item: list<item: uint8>>>"
        assert str(table.schema.field("image").type) == expected


def test_rlds_steps_become_a_list_of_step_structs(data: Path) -> None:
    pytest.importorskip("pyarrow")
    table = tfds.to_arrow(data / "episodes", split="test")
    examples = list(tfds.load(data / "episodes", split="test", decode=False))
    assert table.to_pylist() == [plain(ex) for ex in examples]
    assert len(table.column("steps")[0]) == len(examples[0]["steps"])


def plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def test_a_folder_over_https_takes_two_reads_for_info(http_server: Any) -> None:
    pytest.importorskip("PIL")
    pytest.importorskip("aiohttp")  # fsspec's HTTP file system (the remote extra)
    for path in (STORED / "episodes").iterdir():
        url = http_server.put(f"/rlds/episodes/0.1.0/{path.name}", path.read_bytes())
    folder = url.rsplit("/", 1)[0]
    http_server.faults.reset()
    info = tfds.info(folder)
    assert len(http_server.faults.requests) <= 2, http_server.faults.requests
    assert info.splits["test"].files[1] == f"{folder}/episodes-test.tfrecord-00001-of-00002"
    expected = EXPECTED["episodes"]["test[:50%]+train[-3:]"]
    assert [jsonable(canonical(ex)) for ex in tfds.load(folder, split="test[:50%]+train[-3:]")] == expected
