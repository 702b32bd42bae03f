"""What the command modules share: exit statuses and usage errors, expanding the
inputs (files, globs, directories, '-'), argparse value types and the option groups
several commands take (the reader flags, defined here once and named as the library's reader
options: --compression, --no-verify, --on-error, --max-skipped, --max-record-bytes; see
docs/conventions.md), reading many files past damage (Damaged: --on-error and
--max-skipped, one file's damage reported with its record number and the reading going
on with the next file, and the one hint every damage message ends with), progress bars
and the summary lines on stderr. Progress bars come from tqdm, only when stderr is a terminal, only for jobs
that run longer than a second, and only if tqdm is installed (imported lazily;
without it the command runs the same, silently).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from tfrecord_lite._compression.kinds import choices, compression_by_name, normalize_compression
from tfrecord_lite._datasets.sharded import existing_shards, open_shard_writer
from tfrecord_lite._errors import (
    CorruptRecordError,
    NoInputsError,
    NotTFRecordError,
    TFRecordError,
    TruncatedRecordError,
)
from tfrecord_lite._records.reader import read_records
from tfrecord_lite._redact import redact, scrub
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.files import size_in_bytes
from tfrecord_lite._storage.sources import resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES
from tfrecord_lite.cli.output import printable, terminal_safe

PROG = "tfrecord-lite"
EXIT_DATA = 1  # the data is bad (corrupt record, undecodable image, verification failed)
EXIT_USAGE = 2  # the command is wrong (unknown option, missing file, bad value)


class UsageError(Exception):
    """A problem with the command line itself (exit status 2)."""


# ---------------------------------------------------------------- inputs


def expand_inputs(specs: Sequence[str], stdin: bool = False) -> list[str]:
    """The files for the given files, folders, globs and prefixes, in order (the library's
    resolve_inputs: what they mean and what is skipped is in docs/inputs.md); '-' is standard
    input where `stdin` allows it. Raises UsageError when an input names no TFRecord file."""
    if "-" in specs and not stdin:
        raise UsageError("this command cannot read standard input ('-'): give files")
    out: list[str] = []
    run: list[str] = []  # the names between two '-', resolved together
    for spec in [*specs, "-"]:
        if spec != "-":
            run.append(spec)
            continue
        if run:
            try:
                out += resolve_inputs(run)
            except NoInputsError as err:
                raise UsageError(str(err)) from None
            run = []
        out.append(spec)
    return out[:-1]  # without the closing '-'


def source_of(path: str) -> Any:
    """What to open for an input name: the path, or the standard input's bytes for '-'."""
    return sys.stdin.buffer if path == "-" else path


def input_records(args: argparse.Namespace, paths: Sequence[str], desc: str) -> Iterator[bytes]:
    """The records of all inputs, with a progress bar on long jobs, for a command that writes them:
    damage stops it (nothing is published) unless --on-error skip steps over it."""

    def records() -> Iterator[bytes]:
        for path in paths:
            with read_records(source_of(path), policy_of(args), **reading(args)) as it:
                yield from it

    yield from progress(records(), None, desc, "rec", args.quiet)


# ---------------------------------------------------------------- damage


def damage_hint(err: BaseException, skip_option: bool = False) -> str:
    """What to do about damaged data, appended to every message about it ('' for other errors):
    verify lists the damage, salvage copies the good records, --on-error skip (where the command
    takes it) reads past it."""
    if not isinstance(err, (CorruptRecordError, TruncatedRecordError)) or isinstance(err, NotTFRecordError):
        return ""
    shown = redact(err.path) if err.path and err.path != "<stdin>" else ""
    name = shlex.quote(shown) if shown.isprintable() and shown else "FILE"
    hint = f"`{PROG} verify {name}` lists the damage, `{PROG} salvage {name} OUT` copies the good records"
    return f"; {hint}{', --on-error skip reads past it' if skip_option else ''}"


def reading(args: argparse.Namespace) -> dict[str, Any]:
    """The reader options of the reader flags a command has (--compression, --no-verify,
    --max-record-bytes), by the library's names; --on-error / --max-skipped are policy_of's."""
    return {
        "compression": getattr(args, "compression", "auto"),
        "verify": getattr(args, "verify", True),
        "max_record_bytes": getattr(args, "max_record_bytes", MAX_RECORD_BYTES),
    }


