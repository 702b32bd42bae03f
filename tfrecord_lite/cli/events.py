"""The events command: the values of a TensorBoard logdir, printed as text lines, CSV or JSON lines,
or written to Parquet. The work is tfrecord_lite.events (read_events, to_arrow); this module parses
and prints. --follow keeps printing as the runs are written, one flushed line per value.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import sys
from typing import Any

import numpy as np

from tfrecord_lite._events.wire import KINDS
from tfrecord_lite._redact import redact
from tfrecord_lite.cli.options import PROG, UsageError, add_command, add_reader_options, reader_options, say
from tfrecord_lite.cli.output import describe_bytes, printable


def _time(wall_time: float) -> str:
    return datetime.datetime.fromtimestamp(wall_time, datetime.timezone.utc).isoformat()


def _text_value(kind: str, value: Any) -> str:
    if kind == "scalar":
        return repr(value)
    if isinstance(value, bytes):
        return describe_bytes(value)
    if isinstance(value, np.ndarray):
        if kind == "histogram":
            return (
                f"histogram of {len(value)} buckets, {value[:, 2].sum():g} values" if len(value) else "empty histogram"
            )
        return f"{value.dtype} {list(value.shape)} {np.array2string(value, threshold=8, edgeitems=3)}"
    return printable(value if isinstance(value, str) else json.dumps(value, default=_json_default))


def _json_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return _json_value(value.tolist())
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, bytes):
        return {"bytes": len(value)}
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def _json_default(value: Any) -> Any:
    return _json_value(value) if isinstance(value, (bytes, np.ndarray)) else str(value)


def cmd_events(args: argparse.Namespace) -> int:
    from tfrecord_lite.events import read_events, to_arrow

    tags = args.tags.split(",") if args.tags else None
    kinds = args.kinds.split(",") if args.kinds else None
    runs = args.runs.split(",") if args.runs else None
    if args.pivot and args.to != "parquet":
        raise UsageError("--pivot makes a table: use it with --to parquet")
    if args.to == "parquet":
        if not args.output:
            raise UsageError("--to parquet writes a file: name it with -o OUT.parquet")
        if args.follow:
            raise UsageError("--follow prints as the runs grow; it writes no Parquet file")
        import pyarrow.parquet as pq

        table = to_arrow(args.logdir, tags=tags, kinds=kinds, runs=runs, pivot=args.pivot, **reader_options(args))
        pq.write_table(table, args.output)
        say(args, f"wrote {table.num_rows:,} rows to {redact(args.output)}")
        return 0
    rows = read_events(args.logdir, tags=tags, kinds=kinds, runs=runs, follow=args.follow, **reader_options(args))
    out = open(args.output, "w", newline="") if args.output else sys.stdout  # noqa: SIM115
    try:
        _print(rows, args.to, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _print(rows: Any, to: str | None, out: Any) -> None:
    writer = csv.writer(out) if to == "csv" else None
    if writer is not None:
        writer.writerow(["run", "step", "wall_time", "tag", "kind", "value"])
    for run, step, wall_time, tag, kind, value in rows:
        if writer is not None:
            writer.writerow([run, step, _time(wall_time), tag, kind, _text_value(kind, value)])
        elif to == "json":
            line = {"run": run, "step": step, "wall_time": wall_time, "tag": tag, "kind": kind}
            print(json.dumps({**line, "value": _json_value(value)}, allow_nan=True), file=out)
        else:
            print(f"{run}\t{step}\t{_time(wall_time)}\t{printable(tag)}\t{kind}\t{_text_value(kind, value)}", file=out)
        out.flush()


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_command(
        sub,
        "events",
        cmd_events,
        "The values of a TensorBoard log (a logdir, a run folder or an events file): scalars, histograms, "
        "images, audio, text, tensors and hparams, one line each (run, step, wall time, tag, kind, value).",
        f"  {PROG} events logs/\n"
        f"  {PROG} events logs/ --tags 'loss*,metrics/*' --to csv -o scalars.csv\n"
        f"  {PROG} events logs/ --kinds scalar --pivot --to parquet -o scalars.parquet\n"
        f"  {PROG} events logs/run-7 --tags loss --to json",
    )
    p.add_argument("logdir", metavar="LOGDIR", help="a logdir, a run folder or an events file (or a URL)")
    p.add_argument("--tags", metavar="GLOBS", help="only tags matching these globs (comma-separated)")
    p.add_argument("--kinds", metavar="K,K", help=f"only these kinds: {', '.join(KINDS)}")
    p.add_argument("--runs", metavar="GLOBS", help="only runs matching these globs (comma-separated)")
    p.add_argument("--to", choices=["csv", "json", "parquet"], help="CSV, JSON lines or Parquet (default: text lines)")
    p.add_argument("-o", "--output", metavar="OUT", help="write to OUT (default: standard output)")
    p.add_argument("--pivot", action="store_true", help="with --to parquet: one row per run and step, a column per tag")
    p.add_argument("--follow", action="store_true", help="keep printing values as the runs are written (Ctrl-C ends)")
    add_reader_options(p)
