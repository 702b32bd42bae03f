# Arrow benchmark for tfrecord_lite.arrow (issue 9's targets):
#
#   python benchmarks/arrow.py [--quick] [--rounds N] [--out FILE.json]
#
# Run it where tfx-bsl is installed (`python3 tasks.py test --only=tf` builds .venvs/tf with it):
#   - decode_arrow without a spec vs tfx-bsl's ExamplesToRecordBatchDecoder().DecodeBatch, on
#     the small / images / dense workloads, in batches of 2048 records held in memory;
#   - decode_arrow with a spec vs decode_examples on the same batches, and vs decode_examples plus
#     the Arrow assembly timed apart (the target: no slower than decode_examples + at most the
#     assembly, i.e. a ratio >= 1 against the sum). The assembly is timed as decode_arrow runs
#     it, right after each batch is decoded; the ratio against the "warm" assembly (the same
#     columns assembled again, which finds pyarrow in the caches) is printed beside it;
#   - TFRecord -> Parquet of a 1.2 GiB file (the dense workload, concatenated; 120 MiB with
#     --quick; written into a temporary folder in /dev/shm and removed after), with a spec, streamed batch
#     by batch, the Parquet writer in its own thread: by the API (iter_arrow_batches into
#     _tables.table_writer) and by the CLI (`tfrecord-lite convert x.tfrecord x.parquet
#     --features spec.json`), each in a fresh process: its peak RSS, and the overlap: (read +
#     decode + Parquet write, each timed apart in this process) / the streamed conversion
#     (≥ 0.8: at least 80 % of the work of the three stages done in their time; above 1, the
#     writer's thread overlaps the reading and decoding).
# Each measurement runs in rounds in which the compared systems take turns (benchmarks/_rounds.py); the table shows
# the median of the rounds and the spread (lowest..highest ratio of one round), in wall time
# and in CPU time of the process (steadier where other work shares the machine). Workloads
# come from benchmarks/workloads.py (fixed seeds), written once into benchmarks/.work/arrow/.
# Prints a table; writes the same as JSON (default benchmarks/results/arrow.json). Nothing here
# asserts.
from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import workloads as W
from _rounds import compare, spread, turns

import tfrecord_lite as tfr
from tfrecord_lite._datasets.schema import features_to_json

WORK = os.path.join(HERE, ".work", "arrow")
BATCH = 2048


def workload_file(wl: W.Workload) -> str:
    """The workload's TFRecord file (generated once; a marker says it is complete)."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"{wl.name}-{wl.count}.tfrecord")
    if not os.path.exists(path + ".done"):
        print(f"generating {wl.name} ({wl.count} Examples)", file=sys.stderr)
        with tfr.TFRecordWriter(path) as writer:
            for row in wl.rows():
                writer.write_example(row)
        open(path + ".done", "w").close()
    return path


class Own(NamedTuple):
    """What a system returns that times only part of its work (the rest prepares it)."""

    wall: float
    cpu: float


def _trimmer() -> Callable[[], Any]:
    """glibc's malloc_trim(0) (elsewhere: nothing). Called before each timed system, so that each
    starts from the same heap: what the previous one freed goes back to the kernel rather than to
    whoever runs next. Without it the order of the turns decides who faults in fresh pages (dense:
    ~500-1100 more page faults a pass, ~2 % of its CPU time, for the system after the assembly)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return lambda _pad: 0


