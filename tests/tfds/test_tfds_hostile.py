"""Hostile TFDS folders: dataset_info.json / features.json of wrong types, impossible shapes, unknown
connectors and shard names that leave the folder give clear errors, and nothing outside the folder is
read. The folders are written by hand, as an attacker would."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tfrecord_lite import tfds
from tfrecord_lite._errors import DatasetInfoError

TENSOR = "tensorflow_datasets.core.features.tensor_feature.Tensor"


def folder(tmp_path: Path, info: Any, features: Any) -> Path:
    root = tmp_path / "ds" / "1.0.0"
    root.mkdir(parents=True)
    (root / "dataset_info.json").write_text(json.dumps(info))
    (root / "features.json").write_text(json.dumps(features))
    return root


def features_of(**nodes: Any) -> dict[str, Any]:
    return {
        "pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
        "featuresDict": {"features": nodes},
    }


def tensor(dims: list[Any], dtype: str = "int64") -> dict[str, Any]:
    return {"pythonClassName": TENSOR, "tensor": {"dtype": dtype, "shape": {"dimensions": dims}, "encoding": "none"}}


GOOD_INFO = {"name": "ds", "version": "1.0.0", "splits": [{"name": "train", "shardLengths": ["3"]}]}


@pytest.mark.parametrize(
    ("info", "features", "expected"),
    [
        ([1, 2], features_of(x=tensor([])), "expected a JSON object, found list"),
        ({**GOOD_INFO, "name": 7}, features_of(x=tensor([])), "'name' must be a string"),
        ({**GOOD_INFO, "splits": {"train": 3}}, features_of(x=tensor([])), "'splits' must be a list"),
        (
            {**GOOD_INFO, "splits": [{"name": "train", "shardLengths": ["-1"]}]},
            features_of(x=tensor([])),
            "out of range",
        ),
        ({**GOOD_INFO, "splits": [{"name": "train", "shardLengths": [1.5]}]}, features_of(x=tensor([])), "an integer"),
        ({**GOOD_INFO, "fileFormat": "riegeli"}, features_of(x=tensor([])), "unknown fileFormat 'riegeli'"),
        (
            GOOD_INFO,
            features_of(x=tensor(["99999999999"])),
            "feature 'x': a shape dimension 99999999999 is out of range",
        ),
        (GOOD_INFO, features_of(x=tensor([2**30, 2**30, 2**30])), "feature 'x': shape"),
        (GOOD_INFO, features_of(x=tensor(["-2"])), "out of range"),
        (GOOD_INFO, features_of(x=tensor([], "complex64")), "feature 'x': unknown dtype 'complex64'"),
        (
            GOOD_INFO,
            features_of(a=features_of(b={"pythonClassName": "my.pkg.Mesh", "mesh": {}})),
            "feature 'a/b': unknown feature connector 'my.pkg.Mesh'",
        ),
        (GOOD_INFO, features_of(x={"tensor": {}}), "feature 'x': no pythonClassName"),
        (
            GOOD_INFO,
            features_of(x={"pythonClassName": TENSOR, "tensor": "int64"}),
            "expected a 'tensor' object, found str",
        ),
        (GOOD_INFO, features_of(**{"a/b": tensor([])}), "hold no '/'"),
    ],
)
def test_bad_metadata_is_a_clear_error(tmp_path: Path, info: Any, features: Any, expected: str) -> None:
    root = folder(tmp_path, info, features)
    with pytest.raises(DatasetInfoError, match=re.escape(expected)):
        tfds.info(root)


def test_deep_nesting_is_refused_not_a_recursion_error(tmp_path: Path) -> None:
    node: Any = tensor([])
    for _ in range(200):
        node = features_of(x=node)
    with pytest.raises(DatasetInfoError, match="nested more than 32 levels"):
        tfds.info(folder(tmp_path, GOOD_INFO, node))


@pytest.mark.parametrize(
    "template",
    [
        "../../secret-{SHARD_INDEX}",
        "/etc/{SPLIT}",
        "a/../../{SPLIT}",
        "{SPLIT}\\..\\x",
        "s3://bucket/{SPLIT}",
        "{NOPE}",
    ],
)
def test_shard_names_that_leave_the_folder_are_refused_before_any_read(tmp_path: Path, template: str) -> None:
    secret = tmp_path / "secret-00000"
    secret.write_bytes(b"not for you")
    info = {**GOOD_INFO, "splits": [{"name": "train", "shardLengths": ["3"], "filepathTemplate": template}]}
    root = folder(tmp_path, info, features_of(x=tensor([])))
    with pytest.raises(DatasetInfoError, match="filepathTemplate"):
        tfds.load(root)


def test_a_shard_shorter_than_its_length_names_the_shard(tmp_path: Path) -> None:
    import tfrecord_lite as tfr

    root = folder(tmp_path, GOOD_INFO, features_of(x=tensor([])))
    with tfr.TFRecordWriter(str(root / "ds-train.tfrecord-00000-of-00001")) as writer:
        writer.write_example({"x": 1})
    with pytest.raises(tfr.TFRecordError, match=r"holds 1 records, but dataset_info\.json says at least 3"):
        list(tfds.load(root))


def test_a_missing_folder_says_what_a_tfds_folder_holds(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"dataset_info\.json is missing: a TFDS folder holds"):
        tfds.info(tmp_path)


def test_oversized_json_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tfrecord_lite._tfds import info_files

    root = folder(tmp_path, {**GOOD_INFO, "description": "x" * 5000}, features_of(x=tensor([])))
    monkeypatch.setattr(info_files, "MAX_JSON_BYTES", 1000)
    with pytest.raises(DatasetInfoError, match="larger than 1000 bytes"):
        tfds.info(root)


def test_a_damaged_shard_raises_naming_it_or_is_skipped(tmp_path: Path) -> None:
    import tfrecord_lite as tfr

    root = folder(tmp_path, GOOD_INFO, features_of(x=tensor([])))
    shard = root / "ds-train.tfrecord-00000-of-00001"
    with tfr.TFRecordWriter(str(shard)) as writer:
        for x in range(3):
            writer.write_example({"x": x})
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside the second record's payload
    shard.write_bytes(bytes(data))
    with pytest.raises(tfr.CorruptRecordError, match=re.escape(str(shard))):
        list(tfds.load(root))
    kept = [int(ex["x"]) for ex in tfds.load(root, on_error="skip")]
    assert kept == [0, 2]


def test_the_legacy_features_json_parses_as_the_proto_form(tmp_path: Path) -> None:
    """TFDS before 4.5 wrote {"type": CLASS, "content": ARGUMENTS} (TFDS's own backward test's example)."""
    base = "tensorflow_datasets.core.features."
    legacy = {
        "type": base + "features_dict.FeaturesDict",
        "content": {
            "input": {
                "type": base + "image_feature.Image",
                "content": {"shape": [28, None, 3], "dtype": "uint8", "encoding_format": "png"},
            },
            "target": {"type": base + "class_label_feature.ClassLabel", "content": {"num_classes": 10}},
            "steps": {
                "type": base + "dataset_feature.Dataset",
                "content": {
                    "feature": {"type": base + "feature.Tensor", "content": {"shape": [2], "dtype": "float32"}},
                    "length": None,
                },
            },
        },
    }
    proto = features_of(
        input={
            "pythonClassName": base + "image_feature.Image",
            "image": {"shape": {"dimensions": [28, -1, 3]}, "dtype": "uint8", "encodingFormat": "png"},
        },
        target={"pythonClassName": base + "class_label_feature.ClassLabel", "classLabel": {"numClasses": "10"}},
        steps={
            "pythonClassName": base + "dataset_feature.Dataset",
            "sequence": {
                "feature": {
                    "pythonClassName": base + "feature.Tensor",
                    "tensor": {"shape": {"dimensions": [2]}, "dtype": "float32"},
                },
                "length": "-1",
            },
        },
    )
    old = tfds.info(folder(tmp_path / "old", GOOD_INFO, legacy)).features
    new = tfds.info(folder(tmp_path / "new", GOOD_INFO, proto)).features
    assert old == new and str(old) == str(new)
    assert "'input': Image(shape=(28, None, 3), dtype=uint8)" in str(old)


def test_encoded_tensors_are_sized_from_their_shape_before_inflating(tmp_path: Path) -> None:
    import zlib

    import tfrecord_lite as tfr

    zlib_tensor = {
        "pythonClassName": TENSOR,
        "tensor": {"dtype": "float32", "shape": {"dimensions": [-1, -1]}, "encoding": "zlib"},
    }
    root = folder(
        tmp_path, {**GOOD_INFO, "splits": [{"name": "train", "shardLengths": ["3"]}]}, features_of(x=zlib_tensor)
    )
    bomb = zlib.compress(bytes(64 << 20))  # 64 MiB of zeros in 64 KiB
    with tfr.TFRecordWriter(str(root / "ds-train.tfrecord-00000-of-00001")) as writer:
        writer.write_example({"x/value": [bomb], "x/shape": np.array([2, 2], np.int64)})  # claims 16 bytes
        writer.write_example({"x/value": [bomb], "x/shape": np.array([1 << 20, 1 << 20], np.int64)})  # 4 TiB
        writer.write_example(
            {"x/value": [zlib.compress(np.ones((2, 3), np.float32).tobytes())], "x/shape": np.array([2, 3], np.int64)}
        )
    examples = tfds.load(root)
    with pytest.raises(tfr.DecodeError, match=r"17 bytes for a float32 tensor of shape \(2, 2\) \(expected 16\)"):
        examples[0]
    with pytest.raises(tfr.DecodeError, match="would take 4398046511104 bytes"):
        examples[1]
    assert examples[2]["x"].tolist() == np.ones((2, 3)).tolist()


def test_a_data_dir_instead_of_the_dataset_folder_names_the_folders_below(tmp_path: Path) -> None:
    folder(tmp_path, GOOD_INFO, features_of(x=tensor([])))  # tmp_path/ds/1.0.0
    with pytest.raises(FileNotFoundError, match=re.escape("TFDS folders below it: ds/1.0.0")):
        tfds.info(tmp_path)
