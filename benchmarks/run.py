# The benchmark harness: tfrecord_lite side by side with the `tfrecord` package
# (vahidk, 1.14.x) and TensorFlow, in one run on one machine.
#
#   python benchmarks/run.py [--quick] [--rounds N] [--tf-python PATH] [--tfrecord-python PATH]
#
# Workloads (benchmarks/workloads.py) are generated once from fixed seeds into
# benchmarks/.work/ and reused. Every system runs in its own subprocess
# (benchmarks/worker.py) under the interpreter of the venv where it is
# installed; a system whose interpreter is missing is skipped and said so. Each
# measurement is the median of `--runs` runs, made in rounds in which the systems
# take turns (in a rotating order), so that load from elsewhere is shared fairly. Peak RSS is measured in fresh
# processes streaming a large and a small file; the import time in fresh
# interpreters. The table goes to stdout (markdown), everything to
# benchmarks/results/<time>.json. Benchmarks are not tests: nothing here asserts.
# compare.py runs the same job (prepare_job, take_turns) for tfrecord_lite from two checkouts.
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import zlib
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, ".work")
RESULTS = os.path.join(HERE, "results")
sys.path.insert(0, HERE)
import workloads as W
from _rounds import turns

GENERATOR_VERSION = 1
SYSTEMS = ("tfrecord_lite", "tfrecord", "tfrecords", "tensorflow")
PEERS = SYSTEMS[1:]
LABELS = {
    "tfrecord_lite": "tfrecord_lite",
    "tfrecord": "`tfrecord` 1.14",
    "tfrecords": "`tfrecords` 0.3",
    "tensorflow": "TensorFlow",
}
TASKS = {
    "scan": "raw scan (CRC-verified)",
    "decode": "per-record decode",
    "batched": "batched decode",
    "write": "raw write",
    "write_example": "write_example",
    "gzscan": "GZIP raw scan (TF's bytes)",
    "gzscanidx": "GZIP raw scan, sidecar index",
    "listdecode": "decode_examples on lists",
    "decodeview": "per-record decode, copy=False",
    "listdecodeview": "decode_examples on lists, copy=False",
    "batchedview": "batched decode, copy=False",
}
OUR_WAYS = {
    "scan": "iter_records",
    "decode": "decode_example over iter_records",
    "batched": "iter_example_batches(path, features=spec, batch_size=1024)",
    "write": "TFRecordWriter.write",
    "write_example": "TFRecordWriter.write_example(dict)",
    "gzscan": "iter_records on the GZIP file (inflated by ISA-L; no sidecar next to it)",
    "gzscanidx": "iter_records on the same bytes with a `.tfrlidx` sidecar beside them (built untimed)",
    "listdecode": "decode_examples(list of 1024 records from iter_records, spec)",
    "decodeview": "decode_example(record, spec, copy=False) over iter_records",
    "listdecodeview": "decode_examples(list of 1024 records, spec, copy=False): bytes values as views",
    "batchedview": "iter_example_batches(path, features=spec, batch_size=1024, copy=False)",
}
PEER_WAYS = {
    "tfrecord": {
        "scan": "tfrecord_iterator (no CRC check)",
        "decode": "tfrecord_loader with a description",
        "write": "TFRecordWriter framing, serialization skipped",
        "write_example": "TFRecordWriter.write(dict)",
        "decodeview": "its tfrecord_loader again",
    },
    "tfrecords": {
        "scan": "tf_record_iterator",
        "gzscan": "tf_record_iterator with TFRecordOptions(compression_type='GZIP')",
    },
    "tensorflow": {
        "scan": "TFRecordDataset(...).batch(1024)",
        "batched": "TFRecordDataset(...).batch(1024).map(tf.io.parse_example)",
        "write": "tf.io.TFRecordWriter.write",
        "write_example": "tf.train.Example(...).SerializeToString() + write",
        "gzscan": "TFRecordDataset(path, compression_type='GZIP').batch(1024)",
        "gzscanidx": "its GZIP raw scan again (TensorFlow reads no index)",
        "listdecode": "its batched decode (parse_example on batches of 1024)",
        "listdecodeview": "its batched decode again",
        "batchedview": "its batched decode again",
    },
}
# (task, peer, required ratio, workloads or None for all)
TARGETS: list[tuple[str, str, float, tuple[str, ...] | None]] = [
    ("scan", "tfrecord", 1.2, None),
    ("decode", "tfrecord", 3.0, None),
    ("batched", "tensorflow", 1.0, None),
    ("write", "tfrecord", 2.0, None),
    ("write", "tensorflow", 5.0, ("small",)),
    ("scan", "tfrecords", 1.0, ("images", "dense")),
    ("scan", "tfrecords", 0.8, ("small",)),
    ("gzscan", "tensorflow", 2.0, None),
    ("listdecode", "tensorflow", 1.0, None),
    ("decodeview", "tfrecord", 3.0, None),
]
IMPORT_TARGET = 0.15
IMPORTED_MODULE = {
    "tfrecord_lite": "tfrecord_lite",
    "tfrecord": "tfrecord.reader",
    "tfrecords": "tfrecords",
    "tensorflow": "tensorflow",
}


