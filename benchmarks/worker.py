# One benchmark worker: runs every measurement of ONE system (tfrecord_lite, the
# `tfrecord` package, the `tfrecords` package or TensorFlow) in this interpreter and prints the timings as
# JSON. run.py starts one worker per system, each in the interpreter of the venv
# where that system is installed, because the `tfrecord` package's generated
# example_pb2 and TensorFlow's clash in one process. Each measurement is a
# callable that processes a whole workload and returns how many records it saw;
# what it needs in memory (the records or dicts a write writes) is prepared,
# untimed, just before its runs and dropped after them, so that no measurement
# pays the garbage collector for another's data. It is timed `runs` times
# (after a gc.collect) and the raw times are reported. It measures tfrecord_lite through its public
# names only, so that compare.py runs the same code in two checkouts, and reports where it was
# imported from.
#
#   python benchmarks/worker.py SYSTEM JOB.json        -> timings as JSON on stdout
#   python benchmarks/worker.py SYSTEM --rss FILE      -> peak RSS of streaming FILE
#   python benchmarks/worker.py tfrecord_lite --origin -> where tfrecord_lite is imported from
from __future__ import annotations

import gc
import itertools
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W

BATCH = 1024
Task = Callable[[], int]  # processes a whole workload, returns how many records it saw
Prepare = Callable[[], Task]  # untimed setup, then the task


def _records_of(path: str, read: Callable[[str], Any]) -> list[bytes]:
    return [bytes(r) for r in read(path)]


# --------------------------------------------------------------------------- tfrecord_lite


def lite_tasks(wl: W.Workload, path: str, out: str) -> dict[str, Prepare]:
    import tfrecord_lite as tfr

    spec = {key: tfr.FixedLenFeature(shape, dtype) for key, (dtype, shape) in wl.features.items()}

    def scan() -> int:
        n = 0
        for _ in tfr.iter_records(path):
            n += 1
        return n

    def decode() -> int:
        n = 0
        for record in tfr.iter_records(path):
            tfr.decode_example(record, spec)
            n += 1
        return n

    def decodeview() -> int:
        n = 0
        for record in tfr.iter_records(path):
            tfr.decode_example(record, spec, copy=False)
            n += 1
        return n

    def batched() -> int:
        n = 0
        for batch in tfr.iter_example_batches(path, features=spec, batch_size=BATCH):
            n += len(next(iter(batch.values())))
        return n

    def gzscan() -> int:
        n = 0
        for _ in tfr.iter_records(path + ".gz"):
            n += 1
        return n

    def gzscanidx() -> int:
        n = 0
        for _ in tfr.iter_records(path + ".idx.gz"):
            n += 1
        return n

    def listdecode(copy: bool = True) -> int:
        n = 0
        records = tfr.iter_records(path)
        while batch := list(itertools.islice(records, BATCH)):
            n += len(next(iter(tfr.decode_examples(batch, spec, copy=copy).values())))
        return n

    def batchedview() -> int:
        n = 0
        for batch in tfr.iter_example_batches(path, features=spec, batch_size=BATCH, copy=False):
            n += len(next(iter(batch.values())))
        return n

    def write() -> Task:
        records = _records_of(path, tfr.iter_records)

        def run() -> int:
            with tfr.TFRecordWriter(out) as w:
                for r in records:
                    w.write(r)
            return len(records)

        return run

    def write_example() -> Task:
        rows = list(wl.rows())

        def run() -> int:
            with tfr.TFRecordWriter(out) as w:
                for row in rows:
                    w.write_example(row)
            return len(rows)

        return run

    return {
        "scan": lambda: scan,
        "decode": lambda: decode,
        "batched": lambda: batched,
        "write": write,
        "write_example": write_example,
        "gzscan": lambda: gzscan,
        "gzscanidx": lambda: gzscanidx,
        "listdecode": lambda: listdecode,
        "decodeview": lambda: decodeview,
        "listdecodeview": lambda: lambda: listdecode(copy=False),
        "batchedview": lambda: batchedview,
    }


def lite_scan(path: str) -> int:
    import tfrecord_lite as tfr

    n = 0
    for _ in tfr.iter_records(path):
        n += 1
    return n


# --------------------------------------------------------------------------- the `tfrecord` package


