"""Commands that index and reshape record files: index, merge, reshard, split, convert.
Records are copied unchanged; outputs are checked before anything is written
(never over an input, never over an existing file without --force), and every output
is one publish.Publication: new files appear (and replace old ones) together, once
complete, or not at all.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from typing import Any

from tfrecord_lite._arrow.tables import columnar_format
from tfrecord_lite._compression.kinds import SUFFIX_PATTERN, choices, endings, label_of
from tfrecord_lite._datasets.sharded import renamed_for, shard_suffix
from tfrecord_lite._datasets.splits import ratio_sizes, record_parts
from tfrecord_lite._errors import CorruptRecordError, TruncatedRecordError
from tfrecord_lite._records.count import count_file
from tfrecord_lite._records.writer import TFRecordWriter
from tfrecord_lite._redact import redact
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.atomic import remove_orphans
from tfrecord_lite._storage.files import sniff_file
from tfrecord_lite._storage.locations import is_url, takes_no_uploads
from tfrecord_lite._storage.publish import open_publication
from tfrecord_lite.cli import columnar
from tfrecord_lite.cli.options import (
    PROG,
    Damaged,
    UsageError,
    add_command,
    add_inputs,
    add_output_options,
    add_reader_options,
    check_new,
    check_shards_new,
    convert_target_arg,
    expand_inputs,
    first_pass_policy,
    first_paths,
    input_records,
    output_compression,
    positive_int,
    progress,
    reading,
    say,
    shard_writer,
)


def cmd_index(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs)
    plain = _plain_for_text_index(args, paths) if args.text or args.text_dir else set()
    for folder in sorted({os.path.dirname(os.path.abspath(p)) for p in paths if not is_url(p)}):
        for orphan in remove_orphans(folder):
            say(args, f"removed {orphan}, a temporary file of a killed run")
    damaged = Damaged(args, paths)
    for p in progress(paths, len(paths), "index", "file", args.quiet):
        try:
            print(_index_one(p, args, p in plain))
        except (CorruptRecordError, TruncatedRecordError) as err:  # this file is not indexed; the next ones are
            damaged.fail(p, damaged.records_before(p), err)
    return damaged.status(args)


def _index_one(path: str, args: argparse.Namespace, text: bool) -> str:
    """Index one file (its sidecar, and its text index when `text`); the line saying so."""
    from tfrecord_lite._index.write import write_remote_index
    from tfrecord_lite._records.random_access import TFRecordFile

    options = reading(args)
    if is_url(path) and not takes_no_uploads(path):  # uploaded next to the object
        target, count = write_remote_index(
            path, None, compression=options["compression"], verify=options["verify"], storage_options=None
        )
        return f"{redact(path)}: {plural(count, 'record')}, index {redact(target)}"
    f = TFRecordFile(path, **options)
    try:
        unsaved = "(in memory: HTTP(S) takes no uploads)" if is_url(path) else "(in memory: the folder is read-only)"
        line = f"{redact(path)}: {plural(len(f), 'record')}, index {redact(f.index_path or unsaved)}"
    finally:
        f.close()
    if text:
        line += f", text index {_write_text_index(path, args.text_dir, options)}"
    return line


def _plain_for_text_index(args: argparse.Namespace, paths: list[str]) -> set[str]:
    """The inputs that can have a DALI / `tfrecord` text index: local uncompressed files (those
    readers take byte offsets into a plain file). One file that cannot is an error, before anything
    is written; in a folder or glob, the others get their sidecar only, and we say so."""
    kinds = {p: "url" if is_url(p) else sniff_file(p) for p in paths}
    unfit = [p for p in paths if kinds[p]]
    if unfit and len(paths) == 1:
        where = "a URL" if kinds[paths[0]] == "url" else f"{label_of(kinds[paths[0]])}-compressed"
        raise UsageError(
            f"{paths[0]} is {where}, and a text index ('offset length' lines for DALI or the tfrecord "
            "package) needs a local uncompressed file, as those readers do: `tfrecord-lite convert IN OUT` "
            "makes one; without --text this file gets its random-access sidecar"
        )
    if unfit:
        say(
            args,
            f"no text index for {plural(len(unfit), 'compressed or remote file')} (sidecar only): {first_paths(unfit)}",
        )
    return set(paths) - set(unfit)


def _write_text_index(path: str, text_dir: str | None, options: dict[str, Any]) -> str:
    from tfrecord_lite._index.write import write_text_index

    folder = text_dir or os.path.dirname(path)
    out = os.path.join(folder, os.path.basename(path) + ".idx")
    os.makedirs(folder or ".", exist_ok=True)
    write_text_index(path, destination=out, **options)
    return out


def cmd_merge(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    check_new([args.output], args.force, paths)
    out_compression = output_compression(args.to, args.output)
    n = 0
    with (
        open_publication(args.output) as publication,
        TFRecordWriter(publication.file(args.output), compression=out_compression or None, buffered=True) as writer,
    ):
        for record in input_records(args, paths, "merge"):
            writer.write(record)
            n += 1
    say(args, f"wrote {plural(n, 'record')} from {plural(len(paths), 'file')} to {args.output}")
    return 0


def cmd_reshard(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs, stdin=True)
    check_shards_new(args.output, shard_suffix(args.to), paths)
    n = 0
    with shard_writer(args, args.output) as writer:
        for record in input_records(args, paths, "reshard"):
            writer.write(record)
            n += 1
    out = list(writer.paths)
    say(args, f"wrote {plural(n, 'record')} to {plural(len(out), 'shard')}: {first_paths(out)}")
    return 0


# a name that says it is one TFRecord file (a.tfrecord, a.tfrecord.gz, b.tfrec ...), not a folder
_RECORD_FILE = re.compile(rf"\.(tfrecords?|tfrec|tfr){SUFFIX_PATTERN}?$", re.IGNORECASE)


def cmd_convert(args: argparse.Namespace) -> int:
    if args.output is None:
        if len(args.inputs) < 2:
            raise UsageError("convert needs an output: `convert IN... OUT` or `convert IN... -o OUT`")
        args.output = args.inputs.pop()
    if any(columnar_format(p) for p in args.inputs):  # named files: not TFRecord inputs to resolve
        return columnar.from_table(args, list(args.inputs))
    paths = expand_inputs(args.inputs, stdin=True)
    if args.to in columnar.TABLE_FORMATS or columnar_format(args.output):
        return columnar.to_table(args, paths)
    if args.shards is not None or args.max_records is not None or args.max_bytes is not None:
        raise UsageError("--shards / --max-records / --max-bytes split columnar inputs; for TFRecord files use reshard")
    if len(paths) > 1 or os.path.isdir(args.output) or args.output.endswith(os.sep):
        if not os.path.isdir(args.output) and _RECORD_FILE.search(args.output):
            raise UsageError(
                f"{args.output} names one TFRecord file but {len(paths)} files were given: `merge` writes "
                f"them into one (tfrecord-lite merge IN... -o {args.output}); to convert each into a folder, "
                "end its name with /"
            )
        if args.to is None:
            raise UsageError(f"converting several files into a folder needs --to {choices(sep='|')}")
        if not is_url(args.output):
            os.makedirs(args.output, exist_ok=True)
        targets = [os.path.join(args.output, renamed_for(p, args.to)) for p in paths]
    else:
        targets = [args.output]
    check_new(targets, args.force, paths)
    with open_publication(args.output) as publication:
        for src, dst in zip(paths, targets, strict=False):
            to = output_compression(args.to, dst)
            with TFRecordWriter(publication.file(dst), compression=to or None, buffered=True) as writer:
                for record in input_records(args, [src], "convert"):
                    writer.write(record)
            written = plural(writer.records_written, "record")
            say(args, f"{redact(src)} -> {redact(dst)} ({to or 'uncompressed'}, {written})")
    return 0


def parse_parts(text: str, what: str) -> list[float]:
    """'90/10', '0.8/0.1/0.1', '1000/200' -> [90.0, 10.0] ...; every part positive."""
    try:
        parts = [float(x) for x in text.split("/")]
    except ValueError:
        parts = []
    if not parts or any(p < 0 or not math.isfinite(p) for p in parts) or sum(parts) <= 0:
        raise UsageError(f"{what} must look like 90/10 or 80/10/10, got {text!r}")
    return parts


def split_sizes(total: int, ratio: list[float] | None, counts: list[float] | None) -> list[int]:
    """Records per part: ratios are rounded so the parts add up to `total`; counts are taken
    in order, and those beyond their sum are left out."""
    if ratio is not None:
        return ratio_sizes(total, ratio)
    assert counts is not None
    sizes = [int(c) for c in counts]
    if sum(sizes) > total:
        raise UsageError(f"--count asks for {sum(sizes)} records, but the inputs hold {total}")
    return sizes


def cmd_split(args: argparse.Namespace) -> int:
    paths = expand_inputs(args.inputs)
    ratio = parse_parts(args.ratio, "--ratio") if args.ratio else None
    counts = parse_parts(args.count, "--count") if args.count else None
    if counts is not None and any(c != int(c) for c in counts):
        raise UsageError(f"--count takes whole numbers, got {args.count!r}")
    n_parts = len(ratio or counts or [])
    names = (
        args.names.split(",")
        if args.names
        else (["train", "val", "test"][:n_parts] if n_parts <= 3 else [f"part{i}" for i in range(n_parts)])
    )
    if len(names) != n_parts or len(set(names)) != n_parts:
        raise UsageError(f"--names needs {n_parts} different names for {n_parts} parts, got {args.names!r}")
    total = sum(count_file(p, first_pass_policy(args), **reading(args)) for p in paths)
    sizes = split_sizes(total, ratio, counts)
    folder = os.path.isdir(args.output) or args.output.endswith(("/", os.sep))
    ext = shard_suffix(args.to)
    targets = [os.path.join(args.output, n + ext) if folder else f"{args.output}-{n}{ext}" for n in names]
    check_new(targets, args.force, paths)
    part = record_parts(total, sizes, args.seed if args.shuffle else None)  # -1: left out by --count
    if folder and not is_url(args.output):
        os.makedirs(args.output, exist_ok=True)
    with open_publication(args.output) as publication:
        writers = [TFRecordWriter(publication.file(t), compression=args.to or None, buffered=True) for t in targets]
        try:
            for k, record in enumerate(input_records(args, paths, "split")):
                if k < total and part[k] >= 0:
                    writers[part[k]].write(record)
        finally:
            for w in writers:
                w.close()
    for t, w in zip(targets, writers, strict=False):
        say(args, f"{t}: {plural(w.records_written, 'record')}")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """index, merge, reshard, split, convert."""
    p = add_command(
        sub,
        "index",
        cmd_index,
        "Build random-access index sidecars (<file>.tfrlidx; for an object in a store, uploaded next "
        "to it) and, with --text, DALI / tfrecord text indexes (<file>.idx).",
        f"  {PROG} index data/\n  {PROG} index data/*.tfrecord --text-dir idx/   for DALI's index_path",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="TFRecord files, globs, directories or URLs")
    p.add_argument("--text", action="store_true", help="also write '<file>.idx' text indexes ('offset length' lines)")
    p.add_argument("--text-dir", metavar="DIR", help="write the text indexes into DIR instead (implies --text)")
    add_reader_options(p, damage=False)

    p = add_command(
        sub,
        "reshard",
        cmd_reshard,
        "Rewrite records into a new set of shards (by number, records or bytes per shard).",
        f"  {PROG} reshard data/ -o out/train --shards 16\n"
        f"  {PROG} reshard big.tfrecord -o out/part --max-bytes 200M --to gzip",
    )
    add_inputs(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT_PREFIX", help="prefix of the new shards")
    add_output_options(p)
    add_reader_options(p, writes=True)

    p = add_command(
        sub,
        "merge",
        cmd_merge,
        "Concatenate the records of several files into one file.",
        f"  {PROG} merge data/train-*.tfrecord -o all.tfrecord",
    )
    add_inputs(p)
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT_FILE", help=f"the merged file ({endings()}, unless --to)"
    )
    add_output_options(p, sharded=False)
    add_reader_options(p, writes=True)

    p = add_command(
        sub,
        "split",
        cmd_split,
        "Split records into parts by ratio (90/10) or by counts (1000/200), e.g. train/val.",
        f"  {PROG} split data/ --ratio 90/10 --shuffle -o out/          "
        "-> out/train.tfrecord, out/val.tfrecord\n"
        f"  {PROG} split all.tfrecord --count 1000/200 --names a,b -o x    "
        "-> x-a.tfrecord, x-b.tfrecord",
    )
    add_inputs(p)
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="a folder (OUT/NAME.tfrecord) or a prefix (OUT-NAME.tfrecord)",
    )
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--ratio", metavar="A/B[/C]", help="split by ratio, e.g. 90/10 or 80/10/10")
    g.add_argument("--count", metavar="A/B[/C]", help="split by record counts; records beyond their sum are left out")
    p.add_argument("--names", metavar="N1,N2", help="part names (default train,val[,test])")
    p.add_argument(
        "--shuffle", action="store_true", help="assign records to parts at random (seeded) instead of in order"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for --shuffle (default 0)")
    add_output_options(p, sharded=False)
    add_reader_options(p, writes=True)

    p = add_command(
        sub,
        "convert",
        cmd_convert,
        "Change compression: plain <-> GZIP <-> ZLIB (records are copied unchanged); or convert "
        "Examples to / from Parquet, Arrow IPC or CSV (by the extension, or --to parquet|arrow|csv). "
        "SequenceExamples keep their feature lists: a column of steps each (Parquet and Arrow; not CSV).",
        f"  {PROG} convert train.tfrecord.gz train.tfrecord\n"
        f"  {PROG} convert data/*.tfrecord --to gzip -o gz/\n"
        f"  {PROG} convert a.tfrecord b.tfrecord --to gzip gz/\n"
        f"  {PROG} convert data/ train.parquet --features spec.json\n"
        f"  {PROG} convert train.parquet out/train --shards 8 --to gzip",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="TFRecord files, glob patterns, folders or prefixes; the last one is the output unless -o is given",
    )
    p.add_argument("-o", "--output", metavar="OUTPUT", help="output file, or a folder when converting several files")
    p.set_defaults(more_inputs=True)
    add_output_options(
        p, to_type=convert_target_arg, to_help=f"output: {choices(sep=', ')}, parquet, arrow, csv (default: none)"
    )
    add_reader_options(p, writes=True)
    p.add_argument(
        "--features",
        metavar="FILE",
        help="spec JSON (as `schema --spec-json` prints) for typed columns; without it a first pass infers one",
    )
    p.add_argument(
        "--batch-size", type=positive_int, default=2048, metavar="N", help="rows per batch / row group (default 2048)"
    )
    p.add_argument(
        "--strict", action="store_true", help="columnar -> TFRecord: refuse float64 values that float32 cannot hold"
    )
    p.add_argument(
        "--feature-lists",
        metavar="K1,K2",
        help="columnar -> TFRecord: write these list columns as feature lists of SequenceExamples (columns "
        "that a TFRecord -> Parquet / Arrow conversion made from feature lists are marked, and need no naming)",
    )