def child_env(pythonpath: str) -> dict[str, str]:
    """The environment of a child process: this one's, with `pythonpath` as PYTHONPATH."""
    return dict(os.environ, PYTHONPATH=pythonpath, TF_CPP_MIN_LOG_LEVEL="3")


ENV = child_env(ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def has_module(python: str, module: str) -> bool:
    code = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    try:
        return subprocess.run([python, "-c", code], env=ENV, capture_output=True).returncode == 0
    except OSError:
        return False


def interpreters(args: argparse.Namespace) -> dict[str, str | None]:
    """The interpreter for each system, or None when it is not installed anywhere we were told of."""
    found: dict[str, str | None] = {"tfrecord_lite": args.lite_python}
    for system, flag, module in (
        ("tfrecord", args.tfrecord_python, "tfrecord"),
        ("tfrecords", args.tfrecord_python, "tfrecords"),
        ("tensorflow", args.tf_python, "tensorflow"),
    ):
        candidates = [flag] if flag else [sys.executable]
        found[system] = next((p for p in candidates if p and has_module(p, module)), None)
        if found[system] is None:
            option = "--tf-python" if system == "tensorflow" else "--tfrecord-python"  # both packages live there
            log(f"skipping {system}: not importable by {candidates[0]} (pass {option})")
    return found


# --------------------------------------------------------------------------- workloads

_GENERATE = """
import sys, json
sys.path.insert(0, {here!r})
import workloads as W, tfrecord_lite as tfr
spec = json.loads(sys.argv[1])
features = {{k: (d, tuple(s)) for k, (d, s) in spec["features"].items()}}
wl = W.Workload(spec["name"], spec["count"], spec["seed"], features, "")
with tfr.TFRecordWriter(sys.argv[2]) as w:
    for row in wl.rows():
        w.write_example(row)
"""


def workload_entry(wl: W.Workload) -> dict[str, Any]:
    return {
        "name": wl.name,
        "count": wl.count,
        "seed": wl.seed,
        "features": {k: [d, list(s)] for k, (d, s) in wl.features.items()},
    }


def ensure_workload(wl: W.Workload, python: str, env: dict[str, str]) -> dict[str, Any]:
    """Generate the workload file unless an identical one is already in .work/."""
    os.makedirs(WORK, exist_ok=True)
    entry = workload_entry(wl)
    path = os.path.join(WORK, f"{wl.name}-{wl.count}.tfrecord")
    manifest = path + ".json"
    want = dict(entry, generator=GENERATOR_VERSION)
    if os.path.exists(path) and os.path.exists(manifest):
        with open(manifest) as f:
            have = json.load(f)
        if have.get("workload") == want and have.get("bytes") == os.path.getsize(path):
            return dict(entry, path=path, bytes=have["bytes"])
    log(f"generating {wl.name} ({wl.count} Examples) -> {os.path.relpath(path, ROOT)}")
    tmp = path + ".tmp"
    generate = [python, "-c", _GENERATE.format(here=HERE), json.dumps(entry), tmp]
    subprocess.run(generate, env=env, cwd=WORK, check=True)  # in .work: no checkout there to shadow PYTHONPATH
    os.replace(tmp, path)
    size = os.path.getsize(path)
    with open(manifest, "w") as f:
        json.dump({"workload": want, "bytes": size}, f)
    return dict(entry, path=path, bytes=size)


def gzipped(path: str) -> str:
    """`path` + ".gz": the file GZIP-compressed exactly as TensorFlow's writer does it (zlib level 6,
    memLevel 9, gzip wrapper; tests/end_to_end/test_tf_compat.py proves tfrecord_lite's writer byte-identical)."""
    target = path + ".gz"
    if os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(path):
        return target
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31, 9)
    with open(path, "rb") as src, open(target + ".tmp", "wb") as out:
        while chunk := src.read(16 << 20):
            out.write(deflate.compress(chunk))
        out.write(deflate.flush())
    os.replace(target + ".tmp", target)
    return target


