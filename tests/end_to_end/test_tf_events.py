"""TensorFlow and TensorBoard as the oracles of tfrecord_lite.events: a logdir tf.summary writes
(v2 and v1 forms, hparams) read alike by read_events and TensorBoard's EventMultiplexer; the files
EventWriter writes loaded by the multiplexer to the same values, and their summaries the bytes
tf.summary writes.

Skipped as a whole when TensorFlow is not installed."""

from __future__ import annotations

import os
import re
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from pathlib import Path
from typing import Any

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("tensorboard")

from tests._tensorboard import assert_same_reading, our_reading, tensorboard_reading, write_tf_logdir
from tfrecord_lite import iter_records
from tfrecord_lite.events import EventWriter, read_events

pytestmark = pytest.mark.tf


def test_a_fresh_tensorflow_logdir_reads_as_tensorboard_reads_it(tmp_path: Path) -> None:
    write_tf_logdir(str(tmp_path))
    assert_same_reading(our_reading(read_events(tmp_path)), tensorboard_reading(str(tmp_path)))


def _write_both(root: Path) -> None:
    rng = np.random.default_rng(1)
    values = rng.normal(size=(4, 64))
    pixels = rng.integers(0, 255, (4, 5, 6, 3), dtype=np.uint8)
    with EventWriter(root / "ours") as writer:
        for step in range(4):
            writer.add_scalar("loss", 1.5 / (step + 1), step, wall_time=1000.0 + step)
            writer.add_histogram("w", values[step], step, buckets=7, wall_time=1000.0 + step)
            writer.add_histogram("flat", np.full(3, 2.0), step, wall_time=1000.0 + step)
            writer.add_image("img", pixels[step], step, wall_time=1000.0 + step)
            writer.add_text("note", f"**{step}** ü", step, wall_time=1000.0 + step)
    tf_writer = tf.summary.create_file_writer(str(root / "tf"))
    with tf_writer.as_default():
        for step in range(4):
            tf.summary.scalar("loss", 1.5 / (step + 1), step=step)
            tf.summary.histogram("w", values[step], step=step, buckets=7)
            tf.summary.histogram("flat", np.full(3, 2.0), step=step)
            tf.summary.image("img", pixels[step][None], step=step)
            tf.summary.text("note", f"**{step}** ü", step=step)
    tf_writer.close()


def test_event_writer_files_load_in_tensorboard_as_tf_summarys(tmp_path: Path) -> None:
    _write_both(tmp_path)
    reading = tensorboard_reading(str(tmp_path))["runs"]
    ours, theirs = reading["ours"], reading["tf"]
    assert sorted(ours) == sorted(theirs) == ["flat", "img", "loss", "note", "w"]
    for tag in ours:
        assert ours[tag]["kind"] == theirs[tag]["kind"]
        assert [e[0] for e in ours[tag]["events"]] == [0, 1, 2, 3]
        for (_, _, a), (_, _, b) in zip(ours[tag]["events"], theirs[tag]["events"], strict=True):
            if tag == "img":  # both PNGs decode to the same pixels (the deflate streams differ)
                continue
            if tag == "note":
                assert a == b
                continue
            np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=1e-12)
    assert [e[1] for e in ours["loss"]["events"]] == [1000.0, 1001.0, 1002.0, 1003.0]
    ours_png = [r.value for r in read_events(tmp_path / "ours", kinds="image")]
    tf_png = [r.value for r in read_events(tmp_path / "tf", kinds="image")]
    for a, b in zip(ours_png, tf_png, strict=True):
        np.testing.assert_array_equal(tf.io.decode_png(a).numpy(), tf.io.decode_png(b).numpy())


def _summaries(run: Path) -> list[bytes]:
    """Each event's bytes after its wall time (field 1, 9 bytes), image events left out."""
    (path,) = run.iterdir()
    return [record[9:] for record in iter_records(str(path)) if b"images" not in record]


def test_event_writer_writes_tf_summarys_bytes(tmp_path: Path) -> None:
    _write_both(tmp_path)
    ours, theirs = _summaries(tmp_path / "ours"), _summaries(tmp_path / "tf")
    assert ours[0] == theirs[0]  # the file version event, with its source writer
    assert ours[1:] == theirs[1:]


