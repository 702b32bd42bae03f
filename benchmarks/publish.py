"""What crash safety costs a writer: ShardedWriter (staged shards, fsync, one journal, renames) and a
plain TFRecordWriter (its lock), in rounds; prints the median and the spread (min..max) of each.

    python benchmarks/publish.py [--rounds 5] [--shards 32] [--shard-mib 2] [--dir /tmp]

Run it with another checkout's package first on PYTHONPATH to compare two versions. The folder matters:
on a disk every fsync waits for the device, on tmpfs (/dev/shm) it is free.
"""

# Strategy: the same records every round (random bytes, 1 KiB each) go to a fresh folder under --dir;
# one timing is the whole write including close(), when the shards are published.
from __future__ import annotations

import argparse
import functools
import os
import shutil
import tempfile
from collections.abc import Callable

from _rounds import spread, timed

import tfrecord_lite as tfr

RECORD = 1024


def sharded(folder: str, records: list[bytes], shards: int) -> None:
    with tfr.ShardedWriter(os.path.join(folder, "ds"), num_shards=shards) as w:
        for r in records:
            w.write(r)


def plain_files(folder: str, records: list[bytes], files: int) -> None:
    per_file = len(records) // files
    for k in range(files):
        with tfr.TFRecordWriter(os.path.join(folder, f"f{k}.tfrecord")) as w:
            for r in records[k * per_file : (k + 1) * per_file]:
                w.write(r)


def measure(name: str, job: Callable[[str], None], rounds: int, where: str, mib: float) -> None:
    times = []
    for _ in range(rounds + 1):  # the first round warms up and is not counted
        folder = tempfile.mkdtemp(dir=where)
        times.append(timed(functools.partial(job, folder))[0])
        shutil.rmtree(folder)
    kept = spread(times[1:])
    print(f"{name:34s} median {kept['median'] * 1000:8.1f} ms  ({kept['low'] * 1000:.1f}..{kept['high'] * 1000:.1f})"
          f"  {mib / kept['median']:7.0f} MiB/s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shards", type=int, default=32)
    parser.add_argument("--shard-mib", type=float, default=2.0)
    parser.add_argument("--dir", default=tempfile.gettempdir())
    args = parser.parse_args()
    n = int(args.shards * args.shard_mib * (1 << 20) / RECORD)
    records = [os.urandom(RECORD) for _ in range(n)]
    mib = n * RECORD / (1 << 20)
    print(f"{tfr.__file__}: {n} records of {RECORD} B ({mib:.0f} MiB) into {args.shards} files under {args.dir}")
    measure(
        f"ShardedWriter, {args.shards} shards", lambda f: sharded(f, records, args.shards), args.rounds, args.dir, mib
    )
    measure(
        f"TFRecordWriter, {args.shards} files",
        lambda f: plain_files(f, records, args.shards),
        args.rounds,
        args.dir,
        mib,
    )


if __name__ == "__main__":
    main()
