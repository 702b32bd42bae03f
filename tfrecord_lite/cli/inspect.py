# Commands that read and look: count, head / cat, schema, verify. Also the schema
# statistics (FeatureStats, Schema, collect_schema, format_schema) that `schema` and the
# demo print, until the library infers features itself.
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .._count import count_file
from .._verify import verify_file
from .options import (
    EXIT_DATA,
    PROG,
    add_command,
    add_inputs,
    add_mode,
    expand_inputs,
    head_compression,
    iter_file_records,
    positive_int,
    progress,
    progress_bar,
    source_of,
)
from .output import Decoded, decode_record, format_report, record_json, render_record, value_kind

# ---------------------------------------------------------------- schema


@dataclass
class FeatureStats:
    """What `schema` learns about one key: kinds seen, value counts, how many records have it."""

    key: str
    section: str  # "features" | "context" | "feature_lists"
    kinds: set[str] = field(default_factory=set)
    present: int = 0
    min_values: int | None = None
    max_values: int | None = None

    def add(self, value: Any) -> None:
        """Count one occurrence; for a feature list, value counts are per step."""
        steps = value if self.section == "feature_lists" else [value]
        self.present += 1
        for v in steps:
            kind = value_kind(v)
            self.kinds.add(kind or "none")
            n = 0 if v is None else len(v)
            self.min_values = n if self.min_values is None else min(self.min_values, n)
            self.max_values = n if self.max_values is None else max(self.max_values, n)


