# DataLoader throughput: tfrecord_lite.torch with 0, 1 and 2 workers and num_threads=1 and 2, read
# through the calls users write, beside the `tfrecord` package's TFRecordDataset (same file, call,
# transform and workers) and TensorFlow's tf.data with map(num_parallel_calls=AUTOTUNE), in one run.
#
#   python benchmarks/dataloader.py [--quick] [--rounds N] [--workers 0 1 2] [--threads 1 2] [--epochs E]
#          [--workloads small images seed jpeg] [--systems ...] [--lite-python P] [--tfrecord-python P]
#          [--tf-python P]
#
# Workloads: "small" (200k Examples: int64 label, 8 float32, 12-byte string; batch 256) and "images"
# (4k Examples: 64 KiB bytes + 3 int64; batch 32) come from benchmarks/workloads.py (raw records:
# read, decode, batch). "seed" (6k Examples as the seed writes them: a raw 100x100x3 uint8 image,
# `image.tobytes()`, and an int64 "lable"; batch 32) is read with the seed's per-record transform
# np.frombuffer -> reshape -> tensor, or as RawFeature batches. "jpeg" (1500 JPEGs, 256x256, quality
# 90; batch 32) is decoded and augmented to 224x224 CHW uint8 tensors: by ImageTransform(random_crop=,
# random_flip=) (simplejpeg decodes when installed), or by a user's Pillow transform. --quick, a smoke
# test: seed and jpeg at 1/10 size, 1 round, 1 epoch, 0 and 2 workers (unless given otherwise).
#
# Every (system, workers, num_threads) cell runs in its own interpreter (benchmarks/_dataloader_cells.py):
# one DataLoader (persistent_workers=True when workers > 0) iterated for 1 + E epochs, and for more
# while the epochs after the first add up to under 2 s (short epochs, as seed's and images' of
# 0.1-0.3 s, vary by a tenth from one to the next). "start-up" is the time to the first batch of the
# first epoch (workers started, files opened); "steady" is the median epoch time of the epochs after
# the first, the number the table shows. The main process
# of a torch cell runs torch with one intra-op thread, as DataLoader workers do (else its OpenMP
# threads, spinning on 2 busy cores, made 0 workers 10x slower on the JPEG workload). Per workload,
# all its cells take turns, round after round (benchmarks/_rounds.py): a cell reports the median of
# --rounds rounds with its spread, and a ratio of two cells (the targets) the ratio of their medians
# with the lowest and highest ratio of one round. num_threads=2 cells run only when the installed
# tfrecord_lite's datasets take num_threads=, and lite-raw only when it has RawFeature (said if not).
# Systems (the workloads they read):
#   lite-batched      IterableTFRecordDataset(batch_size=B) + DataLoader(batch_size=None): whole batches
#                     decoded by columns (small, images)
#   lite-items        IterableTFRecordDataset + DataLoader(batch_size=B, collate_fn=ds.collate_fn) (small, images)
#   lite-map          TFRecordDataset, shuffled: BatchSampler(RandomSampler) index lists, each batch read
#                     by random access (sorted by offset) and decoded by columns (small, images)
#   lite-map-plain    the call users write: DataLoader(TFRecordDataset(p, features=spec, transform=t),
#                     batch_size=B, shuffle=True), default collate; t = the seed's transform (images, seed)
#   lite-items-plain  the same with IterableTFRecordDataset (DataLoader cannot shuffle it) (seed)
#   lite-raw          IterableTFRecordDataset(features={"image": RawFeature((100, 100, 3), "uint8"),
#                     "lable": ...}, batch_size=B, output="torch") + DataLoader(batch_size=None) (seed)
#   tfrecord          tfrecord.torch.TFRecordDataset + DataLoader(batch_size=B), with its text index (small, images)
#   tfrecord-plain    the same with transform= the seed's transform (seed)
#   tf-data-raw       tf.data.TFRecordDataset.map(parse_single_example + decode_raw + reshape,
#                     num_parallel_calls=AUTOTUNE).batch(B).prefetch(AUTOTUNE) (seed)
#   lite-augment      IterableTFRecordDataset(record_type="raw") + DataLoader(collate_fn=ImageTransform(
#                     random_crop=, random_flip=, num_threads=N).collate): each image written straight
#                     into the batch, on the transform's threads (jpeg)
#   lite-pil          IterableTFRecordDataset(features=spec, transform=a user's Pillow decode, crop and
#                     flip) + DataLoader(batch_size=B), default collate (jpeg)
#   lite-pil-augment  the same crop and flip as a user's Pillow augmentation, given to the library's decode:
#                     transform=ImageTransform(augment=crop_flip) (simplejpeg when installed, Pillow's pixels) (jpeg)
#   tfrecord-augment  the `tfrecord` package's dataset, transform= the same ImageTransform (jpeg)
#   bare-pil          the bound of lite-pil's threads: the same Pillow transform over the Examples decoded
#                     beforehand (in memory, untimed), on a bare ThreadPoolExecutor of num_threads (or plain map),
#                     batched by torch's default_collate: no reader, no DataLoader, no ordering (jpeg)
#   tf-data           tf.data.TFRecordDataset.map(parse, decode_jpeg, random_crop, random_flip,
#                     num_parallel_calls=AUTOTUNE).batch(B).prefetch(AUTOTUNE): TensorFlow's threads;
#                     decode_jpeg(dct_method="INTEGER_ACCURATE"): the work (and the pixels) of Pillow's and
#                     simplejpeg's decode; TensorFlow's default ("") is libjpeg's fast integer DCT, a less
#                     exact and slightly cheaper decode (jpeg)
# tf.data cells run once a round (its own threads; "threads" in the workers column).
# Prints a markdown table, then each target of the loading issue (ratio, spread of the rounds, met or
# not), and writes the JSON of every number (benchmarks/results/dataloader.json). Not a test: asserts
# nothing except that each epoch yields every record once; the targets report whether a num_threads=2
# cell gave its labels in the order of its num_threads=1 cell.
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _dataloader_cells as C
import run as R
import workloads as W
from _rounds import spread, turns