def reader_options(args: argparse.Namespace) -> dict[str, Any]:
    """All the reader options of the reader flags a command has, by the library's names, for a call
    that takes them as keywords: reading's, with --on-error and --max-skipped (which implies skip)."""
    max_skipped = getattr(args, "max_skipped", None)
    on_error = "skip" if max_skipped is not None else getattr(args, "on_error", "raise")
    return {**reading(args), "on_error": on_error, "max_skipped": max_skipped}


def policy_of(args: argparse.Namespace) -> DamagePolicy:
    """The damage policy of --on-error / --max-skipped (which implies skip), one for the whole
    command so that --max-skipped counts over every file; raise where the command has neither."""
    if not hasattr(args, "damage_policy"):
        max_skipped = getattr(args, "max_skipped", None)
        on_error = "skip" if max_skipped is not None else getattr(args, "on_error", "raise")
        args.damage_policy = DamagePolicy(on_error, max_skipped)
    policy: DamagePolicy = args.damage_policy
    return policy


def first_pass_policy(args: argparse.Namespace) -> DamagePolicy:
    """For a pass that only looks before the real one (counting, inferring a schema): damage is
    stepped over silently when the command skips it (the real pass reports it), raised otherwise."""
    return DamagePolicy("raise" if policy_of(args).raises else (lambda err: None))


class Damaged:
    """One reading command's damage policy, and the files it could not read to the end.

    With --on-error raise (the default) a file's damage ends that file: it is reported on stderr
    (file, record number, byte offset, the hint) and the command goes on with the next file,
    ending with exit status 1. With --on-error skip each damaged span is stepped over (a warning
    line each); more than --max-skipped of them stops the command."""

    def __init__(self, args: argparse.Namespace, paths: Sequence[str]) -> None:
        self.policy = policy_of(args)
        self.paths = paths
        self.failed: list[dict[str, Any]] = []
        self._skip_option = hasattr(args, "on_error")
        self._reading = reading(args)

    def records(self) -> Iterator[tuple[str, int, bytes]]:
        """(path, record number in its file, record) over every input in order ('-' is standard input)."""
        for path in self.paths:
            number = 0
            try:
                with read_records(source_of(path), self.policy, **self._reading) as it:
                    for record in it:
                        yield path, number, record
                        number += 1
            except (CorruptRecordError, TruncatedRecordError) as err:
                self.fail(path, number, err)

    def fail(self, path: str, number: int | None, err: TFRecordError) -> None:
        """Report that `path` could not be read past record `number`; past --max-skipped, stop."""
        limit = self.policy.max_skipped
        if limit is not None and self.policy.skipped > limit:
            raise err
        offset = f", byte offset {err.offset}" if err.offset is not None else ""
        self.failed.append({"file": redact(path), "record": number, "offset": err.offset, "error": err.reason})
        where = f"record #{number}{offset}" if number is not None else f"byte offset {err.offset}"
        where = "not read" if isinstance(err, NotTFRecordError) else where
        hint = damage_hint(err, self._skip_option)
        print(scrub(f"{PROG}: error: {printable(redact(path))}: {where}: {err.reason}{hint}"), file=sys.stderr)

    def records_before(self, path: str) -> int | None:
        """How many records of `path` come before the damage that stopped a pass over it without
        reading records (counting, indexing): a second, reading scan that only a damaged file pays
        for. None for standard input, which cannot be read twice."""
        if path == "-":
            return None
        n = 0
        with contextlib.suppress(CorruptRecordError, TruncatedRecordError):
            for _ in read_records(path, None, **self._reading):
                n += 1
        return n

    def status(self, args: argparse.Namespace) -> int:
        """0, or EXIT_DATA when a file could not be read to the end (said once more when several were read)."""
        if self.policy.skipped:
            say(args, f"skipped {plural(self.policy.skipped, 'damaged span')}")
        if not self.failed:
            return 0
        if len(self.paths) > 1:
            print(
                f"{PROG}: error: {len(self.failed)} of {plural(len(self.paths), 'file')} could not be read to the end; "
                "what came before the damage, and the other files, were read",
                file=sys.stderr,
            )
        return EXIT_DATA


# ---------------------------------------------------------------- argument types and option groups


def compression_arg(value: str) -> str:
    """argparse type: auto | none | gzip | zlib (any case) -> the library's spelling."""
    if value.lower() == "none":
        return ""
    try:
        return normalize_compression(value, allow_auto=True)
    except ValueError:
        raise argparse.ArgumentTypeError(f"unknown compression {value!r} (use {choices(auto=True)})") from None


