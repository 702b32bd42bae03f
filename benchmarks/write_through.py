# TFRecordWriter.write, buffered (the default) and write-through (buffered=False: each record in the
# kernel's page cache before write() returns, so that SIGKILL loses at most the record in flight;
# stored into a shared map of the file when the records are small, else one os.writev each), beside
# the `tfrecord` package's writer and TensorFlow's tf.io.TFRecordWriter writing the same records:
#
#   python benchmarks/write_through.py [--rounds N] [--quick] [--only tiny 64k ...] [--dir DIR]
#       [--python P] [--tf-python P] [--out FILE.json]
#
# Every cell is a fresh process: it makes the records (seeded random bytes; untimed), imports its
# writer, then writes all of them --writes times (default 3) into DIR, timing each write. The first
# write of a fresh process is what a job that writes one file sees, and where a writer whose speed
# depends on the process's past (its allocator's state, say) shows it; the later ones are the steady
# state. In each of --rounds rounds every system runs one process per size, the systems taking turns
# in an order that rotates between rounds (benchmarks/_rounds.py). tfrecord_lite and the `tfrecord`
# package (its framing as is, its dict serialization skipped, as run.py measures it) run under
# --python (default .venvs/bench), TensorFlow under --tf-python (default .venvs/tf). Writes go to DIR
# (default /dev/shm, a tmpfs, so that no disk sets the pace). Prints records/s of the first writes and
# of the later ones, median (min..max) over rounds, by the wall clock and by the process's CPU time
# (every writer here writes on the calling thread, so CPU time is their cost where other jobs share
# the cores and stretch the wall clock), and tfrecord_lite's buffered writer against each
# peer: the ratio of the medians and (in brackets) the lowest and highest ratio of one round; writes
# the raw times as JSON (default benchmarks/results/write_through.json). Nothing here asserts.
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from _rounds import spread, turns

# name -> (bytes a record, records a write)
SIZES = {
    "tiny": (16, 300_000),
    "small": (110, 200_000),
    "1k": (1_024, 60_000),
    "dense": (4_500, 20_000),
    "64k": (65_536, 3_000),
    "1m": (1 << 20, 200),
}
OURS = "buffered (default)"
SYSTEMS = [OURS, "buffered=False", "tfrecord", "TensorFlow"]


def child(system: str, size: int, n: int, writes: int, path: str) -> None:
    """One cell: make the records, import the writer, write them `writes` times; print the seconds."""
    import random

    rng = random.Random(size)
    records = [rng.randbytes(size) for _ in range(n)]
    if system in (OURS, "buffered=False"):
        from tfrecord_lite import TFRecordWriter

        buffered = system == OURS

        def run() -> None:
            with TFRecordWriter(path, buffered=buffered) as w:
                for r in records:
                    w.write(r)

    elif system == "tfrecord":
        from tfrecord.writer import TFRecordWriter as Peer

        Peer.serialize_tf_example = staticmethod(lambda datum: datum)  # raw records: its framing only

        def run() -> None:
            w = Peer(path)
            for r in records:
                w.write(r)
            w.close()

    else:
        import tensorflow as tf

        def run() -> None:
            with tf.io.TFRecordWriter(path) as w:
                for r in records:
                    w.write(r)

    times = []
    try:
        for _ in range(writes):
            started, cpu = time.perf_counter(), time.process_time()
            run()
            times.append([time.perf_counter() - started, time.process_time() - cpu])
    finally:
        if os.path.exists(path):
            os.unlink(path)
    print(json.dumps(times))


def cell(python: str, system: str, size: int, n: int, writes: int, path: str) -> list[list[float]]:
    argv = [python, os.path.abspath(__file__), "--child", system, str(size), str(n), str(writes), path]
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run(argv, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(f"{system} failed:\n{out.stderr[-1500:]}", file=sys.stderr)
        return []
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _rate(counts: int, seconds: list[float]) -> str:
    r = spread([counts / s for s in seconds])
    return f"{_k(r['median'])} ({_k(r['low'])}..{_k(r['high'])})"


def _k(v: float) -> str:
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.1f}k"


def _ratio(ours: list[float], peer: list[float]) -> str:
    """ours ÷ peer in records/s: the ratio of the medians, and the lowest and highest of one round."""
    rounds = [p / o for o, p in zip(ours, peer, strict=False)]
    if not rounds:
        return "-"
    median = statistics.median(peer) / statistics.median(ours)
    return f"{median:.2f}x ({min(rounds):.2f}..{max(rounds):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writes", type=int, default=3, help="writes of all the records in each process")
    parser.add_argument("--quick", action="store_true", help="a tenth of the records")
    parser.add_argument("--only", nargs="+", choices=list(SIZES), default=list(SIZES))
    parser.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else HERE)
    parser.add_argument("--python", default=os.path.join(ROOT, ".venvs", "bench", "bin", "python"))
    parser.add_argument("--tf-python", default=os.path.join(ROOT, ".venvs", "tf", "bin", "python"))
    parser.add_argument("--out", default=os.path.join(HERE, "results", "write_through.json"))
    parser.add_argument("--child", nargs=5, metavar=("SYSTEM", "SIZE", "N", "WRITES", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        system, size, n, writes, path = args.child
        child(system, int(size), int(n), int(writes), path)
        return
    pythons = {OURS: args.python, "buffered=False": args.python, "tfrecord": args.python, "TensorFlow": args.tf_python}
    systems = [s for s in SYSTEMS if os.path.exists(pythons[s])]
    path = os.path.join(args.dir, f"write-through-{os.getpid()}.tfrecord")
    times: dict[str, dict[str, list[list[list[float]]]]] = {name: {s: [] for s in systems} for name in args.only}
    counts = {name: SIZES[name][1] // (10 if args.quick else 1) for name in args.only}
    loads = [loadavg()]
    for _, system in turns(systems, args.rounds):
        for name in args.only:
            got = cell(pythons[system], system, SIZES[name][0], counts[name], args.writes, path)
            if got:
                times[name][system].append(got)
    loads.append(loadavg())
    print(
        f"Writing raw records, {args.rounds} rounds of a fresh process per cell ({args.writes} writes each), "
        f"into {args.dir}, load {loads[0]} -> {loads[1]}: records/s, median (min..max) of the rounds"
    )
    summary = {}
    for name in args.only:
        size, n = SIZES[name][0], counts[name]
        print(f"\n{name} ({size} B x {n})")
        for clock, k in (("wall", 0), ("CPU", 1)):
            runs = {s: [[t[k] for t in writes] for writes in got] for s, got in times[name].items() if got}
            first = {s: [t[0] for t in r] for s, r in runs.items()}
            later = {s: [min(t[1:]) for t in r if len(t) > 1] for s, r in runs.items()}
            for s in first:
                steady = f"   later writes (best of a process) {_rate(n, later[s])}" if later[s] else ""
                print(f"  {clock:<4} {s:<20} first write {_rate(n, first[s])}{steady}")
            for peer in ("tfrecord", "TensorFlow", "buffered=False"):
                if OURS in first and peer in first:
                    print(
                        f"  {clock:<4} buffered / {peer:<14} first write {_ratio(first[OURS], first[peer])}"
                        f"   later {_ratio(later[OURS], later[peer])}"
                    )
        summary[name] = {"size": size, "records": n, "seconds (wall, CPU) of each write": times[name]}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        report = {"python": platform.python_version(), "rounds": args.rounds, "load": loads, "results": summary}
        json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
