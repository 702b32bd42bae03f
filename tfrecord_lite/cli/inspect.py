"""Commands that read and look: count, head / cat, schema, verify. The schema statistics
and the spec inference live in the library (_datasets/schema.py); here only their table
(format_schema, also printed by the demo).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from tfrecord_lite._datasets.messages import load_message_class
from tfrecord_lite._datasets.schema import (
    Decoded,
    Schema,
    collect_schema,
    decode_record,
    schema_specs,
    specs_to_json,
)
from tfrecord_lite._errors import CorruptRecordError, TruncatedRecordError
from tfrecord_lite._example.validate import did_you_mean
from tfrecord_lite._records.count import count_file
from tfrecord_lite._records.verify import verify_file
from tfrecord_lite._redact import redact
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.files import sniff_file
from tfrecord_lite.cli.options import (
    EXIT_DATA,
    PROG,
    Damaged,
    UsageError,
    add_command,
    add_inputs,
    add_mode,
    add_reader_options,
    expand_inputs,
    positive_int,
    progress,
    progress_bar,
    source_of,
)
from tfrecord_lite.cli.output import format_report, printable, record_json, render_record

# ---------------------------------------------------------------- schema


def format_schema(schema: Schema) -> str:
    """The table `schema` prints."""
    rows = schema.rows()
    sequence = any(r["section"] != "features" for r in rows)
    scope = "all" if schema.complete else "the first"
    raw = f" ({schema.raw} not {'an Example' if schema.raw == 1 else 'Examples'})" if schema.raw else ""
    head = [f"scanned {scope} {plural(schema.records, 'record')}{raw}"]
    if not rows:
        return "\n".join(head + ["no features"])
    marks = {"feature_lists": " [list]", "examples": " [examples]"}  # per step / per example of a record
    names = [printable(r["key"]) + marks.get(r["section"], "") for r in rows]
    width = max(len("key"), *(len(n) for n in names))
    kwidth = max(len("kind"), *(len(r["kind"]) for r in rows))
    unit = "values (per step for lists)" if sequence else "values"
    if any(r["section"] == "examples" for r in rows):
        unit = "values (per example for examples)"
    lines = head + [f"{'key'.ljust(width)}  {'kind'.ljust(kwidth)}  present  {unit}"]
    for name, r in zip(names, rows, strict=False):
        span = str(r["min_values"]) if r["min_values"] == r["max_values"] else f"{r['min_values']}..{r['max_values']}"
        lines.append(f"{name.ljust(width)}  {r['kind'].ljust(kwidth)}  {r['present_pct']:6.1f}%  {span}")
    return "\n".join(lines)


# ---------------------------------------------------------------- commands


def cmd_count(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    damaged = Damaged(args, paths)
    counts = {}
    for p in progress(paths, len(paths), "files", "file", args.quiet):
        try:
            counts[p] = count_file(
                source_of(p),
                damaged.policy,
                compression=args.compression,
                verify=args.verify,
                max_record_bytes=args.max_record_bytes,
            )
        except (CorruptRecordError, TruncatedRecordError) as err:
            damaged.fail(p, damaged.records_before(p), err)
    total = sum(counts.values())
    if args.json:
        failed = {"failed": damaged.failed} if damaged.failed else {}
        print(json.dumps({"files": {redact(p): n for p, n in counts.items()}, "total": total, **failed}))
    else:
        if args.per_file:
            width = len(str(total))
            for p, n in counts.items():
                print(f"{str(n).rjust(width)}  {printable(redact(p))}")
        print(total)
    return damaged.status(args)


def _select(dec: Decoded, keys: list[str] | None) -> Decoded:
    if keys:
        dec.features = {k: v for k, v in dec.features.items() if k in keys}
        dec.feature_lists = {k: v for k, v in dec.feature_lists.items() if k in keys}
    return dec


def _check_keys(keys: list[str], dec: Decoded, where: str) -> None:
    """--keys checked against the first record shown: a key it lacks is a usage error when a key it
    has is close (a typo), or when it has none of the keys asked for (a key only some records
    have is fine)."""
    present = [*dec.features, *dec.feature_lists]
    missing = [k for k in keys if k not in present]
    typo = next((k for k in missing if did_you_mean(k, present)), None)
    if typo is None and len(missing) < len(keys):
        return
    key = typo or missing[0]
    has = ", ".join(repr(k) for k in sorted(present)[:20]) or "no features"
    raise UsageError(f"--keys: {where} has no key {key!r}{did_you_mean(key, present)} (it has {has})")


def _mode(args: argparse.Namespace) -> str | type[Any]:
    """How the records are decoded: --example / --sequence / --elwc / --raw, or --proto's --message."""
    if (args.proto is None) != (args.message is None):
        raise UsageError("--proto SET.pb and --message pkg.Msg go together")
    return args.mode if args.proto is None else load_message_class(args.proto, message=args.message)


