# Resync benchmark (issue 12's target: the search for the next valid record header
# after damage runs at >= 200 MB/s over garbage of every kind):
#
#   python benchmarks/resync.py [--rounds N] [--mb M] [--out FILE.json]
#
# Garbage of four kinds, none holding a valid header whose record fits: random bytes,
# zero pages, int64 counters and small int64s (0..49; numeric tensors: many offsets
# whose bytes 5..7 are zero, the worst cases for the prefilter). Each round times, in
# this one process and taking turns, for each kind:
#   - find_header over M MB of it, the stream's end known (end=, as iter_records has it
#     for a local uncompressed file) and unknown (a compressed stream, a pipe);
#   - iter_records(on_error=callable) over a file whose first record header is damaged
#     and is followed by the M MB, then 1000 intact records: the search as the reader
#     runs it, through its buffer refills (MB/s of the file).
# Prints median and spread (min..max over rounds) of each; writes the raw times as
# JSON (default benchmarks/results/resync.json). Nothing here asserts.
from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from _rounds import spread, timed

import tfrecord_lite as tfr
from tfrecord_lite._wire.framing import frame
from tfrecord_lite._wire.resync import find_header

TARGET_MB_S = 200.0


def garbages(size: int) -> dict[str, bytes]:
    rng = np.random.default_rng(0)
    return {
        "random bytes": rng.bytes(size),
        "zero pages": bytes(size),
        "int64 counters": np.arange(size // 8, dtype=np.int64).tobytes(),
        "small int64s": rng.integers(0, 50, size // 8).astype(np.int64).tobytes(),
    }


def damaged_file(folder: str, name: str, garbage: bytes) -> str:
    """A damaged first record, the garbage, then 1000 intact records."""
    path = os.path.join(folder, name.replace(" ", "-") + ".tfrecord")
    first = bytearray(frame(b"lost"))
    first[0] ^= 0xFF
    with open(path, "wb") as fh:
        fh.write(first + garbage + b"".join(frame(b"%d" % i) for i in range(1000)))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--mb", type=int, default=64, help="MB of garbage per measurement")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "resync.json"))
    args = parser.parse_args()
    size = args.mb << 20
    kinds = garbages(size)
    find_header(b"\x00" * 64, 0)  # build the tables, and import the reader, outside the timing
    list(tfr.iter_records(io.BytesIO(frame(b"warm-up"))))
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        files = {name: damaged_file(folder, name, data) for name, data in kinds.items()}
        for _ in range(args.rounds):
            for name, data in kinds.items():
                path = files[name]
                runs = {
                    f"find_header, end known: {name}": lambda data=data: find_header(data, 0, end=len(data)),
                    f"find_header, end unknown: {name}": lambda data=data: find_header(data, 0),
                    f"iter_records skip: {name}": lambda path=path: sum(
                        1 for _ in tfr.iter_records(path, on_error=lambda err: None)
                    ),
                }
                for label, run in runs.items():
                    times.setdefault(label, []).append(timed(run)[0])
    print(f"resync search, {args.mb} MB per measurement, {args.rounds} rounds (target >= {TARGET_MB_S:.0f} MB/s)")
    print(f"{'search: garbage':<44} {'median MB/s':>12} {'spread (min..max)':>20}")
    summary = {}
    for name, secs in times.items():
        rates = spread([args.mb / s for s in secs])
        summary[name] = {"median_mb_s": rates["median"], "min_mb_s": rates["low"], "max_mb_s": rates["high"]}
        summary[name]["seconds"] = secs
        print(f"{name:<44} {rates['median']:>12.0f} {rates['low']:>9.0f}..{rates['high']:<9.0f}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"python": platform.python_version(), "mb": args.mb, "results": summary}, fh, indent=1)


if __name__ == "__main__":
    main()
