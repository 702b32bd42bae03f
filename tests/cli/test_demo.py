# The README's one-command demo, at a reduced size: scikit-learn's digits ->
# PNG files in class folders -> shards of raw pixels + label map -> verify -> a
# PyTorch DataLoader over the shards (a RawFeature) training a small CNN. Checked end to end: the
# pixels and labels that come back out of the shards are scikit-learn's own.
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.torch
pytest.importorskip("sklearn")
pytest.importorskip("PIL")

import tfrecord_lite as tfr
from tfrecord_lite import images
from tfrecord_lite.cli import demo as _demo


def test_demo_pipeline_at_reduced_size(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from sklearn.datasets import load_digits

    out = tmp_path / "demo"
    result = _demo.run(str(out), limit=300, epochs=3, shards=3, workers=0, seed=0)
    printed = capsys.readouterr().out
    assert result["images"] == 300 and len(result["shards"]) == 3
    assert result["label_map"] == {str(d): d for d in range(10)}
    assert (out / "shards" / "digits.labels.json").exists()
    assert result["train"] == 270 and result["val"] == 30 and result["seen"] == 270
    assert result["val_accuracy"] > 0.5  # ten classes: chance is 0.1
    assert result["read_rate"] > 0
    for text in ("OK ", "image/encoded", "read throughput", "epoch 3/3", "validation accuracy"):
        assert text in printed

    digits = load_digits()
    expected = np.clip(digits.images * 16, 0, 255).astype(np.uint8)
    seen = set()
    for rec in images.iter_image_records(result["shards"]):
        i = int(rec.filename.rsplit("-", 1)[1].split(".")[0])  # "<digit>/digit-0042.png"
        seen.add(i)
        assert rec.label == digits.target[i] and rec.text == str(digits.target[i])
        assert rec.format == "raw" and rec.encoded == expected[i].tobytes()
        np.testing.assert_array_equal(rec.decode(mode="L")[:, :, 0], expected[i])
    assert seen == set(range(300))
    spec = {"image/encoded": tfr.RawFeature([8, 8, 1], "uint8"), "image/filename": tfr.FixedLenFeature([], "bytes")}
    for batch in tfr.iter_example_batches(result["shards"], features=spec, batch_size=64):
        rows = [int(name.rsplit(b"-", 1)[1].split(b".")[0]) for name in batch["image/filename"]]
        np.testing.assert_array_equal(batch["image/encoded"][:, :, :, 0], expected[rows])

    again = _demo.run(str(out), limit=50, epochs=1, shards=1, workers=0)  # a rerun clears its own folder
    assert again["images"] == 50 and len(list((out / "images").rglob("*.png"))) == 50
    capsys.readouterr()


def test_demo_refuses_a_folder_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(SystemExit, match="not a demo folder"):
        _demo.main(["--out", str(tmp_path), "--limit", "10"])
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_demo_command_with_dataloader_workers(tmp_path: Path) -> None:
    options = ["--limit", "120", "--epochs", "1", "--workers", "2", "--out", str(tmp_path / "d")]
    proc = subprocess.run(
        [sys.executable, "-m", "tfrecord_lite.cli.demo", *options], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 DataLoader workers" in proc.stdout and "[5/5] done" in proc.stdout
    assert "Warning" not in proc.stderr, proc.stderr