BATCH = {"small": 256, "images": 32, "seed": 32, "jpeg": 32}
SYSTEMS = {
    "small": ("lite-batched", "lite-items", "lite-map", "tfrecord"),
    "images": ("lite-batched", "lite-items", "lite-map", "lite-map-plain", "tfrecord"),
    "seed": ("lite-map-plain", "lite-items-plain", "lite-raw", "tfrecord-plain", "tf-data-raw"),
    "jpeg": ("lite-augment", "lite-pil", "lite-pil-augment", "tfrecord-augment", "tf-data", "bare-pil"),
}
PEER = {"small": "tfrecord", "images": "tfrecord", "seed": "tfrecord-plain", "jpeg": "tfrecord-augment"}
ALL_SYSTEMS = tuple(dict.fromkeys(s for systems in SYSTEMS.values() for s in systems))
IN_ORDER = (  # unshuffled
    "lite-batched",
    "lite-items",
    "lite-items-plain",
    "lite-raw",
    "lite-augment",
    "lite-pil",
    "lite-pil-augment",
)
JPEG_COUNT, SEED_COUNT = 1500, 6000
QUICK = ["seed", "jpeg"]  # every kind of system, in well under a minute
Cell = tuple[str, str, int, int]  # (workload, system, workers, num_threads)
# (what, numerator, denominator, at least); a None workers or num_threads: the fastest such cell
TARGETS: list[tuple[str, tuple[str, str, int | None, int | None], tuple[str, str, int, int], float]] = [
    ("seed map-style 2 workers / `tfrecord` package same call", ("seed", "lite-map-plain", 2, 1),
     ("seed", "tfrecord-plain", 2, 1), 1.0),
    ("seed map-style 2 workers / 0 workers", ("seed", "lite-map-plain", 2, 1), ("seed", "lite-map-plain", 0, 1), 0.9),
    ("seed RawFeature batches (fastest) / tf.data AUTOTUNE", ("seed", "lite-raw", None, None),
     ("seed", "tf-data-raw", 0, 1), 2.0),
    ("JPEG+PIL num_threads=2 / num_threads=1 (0 workers)", ("jpeg", "lite-pil", 0, 2), ("jpeg", "lite-pil", 0, 1), 1.7),
    ("JPEG+PIL num_threads=2 (0 workers) / tf.data AUTOTUNE", ("jpeg", "lite-pil", 0, 2),
     ("jpeg", "tf-data", 0, 1), 1.2),
    ("bound: the same Pillow transform, bare ThreadPoolExecutor 2 threads / 1", ("jpeg", "bare-pil", 0, 2),
     ("jpeg", "bare-pil", 0, 1), 1.7),
    ("JPEG ImageTransform(augment=PIL crop/flip) num_threads=2 / num_threads=1 (0 workers)",
     ("jpeg", "lite-pil-augment", 0, 2), ("jpeg", "lite-pil-augment", 0, 1), 1.7),
    ("JPEG ImageTransform(augment=PIL crop/flip) num_threads=2 (0 workers) / tf.data AUTOTUNE",
     ("jpeg", "lite-pil-augment", 0, 2), ("jpeg", "tf-data", 0, 1), 1.2),
    ("raw 64KiB iterable batched 2 workers / 0 workers", ("images", "lite-batched", 2, 1),
     ("images", "lite-batched", 0, 1), 0.9),
    ("raw 64KiB map-style plain call 2 workers / 0 workers", ("images", "lite-map-plain", 2, 1),
     ("images", "lite-map-plain", 0, 1), 0.9),
]  # fmt: skip
THREADS_TARGET = 0.95