def _inspected(logdir: Path) -> dict[str, dict[str, object]]:
    """What `tensorboard --inspect --logdir` prints, per run: the tensor tags, and the tensor
    events' first, last, min and max step and how many there are."""
    tensorboard = Path(sys.executable).parent / "tensorboard"
    if not tensorboard.exists():
        pytest.skip("no tensorboard command beside this Python")
    done = subprocess.run(
        [str(tensorboard), "--inspect", "--logdir", str(logdir)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    runs: dict[str, dict[str, object]] = {}
    for block in done.stdout.split("=" * 70):
        head = re.search(r"(These tags are in|Event statistics for) (.+):", block)
        if head is None:
            continue
        run = runs.setdefault(os.path.relpath(head.group(2), logdir), {})
        tensor = block.split("\ntensor\n", 1)[1] if "\ntensor\n" in block else ""
        if head.group(1) == "These tags are in":
            run["tags"] = sorted(line.strip() for line in tensor.splitlines() if line.strip())
        else:
            stats = dict(re.findall(r"^\s+(\w+)\s+(\S+)$", tensor, re.M))
            run.update({k: int(v) for k, v in stats.items() if k != "outoforder_steps"})
    return runs


def test_event_writer_files_load_in_tensorboard_inspect(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    with EventWriter(tmp_path / "train") as writer:
        for step in range(0, 50, 5):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
            writer.add_histogram("weights", rng.normal(size=32), step)
            writer.add_text("note", f"step {step}", step)
        writer.add_image("sample", rng.integers(0, 255, (4, 4, 3), dtype=np.uint8), 45)
    with EventWriter(tmp_path / "eval" / "nested") as writer:
        writer.add_scalar("accuracy", 0.5, 7)
        writer.add_scalar("accuracy", 0.75, 9)
    inspected = _inspected(tmp_path)
    written: dict[str, dict[str, Any]] = {}
    for row in read_events(tmp_path):
        run = written.setdefault(row.run, {"tags": set(), "steps": []})
        run["tags"].add(row.tag)
        run["steps"].append(row.step)
    assert sorted(inspected) == sorted(written) == ["eval/nested", "train"]
    for name, run in written.items():
        steps = run["steps"]
        assert inspected[name] == {
            "tags": sorted(run["tags"]),
            "first_step": steps[0],
            "last_step": steps[-1],
            "min_step": min(steps),
            "max_step": max(steps),
            "num_steps": len(set(steps)),  # the steps of tensor events, each counted once
        }, name
    assert written["train"]["tags"] == {"loss", "weights", "note", "sample"}


def test_event_writer_writes_tf_summary_audios_bytes(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    clips = [
        (rng.uniform(-1.2, 1.2, (50, 1)).astype(np.float32), 8000),  # clipped beyond [-1, 1]
        (np.float32([[0.0, 0.5], [-1.0, 1.0], [0.33333, -0.25], [1 / 65536, -3 / 65536]]), 44100),  # halves round away
        (rng.uniform(-1, 1, (17, 3)).astype(np.float32), 16000),
    ]
    with EventWriter(tmp_path / "ours") as writer:
        for step, (clip, rate) in enumerate(clips):
            writer.add_audio("tone", clip, step, sample_rate=rate, wall_time=1000.0 + step)
        writer.add_audio("encoded", tf.audio.encode_wav(clips[0][0], 8000).numpy(), 9, sample_rate=8000)
    tf_writer = tf.summary.create_file_writer(str(tmp_path / "tf"))
    with tf_writer.as_default():
        for step, (clip, rate) in enumerate(clips):
            tf.summary.audio("tone", clip[None], rate, step=step)
    tf_writer.close()
    ours, theirs = _summaries(tmp_path / "ours"), _summaries(tmp_path / "tf")
    assert ours[1:4] == theirs[1:]
    wavs = [r.value for r in read_events(tmp_path / "ours", kinds="audio")]
    assert wavs[3] == wavs[0]
    for wav, (clip, rate) in zip(wavs, clips, strict=False):
        decoded, sample_rate = tf.audio.decode_wav(wav)
        assert int(sample_rate) == rate and decoded.shape == clip.shape
    reading = tensorboard_reading(str(tmp_path))["runs"]
    assert [e[0] for e in reading["ours"]["tone"]["events"]] == [0, 1, 2] and reading["ours"]["tone"]["kind"] == "audio"