def indexed(path: str, python: str, env: dict[str, str]) -> None:
    """Beside `path`.gz (which keeps no sidecar, so that its row reads as without one): `path`.idx.gz,
    a hard link to the same bytes, with the `.tfrlidx` sidecar that tfrecord_lite reads in threads."""
    gz, target = path + ".gz", path + ".idx.gz"
    for stale in (gz + ".tfrlidx",):
        if os.path.exists(stale):
            os.remove(stale)
    if os.path.exists(target) and os.path.samefile(gz, target) and os.path.exists(target + ".tfrlidx"):
        return
    if os.path.exists(target):
        os.remove(target)
    os.link(gz, target)
    code = "import sys, tfrecord_lite as t; t.write_index(sys.argv[1])"
    subprocess.run([python, "-c", code, target], env=env, cwd=WORK, check=True)


def run_worker(system: str, python: str, args: list[str], env: dict[str, str] = ENV) -> dict[str, Any]:
    proc = subprocess.run(
        [python, os.path.join(HERE, "worker.py"), system, *args], env=env, stdout=subprocess.PIPE, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"the {system} worker failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def prepare_job(args: argparse.Namespace, python: str, env: dict[str, str]) -> tuple[list[dict[str, Any]], str]:
    """Generate (or reuse) the chosen workloads, their GZIP copies and sidecars with `python` in `env`,
    and write the job that every worker runs: (the workloads' entries, the job file)."""
    chosen = [w for w in (W.QUICK if args.quick else W.FULL) if not args.only or w.name in args.only]
    entries = [ensure_workload(w, python, env) for w in chosen]
    for entry in entries:
        gzipped(entry["path"])
        if not args.tasks or "gzscanidx" in args.tasks:
            indexed(entry["path"], python, env)
    job = {"workloads": entries, "runs": 1, "warmup": True, "write_dir": args.write_dir or WORK, "tasks": args.tasks}
    job_path = os.path.join(WORK, "job.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    return entries, job_path


Runner = tuple[str, str, dict[str, str]]  # (system, interpreter, environment) of one worker


def take_turns(runners: dict[str, Runner], job_path: str, rounds: int) -> dict[str, Any]:
    """Run the job once a round with each runner, the runners taking turns in a rotating order
    (_rounds.turns): name -> its worker's report, holding the times of every round."""
    raw: dict[str, Any] = {}
    for round_, name in turns(list(runners), rounds):
        system, python, env = runners[name]
        log(f"round {round_ + 1}/{rounds}: {name} ({python})")
        report = run_worker(system, python, [job_path], env)
        if name not in raw:
            raw[name] = report
        else:
            for mine, more in zip(raw[name]["results"], report["results"], strict=False):
                mine["times"] += more["times"]
    return raw


def import_time(python: str, module: str, runs: int) -> float | None:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = []
    for _ in range(runs):
        proc = subprocess.run([python, "-c", code], env=ENV, capture_output=True, text=True)
        if proc.returncode != 0:
            return None
        times.append(float(proc.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    return info


# --------------------------------------------------------------------------- report


def summarize(raw: dict[str, Any], sizes: dict[str, tuple[int, int]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """{(system, workload, task): {seconds, records_per_s, mb_per_s}} from the workers' raw times."""
    out = {}
    for system, report in raw.items():
        for r in report["results"]:
            count, nbytes = sizes[r["workload"]]
            seconds = statistics.median(r["times"])
            out[(system, r["workload"], r["task"])] = {
                "seconds": seconds,
                "times": r["times"],
                "records_per_s": count / seconds,
                "mb_per_s": nbytes / seconds / 1e6,
            }
    return out


def rate(v: float) -> str:
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.1f}k"


def round_ratios(mine: dict[str, Any], theirs: dict[str, Any]) -> list[float]:
    """Their time over ours in each round (the systems took turns within a round)."""
    return [b / a for a, b in zip(mine["times"], theirs["times"], strict=False)]


def table(summary: dict[tuple[str, str, str], dict[str, Any]], names: list[str]) -> tuple[str, list[dict[str, Any]]]:
    lines = [
        "| workload | measurement | tfrecord_lite rec/s | MB/s | `tfrecord` rec/s | lite ÷ `tfrecord` "
        "| `tfrecords` rec/s | lite ÷ `tfrecords` | TF rec/s | lite ÷ TF |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    checks = []
    for wl in names:
        for task, label in TASKS.items():
            mine = summary.get(("tfrecord_lite", wl, task))
            if mine is None:
                continue
            cells = [wl, label, rate(mine["records_per_s"]), f"{mine['mb_per_s']:.0f}"]
            for peer in PEERS:
                theirs = summary.get((peer, wl, task))
                if theirs is None:
                    cells += ["–", "–"]
                    continue
                ratio = theirs["seconds"] / mine["seconds"]
                per_round = round_ratios(mine, theirs)
                low, high = min(per_round), max(per_round)
                mark = ""
                for t_task, t_peer, need, only in TARGETS:
                    if t_task == task and t_peer == peer and (only is None or wl in only):
                        ok = ratio >= need
                        mark = f" {'✓' if ok else '✗'} (≥{need:g})"
                        checks.append(
                            {
                                "workload": wl,
                                "task": task,
                                "peer": peer,
                                "ratio": ratio,
                                "rounds": per_round,
                                "required": need,
                                "met": ok,
                            }
                        )
                spread = f" ({low:.2f}–{high:.2f})" if len(per_round) > 1 else ""
                cells += [rate(theirs["records_per_s"]), f"{ratio:.2f}×{spread}{mark}"]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines), checks


def save_results(name: str, payload: dict[str, Any]) -> str:
    """Write `payload` to benchmarks/results/`name`.json; its path."""
    os.makedirs(RESULTS, exist_ok=True)
    out = os.path.join(RESULTS, f"{name}.json")
    with open(out, "w") as f:
        json.dump(payload, f, indent=1)
    log(f"wrote {os.path.relpath(out, ROOT)}")
    return out


def utc_stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def add_job_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that choose what a job measures, and how often."""
    parser.add_argument("--quick", action="store_true", help="workloads a tenth of the size (about a minute)")
    parser.add_argument(
        "--rounds",
        "--runs",
        dest="runs",
        type=int,
        default=3,
        help="rounds, one run of each system per measurement in each; the median is reported, and "
        "each ratio's spread over the rounds (default 3)",
    )
    parser.add_argument("--only", nargs="*", choices=[w.name for w in W.FULL], help="run only these workloads")
    parser.add_argument("--tasks", nargs="*", choices=list(TASKS), help="run only these measurements")
    parser.add_argument(
        "--write-dir",
        default="/dev/shm" if os.path.isdir("/dev/shm") else None,
        help="where the write measurements write (default /dev/shm, a tmpfs, so that the disk does "
        "not set the pace; else benchmarks/.work)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_job_arguments(parser)
    parser.add_argument(
        "--lite-python", default=sys.executable, help="interpreter with tfrecord_lite (default: this one)"
    )
    parser.add_argument("--tf-python", help="interpreter of a venv with tensorflow-cpu")
    parser.add_argument("--tfrecord-python", help="interpreter of a venv with the `tfrecord` package")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["rss", "import"] + list(SYSTEMS), help="leave these out"
    )
    parser.add_argument("--markdown", help="also write the report (machine, command, table) to this file")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--rounds must be at least 1")

    pythons = interpreters(args)
    entries, job_path = prepare_job(args, args.lite_python, ENV)
    # One run per round, the systems taking turns in a rotating order (_rounds.turns)
    runners = {s: (s, python, ENV) for s, python in pythons.items() if python and s not in args.skip}
    raw = take_turns(runners, job_path, args.runs)

    rss: list[dict[str, Any]] = []
    if "rss" not in args.skip:
        images = next((e for e in entries if e["name"] == "images"), entries[0])
        big_bytes = (256 if args.quick else 1024) << 20
        big = W.concatenated(images["path"], big_bytes, os.path.join(WORK, "rss-big.tfrecord"))
        small = W.concatenated(images["path"], 1, os.path.join(WORK, "rss-small.tfrecord"))
        for system in SYSTEMS:
            if pythons[system] and system not in args.skip:
                for path in (small, big):
                    rss.append(run_worker(system, pythons[system], ["--rss", path]))  # type: ignore[arg-type]

    imports: dict[str, float | None] = {}
    if "import" not in args.skip:
        for system, module in IMPORTED_MODULE.items():
            if pythons[system] and system not in args.skip:
                imports[system] = import_time(pythons[system], module, 7 if system == "tfrecord_lite" else 3)  # type: ignore[arg-type]

    sizes = {e["name"]: (e["count"], e["bytes"]) for e in entries}
    summary = summarize(raw, sizes)
    rows, checks = table(summary, [e["name"] for e in entries])
    if imports.get("tfrecord_lite") is not None:
        checks.append(
            {
                "task": "import",
                "seconds": imports["tfrecord_lite"],
                "required": IMPORT_TARGET,
                "met": imports["tfrecord_lite"] < IMPORT_TARGET,
            }
        )

    info = machine()
    command = "python benchmarks/run.py " + " ".join(sys.argv[1:])
    report = [
        f"Machine: {info.get('cpu')}, {info['cpus']} cores, {info.get('memory_gib')} GiB, {info['platform']}, "
        f"Python {info['python']}.",
        "",
        rows,
        "",
    ]
    if rss:
        report += [
            "| peak RSS while streaming | file size | records | RSS before | peak RSS |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in rss:
            report.append(
                f"| {LABELS[r['system']]} | {r['file_bytes'] / 2**20:.0f} MiB | {r['records']} | "
                f"{r['rss_before'] / 2**20:.0f} MiB | {r['rss_peak'] / 2**20:.0f} MiB |"
            )
        report.append("")
    if imports:
        report.append(
            "Import time in a fresh interpreter (median): "
            + ", ".join(f"`import {IMPORTED_MODULE[s]}` {t:.3f} s" for s, t in imports.items() if t is not None)
            + "."
        )
        report.append("")
    report.append("tfrecord_lite measured as: " + "; ".join(f"{TASKS[t]} = {how}" for t, how in OUR_WAYS.items()) + ".")
    report.append(
        "Peers measured as: "
        + "; ".join(
            f"{LABELS[p]} {TASKS[t]} = {how}" for p, ways in PEER_WAYS.items() if p in raw for t, how in ways.items()
        )
        + "."
    )
    missed = [c for c in checks if not c["met"]]
    report.append("")
    report.append(
        f"Targets: {len(checks) - len(missed)} of {len(checks)} met"
        + (
            " — missed: "
            + ", ".join(
                f"{c.get('workload', '')} {c['task']} vs {c.get('peer', '')} {c['ratio']:.2f}× (≥{c['required']:g})"
                if "ratio" in c
                else f"import {c['seconds']:.3f} s (<{c['required']})"
                for c in missed
            )
            if missed
            else ""
        )
        + "."
    )
    text = "\n".join(report)
    print(text)

    stamp = utc_stamp()
    save_results(
        f"{stamp}{'-quick' if args.quick else ''}",
        {
            "command": command,
            "quick": args.quick,
            "runs": args.runs,
            "machine": info,
            "workloads": entries,
            "versions": {s: r["versions"] for s, r in raw.items()},
            "raw": raw,
            "summary": [dict(system=s, workload=w, task=t, **v) for (s, w, t), v in summary.items()],
            "targets": checks,
            "rss": rss,
            "import_seconds": imports,
            "markdown": text,
        },
    )
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"# Benchmark results\n\n`{command}` (what `python3 tasks.py bench` runs), {stamp}.\n\n{text}\n")


if __name__ == "__main__":
    main()
