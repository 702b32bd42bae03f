# Reading a prepared TensorFlow Datasets folder: tfrecord_lite.tfds.load against TensorFlow Datasets'
# own reader, `tfds.as_numpy(builder.as_dataset(split=...))`, both decoding every image to a uint8
# array and giving its class label:
#
#   python benchmarks/tfds_read.py [--rounds N] [--examples N] [--dir DIR] [--python P] [--tf-python P]
#       [--out FILE.json]
#
# The dataset is built once, with real tensorflow-datasets under --tf-python (default .venvs/tf): a
# GeneratorBasedBuilder (no download) of --examples (default 4,000) 64x64 RGB images, stored as PNG
# by TFDS's Image feature, with a ClassLabel of 10 classes, in a `train` split, prepared under DIR
# (default benchmarks/.work/tfds_read) and kept for later runs. Every cell is a fresh process: it
# imports its reader, opens the folder and iterates the whole split, every example decoded (the
# image an HxWxC uint8 array, the label an int64). tfrecord_lite runs under --python (default
# .venvs/py, no TensorFlow), as `load(folder, split="train")` (decoding on the calling thread) and
# with `num_threads=2` (decoding on two threads, as TensorFlow decodes on threads of its own),
# TensorFlow Datasets under --tf-python. In each of --rounds rounds
# (default 3) the three take turns in an order that rotates between rounds (benchmarks/_rounds.py).
# Prints examples/s of the iteration (the open excluded: it is the import of TensorFlow, mostly),
# the seconds of import + open, by the wall clock and by the process's CPU time (TensorFlow decodes
# on threads of its own), median (min..max) over rounds, and tfrecord_lite's speed against
# TensorFlow Datasets': the ratio of the medians and (in brackets) the lowest and highest ratio of
# one round, of the iteration and of the whole process's work (import + open + iteration). Each
# cell also prints the number of examples and the sum of the labels and of every image's first
# pixel, so both are seen to read the same data. Last, `info()` of the folder served by
# a local HTTP server (the standard library's), and the requests it made (the target: at most 2, the
# two JSON files). Raw times go to JSON (default benchmarks/results/tfds_read.json). Nothing here
# asserts.
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from _rounds import spread, turns

OURS = "tfrecord_lite.tfds.load"
THREADS = "load(num_threads=2)"
THEIRS = "tfds.as_numpy(as_dataset)"
SYSTEMS = [OURS, THREADS, THEIRS]
SIZE = 64
CLASSES = [f"class_{i}" for i in range(10)]


def build(data_dir: str, n: int) -> None:
    """Prepare the dataset with tensorflow-datasets (run under the TensorFlow venv)."""
    import numpy as np
    import tensorflow_datasets as tfds

    class Squares64(tfds.core.GeneratorBasedBuilder):  # type: ignore[misc]
        VERSION = tfds.core.Version("1.0.0")

        def _info(self) -> object:
            features = tfds.features.FeaturesDict(
                {
                    "image": tfds.features.Image(shape=(SIZE, SIZE, 3)),
                    "label": tfds.features.ClassLabel(names=CLASSES),
                }
            )
            return tfds.core.DatasetInfo(builder=self, description="64x64 squares", features=features)

        def _split_generators(self, dl_manager: object) -> object:
            return {"train": self._generate_examples(n)}

        def _generate_examples(self, count: int) -> object:
            rng = np.random.default_rng(0)
            for i in range(count):
                label = i % len(CLASSES)
                image = np.full((SIZE, SIZE, 3), 25 * label, np.uint8)
                y, x = rng.integers(0, SIZE // 2, 2)
                image[y : y + SIZE // 2, x : x + SIZE // 2] = rng.integers(0, 256, 3, dtype=np.uint8)
                image += rng.integers(0, 8, image.shape, dtype=np.uint8)  # some noise, as photos have
                yield i, {"image": image, "label": label}

    builder = Squares64(data_dir=data_dir)
    builder.download_and_prepare()
    print(builder.data_dir)


def child(system: str, folder: str) -> None:
    """One cell: import, open, iterate the split; print the times and a checksum as JSON."""
    started, cpu = time.perf_counter(), time.process_time()
    if system in (OURS, THREADS):
        from tfrecord_lite import tfds

        examples = tfds.load(folder, split="train", num_threads=2 if system == THREADS else 1)
    else:
        import tensorflow_datasets as tfds_peer

        builder = tfds_peer.builder_from_directory(folder)
        examples = tfds_peer.as_numpy(builder.as_dataset(split="train"))
    opened, opened_cpu = time.perf_counter(), time.process_time()
    count = labels = pixels = 0
    for example in examples:
        image = example["image"]
        assert image.shape == (SIZE, SIZE, 3)
        count += 1
        labels += int(example["label"])
        pixels += int(image[0, 0, 0])
    done, done_cpu = time.perf_counter(), time.process_time()
    times = {"open": [opened - started, opened_cpu - cpu], "iterate": [done - opened, done_cpu - opened_cpu]}
    print(json.dumps({"times": times, "check": [count, labels, pixels]}))


def remote_info(data_dir: str) -> None:
    """info() of the folder served over HTTP by a local server: the requests it made, as JSON."""
    import functools
    import http.server
    import threading

    from tfrecord_lite import tfds

    requests: list[str] = []

    class Counting(http.server.SimpleHTTPRequestHandler):
        def send_head(self) -> Any:
            requests.append(f"{self.command} {self.path}")
            return super().send_head()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Counting, directory=data_dir))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        tfds.info(f"http://127.0.0.1:{server.server_address[1]}/squares64/1.0.0")
    finally:
        server.shutdown()
        server.server_close()
    print(json.dumps({"requests": requests}))