def output_compression(to: str | None, path: str) -> str:
    """--to if given, else from the output's extension (kinds.compression_by_name: .gz -> gzip ...)."""
    return to if to is not None else compression_by_name(path)


def out_compression_arg(value: str) -> str:
    result = compression_arg(value)
    if result == "auto":
        raise argparse.ArgumentTypeError(f"an output compression must be {choices()}")
    return result


def positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


def parse_size(value: str) -> int:
    """'100M', '1.5G', '64k', '4096' -> bytes (binary units)."""
    try:
        return size_in_bytes(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def resize_arg(value: str) -> Any:
    m = re.fullmatch(r"(\d+)(?:[xX](\d+))?", value.strip())
    if not m or int(m.group(1)) == 0 or (m.group(2) is not None and int(m.group(2)) == 0):
        raise argparse.ArgumentTypeError(f"expected N (longest side) or WxH, got {value!r}")
    return int(m.group(1)) if m.group(2) is None else (int(m.group(1)), int(m.group(2)))


def add_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    func: Callable[[argparse.Namespace], int],
    summary: str,
    example: str,
) -> argparse.ArgumentParser:
    """A sub-command's parser: its summary, its examples and the common -q option; `func` runs it."""
    p = sub.add_parser(
        name,
        help=summary.replace("%", "%%"),  # help strings are %-formatted, descriptions are not
        description=summary,
        epilog="examples:\n" + example,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bars or summary lines"
    )
    p.set_defaults(func=func)
    return p


def add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="TFRecord files, globs, folders or prefixes")


def add_compression(p: argparse.ArgumentParser) -> None:
    """--compression (-z): the compression of what is read (the readers' `compression`)."""
    p.add_argument("-z", "--compression", type=compression_arg, default="auto", metavar="C",
                   help=f"input compression: auto (default: from the content), {choices()}")  # fmt: skip


def add_reader_options(
    p: argparse.ArgumentParser, *, verify: bool = True, damage: bool = True, writes: bool = False
) -> None:
    """The reader flags, each the library reader option of its name (docs/conventions.md):
    --compression and --max-record-bytes; --no-verify where `verify`; --on-error and --max-skipped
    where `damage` (a command that reads damage by design, verify or salvage, takes neither)."""
    add_compression(p)
    if verify:
        p.add_argument("--no-verify", dest="verify", action="store_false",
                       help="do not check payload CRCs (faster; length CRCs are always checked)")  # fmt: skip
    p.add_argument("--max-record-bytes", type=parse_size, default=MAX_RECORD_BYTES, metavar="SIZE",
                   help="the longest record read (default 1G); a longer length field is damage")  # fmt: skip
    if damage:
        add_damage_options(p, writes)


def convert_target_arg(value: str) -> str:
    """argparse type of convert's --to: an output compression, or parquet | arrow | csv."""
    return value.lower() if value.lower() in ("parquet", "arrow", "csv") else out_compression_arg(value)


def add_output_options(
    p: argparse.ArgumentParser,
    sharded: bool = True,
    to_type: Any = None,
    to_help: str = f"output compression: {choices()} (default: none)",
) -> None:
    if sharded:
        g = p.add_mutually_exclusive_group()
        g.add_argument("--shards", type=positive_int, metavar="N", help="write N shards")
        g.add_argument("--max-records", type=positive_int, metavar="N", help="start a new shard every N records")
        g.add_argument(
            "--max-bytes", type=parse_size, metavar="SIZE", help="start a new shard at SIZE bytes (e.g. 200M)"
        )
        p.add_argument("--no-index", action="store_true", help="do not write random-access index sidecars")
    p.add_argument("--to", type=to_type or out_compression_arg, default=None, metavar="C", help=to_help)
    p.add_argument("-f", "--force", action="store_true", help="overwrite existing outputs")


def non_negative_int(value: str) -> int:
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value!r}")
    return int(value)


def add_damage_options(p: argparse.ArgumentParser, writes: bool = False) -> None:
    """--on-error and --max-skipped: what a damaged record does (see Damaged)."""
    stop = (
        "stop at a damaged record, publishing nothing"
        if writes
        else "a damaged record ends its file: reported (file, record, offset), the next file read, exit status 1"
    )
    p.add_argument(
        "--on-error",
        choices=("raise", "skip"),
        default="raise",
        help=f"raise (default): {stop}; skip: step over damaged records, a warning line each",
    )
    p.add_argument(
        "--max-skipped",
        type=non_negative_int,
        metavar="N",
        help="fail after more than N skipped damaged spans (implies --on-error skip)",
    )


