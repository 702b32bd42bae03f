# Arrow benchmark for tfrecord_lite.arrow (issue 9's targets):
#
#   python benchmarks/arrow.py [--quick] [--rounds N] [--out FILE.json]
#
# Run it where tfx-bsl is installed (`python3 tasks.py test --only=tf` builds .venvs/tf with it):
#   - decode_arrow without a spec vs tfx-bsl's ExamplesToRecordBatchDecoder().DecodeBatch, on
#     the small / images / dense workloads, in batches of 2048 records held in memory;
#   - decode_arrow with a spec vs decode_examples on the same batches (the Arrow assembly's cost);
#   - TFRecord -> Parquet of a 1.2 GiB file (the dense workload, concatenated; 120 MiB with
#     --quick), streamed batch by batch: peak RSS of a fresh process doing only that, and the
#     overlap: (read + decode + Parquet write, each timed apart) / the streamed conversion.
# Each measurement runs in rounds in which the compared systems take turns (benchmarks/_rounds.py);
# the table shows the median of the rounds and the spread (lowest..highest ratio of one round). Workloads come
# from benchmarks/workloads.py (fixed seeds), written once into benchmarks/.work/arrow/.
# Prints a table; writes the same as JSON (default benchmarks/results/arrow.json). Nothing here
# asserts.
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import workloads as W
from _rounds import compare, rounds, spread

import tfrecord_lite as tfr

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


def _decoders(decoder: Any, batches: list[list[bytes]], spec: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    from tfrecord_lite import arrow

    return {
        "tfx_bsl": lambda: [decoder.DecodeBatch(b) for b in batches],
        "lite": lambda: [arrow.decode_arrow(b) for b in batches],
        "lite_spec": lambda: [arrow.decode_arrow(b, spec) for b in batches],
        "decode_examples": lambda: [tfr.decode_examples(b, spec) for b in batches],
    }


def decode_rates(quick: bool, n_rounds: int) -> list[dict[str, Any]]:
    from tfx_bsl.coders import example_coder

    decoder = example_coder.ExamplesToRecordBatchDecoder()
    out = []
    for wl in W.QUICK if quick else W.FULL:
        records = list(tfr.iter_records(workload_file(wl)))
        batches = [records[i : i + BATCH] for i in range(0, len(records), BATCH)]
        spec = {k: tfr.FixedLenFeature(list(shape), dtype) for k, (dtype, shape) in wl.features.items()}
        times = rounds(_decoders(decoder, batches, spec), n_rounds)
        rate = {name: len(records) / statistics.median(ts) for name, ts in times.items()}
        out.append(
            {
                "workload": wl.name,
                "records": len(records),
                "records_per_s": rate,
                "lite_vs_tfx_bsl": compare(times["lite"], times["tfx_bsl"]),
                "spec_vs_decode_examples": compare(times["lite_spec"], times["decode_examples"]),
            }
        )
    return out


_CONVERT = """
import resource, sys, time
sys.path.insert(0, {root!r})
import pyarrow as pa, tfrecord_lite as tfr
from tfrecord_lite import arrow
from tfrecord_lite._tables import table_writer
spec = {spec}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
schema = pa.schema([(k, arrow.arrow_type(s)) for k, s in spec.items()])
with table_writer({out!r}, "parquet", schema) as w:
    for b in arrow.iter_arrow_batches({src!r}, spec, batch_size={batch}):
        w.write(b)
print(time.perf_counter() - t, before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def parquet_conversion(quick: bool, n_rounds: int) -> dict[str, Any]:
    import pyarrow as pa

    from tfrecord_lite import arrow
    from tfrecord_lite._columnar import record_spans
    from tfrecord_lite._flat import decode_flat
    from tfrecord_lite._tables import table_writer

    wl = next(w for w in (W.QUICK if quick else W.FULL) if w.name == "dense")
    mib = 120 if quick else 1200
    src = W.concatenated(workload_file(wl), mib << 20, os.path.join(WORK, f"big-{mib}MiB-{wl.name}.tfrecord"))
    spec = {k: tfr.FixedLenFeature(list(shape), dtype) for k, (dtype, shape) in wl.features.items()}
    spec_text = "{" + ", ".join(f"{k!r}: tfr.{s!r}" for k, s in spec.items()) + "}"
    schema = pa.schema([(k, arrow.arrow_type(s)) for k, s in spec.items()])
    out_dir = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    out = os.path.join(out_dir, "out.parquet")
    streamed, apart, rss = [], [], []
    try:
        for _ in range(n_rounds):
            code = _CONVERT.format(root=os.path.dirname(HERE), spec=spec_text, out=out, src=src, batch=BATCH)
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            seconds, before, peak = proc.stdout.split()
            streamed.append(float(seconds))
            rss.append((int(before) / 1024, int(peak) / 1024))
            # the three stages apart: read (scan spans), decode (to record batches), write (Parquet)
            t_read = t_decode = t_write = 0.0
            with table_writer(out, "parquet", schema) as writer:
                t = time.perf_counter()
                for spans in record_spans(src, BATCH, "auto", True):
                    t_read += time.perf_counter() - t
                    t = time.perf_counter()
                    batch = arrow._record_batch(decode_flat(spans, spec), spec, len(spans.starts))
                    t_decode += time.perf_counter() - t
                    t = time.perf_counter()
                    writer.write(batch)
                    t_write += time.perf_counter() - t
                    t = time.perf_counter()
            apart.append(t_read + t_decode + t_write)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    overlaps = [a / s for a, s in zip(apart, streamed, strict=True)]
    return {
        "file_mib": os.path.getsize(src) / (1 << 20),
        "streamed_s": statistics.median(streamed),
        "apart_s": statistics.median(apart),
        "overlap": spread(overlaps),
        "rss_before_mib": statistics.median(b for b, _ in rss),
        "peak_rss_mib": max(p for _, p in rss),
    }


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
    if not args.skip_parquet:
        p = result["parquet"] = parquet_conversion(args.quick, max(1, args.rounds // 2))
        print(
            f"\nTFRecord -> Parquet, {p['file_mib']:.0f} MiB: streamed {p['streamed_s']:.1f} s, stages apart "
            f"{p['apart_s']:.1f} s, overlap {_ratio(p['overlap'], 0.8)}; peak RSS {p['peak_rss_mib']:.0f} MiB "
            f"(target < 400; {p['rss_before_mib']:.0f} MiB after imports)"
        )
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
