# The scalars of a TensorBoard logdir into a pandas DataFrame: tfrecord_lite.events.to_pandas against
# tbparse's SummaryReader and TensorBoard's own EventMultiplexer (every event kept: size_guidance
# unlimited), CRCs checked by all. Also ours with a one-tag filter. Run in the tf venv (tbparse and
# tensorboard installed; TensorBoard then reads records with TensorFlow's C++ reader, its fastest).
# The logdir (runs of scalars every step, histograms every 10 steps, an image every 500) is written
# once into .work/ by EventWriter, whose summaries are tf.summary's bytes. Rounds as _rounds.py says.
#
#   python benchmarks/events.py [--runs 5] [--steps 20000] [--rounds 3]
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from typing import Any

import numpy as np
from _rounds import compare, rounds, spread

from tfrecord_lite.events import EventWriter, to_pandas

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".work")
SCALARS = ["loss", "metrics/accuracy", "metrics/precision", "lr", "grad_norm"]


def logdir(runs: int, steps: int) -> str:
    root = os.path.join(WORK, f"events-{runs}x{steps}")
    if os.path.isdir(root):
        return root
    rng = np.random.default_rng(0)
    for r in range(runs):
        with EventWriter(os.path.join(root + ".tmp", f"run-{r}")) as writer:
            for step in range(steps):
                for k, tag in enumerate(SCALARS):
                    writer.add_scalar(tag, float(np.exp(-step / steps) + k), step)
                if step % 10 == 0:
                    writer.add_histogram("weights", rng.normal(size=256), step)
                    writer.add_histogram("grads", rng.normal(size=256), step)
                if step % 500 == 0:
                    writer.add_image("sample", rng.integers(0, 255, (64, 64, 3), dtype=np.uint8), step)
    os.replace(root + ".tmp", root)
    return root


def size_of(root: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)


def tbparse_scalars(root: str) -> Any:
    from tbparse import SummaryReader

    # tf.summary.scalar (v2) values are tensors: tbparse shows them as .tensors
    frame = SummaryReader(root, extra_columns={"dir_name", "wall_time"}).tensors
    return frame[frame["tag"].isin(SCALARS)]


def tensorboard_scalars(root: str) -> Any:
    import pandas as pd
    from tensorboard.backend.event_processing import plugin_event_accumulator, plugin_event_multiplexer
    from tensorboard.util import tensor_util

    everything = plugin_event_accumulator.STORE_EVERYTHING_SIZE_GUIDANCE
    multiplexer = plugin_event_multiplexer.EventMultiplexer(size_guidance=everything)
    multiplexer.AddRunsFromDirectory(root)
    multiplexer.Reload()
    rows = []
    for run, by_tag in multiplexer.PluginRunToTagToContent("scalars").items():
        for tag in by_tag:
            for e in multiplexer.Tensors(run, tag):
                rows.append((run, e.step, e.wall_time, tag, float(tensor_util.make_ndarray(e.tensor_proto))))
    frame = pd.DataFrame(rows, columns=["run", "step", "wall_time", "tag", "value"])
    frame["wall_time"] = pd.to_datetime(frame["wall_time"], unit="s", utc=True)
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = logdir(args.runs, args.steps)
    expected = args.runs * args.steps * len(SCALARS)
    print(f"logdir {root}: {size_of(root) / 1e6:.1f} MB, {expected:,} scalars")
    systems = {
        "tfrecord_lite": lambda: to_pandas(root, kinds="scalar"),
        "tfrecord_lite, one tag": lambda: to_pandas(root, tags="loss"),
        "tbparse": lambda: tbparse_scalars(root),
        "EventAccumulator": lambda: tensorboard_scalars(root),
    }
    for name, fn in systems.items():
        rows = len(fn())
        want = expected // len(SCALARS) if "one tag" in name else expected
        assert rows == want, (name, rows, want)
    times = rounds(systems, args.rounds, warmup=False)
    for name, seconds in times.items():
        s = spread(seconds)
        print(f"{name:24s} {s['median']:7.2f} s  (rounds {s['low']:.2f} .. {s['high']:.2f})")
    for other in ("tbparse", "EventAccumulator"):
        for ours in ("tfrecord_lite", "tfrecord_lite, one tag"):
            c = compare(times[ours], times[other])
            print(f"{ours} vs {other}: {c['median']:.1f}x (rounds {c['low']:.1f} .. {c['high']:.1f})")


if __name__ == "__main__":
    main()