def add_mode(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--example", dest="mode", action="store_const", const="example", help="decode records as Examples")
    g.add_argument(
        "--sequence", dest="mode", action="store_const", const="sequence", help="decode records as SequenceExamples"
    )
    g.add_argument(
        "--elwc",
        dest="mode",
        action="store_const",
        const="elwc",
        help="decode records as TF Ranking's ExampleListWithContext (recognised by itself where unambiguous)",
    )
    g.add_argument("--raw", dest="mode", action="store_const", const="raw", help="show raw record bytes")
    p.set_defaults(mode="auto")


# ---------------------------------------------------------------- progress and summaries


def _tqdm(quiet: bool) -> Any:
    """tqdm's class when a bar should be shown (stderr is a terminal, tqdm installed), else None."""
    if quiet or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def progress(
    iterable: Iterable[Any], total: int | None = None, desc: str = "", unit: str = "rec", quiet: bool = False
) -> Iterable[Any]:
    """`iterable` wrapped in a tqdm bar when stderr is a terminal and tqdm is installed; else itself.

    The bar appears only once the job has run for a second, so short commands stay clean.
    """
    tqdm = _tqdm(quiet)
    if tqdm is None:
        return iterable
    bar: Iterable[Any] = tqdm(
        iterable, total=total or None, desc=desc, unit=unit, delay=1.0, leave=False, file=sys.stderr, dynamic_ncols=True
    )
    return bar


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int | None, desc: str, unit: str = "B", quiet: bool = False) -> Any:
    """A tqdm bar to `update(n)` by hand (bytes by default), or a do-nothing stand-in (see `progress`)."""
    tqdm = _tqdm(quiet)
    if tqdm is None:
        return _NoBar()
    return tqdm(total=total or None, desc=desc, unit=unit, unit_scale=True, delay=1.0, leave=False, file=sys.stderr)


def first_paths(paths: Sequence[str], empty: str = "") -> str:
    """'a.tfrecord ...' for a summary line: the first path, and '...' when more follow."""
    return f"{paths[0] if paths else empty}{' ...' if len(paths) > 1 else ''}"


def say(args: argparse.Namespace, text: str) -> None:
    """A summary line on stderr (data goes to stdout); silent with --quiet."""
    if not args.quiet:
        print(terminal_safe(scrub(text)), file=sys.stderr)


# ---------------------------------------------------------------- writing


def check_new(paths: Iterable[str], force: bool, inputs: Sequence[str]) -> None:
    """Refuse to overwrite existing outputs unless --force, and an input always."""
    sources = {os.path.abspath(p) for p in inputs}
    for p in paths:
        if os.path.abspath(p) in sources:
            raise UsageError(f"{p} is an input and an output: write to another file")
        if os.path.exists(p) and not force:
            raise UsageError(f"{p} already exists (use --force to overwrite it)")


def check_shards_new(prefix: str, suffix: str, inputs: Sequence[str] = ()) -> None:
    """Refuse an output prefix whose existing shards are inputs (--force would replace what is read)."""
    old = {os.path.abspath(path) for _, path in existing_shards(prefix, suffix)}
    clash = old & {os.path.abspath(p) for p in inputs}
    if clash:
        raise UsageError(f"the output {prefix} would overwrite the input {min(clash)}: write to a new prefix")


@contextlib.contextmanager
def refusing_existing(hint: str = "--force to replace them") -> Iterator[None]:
    """Existing outputs that a writer refuses (FileExistsError) as a usage error naming the option."""
    try:
        yield
    except FileExistsError as err:
        raise UsageError(f"{err} (use {hint})") from None


def shard_writer(args: argparse.Namespace, prefix: str) -> Any:
    """A ShardedWriter for --shards / --max-records / --max-bytes (one shard when none is given);
    --force replaces existing shards when it closes."""
    if args.shards is None and args.max_records is None and args.max_bytes is None:
        args.shards = 1
    with refusing_existing():
        return open_shard_writer(
            prefix, args.shards, args.max_records, args.max_bytes, args.to or None, not args.no_index, False, args.force
        )