@dataclass
class Schema:
    """Feature statistics over the first `records` records of some files."""

    records: int = 0
    raw: int = 0  # records that are not Examples
    complete: bool = True  # every record was read
    features: dict[tuple[str, str], FeatureStats] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per key (section, key, kind, present %, min/max values), sorted by key."""
        out = []
        for (section, key), st in sorted(self.features.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            out.append(
                {
                    "key": key,
                    "section": section,
                    "kind": "|".join(sorted(st.kinds)),
                    "present": st.present,
                    "present_pct": round(100.0 * st.present / self.records, 2) if self.records else 0.0,
                    "min_values": st.min_values if st.min_values is not None else 0,
                    "max_values": st.max_values if st.max_values is not None else 0,
                }
            )
        return out


def collect_schema(records: Iterable[bytes], limit: int | None = 1000, mode: str = "auto") -> Schema:
    """Feature keys, kinds, min/max value counts and presence over the first `limit` records (None: all)."""
    schema = Schema()
    it = iter(records)
    for record in it:
        if limit is not None and schema.records >= limit:
            schema.complete = False
            break
        schema.records += 1
        dec = decode_record(record, mode)
        if dec.kind == "raw":
            schema.raw += 1
            continue
        groups = [("features" if dec.kind == "example" else "context", dec.features)]
        if dec.kind == "sequence":
            groups.append(("feature_lists", dec.feature_lists))
        for section, feats in groups:
            for key, value in feats.items():
                st = schema.features.get((section, key))
                if st is None:
                    st = schema.features[(section, key)] = FeatureStats(key, section)
                st.add(value)
    return schema


def format_schema(schema: Schema) -> str:
    """The table `schema` prints."""
    rows = schema.rows()
    sequence = any(r["section"] != "features" for r in rows)
    scope = "all" if schema.complete else "the first"
    head = [f"scanned {scope} {schema.records} records" + (f" ({schema.raw} not Examples)" if schema.raw else "")]
    if not rows:
        return "\n".join(head + ["no features"])
    names = [r["key"] + (" [list]" if r["section"] == "feature_lists" else "") for r in rows]
    width = max(len("key"), *(len(n) for n in names))
    kwidth = max(len("kind"), *(len(r["kind"]) for r in rows))
    unit = "values (per step for lists)" if sequence else "values"
    lines = head + [f"{'key'.ljust(width)}  {'kind'.ljust(kwidth)}  present  {unit}"]
    for name, r in zip(names, rows, strict=False):
        span = str(r["min_values"]) if r["min_values"] == r["max_values"] else f"{r['min_values']}..{r['max_values']}"
        lines.append(f"{name.ljust(width)}  {r['kind'].ljust(kwidth)}  {r['present_pct']:6.1f}%  {span}")
    return "\n".join(lines)


# ---------------------------------------------------------------- commands


def cmd_count(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    counts = {
        p: count_file(source_of(p), compression=args.compression, verify=args.verify)
        for p in progress(paths, len(paths), "files", "file", args.quiet)
    }
    total = sum(counts.values())
    if args.json:
        print(json.dumps({"files": counts, "total": total}))
        return 0
    if args.per_file:
        width = len(str(total))
        for p, n in counts.items():
            print(f"{str(n).rjust(width)}  {p}")
    print(total)
    return 0


def _select(dec: Decoded, keys: list[str] | None) -> Decoded:
    if keys:
        dec.features = {k: v for k, v in dec.features.items() if k in keys}
        dec.feature_lists = {k: v for k, v in dec.feature_lists.items() if k in keys}
    return dec


def cmd_show(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    limit = args.n if args.command == "head" else None
    max_values, max_chars = (0, 0) if args.full else (args.max_values, args.max_chars)
    keys = [k for spec in args.keys or [] for k in spec.split(",") if k]
    shown = 0
    for index, (path, i, record) in enumerate(iter_file_records(paths, args.compression)):
        if index < args.skip:
            continue
        if limit is not None and shown >= limit:
            break
        dec = _select(decode_record(record, args.mode), keys)
        if args.json:
            print(json.dumps(record_json(dec, path, i, max_values, max_chars), ensure_ascii=False))
        else:
            print(("\n" if shown else "") + render_record(dec, f"{path} #{i}", max_values, max_chars))
        shown += 1
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    records = (r for _, _, r in iter_file_records(paths, args.compression))
    schema = collect_schema(
        progress(records, None, "records", "rec", args.quiet), None if args.all else args.n, args.mode
    )
    if args.json:
        print(
            json.dumps(
                {
                    "records": schema.records,
                    "complete": schema.complete,
                    "not_examples": schema.raw,
                    "features": schema.rows(),
                }
            )
        )
    else:
        print(format_schema(schema))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    plain = all(os.path.isfile(p) and head_compression(p) == "" for p in paths)
    total = sum(os.path.getsize(p) for p in paths) if plain else None  # the bar counts uncompressed bytes
    bar = progress_bar(total, "verify", quiet=args.quiet)
    bad_files = 0
    try:
        for p in paths:
            report = verify_file(source_of(p), args.compression, on_progress=bar.update)
            if not report.ok:
                bad_files += 1
            if args.json:
                print(
                    json.dumps(
                        {
                            "file": p,
                            "ok": report.ok,
                            "records": report.records,
                            "bad": [{"offset": o, "reason": r} for o, r in report.bad],
                        }
                    )
                )
            elif not report.ok or not args.quiet:
                print(format_report(p, report, 0 if args.all else 20))
    finally:
        bar.close()
    if bad_files:
        print(f"{PROG}: error: {bad_files} of {len(paths)} files have bad records", file=sys.stderr)
        return EXIT_DATA
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """count, head, cat, schema, verify."""
    p = add_command(
        sub,
        "count",
        cmd_count,
        "Count the records of TFRecord files (the total; --per-file for each file).",
        f"  {PROG} count data/train-*.tfrecord\n  {PROG} count --per-file data/",
    )
    add_inputs(p)
    p.add_argument("--per-file", action="store_true", help="also print each file's count")
    p.add_argument("--verify", action="store_true", help="check payload CRCs while counting (slower)")
    p.add_argument("--json", action="store_true", help='print {"files": {...}, "total": N}')

    for name, summary, example in (
        (
            "head",
            "Show the first records (Example, SequenceExample or raw bytes), readable or as JSON lines.",
            f"  {PROG} head train.tfrecord\n  {PROG} head -n 1 --full --keys image/class/text data/",
        ),
        (
            "cat",
            "Show every record, readable or as JSON lines (see head).",
            f"  {PROG} cat --json data/*.tfrecord.gz | jq .features.label.values[0]",
        ),
    ):
        p = add_command(sub, name, cmd_show, summary, example)
        add_inputs(p)
        if name == "head":
            p.add_argument("-n", type=positive_int, default=5, metavar="N", help="number of records (default 5)")
        p.add_argument("--skip", type=int, default=0, metavar="K", help="start after the first K records")
        p.add_argument("--json", action="store_true", help="one JSON object per record (bytes: text or base64)")
        p.add_argument("--keys", action="append", metavar="K1,K2", help="only these feature keys")
        p.add_argument("--max-values", type=int, default=10, metavar="N", help="values shown per feature (default 10)")
        p.add_argument(
            "--max-chars", type=int, default=60, metavar="N", help="characters / bytes shown per value (default 60)"
        )
        p.add_argument("--full", action="store_true", help="show everything, nothing elided")
        add_mode(p)

    p = add_command(
        sub,
        "schema",
        cmd_schema,
        "Feature keys, kinds, min/max value counts and presence % over N records (or --all).",
        f"  {PROG} schema data/\n  {PROG} schema --all --json train.tfrecord",
    )
    add_inputs(p)
    p.add_argument("-n", type=positive_int, default=1000, metavar="N", help="records to look at (default 1000)")
    p.add_argument("--all", action="store_true", help="look at every record")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    add_mode(p)

    p = add_command(
        sub,
        "verify",
        cmd_verify,
        "Check every CRC; list the offset of every bad record; exit status 1 if any.",
        f"  {PROG} verify data/\n  {PROG} verify -q data/*.gz && echo all good",
    )
    add_inputs(p)
    p.add_argument("--json", action="store_true", help="one JSON line per file")
    p.add_argument("--all", action="store_true", help="list every bad record (default: the first 20 per file)")
