"""The `tfrecord-lite` command line (also `python -m tfrecord_lite`).

Strategy: argparse sub-commands, one module per group of commands (inspect: count,
head, cat, schema, verify; shards: index, merge, reshard, split, convert; images:
pack-images, unpack-images, remove-images; salvage; stats; view; events; tfds: info,
export), each adding its own sub-parsers and holding thin `cmd_*` functions that parse
arguments, call the library and print (options.py: what they share; output.py: how
records and reports look). Inputs are files, globs or directories, compression is recognised from the content. Expected
failures (missing files, corrupt data, bad options) end as one line
`tfrecord-lite: error: ...` with exit status 1 (data) or 2 (usage), a line about damaged
data with what to do about it (options.damage_hint); a traceback means a bug.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from typing import NoReturn

from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._redact import scrub
from tfrecord_lite._storage.locations import UnknownSchemeError
from tfrecord_lite.cli import events, images, inspect, salvage, shards, stats, tfds, view
from tfrecord_lite.cli.options import EXIT_DATA, EXIT_USAGE, PROG, UsageError, damage_hint
from tfrecord_lite.cli.output import terminal_safe

__all__ = ["EXIT_DATA", "EXIT_USAGE", "build_parser", "main"]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line: `tfrecord-lite: error: ...` (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see '{self.prog} --help')"
        self.exit(EXIT_USAGE, f"{PROG}: error: {message}{hint}\n")


EPILOG = f"""\
inputs: files, glob patterns ('data/train-*.tfrecord'), folders (their TFRecord files)
or ShardedWriter prefixes ('out/train' for out/train-00000-of-00004.tfrecord ...);
files that hold no records are skipped, one line saying so (not for the sidecars and
label maps the library writes);
'-' reads standard input (count, head, cat, schema, verify, merge, reshard,
convert). GZIP / ZLIB compression is recognised from the content.
damage: the reading commands report a damaged file (record number, byte offset) and go on
with the next; --on-error skip reads past damage, 'verify' lists it, 'salvage' rescues a file.
exit status: 0 success, {EXIT_DATA} bad data (corrupt record, failed verification,
undecodable image), {EXIT_USAGE} bad command line or missing input.

examples:
  {PROG} count data/                         records in every file of data/
  {PROG} head -n 2 train.tfrecord            the first 2 records, readable
  {PROG} cat --json --keys label data/*.gz   one JSON line per record, one key
  {PROG} schema --all train.tfrecord         keys, kinds, value counts, presence
  {PROG} stats data/ --all                   per-feature statistics (--json, --tfdv OUT)
  {PROG} verify data/                        every CRC; exit status 1 if any is bad
  {PROG} index train.tfrecord --text         random-access sidecar + DALI text index
  {PROG} pack-images photos/ out/photos --shards 8
  {PROG} split data/ --ratio 90/10 --shuffle -o out/   out/train.tfrecord, out/val.tfrecord
  {PROG} convert train.tfrecord train.tfrecord.gz
  {PROG} convert data/*.tfrecord --to gzip -o gz/
  {PROG} salvage damaged.tfrecord rescued.tfrecord || echo lost   every good record; status 1: some were lost
  {PROG} events logs/ --tags 'loss*' --to csv     TensorBoard logs: scalars, histograms, ... as CSV
  {PROG} tfds info datasets/mnist/3.0.1      a TensorFlow Datasets folder: features, splits, shards
run '{PROG} COMMAND --help' for a command's options."""


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of `tfrecord-lite` with all its sub-commands."""
    from tfrecord_lite import __version__

    parser = _Parser(
        prog=PROG,
        description="Inspect, check, index and reshape TFRecord files; pack image folders into them.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or summary lines")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for group in (inspect, shards, salvage, images, stats, view, events, tfds):
        group.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 bad data, 2 usage)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and (not getattr(args, "more_inputs", False) or any(x.startswith("-") for x in extra)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:  # `convert a b --to gzip dir/`: positional names after an option
        args.inputs += extra
    if not hasattr(args, "quiet"):
        args.quiet = False
    try:
        with _log_to_stderr(args.quiet):
            status: int = args.func(args)
        return status
    except BrokenPipeError:  # the reader of our output went away (| head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except (UsageError, TFRecordError, ValueError, OSError, ImportError) as err:
        status, message = _failure(err)
        line = f"{PROG}: error: {scrub(message)}{damage_hint(err, hasattr(args, 'on_error'))}"
        print(terminal_safe(line), file=sys.stderr)
        return status


class _SafeFormatter(logging.Formatter):
    """Log lines with their non-printable characters escaped (a file name may hold any)."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(super().format(record))


@contextlib.contextmanager
def _log_to_stderr(quiet: bool) -> Iterator[None]:
    """Show the library's log lines (e.g. which files a folder's listing skipped) on stderr,
    as `tfrecord-lite: ...` lines; nothing with --quiet."""
    logger = logging.getLogger("tfrecord_lite")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_SafeFormatter(f"{PROG}: %(message)s"))
    level = logger.level
    if not quiet:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _failure(err: Exception) -> tuple[int, str]:
    """Exit status and message for an expected error: usage (2) or data (1)."""
    if isinstance(err, (UsageError, UnknownSchemeError)):
        return EXIT_USAGE, str(err)
    if isinstance(err, FileNotFoundError):
        return EXIT_USAGE, f"no such file or directory: {err.filename}" if err.filename else str(err)
    return EXIT_DATA, str(err)