def tfrecord_tasks(wl: W.Workload, path: str, out: str) -> dict[str, Prepare]:
    from tfrecord.reader import tfrecord_iterator, tfrecord_loader
    from tfrecord.writer import TFRecordWriter

    description = W.tfrecord_description(wl)
    types = description

    def scan() -> int:
        n = 0
        for _ in tfrecord_iterator(path):
            n += 1
        return n

    def decode() -> int:
        n = 0
        for _ in tfrecord_loader(path, None, description):
            n += 1
        return n

    def write() -> Task:
        records = _records_of(path, tfrecord_iterator)

        def run() -> int:
            # The package has no raw-record write: its write() serializes a dict first
            # (calling TFRecordWriter.serialize_tf_example by class name). For the raw
            # measurement that step is swapped for the identity; its framing code runs as is.
            serialize = TFRecordWriter.__dict__["serialize_tf_example"]
            TFRecordWriter.serialize_tf_example = staticmethod(lambda datum: datum)  # type: ignore[method-assign]
            try:
                w = TFRecordWriter(out)
                for r in records:
                    w.write(r)
                w.close()
            finally:
                TFRecordWriter.serialize_tf_example = serialize  # type: ignore[method-assign]
            return len(records)

        return run

    def write_example() -> Task:
        rows = [{key: (value, types[key]) for key, value in row.items()} for row in wl.rows()]

        def run() -> int:
            w = TFRecordWriter(out)
            for row in rows:
                w.write(row)
            w.close()
            return len(rows)

        return run

    return {
        "scan": lambda: scan,
        "decode": lambda: decode,
        "write": write,
        "write_example": write_example,
        "decodeview": lambda: decode,  # the package has one decode; held to the zero-copy one too
    }


def tfrecord_scan(path: str) -> int:
    from tfrecord.reader import tfrecord_iterator

    n = 0
    for _ in tfrecord_iterator(path):
        n += 1
    return n


# --------------------------------------------------------------------------- the `tfrecords` package


def tfrecords_tasks(wl: W.Workload, path: str, out: str) -> dict[str, Prepare]:
    import tfrecords

    gzip = tfrecords.TFRecordOptions(compression_type="GZIP")

    def scan() -> int:
        n = 0
        for _ in tfrecords.tf_record_iterator(path):
            n += 1
        return n

    def gzscan() -> int:
        n = 0
        for _ in tfrecords.tf_record_iterator(path + ".gz", options=gzip):
            n += 1
        return n

    return {"scan": lambda: scan, "gzscan": lambda: gzscan}


def tfrecords_scan(path: str) -> int:
    import tfrecords

    return sum(1 for _ in tfrecords.tf_record_iterator(path))


# --------------------------------------------------------------------------- TensorFlow


def _quiet_tf() -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    return tf


def tf_tasks(wl: W.Workload, path: str, out: str) -> dict[str, Prepare]:
    tf = _quiet_tf()
    dtypes = {"int64": tf.int64, "float32": tf.float32, "bytes": tf.string}
    spec = {key: tf.io.FixedLenFeature(list(shape), dtypes[dtype]) for key, (dtype, shape) in wl.features.items()}

    # Datasets are built (and the parse function traced to a graph) once, outside the
    # timed runs; each run iterates them again from the start.
    raw_batches = tf.data.TFRecordDataset(path).batch(BATCH)
    gz_batches = tf.data.TFRecordDataset(path + ".gz", compression_type="GZIP").batch(BATCH)
    parsed_batches = tf.data.TFRecordDataset(path).batch(BATCH).map(lambda x: tf.io.parse_example(x, spec))

    def scan() -> int:
        n = 0
        for batch in raw_batches:
            n += int(batch.shape[0])
        return n

    def batched() -> int:
        n = 0
        for batch in parsed_batches:
            n += int(next(iter(batch.values())).shape[0])
        return n

    def gzscan() -> int:
        n = 0
        for batch in gz_batches:
            n += int(batch.shape[0])
        return n

    makers = {
        "int64": lambda v: tf.train.Feature(int64_list=tf.train.Int64List(value=[v] if isinstance(v, int) else v)),
        "float32": lambda v: tf.train.Feature(float_list=tf.train.FloatList(value=v)),
        "bytes": lambda v: tf.train.Feature(bytes_list=tf.train.BytesList(value=[v])),
    }
    kinds = {key: makers[dtype] for key, (dtype, _) in wl.features.items()}

    def write() -> Task:
        records = [r.numpy() for r in tf.data.TFRecordDataset(path)]

        def run() -> int:
            with tf.io.TFRecordWriter(out) as w:
                for r in records:
                    w.write(r)
            return len(records)

        return run

    def write_example() -> Task:
        rows = list(wl.rows())

        def run() -> int:
            with tf.io.TFRecordWriter(out) as w:
                for row in rows:
                    feature = {key: kinds[key](value) for key, value in row.items()}
                    w.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
            return len(rows)

        return run

    return {
        "scan": lambda: scan,
        "batched": lambda: batched,
        "write": write,
        "write_example": write_example,
        "gzscan": lambda: gzscan,
        "gzscanidx": lambda: gzscan,
        "listdecode": lambda: batched,  # TensorFlow's batched parse is what the list path is held to
        "listdecodeview": lambda: batched,
        "batchedview": lambda: batched,
    }


def tf_scan(path: str) -> int:
    tf = _quiet_tf()
    n = 0
    for batch in tf.data.TFRecordDataset(path).batch(BATCH):
        n += int(batch.shape[0])
    return n


