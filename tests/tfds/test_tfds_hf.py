"""A TFDS split as a Hugging Face Dataset: Image and ClassLabel features where TFDS has them, and the
same values as load()."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

datasets = pytest.importorskip("datasets")
pytestmark = pytest.mark.hf

from tfrecord_lite import tfds


def test_images_and_class_labels_become_hf_features(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    hf = tfds.to_hf_dataset(data / "everything", split="test")
    examples = list(tfds.load(data / "everything", split="test"))
    assert isinstance(hf.features["image"], datasets.Image)
    assert hf.features["label"] == datasets.ClassLabel(names=["cat", "dog", "bird"])
    assert len(hf) == len(examples) == 8
    for row, example in zip(hf, examples, strict=True):
        assert np.array_equal(np.asarray(row["image"]), example["image"])
        assert row["label"] == example["label"] and row["text"] == example["text"]
        assert row["objects"]["note"] == example["objects"]["note"].tolist()
        assert np.array_equal(np.asarray(row["audio"], np.int16), example["audio"])


def test_rlds_episodes_keep_their_steps(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    hf = tfds.to_hf_dataset(data / "episodes", split="train")
    examples = list(tfds.load(data / "episodes", split="train"))
    assert [len(row["steps"]) for row in hf] == [len(ex["steps"]) for ex in examples]
    first = hf[0]["steps"][0]
    assert np.array_equal(np.asarray(first["observation"]["image"]), examples[0]["steps"][0]["observation"]["image"])
    assert (
        first["is_first"] is True and first["language_instruction"] == examples[0]["steps"][0]["language_instruction"]
    )