# --------------------------------------------------------------------------- workloads and cells


def ensure_made(name: str, count: int, make: Any, features: dict[str, Any]) -> dict[str, Any]:
    """A workload made here (seed, jpeg), generated once into benchmarks/.work/."""
    os.makedirs(R.WORK, exist_ok=True)
    path = os.path.join(R.WORK, f"{name}-{count}.tfrecord")
    if not os.path.exists(path):
        R.log(f"generating {name} ({count} Examples) -> {os.path.relpath(path, R.ROOT)}")
        make(path, count)
    return {"name": name, "count": count, "path": path, "features": features}


def capabilities(python: str) -> dict[str, bool]:
    """What the tfrecord_lite that `python` imports offers: num_threads= on each dataset, RawFeature."""
    code = (
        "import inspect, json, tfrecord_lite as t, tfrecord_lite.torch as tt\n"
        "takes = lambda c: 'num_threads' in inspect.signature(c).parameters\n"
        "print(json.dumps({'map_threads': takes(tt.TFRecordDataset), 'threads': takes(tt.IterableTFRecordDataset),"
        " 'raw': hasattr(t, 'RawFeature')}))"
    )
    out = subprocess.run([python, "-c", code], env=R.ENV, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        R.log(f"cannot import tfrecord_lite.torch with {python}:\n{out.stderr[-1000:]}")
        return {"map_threads": False, "threads": False, "raw": False}
    found: dict[str, bool] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def cells_of(
    args: argparse.Namespace, entry: dict[str, Any], pythons: dict[str, str], can: dict[str, bool]
) -> list[Cell]:
    """The cells of one workload: each system with each number of workers and, for ours, of threads."""
    cells: list[Cell] = []
    for system in SYSTEMS[entry["name"]]:
        if system not in pythons or (system == "lite-raw" and not can["raw"]):
            continue
        if system.startswith("tf-data"):
            cells.append((entry["name"], system, 0, 1))
            continue
        if system.startswith("bare"):
            cells += [(entry["name"], system, 0, threads) for threads in args.threads]
            continue
        for workers in args.workers:
            for threads in args.threads:
                threaded = can["map_threads" if system.startswith("lite-map") else "threads"]
                if threads == 1 or (system.startswith("lite") and threaded):
                    cells.append((entry["name"], system, workers, threads))
    return cells


def run_cell(python: str, cell: Cell, entry: dict[str, Any], epochs: int) -> Any:
    """{"startup", "first", "steady", "order"} of one cell in a fresh interpreter, None if it failed."""
    workload, system, workers, threads = cell
    spec = {"system": system, "workload": workload, "path": entry["path"], "features": entry["features"]}
    spec |= {"workers": workers, "threads": threads, "batch": BATCH[workload], "epochs": epochs}
    spec["count"] = entry["count"]
    cmd = [python, __file__, "--child", json.dumps(spec)]
    out = subprocess.run(cmd, env=R.ENV, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        where = f"{workers} workers, num_threads={threads} on {entry['path']}"
        R.log(f"{system} failed with {where}:\n{out.stderr[-2000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def measure(args: argparse.Namespace, pythons: dict[str, str], entry: dict[str, Any], cells: list[Cell]) -> list[Any]:
    """One result per cell of a workload; all its cells take turns in every round."""
    names = {f"{s} w{w} t{t}": (wl, s, w, t) for wl, s, w, t in cells}
    runs: dict[str, list[Any]] = {name: [] for name in names}
    loads = [loadavg()]
    for round_, name in turns(list(names), args.rounds):
        if all(len(r) == round_ for r in runs.values()):  # the first cell of a round
            R.log(f"{entry['name']}: round {round_ + 1} of {args.rounds}, {len(names)} cells (load {loadavg()})")
        runs[name].append(run_cell(pythons[names[name][1]], names[name], entry, args.epochs))
    loads.append(loadavg())
    results = []
    for name, (workload, system, workers, threads) in names.items():
        done = [r for r in runs[name] if r is not None]
        if not done:
            continue
        steady = [statistics.median(r["steady"]) for r in done]
        result = {"workload": workload, "system": system, "workers": workers, "threads": threads}
        result |= {
            "records": entry["count"],
            "rec_s": entry["count"] / statistics.median(steady),
            "rounds_rec_s": [entry["count"] / statistics.median(r["steady"]) if r else None for r in runs[name]],
            "steady_s": spread(steady),
            "startup_s": spread([r["startup"] for r in done]),
            "first_epoch_s": spread([r["first"] for r in done]),
            "order": sorted({r["order"] for r in done}),
            "load": loads,
        }
        results.append(result)
        R.log(f"{workload:6s} workers={workers} num_threads={threads} {system:17s} {result['rec_s']:>10,.0f} rec/s "
              f"(start-up {result['startup_s']['median']:.2f} s) load {loads[-1]}")  # fmt: skip
    return results


# --------------------------------------------------------------------------- report


def _find(results: list[dict[str, Any]], workload: str, system: str, workers: int | None, threads: int | None) -> Any:
    """The result of a cell; a None workers or threads: the fastest of the cells that match."""
    found = [
        r
        for r in results
        if (r["workload"], r["system"]) == (workload, system)
        and workers in (None, r["workers"])
        and threads in (None, r["threads"])
    ]
    return max(found, key=lambda r: r["rec_s"], default=None)


def ratio(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float]:
    """a's records/s over b's: the ratio of the medians, and the lowest and highest of one round."""
    rounds = [x / y for x, y in zip(a["rounds_rec_s"], b["rounds_rec_s"], strict=True) if x and y]
    median = a["rec_s"] / b["rec_s"]
    return {"median": median, "low": min(rounds, default=median), "high": max(rounds, default=median)}


def _x(r: dict[str, float]) -> str:
    return f"{r['median']:.2f}× ({r['low']:.2f}..{r['high']:.2f})"


def table(results: list[dict[str, Any]]) -> str:
    """Markdown: steady records/s per cell (spread of the rounds), start-up, and the ratios to 0
    workers, to num_threads=1 and to the `tfrecord` package with the same workers."""
    head = "| workload | workers | num_threads | system | rec/s, steady (lowest..highest) | ÷ 0 workers | ÷ 1 thread | ÷ `tfrecord` | start-up s |"  # noqa: E501
    lines = [head, "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in sorted(results, key=lambda r: (list(SYSTEMS).index(r["workload"]), r["workers"], r["threads"])):
        wl, system, workers, threads = r["workload"], r["system"], r["workers"], r["threads"]
        low, high = r["records"] / r["steady_s"]["high"], r["records"] / r["steady_s"]["low"]
        zero = _find(results, wl, system, 0, threads) if workers else None
        one = _find(results, wl, system, workers, 1) if threads != 1 else None
        peer = _find(results, wl, PEER[wl], workers, 1) if system.startswith("lite") else None
        cols = [f"{r['rec_s'] / other['rec_s']:.2f}×" if other else "–" for other in (zero, one, peer)]
        shown = ("threads", "–") if system.startswith("tf-data") else (str(workers), str(threads))
        lines.append(
            f"| {wl} | {shown[0]} | {shown[1]} | {system} | {r['rec_s']:,.0f} ({low:,.0f}..{high:,.0f}) | "
            f"{' | '.join(cols)} | {r['startup_s']['median']:.2f} |"
        )
    return "\n".join(lines)


def targets(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each target of the loading issue: the ratio measured, its spread, and whether it is met."""
    out: list[dict[str, Any]] = []
    for what, (wl, system, workers, threads), den, least in TARGETS:
        a, b = _find(results, wl, system, workers, threads), _find(results, *den)
        if a is None or b is None:
            out.append({"target": what, "at_least": least, "met": None, "note": "not measured"})
            continue
        r = ratio(a, b)
        note = f"{system} workers={a['workers']} num_threads={a['threads']}" if None in (workers, threads) else ""
        out.append({"target": what, "at_least": least, "ratio": r, "met": r["median"] >= least, "note": note})
    pairs = [
        (r, one)
        for r in results
        if r["threads"] != 1
        and r["system"].startswith("lite")
        and (one := _find(results, r["workload"], r["system"], r["workers"], 1)) is not None
    ]
    what = "num_threads=2 / 1 on every workload (min)"
    if pairs:
        worst, one = min(pairs, key=lambda p: ratio(*p)["median"])
        r = ratio(worst, one)
        note = f"lowest: {worst['workload']} {worst['system']} workers={worst['workers']}"
        met = r["median"] >= THREADS_TARGET
        out.append({"target": what, "at_least": THREADS_TARGET, "ratio": r, "met": met, "note": note})
        same = [p for p in pairs if p[0]["system"] in IN_ORDER]
        differ = [f"{a['workload']} {a['system']} workers={a['workers']}" for a, b in same if a["order"] != b["order"]]
        note = f"{len(same) - len(differ)} of {len(same)} unshuffled cells" + (f"; differ: {differ}" if differ else "")
        out.append({"target": "same order for any num_threads", "met": not differ if same else None, "note": note})
    else:
        out.append({"target": what, "at_least": THREADS_TARGET, "met": None, "note": "no num_threads=2 cells"})
    return out


def target_table(found: list[dict[str, Any]]) -> str:
    lines = ["| target | at least | measured (lowest..highest round) | met | |", "|---|---:|---:|---|---|"]
    for t in found:
        measured = _x(t["ratio"]) if "ratio" in t else "–"
        met = {True: "✓", False: "✗", None: "–"}[t["met"]]
        least = f"{t['at_least']:.2f}×" if "at_least" in t else ""
        lines.append(f"| {t['target']} | {least} | {measured} | {met} | {t.get('note', '')} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- driver


def interpreters(args: argparse.Namespace) -> dict[str, str]:
    pythons = {s: args.lite_python for s in ALL_SYSTEMS if s.startswith(("lite", "bare"))}
    if R.has_module(args.tfrecord_python, "tfrecord"):
        pythons |= {s: args.tfrecord_python for s in ALL_SYSTEMS if s.startswith("tfrecord")}
    else:
        R.log(f"skipping the `tfrecord` package: not importable by {args.tfrecord_python}")
    if os.path.exists(args.tf_python) and R.has_module(args.tf_python, "tensorflow"):
        pythons |= {s: args.tf_python for s in ALL_SYSTEMS if s.startswith("tf-data")}
    else:
        R.log(f"skipping tf.data: tensorflow not importable by {args.tf_python}")
    return {s: p for s, p in pythons.items() if s in args.systems}


def entries(args: argparse.Namespace) -> list[dict[str, Any]]:
    import tfrecord_lite as tfr

    chosen = [wl for wl in (W.QUICK if args.quick else W.FULL) if wl.name in args.workloads]
    found = [R.ensure_workload(wl, args.lite_python, R.ENV) for wl in chosen]
    scale = 10 if args.quick else 1
    if "seed" in args.workloads:
        features = {"image": ["bytes", []], "lable": ["int64", []]}
        found.append(ensure_made("seed", SEED_COUNT // scale, C.make_seed, features))
    if "jpeg" in args.workloads:
        features = {"image/encoded": ["bytes", []], "image/class/label": ["int64", []]}
        found.append(ensure_made("jpeg", JPEG_COUNT // scale, C.make_jpegs, features))
    for entry in found:
        if not os.path.exists(entry["path"] + ".idx"):  # both systems read with their index
            tfr.write_text_index(entry["path"], destination=entry["path"] + ".idx")
        tfr.write_index(entry["path"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description="DataLoader throughput (see the comment at the top of the file)")
    quick = "a smoke test: seed and jpeg at 1/10 size, 1 round, 1 epoch, 0 and 2 workers (each can be given)"
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--rounds", "--runs", dest="rounds", type=int, default=None, help="(3)")
    parser.add_argument("--epochs", type=int, default=None, help="measured epochs after the first, per cell (2)")
    parser.add_argument("--workers", type=int, nargs="+", default=None, help="(0 1 2)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="num_threads of our datasets")
    parser.add_argument("--workloads", nargs="+", default=None, choices=list(SYSTEMS), help="(all)")
    parser.add_argument("--systems", nargs="+", default=list(ALL_SYSTEMS), choices=list(ALL_SYSTEMS))
    parser.add_argument("--lite-python", default=sys.executable)
    parser.add_argument("--tfrecord-python", default=sys.executable)
    parser.add_argument("--tf-python", default=os.path.join(R.ROOT, ".venvs", "tf", "bin", "python"))
    parser.add_argument("--out", default=os.path.join(R.RESULTS, "dataloader.json"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        C.child(json.loads(args.child))
        return
    defaults = {"rounds": (1, 3), "epochs": (1, 2), "workers": ([0, 2], [0, 1, 2]), "workloads": (QUICK, list(SYSTEMS))}
    for name, (in_quick, in_full) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, in_quick if args.quick else in_full)
    can = capabilities(args.lite_python)
    for key, name in (("map_threads", "TFRecordDataset"), ("threads", "IterableTFRecordDataset")):
        if not can[key] and any(t != 1 for t in args.threads):
            R.log(f"skipping the num_threads=2 cells of {name}: this tfrecord_lite's takes no num_threads=")
    if not can["raw"] and "lite-raw" in args.systems:
        R.log("skipping lite-raw: this tfrecord_lite has no RawFeature")
    pythons = interpreters(args)
    results: list[dict[str, Any]] = []
    for entry in entries(args):
        results.extend(measure(args, pythons, entry, cells_of(args, entry, pythons, can)))
    found = targets(results)
    print(table(results))
    print()
    print(target_table(found))
    result = {"benchmark": "dataloader", "rounds": args.rounds, "epochs": args.epochs, "quick": args.quick}
    result |= {"machine": R.machine(), "capabilities": can, "results": results, "targets": found}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