_IMPORTS: dict[str, Callable[[], Any]] = {
    "tfrecord_lite": lambda: __import__("tfrecord_lite"),
    "tfrecord": lambda: __import__("tfrecord.reader"),
    "tfrecords": lambda: __import__("tfrecords"),
    "tensorflow": _quiet_tf,
}

SYSTEMS: dict[str, tuple[Callable[..., dict[str, Prepare]], Callable[[str], int]]] = {
    "tfrecord_lite": (lite_tasks, lite_scan),
    "tfrecord": (tfrecord_tasks, tfrecord_scan),
    "tfrecords": (tfrecords_tasks, tfrecords_scan),
    "tensorflow": (tf_tasks, tf_scan),
}


def _versions(system: str) -> dict[str, str | None]:
    from importlib import metadata

    import numpy

    out: dict[str, str | None] = {"python": sys.version.split()[0], "numpy": numpy.__version__}
    for dist in {
        "tfrecord_lite": ["tfrecord_lite", "protobuf", "crc32c", "isal"],
        "tfrecord": ["tfrecord", "protobuf", "crc32c"],
        "tfrecords": ["tfrecords"],
        "tensorflow": ["tensorflow-cpu", "tensorflow", "protobuf"],
    }[system]:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    try:
        from google.protobuf.internal import api_implementation

        out["protobuf_impl"] = api_implementation.Type()
    except ImportError:
        pass
    return out


def lite_origin() -> dict[str, Any]:
    """Where tfrecord_lite was imported from: its `__file__`, and the modules of it (none, unless the
    import system was misled) that were loaded from outside its folder."""
    import tfrecord_lite

    home = os.path.dirname(os.path.realpath(tfrecord_lite.__file__)) + os.sep
    elsewhere = sorted(
        name
        for name, module in list(sys.modules.items())
        if name.startswith("tfrecord_lite.")
        and getattr(module, "__file__", None)
        and not os.path.realpath(module.__file__).startswith(home)
    )
    return {"file": tfrecord_lite.__file__, "elsewhere": elsewhere}


def run_job(system: str, job: dict[str, Any]) -> dict[str, Any]:
    make_tasks = SYSTEMS[system][0]
    results: list[dict[str, Any]] = []
    wanted = set(job.get("tasks") or [])
    for entry in job["workloads"]:
        wl = W.Workload(
            entry["name"],
            entry["count"],
            entry["seed"],
            {k: (d, tuple(s)) for k, (d, s) in entry["features"].items()},
            "",
        )
        out = os.path.join(job["write_dir"], f"out-{system}-{wl.name}.tfrecord")
        tasks = make_tasks(wl, entry["path"], out)
        for name, prepare in tasks.items():
            if wanted and name not in wanted:
                continue
            task = prepare()  # untimed: loads what a write task writes; freed after its runs
            if job.get("warmup"):
                task()  # untimed: first-use costs (caches, lazy imports, graph building) are not the steady state
            times = []
            for _ in range(job["runs"]):
                if os.path.exists(out):  # a write starts from no file: truncating one is not part of it
                    os.remove(out)
                gc.collect()
                t0 = time.perf_counter()
                count = task()
                times.append(time.perf_counter() - t0)
                if count != wl.count:
                    raise SystemExit(f"{system} {name} on {wl.name}: saw {count} records, expected {wl.count}")
            del task
            gc.collect()
            results.append({"workload": wl.name, "task": name, "times": times})
            print(f"  {system:14} {wl.name:7} {name:14} {min(times):8.3f} s", file=sys.stderr, flush=True)
        del tasks
        if os.path.exists(out):
            os.remove(out)
        gc.collect()
    report = {"system": system, "versions": _versions(system), "results": results}
    if system == "tfrecord_lite":
        report["tfrecord_lite"] = lite_origin()  # after the runs: the modules they imported lazily too
    return report


def peak_rss(system: str, path: str) -> dict[str, Any]:
    """Stream every record of `path`; report the peak RSS before and after, in bytes."""
    scan = SYSTEMS[system][1]
    _IMPORTS[system]()  # imports are not part of what is measured
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    count = scan(path)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "system": system,
        "file_bytes": os.path.getsize(path),
        "records": count,
        "rss_before": before,
        "rss_peak": after,
        "seconds": seconds,
    }


def main(argv: list[str]) -> None:
    system = argv[0]
    if argv[1] == "--rss":
        print(json.dumps(peak_rss(system, argv[2])))
        return
    if argv[1:] == ["--origin"] and system == "tfrecord_lite":
        print(json.dumps(lite_origin()))
        return
    with open(argv[1]) as f:
        job = json.load(f)
    print(json.dumps(run_job(system, job)))


if __name__ == "__main__":
    main(sys.argv[1:])
