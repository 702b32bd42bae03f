"""The tfds commands: a prepared TensorFlow Datasets folder (the one holding dataset_info.json)
described (`tfds info`: name, version, features, splits with their example counts and shard files,
file format) and a split of it exported (`tfds export`: to Parquet, to plain TFRecord files or to
image files in class folders). The work is tfrecord_lite.tfds's (info) and the export module's;
this module parses and prints. Text from the folder's JSON is printed escaped.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING

from tfrecord_lite._redact import redact
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.locations import is_url
from tfrecord_lite.cli.options import (
    PROG,
    UsageError,
    add_command,
    add_reader_options,
    progress,
    reader_options,
    refusing_existing,
    say,
)
from tfrecord_lite.cli.output import printable, terminal_safe

if TYPE_CHECKING:  # pragma: no cover
    from tfrecord_lite.tfds import DatasetInfo

EXPORTS = ("parquet", "tfrecord", "images")


def cmd_info(args: argparse.Namespace) -> int:
    from tfrecord_lite._tfds.export import info_dict

    info = _info(args.path)
    if args.json:
        print(json.dumps(info_dict(info), ensure_ascii=False, indent=1))
        return 0
    for line in _info_lines(info):
        print(terminal_safe(line))
    return 0


def _info(path: str) -> DatasetInfo:
    from tfrecord_lite import tfds

    return tfds.info(path)


def _info_lines(info: DatasetInfo) -> list[str]:
    """What `tfds info` prints: the dataset's identity, its features' tree, its splits and shards."""
    title = f"{info.name} {info.version}" + (f" ({info.config})" if info.config else "")
    lines = [
        title,
        f"  folder       {redact(info.source)}",
        f"  file format  {info.file_format}",
    ]
    description = " ".join(str(info.description or "").split())
    if description:
        lines.append(f"  description  {description[:300]}{'…' if len(description) > 300 else ''}")
    lines.append("features:")
    lines += [f"  {line}" for line in str(info.features).splitlines()]
    lines.append("splits:")
    width = max((len(printable(name)) for name in info.splits), default=0)
    for name, split in info.splits.items():
        shards = plural(len(split.files), "shard")
        lines.append(f"  {printable(name):<{width}}  {split.num_examples:>10,} examples  {shards}")
        for path, n in zip(split.files, split.shard_lengths, strict=False):
            lines.append(f"    {printable(os.path.basename(str(path)))}  {n:,}")
    return lines


def cmd_export(args: argparse.Namespace) -> int:
    from tfrecord_lite._errors import TFRecordError
    from tfrecord_lite._tfds.export import check_split, export_split

    destination = args.destination
    if is_url(destination):
        raise UsageError(f"{redact(destination)}: tfds export writes a local file or folder (the source may be a URL)")
    if args.to != "images" and os.path.exists(destination) and not args.force:
        raise UsageError(f"{destination} already exists (use --force to overwrite it)")
    info = _info(args.path)
    try:
        check_split(info, args.split)
    except ValueError as err:
        if isinstance(err, TFRecordError):
            raise
        raise UsageError(f"--split: {err}") from None
    with refusing_existing("--force to write into it"):
        result = export_split(
            info,
            split=args.split,
            to=args.to,
            destination=destination,
            overwrite=args.force,
            image_key=args.image_key,
            label_key=args.label_key,
            progress=lambda it, total: progress(it, total, "export", "ex", args.quiet),
            **reader_options(args),
        )
    what = "image" if args.to == "images" else "example"
    say(args, f"wrote {plural(result.count, what)} of {args.split} to {redact(result.destination)}")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_command(
        sub,
        "tfds",
        _missing_command,
        "Prepared TensorFlow Datasets folders (the folder holding dataset_info.json, e.g. "
        "DATA_DIR/NAME/VERSION), read without TensorFlow: 'tfds info' describes one, 'tfds export' "
        "writes a split as Parquet, TFRecord files or image files in class folders.",
        f"  {PROG} tfds info datasets/mnist/3.0.1\n"
        f"  {PROG} tfds export datasets/mnist/3.0.1 --split 'test[:10%]' --to images digits/",
    )
    commands = p.add_subparsers(dest="tfds_command", metavar="COMMAND", parser_class=type(p))
    commands.required = True
    info = add_command(
        commands,
        "info",
        cmd_info,
        "A TFDS folder's name, version, description, features (a tree), splits with their example "
        "counts and shard files, and file format. Reads the folder's JSON files (--json: and its class names) only.",
        f"  {PROG} tfds info datasets/mnist/3.0.1\n  {PROG} tfds info datasets/mnist/3.0.1 --json",
    )
    info.add_argument("path", metavar="PATH", help="the folder holding dataset_info.json (or its URL)")
    info.add_argument("--json", action="store_true", help="one JSON object instead of text")
    export = add_command(
        commands,
        "export",
        cmd_export,
        "A split of a TFDS folder written out: --to parquet (one file; images as their encoded bytes), "
        "--to tfrecord (the split's records as they are, TFDS's Example encoding, in one file; GZIP "
        "when DEST ends in .gz) or --to images (DEST/<class name>/<n>.png: each image's stored bytes, "
        "for a dataset with an Image and a ClassLabel feature).",
        f"  {PROG} tfds export datasets/mnist/3.0.1 --split train --to parquet train.parquet\n"
        f"  {PROG} tfds export datasets/mnist/3.0.1 --split 'train[:20]' --to tfrecord first.tfrecord\n"
        f"  {PROG} tfds export datasets/mnist/3.0.1 --split 'test[-5%:]' --to images digits/",
    )
    export.add_argument("path", metavar="PATH", help="the folder holding dataset_info.json (or its URL)")
    export.add_argument("destination", metavar="DEST", help="the file (parquet, tfrecord) or folder (images) to write")
    export.add_argument(
        "--split", default="train", metavar="S", help="a split as TFDS writes them: train, 'train[:10%%]', "
        "'train[100:200]', train+test, 'test[-5%%:]' (default: train)"
    )  # fmt: skip
    export.add_argument("--to", required=True, choices=EXPORTS, help="what to write")
    export.add_argument(
        "-f", "--force", action="store_true", help="overwrite DEST (images: replace files of the same names)"
    )
    export.add_argument("--image-key", metavar="KEY", help="--to images: the Image feature (default: the first)")
    export.add_argument("--label-key", metavar="KEY", help="--to images: the ClassLabel feature (default: the first)")
    add_reader_options(export, writes=True)


def _missing_command(args: argparse.Namespace) -> int:  # pragma: no cover - argparse requires one
    raise UsageError("say which: tfds info or tfds export")