def run(python: str, *argv: str) -> dict[str, Any] | None:
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run([python, os.path.abspath(__file__), *argv], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(f"{' '.join(argv)} failed:\n{out.stderr[-1500:]}", file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def prepare(tf_python: str, data_dir: str, n: int) -> str:
    folder = os.path.join(data_dir, "squares64", "1.0.0")
    if not os.path.exists(os.path.join(folder, "dataset_info.json")):
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        argv = [tf_python, os.path.abspath(__file__), "--build", data_dir, str(n)]
        out = subprocess.run(argv, capture_output=True, text=True, env=env)
        if out.returncode != 0:
            sys.exit(f"building the dataset failed:\n{out.stderr[-3000:]}")
    return folder


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _spread(values: list[float], fmt: str) -> str:
    r = spread(values)
    return f"{r['median']:{fmt}} ({r['low']:{fmt}}..{r['high']:{fmt}})"


def _ratio(ours: list[float], theirs: list[float]) -> str:
    """How many times faster ours is (their seconds / ours): medians, and the lowest and highest round."""
    rounds = [t / o for o, t in zip(ours, theirs, strict=False)]
    if not rounds:
        return "-"
    return f"{statistics.median(theirs) / statistics.median(ours):.2f}x ({min(rounds):.2f}..{max(rounds):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--examples", type=int, default=4_000, help="examples in the split (built once)")
    parser.add_argument("--dir", default=os.path.join(HERE, ".work", "tfds_read"))
    parser.add_argument("--python", default=os.path.join(ROOT, ".venvs", "py", "bin", "python"))
    parser.add_argument("--tf-python", default=os.path.join(ROOT, ".venvs", "tf", "bin", "python"))
    parser.add_argument("--out", default=os.path.join(HERE, "results", "tfds_read.json"))
    parser.add_argument("--build", nargs=2, metavar=("DIR", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=2, metavar=("SYSTEM", "FOLDER"), help=argparse.SUPPRESS)
    parser.add_argument("--remote-info", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.remote_info:
        remote_info(args.remote_info)
        return
    if args.build:
        build(args.build[0], int(args.build[1]))
        return
    if args.child:
        child(*args.child)
        return
    data_dir = os.path.join(args.dir, str(args.examples))
    folder = prepare(args.tf_python, data_dir, args.examples)
    pythons = {OURS: args.python, THREADS: args.python, THEIRS: args.tf_python}
    cells: dict[str, list[dict[str, list[float]]]] = {s: [] for s in SYSTEMS}
    checks: dict[str, list[object]] = {}
    loads = [loadavg()]
    for _, system in turns(SYSTEMS, args.rounds):
        got = run(pythons[system], "--child", system, folder)
        if got is not None:
            cells[system].append(got["times"])
            checks[system] = got["check"]
    loads.append(loadavg())
    n = args.examples
    print(
        f"Decoding a split of {n:,} {SIZE}x{SIZE} PNG images with class labels, {args.rounds} rounds of a fresh "
        f"process per system, load {loads[0]} -> {loads[1]}; median (min..max) of the rounds"
    )
    for system in SYSTEMS:
        print(f"  {system:<27} examples, label sum, first-pixel sum: {checks.get(system)}")
    for clock, k in (("wall", 0), ("CPU", 1)):
        iterate = {s: [c["iterate"][k] for c in cells[s]] for s in SYSTEMS if cells[s]}
        opening = {s: [c["open"][k] for c in cells[s]] for s in SYSTEMS if cells[s]}
        for s in iterate:
            rates = [n / t for t in iterate[s]]
            opened = _spread(opening[s], ".2f")
            print(f"  {clock:<4} {s:<27} {_spread(rates, ',.0f')} examples/s   import + open {opened} s")
        whole = {s: [o + i for o, i in zip(opening[s], iterate[s], strict=True)] for s in iterate}
        for ours in (OURS, THREADS):
            if ours in iterate and THEIRS in iterate:
                name = f"{'load' if ours == OURS else 'num_threads=2'} / TFDS"
                print(
                    f"  {clock:<4} {name:<27} {_ratio(iterate[ours], iterate[THEIRS])}"
                    f"   with import + open: {_ratio(whole[ours], whole[THEIRS])}"
                )
    remote = run(args.python, "--remote-info", data_dir)
    if remote is not None:
        got = remote["requests"]
        print(f"  info() of the folder over HTTP (a local server): {len(got)} requests: {', '.join(got)}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        report = {"python": platform.python_version(), "rounds": args.rounds, "examples": n, "load": loads}
        json.dump({**report, "seconds (wall, CPU)": cells, "checks": checks, "remote info": remote}, fh, indent=1)


if __name__ == "__main__":
    main()
