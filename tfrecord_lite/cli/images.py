"""Commands for image datasets: pack-images, unpack-images, remove-images, over
tfrecord_lite.images (Pillow is imported only when one of them runs).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from tfrecord_lite._datasets.sharded import shard_suffix
from tfrecord_lite._images.records import ENCODED, LABEL, TEXT
from tfrecord_lite._redact import scrub
from tfrecord_lite._repr import plural
from tfrecord_lite.cli.options import (
    PROG,
    UsageError,
    add_command,
    add_inputs,
    add_output_options,
    add_reader_options,
    check_shards_new,
    expand_inputs,
    first_paths,
    positive_int,
    progress,
    reader_options,
    refusing_existing,
    resize_arg,
    say,
)


def cmd_pack_images(args: argparse.Namespace) -> int:
    from tfrecord_lite import images

    def report(path: str, err: Exception) -> None:
        print(scrub(f"{PROG}: warning: skipped {path}: {getattr(err, 'reason', err)}"), file=sys.stderr)

    if not os.path.exists(args.source):
        raise UsageError(f"no such file or directory: {args.source}")
    if args.append and args.force:
        raise UsageError("--append adds images, --force replaces them: give one")
    try:
        with refusing_existing("--append to add images, --force to replace them"):
            result = _pack(args, report)
    except images.ImageDecodeError as err:
        raise images.ImageDecodeError(err.reason + " (--skip-bad skips such images)", path=err.path) from None
    _say_packed(args, result)
    return 0


def _say_packed(args: argparse.Namespace, result: Any) -> None:
    """The summary lines of pack-images."""
    shards = plural(len(result.paths), "shard")
    say(args, f"packed {plural(result.written, 'image')} into {shards} ({first_paths(result.paths, '-')})")
    new = f", new: {', '.join(result.new_classes)}" if args.append and result.new_classes else ""
    say(args, f"label map: {result.label_map_path} ({plural(len(result.label_map), 'class')}{new})")
    if result.skipped:
        say(args, f"skipped {plural(len(result.skipped), 'image')} that cannot be decoded")
    if result.duplicates:
        say(
            args,
            f"skipped {plural(len(result.duplicates), 'image')} whose bytes the dataset already holds "
            f"(e.g. {result.duplicates[0]}); --allow-duplicates packs them again",
        )
    if result.conflicts:
        say(args, f"left out {plural(len(result.conflicts), 'image')} named like other packed images: "
                  f"{first_paths(result.conflicts)}")  # fmt: skip
    if result.renamed:
        old, new_name = result.renamed[0]
        say(args, f"renamed {plural(len(result.renamed), 'image')} named like other packed images "
                  f"(e.g. {old} -> {new_name})")  # fmt: skip
    if result.replaced:
        say(args, f"replaced {plural(len(result.replaced), 'packed image')}: {first_paths(result.replaced)}")
    if args.format == "raw":
        say(args, _raw_note(result.raw_feature))


def _raw_note(spec: Any) -> str:
    """How to read the raw pixels back: the spec, or why there is none."""
    if spec is None:
        return "raw pixels of different sizes: read them per record (image/height, image/width, image/channels)"
    shape = list(spec.shape)
    return f'read the pixels as one array per batch with {{"image/encoded": tfr.RawFeature({shape}, "uint8")}}'


def _pack(args: argparse.Namespace, report: Callable[[str, Exception], None]) -> Any:
    from tfrecord_lite import images

    return images.pack_images(
        args.source,
        prefix=args.output,
        num_shards=args.shards,
        max_records=args.max_records,
        max_bytes=args.max_bytes,
        shuffle=not args.no_shuffle,
        seed=args.seed,
        label_map=args.label_map,
        resize=args.resize,
        format=args.format,
        quality=args.quality,
        on_bad_image=report if args.skip_bad else "raise",
        append=args.append,
        overwrite=args.force,
        allow_duplicates=args.allow_duplicates,
        on_conflict=args.on_conflict,
        extend_label_map=args.extend_label_map,
        compression=args.to or None,
        index=not args.no_index,
        progress=lambda items, total: progress(items, total, "pack", "img", args.quiet),
        workers=args.workers,
        follow_symlinks=args.follow_symlinks,
        image_key=args.image_key,
        label_key=args.label_key,
        text_key=args.text_key,
    )


def cmd_unpack_images(args: argparse.Namespace) -> int:
    from tfrecord_lite import images

    paths = expand_inputs(args.inputs)
    try:
        n = images.unpack_images(
            paths,
            destination=args.output,
            progress=lambda it, total: progress(it, total, "unpack", "img", args.quiet),
            image_key=args.image_key,
            label_key=args.label_key,
            overwrite=args.overwrite,
            skip_existing=args.skip_existing,
            **reader_options(args),
        )
    except FileExistsError as err:  # a folder holding files already: the command line's choice to make
        raise UsageError(str(err)) from None
    say(args, f"wrote {plural(n, 'image')} under {args.output}")
    return 0


def cmd_remove_images(args: argparse.Namespace) -> int:
    from tfrecord_lite import images

    paths = expand_inputs(args.inputs)
    names = set(args.filename or [])
    if args.filenames_from:
        with open(args.filenames_from, encoding="utf-8") as f:
            names |= {line.strip() for line in f if line.strip()}
    classes = set(args.drop_class or [])
    if not names and not classes:
        raise UsageError("say what to remove: --filename, --filenames-from or --class")
    check_shards_new(args.output, shard_suffix(args.to), paths)
    with refusing_existing():
        result = images.remove_images(
            paths,
            prefix=args.output,
            filenames=names,
            classes=classes,
            label_map=args.label_map,
            num_shards=args.shards,
            max_records=args.max_records,
            max_bytes=args.max_bytes,
            output_compression=args.to or None,
            index=not args.no_index,
            overwrite=args.force,
            image_key=args.image_key,
            label_key=args.label_key,
            **reader_options(args),
        )
    say(args, f"kept {plural(result.written, 'image')}, removed {result.removed}; new shards under {args.output}")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """pack-images, unpack-images, remove-images."""
    p = add_command(
        sub,
        "pack-images",
        cmd_pack_images,
        "Pack an image folder tree (one sub-folder per class) or a CSV of path,label into TFRecord shards "
        "+ a label map (a new shard every 128 MiB unless --shards / --max-records / --max-bytes say otherwise).",
        f"  {PROG} pack-images photos/ out/photos --shards 8        "
        "-> out/photos-00000-of-00008.tfrecord ..., out/photos.labels.json\n"
        f"  {PROG} pack-images list.csv out/train --resize 256 --format jpeg --skip-bad\n"
        f"  {PROG} pack-images new_photos/ out/photos --append      add images; existing label ids stay",
    )
    p.add_argument(
        "source", metavar="SOURCE", help="a folder with one sub-folder per class, or a CSV file of path,label rows"
    )
    p.add_argument("output", metavar="OUT_PREFIX", help="shard name prefix, e.g. out/train")
    p.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0; the order is reproducible)")
    p.add_argument("--no-shuffle", action="store_true", help="keep the sorted (class, file) order")
    p.add_argument(
        "--label-map",
        metavar="FILE",
        help="the class ids: a JSON object {class: id}, a .txt file (one class a line, ids by line order; "
        "or 'id name' lines) or a .csv file with an id,name header; every class must be in it",
    )
    p.add_argument(
        "--extend-label-map",
        action="store_true",
        help="give classes that --label-map lacks the next free ids (default: such a class is an error)",
    )
    p.add_argument(
        "--resize", type=resize_arg, metavar="N|WxH", help="re-encode: longest side at most N, or exactly WxH"
    )
    p.add_argument(
        "--format",
        choices=("jpeg", "png", "webp", "raw"),
        help="re-encode into this format; raw: the pixels as np.asarray(image).tobytes(), with image/channels",
    )
    p.add_argument("--quality", type=int, default=95, help="JPEG / WebP quality when re-encoding (default 95)")
    p.add_argument(
        "--skip-bad", action="store_true", help="skip (and report) images that cannot be decoded instead of stopping"
    )
    p.add_argument(
        "--append", action="store_true", help="add to existing shards: new shard files, label map extended, ids kept"
    )
    p.add_argument(
        "--allow-duplicates",
        action="store_true",
        help="with --append, pack every image, also those whose bytes or names the dataset already holds",
    )
    p.add_argument(
        "--on-conflict",
        choices=("error", "skip", "rename", "replace"),
        default="error",
        help="with --append, an image named like a different packed image: error (default: list them, exit "
        "status 1, pack nothing), skip it, rename it (name-1.ext), or replace the packed one (rewrites its shard)",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="threads reading and checking images (default: up to 8)",
    )
    p.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="pack what links in the input tree lead to outside it (default: left out, with a warning)",
    )
    _add_pack_key_options(p)
    add_output_options(p)

    p = add_command(
        sub,
        "unpack-images",
        cmd_unpack_images,
        "Write the images of image records back to files: OUT_DIR/<class>/<file name>, named for the "
        "format the bytes hold (raw pixels become PNG files).",
        f"  {PROG} unpack-images out/photos-*.tfrecord -o restored/\n"
        f"  {PROG} unpack-images mnist.tfrecord -o digits/ --image-key image_raw --label-key label",
    )
    add_inputs(p)
    add_reader_options(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="folder to write into")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--overwrite", action="store_true", help="OUT_DIR may hold files: replace those this run writes")
    again.add_argument(
        "--skip-existing",
        action="store_true",
        help="OUT_DIR may hold files: keep those this run would write, write the rest",
    )
    _add_key_options(p)

    p = add_command(
        sub,
        "remove-images",
        cmd_remove_images,
        "Copy image records into new shards without some images (by file name or class).",
        f"  {PROG} remove-images out/photos-*.tfrecord -o out/photos-v2 --filename cat/003.jpg\n"
        f"  {PROG} remove-images out/ -o clean/photos --filenames-from bad.txt --class blurry",
    )
    add_inputs(p)
    add_reader_options(p, writes=True)
    p.add_argument("-o", "--output", required=True, metavar="OUT_PREFIX", help="prefix of the new shards")
    p.add_argument("--filename", action="append", metavar="NAME", help="image/filename to remove (repeatable)")
    p.add_argument("--filenames-from", metavar="FILE", help="a file with one image/filename per line to remove")
    p.add_argument(
        "--class",
        dest="drop_class",
        action="append",
        metavar="NAME",
        help="remove every image of this class (repeatable)",
    )
    p.add_argument("--label-map", metavar="FILE", help="label map to copy beside the new shards (default: the inputs')")
    _add_key_options(p)
    add_output_options(p)


def _add_pack_key_options(p: argparse.ArgumentParser) -> None:
    """--image-key, --label-key and --text-key: the features pack-images writes the image, its class
    id and its class name under."""
    for option, default, what in (
        ("--image-key", ENCODED, "the image"),
        ("--label-key", LABEL, "the class id"),
        ("--text-key", TEXT, "the class name"),
    ):
        p.add_argument(
            option, default=default, metavar="KEY", help=f"feature to store {what} under (default {default})"
        )


def _add_key_options(p: argparse.ArgumentParser) -> None:
    """--image-key and --label-key: the features an image and its class id are read from."""
    p.add_argument(
        "--image-key",
        default=ENCODED,
        metavar="KEY",
        help=f"feature holding the image: encoded bytes or raw pixels (default {ENCODED})",
    )
    p.add_argument(
        "--label-key", default=LABEL, metavar="KEY", help=f"feature holding the integer class id (default {LABEL})"
    )