def rounds(fns: dict[str, Callable[[], Any]], n: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """_rounds.rounds, timing CPU seconds (process_time, all threads) beside wall seconds; a
    system that returns Own times itself. Each system starts with the freed heap trimmed."""
    wall: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    trim = _trimmer()
    for fn in fns.values():  # warm-up
        fn()
    for _, name in turns(list(fns), n):
        trim(0)
        t, c = time.perf_counter(), time.process_time()
        result = fns[name]()
        timed = result if isinstance(result, Own) else Own(time.perf_counter() - t, time.process_time() - c)
        del result
        wall[name].append(timed.wall)
        cpu[name].append(timed.cpu)
    return wall, cpu


def _assembly_after_decoding(batches: list[list[bytes]], specs: dict[str, Any]) -> Own:
    """The Arrow assembly as decode_arrow runs it: each batch's flat columns decoded (not timed),
    then assembled (timed), with the caches as decoding leaves them. Assembling the same
    columns again and again (the "warm" assembly) finds pyarrow's code and data in the caches,
    which decode_arrow never does: dense, ~15 µs a batch warm, ~200 µs just after a decode."""
    from tfrecord_lite._arrow import batches as arrow_batches
    from tfrecord_lite._batches.flat import decode_records_flat

    wall = cpu = 0.0
    for batch in batches:
        flats = decode_records_flat(batch, specs)
        t, c = time.perf_counter(), time.process_time()
        arrow_batches._record_batch(flats, specs, len(batch))
        wall += time.perf_counter() - t
        cpu += time.process_time() - c
    return Own(wall, cpu)


def _decoders(decoder: Any, batches: list[list[bytes]], spec: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    from tfrecord_lite import arrow
    from tfrecord_lite._arrow import batches as arrow_batches
    from tfrecord_lite._batches.flat import decode_records_flat
    from tfrecord_lite._example.validate import feature_specs

    specs = feature_specs(spec)
    flats = [decode_records_flat(b, specs) for b in batches]  # what the assembly starts from
    return {
        "tfx_bsl": lambda: [decoder.DecodeBatch(b) for b in batches],
        "lite": lambda: [arrow.decode_arrow(b) for b in batches],
        "lite_spec": lambda: [arrow.decode_arrow(b, spec) for b in batches],
        "decode_examples": lambda: [tfr.decode_examples(b, spec) for b in batches],
        "assembly": lambda: _assembly_after_decoding(batches, specs),
        "assembly_warm": lambda: [
            arrow_batches._record_batch(f, specs, len(b)) for f, b in zip(flats, batches, strict=True)
        ],
    }


def _plus(a: list[float], b: list[float]) -> list[float]:
    return [x + y for x, y in zip(a, b, strict=True)]


def decode_rates(quick: bool, n_rounds: int) -> list[dict[str, Any]]:
    from tfx_bsl.coders import example_coder

    decoder = example_coder.ExamplesToRecordBatchDecoder()
    out = []
    for wl in W.QUICK if quick else W.FULL:
        records = list(tfr.iter_records(workload_file(wl)))
        batches = [records[i : i + BATCH] for i in range(0, len(records), BATCH)]
        spec = {k: tfr.FixedLenFeature(list(shape), dtype) for k, (dtype, shape) in wl.features.items()}
        times, cpu = rounds(_decoders(decoder, batches, spec), n_rounds)
        rate = {name: len(records) / statistics.median(ts) for name, ts in times.items()}
        out.append(
            {
                "workload": wl.name,
                "records": len(records),
                "records_per_s": rate,
                "lite_vs_tfx_bsl": compare(times["lite"], times["tfx_bsl"]),
                "spec_vs_decode_examples": compare(times["lite_spec"], times["decode_examples"]),
                "cpu_lite_vs_tfx_bsl": compare(cpu["lite"], cpu["tfx_bsl"]),
                "cpu_spec_vs_decode_examples": compare(cpu["lite_spec"], cpu["decode_examples"]),
                "spec_vs_decode_examples_plus_assembly": compare(
                    times["lite_spec"], _plus(times["decode_examples"], times["assembly"])
                ),
                "cpu_spec_vs_decode_examples_plus_assembly": compare(
                    cpu["lite_spec"], _plus(cpu["decode_examples"], cpu["assembly"])
                ),
                "spec_vs_decode_examples_plus_warm_assembly": compare(
                    times["lite_spec"], _plus(times["decode_examples"], times["assembly_warm"])
                ),
                "cpu_spec_vs_decode_examples_plus_warm_assembly": compare(
                    cpu["lite_spec"], _plus(cpu["decode_examples"], cpu["assembly_warm"])
                ),
            }
        )
    return out


# Each conversion runs in a fresh process, which prints: seconds, RSS after the imports, peak RSS (KiB).
# The peak is VmHWM, the process's own: ru_maxrss would carry over this (larger) process's peak.
_PEAK = """
def peak():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
"""
_API = """
import sys, time
sys.path.insert(0, {root!r})
import json, pyarrow as pa, tfrecord_lite as tfr
from tfrecord_lite import arrow
from tfrecord_lite._arrow.tables import table_writer
from tfrecord_lite._datasets.schema import features_from_json
spec = features_from_json(json.loads({spec_json}))
before = peak()
t = time.perf_counter()
schema = pa.schema([(k, arrow.arrow_type(s)) for k, s in spec.items()])
with table_writer({out!r}, "parquet", schema, in_thread=True) as w:
    for b in arrow.iter_arrow_batches({src!r}, features=spec, batch_size={batch}):
        w.write(b)
print(time.perf_counter() - t, before, peak())
"""
_CLI = """
import sys, time
sys.path.insert(0, {root!r})
import pyarrow, tfrecord_lite.arrow
from tfrecord_lite.cli import main
before = peak()
t = time.perf_counter()
assert main(["convert", {src!r}, {out!r}, "--features", {spec_file!r}, "--batch-size", "{batch}", "-q", "--force"]) == 0
print(time.perf_counter() - t, before, peak())
"""


def _fresh(code: str) -> tuple[float, float, float]:
    """(seconds, MiB after imports, peak MiB) of `code` run in a fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", _PEAK + code], capture_output=True, text=True, check=True)
    seconds, before, peak = proc.stdout.split()
    return float(seconds), int(before) / 1024, int(peak) / 1024


def _apart(src: str, out: str, spec: dict[str, Any]) -> float:
    """Seconds of read (scan spans), decode (to record batches) and Parquet write, each timed apart."""
    import pyarrow as pa

    from tfrecord_lite import arrow
    from tfrecord_lite._arrow.tables import table_writer
    from tfrecord_lite._batches.flat import decode_flat
    from tfrecord_lite._records.example_batches import record_spans

    schema = pa.schema([(k, arrow.arrow_type(s)) for k, s in spec.items()])
    spent = {"read": 0.0, "decode": 0.0, "write": 0.0}
    with table_writer(out, "parquet", schema) as writer:
        t = time.perf_counter()
        for spans in record_spans(src, BATCH, "auto", True):
            spent["read"] += time.perf_counter() - t
            t = time.perf_counter()
            batch = arrow._record_batch(decode_flat(spans, spec), spec, len(spans.starts))
            spent["decode"] += time.perf_counter() - t
            t = time.perf_counter()
            writer.write(batch)
            spent["write"] += time.perf_counter() - t
            t = time.perf_counter()
    return sum(spent.values())


def parquet_conversion(quick: bool, n_rounds: int) -> dict[str, Any]:
    wl = next(w for w in (W.QUICK if quick else W.FULL) if w.name == "dense")
    spec = {k: tfr.FixedLenFeature(list(shape), dtype) for k, (dtype, shape) in wl.features.items()}
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None  # in memory: the disk (and fsync) timed out of it
    folder = tempfile.mkdtemp(prefix="tfrlite-arrow-bench-", dir=shm)
    try:
        src = W.concatenated(workload_file(wl), (120 if quick else 1200) << 20, os.path.join(folder, "big.tfrecord"))
        out = os.path.join(folder, "out.parquet")
        spec_file = os.path.join(folder, "spec.json")
        with open(spec_file, "w") as f:
            json.dump(features_to_json(spec), f)
        fill = {"root": os.path.dirname(HERE), "src": src, "out": out, "batch": BATCH, "spec_file": spec_file}
        codes = {"api": _API.format(spec_json=repr(json.dumps(features_to_json(spec))), **fill)}
        codes["cli"] = _CLI.format(**fill)
        runs: dict[str, list[tuple[float, float, float]]] = {"api": [], "cli": []}
        apart = []
        for _ in range(n_rounds):  # the three take turns
            for name, code in codes.items():
                runs[name].append(_fresh(code))
            apart.append(_apart(src, out, spec))
        result: dict[str, Any] = {"file_mib": os.path.getsize(src) / (1 << 20), "apart_s": statistics.median(apart)}
        for name, measured in runs.items():
            overlaps = [a / seconds for a, (seconds, _, _) in zip(apart, measured, strict=True)]
            result[name] = {
                "streamed_s": statistics.median(s for s, _, _ in measured),
                "overlap": spread(overlaps),
                "rss_after_imports_mib": statistics.median(b for _, b, _ in measured),
                "peak_rss_mib": max(p for _, _, p in measured),
            }
        return result
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _rate(v: float) -> str:
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.1f}k"


def _ratio(r: dict[str, float], target: float) -> str:
    mark = "✓" if r["median"] >= target else "✗"
    return f"{r['median']:.2f}× {mark} (≥{target:g}; rounds {r['low']:.2f}..{r['high']:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a tenth of the workloads, a 120 MiB file")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per measurement (default 5)")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "arrow.json"))
    parser.add_argument("--skip-parquet", action="store_true", help="only the decode rates")
    args = parser.parse_args()
    result: dict[str, Any] = {"decode": decode_rates(args.quick, args.rounds)}
    print(
        "| workload | tfx-bsl rec/s | decode_arrow rec/s | ÷ tfx-bsl "
        "| with spec rec/s | decode_examples rec/s | spec ÷ decode_examples |"
    )
    print("|---|---:|---:|---|---:|---:|---|")
    for row in result["decode"]:
        r = row["records_per_s"]
        print(
            f"| {row['workload']} | {_rate(r['tfx_bsl'])} | {_rate(r['lite'])} | {_ratio(row['lite_vs_tfx_bsl'], 1.0)} "
            f"| {_rate(r['lite_spec'])} | {_rate(r['decode_examples'])} "
            f"| {_ratio(row['spec_vs_decode_examples'], 0.9)} |"
        )
    print("\nCPU time (process_time) of the same rounds:")
    print("| workload | decode_arrow ÷ tfx-bsl | spec ÷ decode_examples | spec ÷ (decode_examples + assembly) |")
    print("|---|---|---|---|")
    for row in result["decode"]:
        cpu_spec = _ratio(row["cpu_spec_vs_decode_examples"], 0.9)
        cpu_sum = _ratio(row["cpu_spec_vs_decode_examples_plus_assembly"], 1.0)
        print(f"| {row['workload']} | {_ratio(row['cpu_lite_vs_tfx_bsl'], 1.0)} | {cpu_spec} | {cpu_sum} |")
    print("\nWall time, spec ÷ (decode_examples + the Arrow assembly timed apart, after decoding | warm):")
    for row in result["decode"]:
        after, warm = row["spec_vs_decode_examples_plus_assembly"], row["spec_vs_decode_examples_plus_warm_assembly"]
        cpu_warm = row["cpu_spec_vs_decode_examples_plus_warm_assembly"]
        print(f"- {row['workload']}: {_ratio(after, 1.0)} | warm {_ratio(warm, 1.0)}, CPU {_ratio(cpu_warm, 1.0)}")
    if not args.skip_parquet:
        p = result["parquet"] = parquet_conversion(args.quick, max(1, args.rounds // 2))
        print(f"\nTFRecord -> Parquet, {p['file_mib']:.0f} MiB, stages apart {p['apart_s']:.1f} s:")
        for name in ("api", "cli"):
            q = p[name]
            print(
                f"- {name}: streamed {q['streamed_s']:.1f} s, overlap {_ratio(q['overlap'], 0.8)}; "
                f"peak RSS {q['peak_rss_mib']:.0f} MiB (target < 400; {q['rss_after_imports_mib']:.0f} after imports)"
            )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
