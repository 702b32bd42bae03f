"""TensorBoard logs for the events tests: a logdir written by TensorFlow (tf.summary's v2 forms,
tf.compat.v1.summary's v1 forms, the hparams plugin), read by TensorBoard's own EventMultiplexer,
and the one canonical form both readings are compared in.

The canonical form: {"runs": {run: {tag: {"kind": KIND, "events": [[step, wall_time, VALUE], ...]}}}}
where VALUE is a float (scalar), a list of [left, right, count] rows (histogram), the SHA-256 hex
digests of the encoded blobs of one step (image, audio), a str or nested list of str (text), a
{"shape", "values"} dict (tensor), or the session dict (hparams). `python -m tests._tensorboard
OUT_DIR` (in the tf venv) writes tests/data/tensorboard: the logdir and oracle.json."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np

PLUGIN_KINDS = {"scalars": "scalar", "histograms": "histogram", "images": "image", "audio": "audio", "text": "text"}
STEPS = 5


def write_tf_logdir(logdir: str) -> None:
    """A logdir of three runs written by TensorFlow: v2 summaries, v1 summaries, and hparams."""
    import tensorflow as tf
    from tensorboard.plugins.hparams import api as hp

    rng = np.random.default_rng(0)
    writer = tf.summary.create_file_writer(os.path.join(logdir, "v2"))
    with writer.as_default():
        for step in range(STEPS):
            tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
            tf.summary.scalar("metrics/accuracy", step / 10, step=step)
            tf.summary.histogram("weights", rng.normal(size=100), step=step, buckets=8)
            tf.summary.histogram("constant", np.full(4, 2.5), step=step)
            tf.summary.image("sample", rng.integers(0, 255, (2, 4, 3, 3), dtype=np.uint8), step=step, max_outputs=2)
            tf.summary.text("note", f"step **{step}** ünïcode", step=step)
            tf.summary.audio("tone", rng.uniform(-1, 1, (1, 80, 1)).astype(np.float32), 8000, step=step)
    writer.close()
    _write_v1(os.path.join(logdir, "nested", "v1"), rng)
    hp_writer = tf.summary.create_file_writer(os.path.join(logdir, "hparams", "trial-0"))
    with hp_writer.as_default():
        hp.hparams({"learning_rate": 0.01, "optimizer": "adam", "dropout": True}, trial_id="trial-0")
        tf.summary.scalar("loss", 0.25, step=1)
    hp_writer.close()


def _write_v1(logdir: str, rng: np.random.Generator) -> None:
    import tensorflow as tf

    v1 = tf.compat.v1
    with tf.Graph().as_default():
        x = v1.placeholder(tf.float32, [])
        data = v1.placeholder(tf.float32, [None])
        pixels = v1.placeholder(tf.uint8, [1, 3, 2, 1])
        summaries = v1.summary.merge(
            [
                v1.summary.scalar("v1/scalar", x),
                v1.summary.histogram("v1/histogram", data),
                v1.summary.image("v1/image", pixels),
                v1.summary.text("v1/text", tf.strings.as_string(x)),
                v1.summary.audio("v1/audio", tf.reshape(data[:20], [1, 20]) / 10, 4000),
            ]
        )
        writer = v1.summary.FileWriter(logdir)
        with v1.Session() as session:
            for step in range(STEPS):
                image = rng.integers(0, 255, (1, 3, 2, 1))
                feed = {x: step * 1.5, data: rng.normal(size=50) * (step + 1), pixels: image}
                writer.add_summary(session.run(summaries, feed), step)
        writer.close()


def tensorboard_reading(logdir: str) -> dict[str, Any]:
    """The logdir as TensorBoard's EventMultiplexer reads it (every event kept), canonical."""
    from tensorboard.backend.event_processing import plugin_event_accumulator, plugin_event_multiplexer
    from tensorboard.plugins.hparams import plugin_data_pb2
    from tensorboard.util import tensor_util

    everything = plugin_event_accumulator.STORE_EVERYTHING_SIZE_GUIDANCE
    multiplexer = plugin_event_multiplexer.EventMultiplexer(size_guidance=everything)
    multiplexer.AddRunsFromDirectory(logdir)
    multiplexer.Reload()
    runs: dict[str, Any] = {}
    for run, content in multiplexer.Runs().items():
        tags = runs.setdefault(run, {})
        for tag in content.get("tensors", []):
            plugin = multiplexer.SummaryMetadata(run, tag).plugin_data.plugin_name
            kind = PLUGIN_KINDS.get(plugin, "tensor")
            events = [
                [e.step, e.wall_time, _tb_value(kind, tensor_util.make_ndarray(e.tensor_proto))]
                for e in multiplexer.Tensors(run, tag)
            ]
            tags[tag] = {"kind": kind, "events": events}
    for run, by_tag in multiplexer.PluginRunToTagToContent("hparams").items():
        for tag, raw in by_tag.items():
            data = plugin_data_pb2.HParamsPluginData.FromString(raw)
            if data.HasField("session_start_info"):
                start = data.session_start_info
                hparams = {k: _struct(v) for k, v in start.hparams.items()}
                value = {"session_start": {"hparams": hparams, "group_name": start.group_name}}
                runs.setdefault(run, {})[tag] = {"kind": "hparams", "value": value}
    return {"runs": runs}


