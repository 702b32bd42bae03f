"""ArrayRecord TFDS folders without TensorFlow: shards written by the array-record package itself
(the records encoded by tfrecord_lite) read by load() in file order, by stream and by index; and,
without the package, an error saying what to install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tfrecord_lite import tfds

FEATURES = {
    "pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
    "featuresDict": {
        "features": {
            "x": {
                "pythonClassName": "tensorflow_datasets.core.features.tensor_feature.Tensor",
                "tensor": {"dtype": "int32", "shape": {}, "encoding": "none"},
            }
        }
    },
}


def array_record_folder(root: Path, lengths: list[int]) -> Path:
    from array_record.python.array_record_module import ArrayRecordWriter

    root.mkdir(parents=True)
    info = {"name": "ar", "version": "1.0.0", "fileFormat": "array_record",
            "splits": [{"name": "train", "shardLengths": [str(n) for n in lengths]}]}  # fmt: skip
    (root / "dataset_info.json").write_text(json.dumps(info))
    (root / "features.json").write_text(json.dumps(FEATURES))
    x = 0
    for k, n in enumerate(lengths):
        writer = ArrayRecordWriter(str(root / f"ar-train.array_record-{k:05d}-of-{len(lengths):05d}"), "group_size:1")
        for _ in range(n):
            writer.write(tfr.encode_example({"x": x}))
            x += 1
        writer.close()
    return root


def test_an_array_record_folder_reads_in_file_order(tmp_path: Path) -> None:
    pytest.importorskip("array_record")
    root = array_record_folder(tmp_path / "ar", [40, 0, 25, 3])
    assert tfds.info(root).file_format == "array_record"
    for split, expected in [("train", range(68)), ("train[30:45]", range(30, 45)), ("train[-10%:]", range(61, 68))]:
        examples = tfds.load(root, split=split)
        assert [int(ex["x"]) for ex in examples] == list(expected)
        assert [int(examples[i]["x"]) for i in range(len(examples))] == list(expected)


def test_without_array_record_the_error_names_the_extra(tmp_path: Path) -> None:
    pytest.importorskip("array_record")
    root = array_record_folder(tmp_path / "ar", [3])
    code = (
        "import sys; sys.modules['array_record'] = None\n"
        "from tfrecord_lite import tfds\n"
        f"try:\n    tfds.load({str(root)!r})[0]\nexcept ImportError as err:\n    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'tfrlite[arrayrecord]'" in out
