# Where the microseconds of a per-record decode go (issue 14's decoder gaps): each
# workload's per-record path (iter_records, then decode_example with the spec) and its
# list path (decode_examples on lists of 1024 records) split into parts, each part
# timed in the same rounds as the whole, next to the `tfrecord` package's loader.
#
# A part is timed as the loop that runs it on every record of the file as iter_records
# yields it (so on a record fresh in cache, as in the real loop) minus the bare loop:
#   read     f.readinto of the whole file in the reader's 1 MiB steps (the kernel's copy)
#   crc32c   one crc32c call per payload, over the file in memory
#   copy     one bytes object per record (memoryview.tobytes), over the file in memory
#   iter_records - those three = the framing walk and the generator
#   decode_example(r, {})         = the call, the layout lookup and check, the dict
#   decode_example(r, {key: ...}) - decode_example(r, {}) = that feature's value
# The list path likewise, per record: list(islice(iter_records)) and decode_examples with
# each feature alone. Medians of the rounds, spread lowest..highest; CPU time alongside.
#
#   python benchmarks/decode_parts.py [--rounds N] [--only dense images]
#   (in an interpreter with tfrecord_lite and the `tfrecord` package: .venvs/bench)
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W

import tfrecord_lite as tfr

BATCH = 1024
WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".work")
Loop = Callable[[], Any]


def _stream_loops(path: str, spec: dict[str, Any]) -> dict[str, Loop]:
    """Per-record loops over iter_records: the bare scan, then decode_example with the empty
    spec, each feature alone, and the whole spec."""

    def over_records(fn: Callable[[bytes], Any]) -> Loop:
        def run() -> None:
            for record in tfr.iter_records(path):
                fn(record)

        return run

    loops: dict[str, Loop] = {"iter_records": over_records(len)}
    loops["decode_example(r, {})"] = over_records(lambda r: tfr.decode_example(r, {}))
    for key, one in spec.items():
        loops[f"+ {key!r}"] = over_records(lambda r, s={key: one}: tfr.decode_example(r, s))
    loops["decode_example(r, spec)"] = over_records(lambda r: tfr.decode_example(r, spec))
    return loops


def _framing_loops(path: str) -> dict[str, Loop]:
    """The reading's parts: the kernel's copy, the CRCs, the per-record bytes copies."""
    import crc32c

    with open(path, "rb") as f:
        whole = memoryview(f.read())
    spans = list(_spans(whole))

    def read() -> None:
        buf = memoryview(bytearray(1 << 20))
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass

    def crcs() -> None:
        for s, n in spans:
            crc32c.crc32c(whole[s : s + n])

    def copies() -> None:
        for s, n in spans:
            whole[s : s + n].tobytes()

    return {"read (readinto, 1 MiB)": read, "crc32c per payload": crcs, "bytes copy per record": copies}


def _spans(mv: memoryview) -> Any:
    pos = 0
    while pos < mv.nbytes:
        n = int.from_bytes(mv[pos : pos + 8], "little")
        yield pos + 12, n
        pos += n + 16


def _list_loops(path: str, spec: dict[str, Any]) -> dict[str, Loop]:
    def lists(decode: Callable[[list[bytes]], Any]) -> Loop:
        def run() -> None:
            records = tfr.iter_records(path)
            while batch := list(itertools.islice(records, BATCH)):
                decode(batch)

        return run

    loops: dict[str, Loop] = {"lists of 1024 from iter_records": lists(len)}
    for key, one in spec.items():
        loops[f"+ decode_examples({key!r} alone)"] = lists(lambda b, s={key: one}: tfr.decode_examples(b, s))
    loops["+ decode_examples(spec)"] = lists(lambda b: tfr.decode_examples(b, spec))
    return loops


def _peer_loop(wl: W.Workload, path: str) -> dict[str, Loop]:
    try:
        from tfrecord.reader import tfrecord_loader
    except ImportError:
        return {}
    description = W.tfrecord_description(wl)

    def run() -> None:
        for _ in tfrecord_loader(path, None, description):
            pass

    return {"`tfrecord` tfrecord_loader": run}


def measure(loops: dict[str, Loop], rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """(wall seconds, CPU seconds) per round of each loop, the loops taking turns."""
    for loop in loops.values():
        loop()
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in loops}
    names = list(loops)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            wall, cpu = time.perf_counter(), time.process_time()
            loops[name]()
            out[name][0].append(time.perf_counter() - wall)
            out[name][1].append(time.process_time() - cpu)
    return out


def _row(name: str, walls: list[float], cpus: list[float], base: tuple[list[float], list[float]] | None, n: int) -> str:
    """A table row in µs per record; minus the base loop's time of the same round when given."""
    if base is not None:
        walls = [w - b for w, b in zip(walls, base[0], strict=True)]
        cpus = [c - b for c, b in zip(cpus, base[1], strict=True)]
    us = [w / n * 1e6 for w in walls]
    return (
        f"| {name} | {statistics.median(us):.2f} | {min(us):.2f}..{max(us):.2f} | "
        f"{statistics.median(cpus) / n * 1e6:.2f} |"
    )


def report(wl: W.Workload, path: str, rounds: int) -> list[str]:
    spec = {key: tfr.FixedLenFeature(shape, dtype) for key, (dtype, shape) in wl.features.items()}
    stream, framing, lists = _stream_loops(path, spec), _framing_loops(path), _list_loops(path, spec)
    times = measure({**stream, **framing, **lists, **_peer_loop(wl, path)}, rounds)
    n = wl.count
    lines = [
        f"**{wl.name}** ({wl.description}; µs per record)",
        "",
        "| part | median | rounds | CPU |",
        "|---|---:|---:|---:|",
    ]
    for name in times:
        if name in framing or name in ("iter_records", "lists of 1024 from iter_records") or name.startswith("`"):
            lines.append(_row(name, *times[name], None, n))
        elif name.startswith("+ decode_examples"):
            lines.append(_row(name, *times[name], times["lists of 1024 from iter_records"], n))
        elif name.startswith("+ "):
            lines.append(_row(name, *times[name], times["decode_example(r, {})"], n))
        else:
            lines.append(_row(f"{name} − iter_records", *times[name], times["iter_records"], n))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=[w.name for w in W.FULL], default=["dense", "images"])
    args = parser.parse_args()
    for wl in W.FULL:
        if wl.name in args.only:
            path = os.path.join(WORK, f"{wl.name}-{wl.count}.tfrecord")  # made by run.py
            print("\n".join(report(wl, path, args.rounds)), end="\n\n", flush=True)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