def _struct(value: Any) -> Any:
    from google.protobuf import json_format

    return json_format.MessageToDict(value)


def _digest(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def _tb_value(kind: str, array: np.ndarray) -> Any:
    if kind == "scalar":
        return float(array)
    if kind == "histogram":
        return np.asarray(array, dtype=np.float64).tolist()
    if kind == "image":
        return [_digest(b) for b in array.reshape(-1)[2:]]
    if kind == "audio":
        return [_digest(b) for b in (array[:, 0] if array.ndim == 2 else array.reshape(-1))]
    if kind == "text":
        return _texts(array)
    return {"shape": list(array.shape), "values": np.asarray(array).reshape(-1).tolist()}


def _texts(array: Any) -> Any:
    if isinstance(array, np.ndarray):
        return _texts(array.tolist()) if array.ndim else _texts(array.item())
    if isinstance(array, list):
        return [_texts(a) for a in array]
    return array.decode("utf-8") if isinstance(array, bytes) else array


def our_reading(records: Iterable[Any]) -> dict[str, Any]:
    """read_events' rows in the same canonical form (the image and audio rows of one step joined)."""
    runs: dict[str, Any] = {}
    for run, step, wall_time, tag, kind, value in records:
        entry = runs.setdefault(run, {}).setdefault(tag, {"kind": kind, "events": []})
        if kind == "hparams":
            start = value.get("session_start")
            if start is not None:
                entry.pop("events", None)
                group = start.get("group_name", "")
                entry["value"] = {"session_start": {"hparams": start["hparams"], "group_name": group}}
            continue
        events = entry["events"]
        if kind in ("image", "audio"):
            if events and events[-1][0] == step and events[-1][1] == wall_time:
                events[-1][2].append(_digest(value))
            else:
                events.append([step, wall_time, [_digest(value)]])
            continue
        if kind == "histogram":
            value = value.tolist()
        elif kind == "text":
            value = _texts(value)
        elif kind == "tensor":
            value = {"shape": list(value.shape), "values": value.reshape(-1).tolist()}
        events.append([step, wall_time, value])
    return {"runs": runs}


def assert_same_reading(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Equal runs, tags, kinds, steps and wall times; equal values (histogram edges to float32's
    precision: TensorBoard makes a v1 histogram's edges float32)."""
    assert sorted(ours["runs"]) == sorted(theirs["runs"])
    for run, tags in theirs["runs"].items():
        assert sorted(ours["runs"][run]) == sorted(tags), run
        for tag, entry in tags.items():
            mine = ours["runs"][run][tag]
            assert mine["kind"] == entry["kind"], (run, tag)
            if "value" in entry:
                assert mine["value"] == entry["value"], (run, tag)
                continue
            assert [e[:2] for e in mine["events"]] == [e[:2] for e in entry["events"]], (run, tag)
            for (_, _, a), (_, _, b) in zip(mine["events"], entry["events"], strict=True):
                if entry["kind"] == "histogram":
                    np.testing.assert_allclose(np.asarray(a).reshape(-1, 3), np.asarray(b).reshape(-1, 3), rtol=1e-6)
                else:
                    assert a == b, (run, tag)


def main(out_dir: str) -> None:
    logdir = os.path.join(out_dir, "logdir")
    write_tf_logdir(logdir)
    with open(os.path.join(out_dir, "oracle.json"), "w") as f:
        json.dump(tensorboard_reading(logdir), f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