def cmd_show(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    damaged = Damaged(args, paths)
    limit = args.n if args.command == "head" else None
    max_values, max_chars = (0, 0) if args.full else (args.max_values, args.max_chars)
    keys = [k for spec in args.keys or [] for k in spec.split(",") if k]
    mode = _mode(args)
    shown = 0
    offset = 0
    for index, (path, i, record) in enumerate(damaged.records()):
        at = 0 if i == 0 else offset  # in the uncompressed stream; framing: length, its CRC, payload CRC
        offset = at + len(record) + 16
        if index < args.skip:
            continue
        if limit is not None and shown >= limit:
            break
        dec = decode_record(record, mode, f"{redact(path)} record #{i}, byte offset {at}")
        if keys and not shown:
            _check_keys(keys, dec, f"{path} #{i}")
        dec = _select(dec, keys)
        if args.json:
            print(json.dumps(record_json(dec, redact(path), i, max_values, max_chars), ensure_ascii=False))
        else:
            print(("\n" if shown else "") + render_record(dec, f"{redact(path)} #{i}", max_values, max_chars))
        shown += 1
    return damaged.status(args)


def cmd_schema(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    damaged = Damaged(args, paths)
    records = (r for _, _, r in damaged.records())
    schema = collect_schema(
        progress(records, None, "records", "rec", args.quiet), None if args.all else args.n, _mode(args)
    )
    if args.spec_json:
        print(json.dumps(specs_to_json(*schema_specs(schema)), indent=2))
    elif args.json:
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
    return damaged.status(args)


def cmd_verify(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    plain = all(os.path.isfile(p) and sniff_file(p) == "" for p in paths)
    total = sum(os.path.getsize(p) for p in paths) if plain else None  # the bar counts uncompressed bytes
    bar = progress_bar(total, "verify", quiet=args.quiet)
    bad_files = 0
    try:
        for p in paths:
            report = verify_file(
                source_of(p),
                compression=args.compression,
                max_record_bytes=args.max_record_bytes,
                on_progress=bar.update,
            )
            if not report.ok:
                bad_files += 1
            if args.json:
                print(
                    json.dumps(
                        {
                            "file": redact(p),
                            "ok": report.ok,
                            "records": report.records,
                            "bad": [{"record": n, "offset": o, "reason": r} for n, o, r in report.bad_records],
                        }
                    )
                )
            elif not report.ok or not args.quiet:
                print(format_report(redact(p), report, 0 if args.all else 20))
    finally:
        bar.close()
    if bad_files:
        what = f"{bad_files} of {len(paths)} files have" if len(paths) > 1 else "the file has"
        print(
            f"{PROG}: error: {what} bad records (`{PROG} salvage FILE OUT` copies the good records of one; "
            "the reading commands take --on-error skip)",
            file=sys.stderr,
        )
        return EXIT_DATA
    return 0


def add_message_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--proto",
        metavar="SET.pb",
        help="a FileDescriptorSet (protoc --include_imports --descriptor_set_out=SET.pb) holding --message",
    )
    p.add_argument("--message", metavar="pkg.Msg", help="decode records as this message of --proto (its full name)")


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
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"files": {...}, "total": N} (and "failed": [...] when a file could not be read)',
    )
    add_reader_options(p)

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
        add_message_options(p)
        add_mode(p)
        add_reader_options(p)

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
    p.add_argument(
        "--spec-json",
        action="store_true",
        help="print the spec inferred from the records as JSON (for --features FILE of convert)",
    )
    add_message_options(p)
    add_mode(p)
    add_reader_options(p)

    p = add_command(
        sub,
        "verify",
        cmd_verify,
        "Check every CRC; list the record number and offset of every bad record; exit status 1 if any.",
        f"  {PROG} verify data/\n  {PROG} verify -q data/*.gz && echo all good",
    )
    add_inputs(p)
    p.add_argument("--json", action="store_true", help="one JSON line per file")
    p.add_argument("--all", action="store_true", help="list every bad record (default: the first 20 per file)")
    add_reader_options(p, verify=False, damage=False)
