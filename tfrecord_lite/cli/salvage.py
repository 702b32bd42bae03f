"""The salvage command: copy every good record of damaged files into new ones and say
what was lost. The work is tfrecord_lite.salvage; this module parses and prints.
"""

from __future__ import annotations

import argparse
import os

from tfrecord_lite._compression.kinds import choices, endings
from tfrecord_lite._redact import redact, scrub
from tfrecord_lite._repr import plural
from tfrecord_lite.cli.options import (
    EXIT_DATA,
    PROG,
    UsageError,
    add_command,
    add_reader_options,
    check_new,
    out_compression_arg,
    output_compression,
    say,
)


def cmd_salvage(args: argparse.Namespace) -> int:
    from tfrecord_lite._records.salvage import salvage

    if not os.path.isfile(args.input):
        raise UsageError(f"{redact(args.input)} is not a file")
    check_new([args.output], args.force, [args.input])
    to = output_compression(args.to, args.output)
    report = salvage(
        args.input,
        destination=args.output,
        compression=args.compression,
        output_compression=to or None,
        index=not args.no_index,
        max_record_bytes=args.max_record_bytes,
    )
    print(scrub(str(report)))
    if not report.ok:
        kept, lost = plural(report.records, "record"), plural(report.records_skipped, "damaged span")
        say(args, f"{args.output}: {kept} kept; {lost} lost")
    return 0 if report.ok else EXIT_DATA


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_command(
        sub,
        "salvage",
        cmd_salvage,
        "Copy every good record of a damaged file into a new file (and index); "
        "print what was lost, exit status 1 if anything was.",
        f"  {PROG} salvage damaged.tfrecord rescued.tfrecord || echo 'some records were lost'\n"
        f"  {PROG} salvage cut.tfrecord.gz rescued.tfrecord || echo 'some records were lost'",
    )
    p.add_argument("input", metavar="INPUT", help="the damaged TFRecord file (plain, GZIP or ZLIB)")
    p.add_argument("output", metavar="OUTPUT", help=f"the new file ({endings()}, unless --to)")
    p.add_argument("--to", type=out_compression_arg, default=None, metavar="C",
                   help=f"output compression: {choices()} (default: from OUTPUT's name)")  # fmt: skip
    p.add_argument("--no-index", action="store_true", help="do not write the index sidecar")
    add_reader_options(p, verify=False, damage=False)
    p.add_argument("-f", "--force", action="store_true", help="overwrite OUTPUT if it exists")
