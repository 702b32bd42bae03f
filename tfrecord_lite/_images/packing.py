"""Image datasets packed into TFRecord shards, and back: pack_images turns an image folder tree
or a list of (path, label) into shards of image records plus their label map, unpack_images
remove_images copies a dataset leaving some out (unpacking.py writes the images back).

Strategy: packing stores each file's original encoded bytes (re-encoding only when a resize or
a format is asked for); Pillow decodes each image once, in worker threads, to read its size and
to prove that it decodes, so a broken file is caught at packing time, with its path, instead of
in the middle of a training run. Appending extends the label map (label_maps) and judges each
new image against those already packed (append.py: the same bytes are skipped, a name taken
by other bytes is a conflict settled by on_conflict). The new shards and the label map are one
publish.Publication: they appear together or not at all, and the prefix is locked meanwhile
(two appends never interleave). Removing copies the stored bytes unchanged.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import os
import random
import stat
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from tfrecord_lite._compression.kinds import normalize_compression
from tfrecord_lite._datasets.sharded import open_shard_writer
from tfrecord_lite._example.raw import RawFeature
from tfrecord_lite._example.validate import did_you_mean
from tfrecord_lite._images.append import Appending, Packed
from tfrecord_lite._images.codec import (
    FORMAT_NAMES,
    RAW,
    ImageDecodeError,
    stored_image,
)
from tfrecord_lite._images.label_maps import (
    add_new_classes,
    label_map_beside,
    label_map_path,
    load_label_map,
    missing_classes,
    save_label_map,
    starting_labels,
)
from tfrecord_lite._images.records import (
    ENCODED,
    LABEL,
    TEXT,
    ImageRecord,
    PathLike,
    image_example,
    parse_image_record,
)
from tfrecord_lite._records.reader import read_records
from tfrecord_lite._redact import log
from tfrecord_lite._storage.publish import open_publication
from tfrecord_lite._storage.sources import Sources, resolve_inputs
from tfrecord_lite._stream.damage import DamagePolicy
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

IMAGE_EXTENSIONS = (
    ".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff", ".ppm", ".pgm", ".pbm", ".pnm",
)  # fmt: skip
DEFAULT_SHARD_BYTES = 128 << 20  # a new shard every 128 MiB unless told otherwise
MAX_IMAGE_BYTES = 256 << 20  # the most read of one image file when packing: a bigger one is a bad image

OnBadImage = str | Callable[[str, ImageDecodeError], None]  # "raise", "skip" or told (path, error) of each
Images = PathLike | Iterable[tuple[PathLike, Any]]  # what pack_images packs: a folder, a CSV, (path, label)s


@dataclass
class PackResult:
    """What pack_images / remove_images did: shards written, label map, counts, skipped files."""

    paths: list[str]
    label_map_path: str
    label_map: dict[str, int]
    written: int
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    new_classes: list[str] = field(default_factory=list)
    removed: int = 0
    duplicates: list[str] = field(default_factory=list)  # images whose bytes the dataset already holds
    conflicts: list[str] = field(default_factory=list)  # names of other images already packed, left out
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (image/filename, the name stored)
    replaced: list[str] = field(default_factory=list)  # names whose old image was replaced
    # format="raw": the spec that reads the pixels written, when they all have one shape and dtype
    raw_feature: RawFeature | None = None


def scan_image_folder(source: PathLike, *, follow_symlinks: bool = False) -> list[tuple[str, str]]:
    """(path, class name) for every image in the ImageFolder tree `source` (one sub-folder per class),
    sorted.

    Images are found recursively under each class folder; hidden files and files
    without an image extension are ignored, as torchvision's ImageFolder does. A link (to a class
    folder, a folder inside one or an image) that leads out of the tree is left out, with a
    warning, unless `follow_symlinks`; links inside the tree are followed.
    """
    root = os.fspath(source)
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no such directory: {root}")
    inside = _inside_tree(root, follow_symlinks)
    items: list[tuple[str, str]] = []
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    for name in classes:
        if not inside(os.path.join(root, name)):
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, name), followlinks=follow_symlinks):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and inside(os.path.join(dirpath, d)))
            for fn in sorted(filenames):
                path = os.path.join(dirpath, fn)
                if not fn.startswith(".") and fn.lower().endswith(IMAGE_EXTENSIONS) and inside(path):
                    items.append((path, name))
    return items


def _inside_tree(root: str, follow_symlinks: bool) -> Callable[[str], bool]:
    """Whether a path under `root` may be packed: not a link leading out of the tree (any path,
    with `follow_symlinks`). A link inside the tree is followed, each folder entered once."""
    real_root = os.path.realpath(root)
    entered: set[str] = set()

    def inside(path: str) -> bool:
        if not os.path.islink(path):
            return True
        real = os.path.realpath(path)
        if os.path.isdir(real):
            if real in entered:
                return False  # a loop, or a second way into one folder
            entered.add(real)
        if follow_symlinks or real == real_root or real.startswith(real_root + os.sep):
            return True
        log.warning("left out %s: a link out of %s (follow_symlinks / --follow-symlinks packs it)", path, root)
        return False

    return inside


def read_image_list(source: PathLike) -> list[tuple[str, str]]:
    """(path, label) rows of the CSV file `source`: two columns, an optional `path,label` header line.

    Relative image paths are resolved against the CSV file's folder.
    """
    path = os.fspath(source)
    base = os.path.dirname(os.path.abspath(path))
    rows: list[tuple[str, str]] = []
    with open(path, newline="", encoding="utf-8") as f:
        for lineno, row in enumerate(csv.reader(f), 1):
            if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            if len(row) < 2:
                raise ValueError(f"{path}, line {lineno}: expected 'path,label', found {','.join(row)!r}")
            image, label = row[0].strip(), row[1].strip()
            if lineno == 1 and (image.lower(), label.lower()) in {("path", "label"), ("filename", "label")}:
                continue
            rows.append((os.path.join(base, image), label))
    return rows


def _source_items(source: Images, follow_symlinks: bool = False) -> tuple[list[tuple[str, str]], str | None]:
    """(path, class name) items and the root that image/filename is made relative to."""
    if isinstance(source, (str, os.PathLike)):
        src = os.fspath(source)
        if os.path.isdir(src):
            return scan_image_folder(src, follow_symlinks=follow_symlinks), src
        if os.path.isfile(src):
            return read_image_list(src), os.path.dirname(os.path.abspath(src))
        raise FileNotFoundError(f"no such file or directory: {src}")
    return [(os.fspath(p), str(label)) for p, label in source], None


def _stored_filename(path: str, root: str | None) -> str:
    """image/filename: the path relative to the source root, with '/' separators."""
    if root is not None:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
        if not rel.startswith(".."):
            path = rel
    return path.replace(os.sep, "/")


def _parse_size(resize: int | tuple[int, int] | None) -> tuple[int, int] | None:
    if resize is None:
        return None
    if isinstance(resize, int):
        if resize <= 0:
            raise ValueError(f"resize must be positive, got {resize}")
        return (resize, 0)  # longest side; 0 marks "keep the aspect ratio"
    w, h = resize
    if w <= 0 or h <= 0:
        raise ValueError(f"resize must be positive, got {resize}")
    return (int(w), int(h))


def _load_image(
    path: str, *, size: tuple[int, int] | None, fmt: str | None, quality: int
) -> tuple[bytes, str, int, int, int] | ImageDecodeError:
    """Read and check one image file: stored_image's result, or the error that stops it."""
    try:
        raw = _read_image_file(path)
    except OSError as exc:
        return ImageDecodeError(f"cannot read image: {exc.strerror or exc}", path=path)
    except ValueError as exc:
        return ImageDecodeError(f"cannot read image: {exc}", path=path)
    try:
        return stored_image(raw, path, size, fmt, quality)
    except ImageDecodeError as err:
        return err


def _read_image_file(path: str) -> bytes:
    """The bytes of a regular file of at most MAX_IMAGE_BYTES; a ValueError for anything else (a
    FIFO, a device, a folder: opened without blocking, so a FIFO with no writer does not hang)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > MAX_IMAGE_BYTES:
            raise ValueError(f"{st.st_size} bytes, over the limit of {MAX_IMAGE_BYTES} bytes an image")
        raw = f.read(MAX_IMAGE_BYTES + 1)
    if len(raw) > MAX_IMAGE_BYTES:  # grew since fstat
        raise ValueError(f"over the limit of {MAX_IMAGE_BYTES} bytes an image")
    return raw


def _in_threads(func: Callable[[Any], Any], items: Sequence[Any], workers: int | None) -> Generator[Any, None, None]:
    """func(item) for every item, in order, computed by `workers` threads (Pillow decodes and file
    reads release the GIL) a bounded window at a time, so memory stays flat."""
    n = min(8, os.cpu_count() or 1) if workers is None else workers
    if n <= 1:
        yield from map(func, items)
        return
    window = 16 * n
    with ThreadPoolExecutor(n) as pool:
        for start in range(0, len(items), window):
            yield from pool.map(func, items[start : start + window])


def _report(on_bad_image: OnBadImage, err: ImageDecodeError, skipped: list[tuple[str, str]]) -> None:
    """Apply the on_bad_image policy to one bad image: raise it, or record (and pass on) the skip."""
    if on_bad_image == "raise":
        raise err
    skipped.append((err.path or "", err.reason))
    if callable(on_bad_image):
        on_bad_image(err.path or "", err)


def pack_images(
    source: Images,
    *,
    prefix: PathLike,
    num_shards: int | None = None,
    max_records: int | None = None,
    max_bytes: int | None = None,
    shuffle: bool = True,
    seed: int = 0,
    label_map: PathLike | Mapping[str, int] | None = None,
    resize: int | tuple[int, int] | None = None,
    format: str | None = None,
    quality: int = 95,
    on_bad_image: OnBadImage = "raise",
    append: bool = False,
    overwrite: bool = False,
    allow_duplicates: bool = False,
    on_conflict: str = "error",
    extend_label_map: bool = False,
    compression: Compression = None,
    index: bool = True,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
    workers: int | None = None,
    storage_options: StorageOptions = None,
    follow_symlinks: bool = False,
    image_key: str = ENCODED,
    label_key: str = LABEL,
    text_key: str = TEXT,
) -> PackResult:
    """Pack images into sharded TFRecords with a label map beside them.

    The image, its class id and its class name are stored under `image_key`, `label_key` and
    `text_key` (TensorFlow's image/encoded, image/class/label, image/class/text by default; `image`,
    `label` for readers that expect those).

    `source` is an ImageFolder root, a CSV of `path,label`, or an iterable of
    (path, label). Shards: `num_shards`, `max_records` or `max_bytes` (default
    128 MiB each). The original encoded bytes are stored unless `resize` (longest
    side, or (width, height)) or `format` ('jpeg', 'png', 'webp', or 'raw': the pixels, as
    np.asarray(image).tobytes() gives them, with image/channels and image/dtype) asks otherwise.
    Raw pixels of one shape (resize=(width, height), images of one mode) read back as one array
    per batch with the RawFeature the result gives (`raw_feature`; None when the images written
    differ in size or channels: each record still says its own height, width and channels).
    Order: sorted, then shuffled with `seed` (reproducible). An image that does
    not decode raises ImageDecodeError (on_bad_image='raise'), or is skipped and
    listed in the result ('skip', or a callable(path, error) told about each); so
    does a path that is not a regular file (a FIFO, a device) or one of more than
    MAX_IMAGE_BYTES (256 MiB), which is not read. The shards are written with
    `compression` (None, "gzip" or "zlib").
    `label_map` (a mapping, or a JSON, .txt or .csv file: see load_label_map) gives the ids; a
    class it lacks is a ValueError unless `extend_label_map`, which gives it the next free id.
    With `append=True` new shards are added (the old ones renamed to the new shard total, see
    docs/sharding.md) and the label map is extended (existing ids never change). An image whose
    bytes are already packed is left out (listed in `duplicates`); one whose image/filename
    belongs to a different packed image is a conflict: `on_conflict` "error" raises
    ImageConflictError listing them all (nothing is published), "skip" leaves them out
    (`conflicts`), "rename" stores them as name-1.ext (`renamed`), "replace" removes the old
    image, rewriting the shards that hold it (`replaced`). `allow_duplicates` packs every image
    without these checks. `overwrite=True` replaces existing shards. The shards
    and the label map appear together when packing ends, or not at all (an error or
    a killed process leaves the previous dataset); a second packer of the same
    prefix meanwhile raises OutputLockedError. Files are read and
    checked by `workers` threads (default: up to 8); the output order does not
    depend on it. `progress(iterable, total)` may wrap the loop (e.g. with tqdm).
    `prefix` may be a URL (s3://bucket/photos, with `storage_options` for fsspec):
    the shards, their sidecars and, last, the label map are published as in
    docs/cloud.md ("Writing"). In an image folder, links that lead out of the tree are left out
    (with a warning) unless `follow_symlinks`.
    """
    prefix = os.fspath(prefix)
    if num_shards is None and max_records is None and max_bytes is None:
        max_bytes = DEFAULT_SHARD_BYTES
    size = _parse_size(resize)
    fmt = None if format is None else FORMAT_NAMES.get(format.lower())
    if format is not None and fmt is None:
        raise ValueError(f"unknown image format {format!r}: use one of jpeg, png, webp, bmp, gif, tiff, raw")
    if on_bad_image not in ("raise", "skip") and not callable(on_bad_image):
        raise ValueError(f"on_bad_image must be 'raise', 'skip' or a callable, got {on_bad_image!r}")

    with open_publication(prefix, storage_options) as publication:
        labels = starting_labels(prefix, compression, append, label_map, storage_options)
        items, root = _source_items(source, follow_symlinks)
        if not items:
            name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else "the list given"
            hint = (
                " (an image folder tree has one sub-folder per class, the images inside)" if os.path.isdir(name) else ""
            )
            raise ValueError(f"no images found in {name}{hint}")
        if label_map is not None and not extend_label_map:
            where = "given" if isinstance(label_map, Mapping) else os.fspath(label_map)
            missing_classes(labels, (name for _, name in items), where)
        appending = None
        if append and not allow_duplicates:
            appending = Appending(Packed.read(prefix, compression, storage_options, image_key), on_conflict)
        new_classes = add_new_classes(labels, (name for _, name in items))
        if shuffle:
            random.Random(seed).shuffle(items)

        skipped: list[tuple[str, str]] = []
        written = 0
        raw_shapes: set[tuple[int, int, int]] = set()
        load = functools.partial(_load_image, size=size, fmt=fmt, quality=quality)
        loads = _in_threads(load, [p for p, _ in items], workers)
        todo: Iterable[Any] = zip(items, loads, strict=False)
        if progress is not None:
            todo = progress(todo, len(items))
        shards = open_shard_writer(
            prefix,
            num_shards,
            max_records,
            max_bytes,
            compression,
            index,
            append,
            overwrite,
            publication,
            storage_options,
        )
        # closed here on any exit, so that its thread pool is shut down by this thread, never by the
        # garbage collector in one of the pool's own threads
        with contextlib.closing(loads), shards as writer:
            for (path, name), loaded in todo:
                if isinstance(loaded, ImageDecodeError):
                    _report(on_bad_image, loaded, skipped)
                    continue
                data, fmt_name, height, width, channels = loaded
                stored = _stored_filename(path, root)
                if appending is not None:
                    kept = appending.name_for(stored, data)
                    if kept is None:
                        continue
                    stored = kept
                if fmt_name == RAW:
                    raw_shapes.add((height, width, channels))
                record = image_example(
                    data,
                    fmt_name,
                    height,
                    width,
                    labels[name],
                    name,
                    stored,
                    channels,
                    image_key=image_key,
                    label_key=label_key,
                    text_key=text_key,
                )
                writer.write(record)
                written += 1
            if appending is not None:
                appending.finish(writer, prefix, storage_options)
        map_path = label_map_path(prefix)
        # published last: see docs/cloud.md
        save_label_map(labels, publication.file(map_path), storage_options=storage_options)
    result = PackResult(list(writer.paths), map_path, labels, written, skipped, new_classes)
    if len(raw_shapes) == 1:
        result.raw_feature = RawFeature(raw_shapes.pop(), "uint8")
    if appending is not None:
        result.duplicates, result.conflicts = appending.duplicates, appending.conflicts
        result.renamed, result.replaced = appending.renamed, sorted(appending.replaced)
    return result


def remove_images(
    source: Sources,
    *,
    prefix: PathLike,
    filenames: Iterable[str] = (),
    keep: Callable[[ImageRecord], bool] | None = None,
    label_map: PathLike | None = None,
    num_shards: int | None = None,
    max_records: int | None = None,
    max_bytes: int | None = None,
    output_compression: Compression = None,
    index: bool = True,
    overwrite: bool = False,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
    image_key: str = ENCODED,
    label_key: str = LABEL,
    classes: Iterable[str] = (),
) -> PackResult:
    """Copy the image records of `source` into new shards under `prefix`, leaving some out.

    A record is dropped when its image/filename is in `filenames`, its class name
    (image/class/text) in `classes`, or `keep(record)` is false. A name of `filenames` or
    `classes` that no record has is a ValueError (with the close names the records have),
    raised before anything is published: a typo never makes a copy believed filtered (unless
    damaged records were skipped, which might have held it).
    Records are copied byte for byte; the label map (`label_map`, or the one beside the
    first input shard's prefix) is copied beside the new shards
    unchanged, so label ids stay valid; both appear together, or not at all.
    `overwrite=True` replaces existing shards of `prefix`. `source` is read as iter_records
    reads it (`compression` and the other reader options are its); the new shards are written
    with `output_compression` (None, "gzip" or "zlib"). `source` and `prefix` may be URLs
    (`storage_options` for fsspec); `keep` sees the image under `image_key` and the class id under
    `label_key`. Returns counts of written and removed.
    """
    drop, drop_classes = set(filenames), set(classes)
    seen = _Seen()
    prefix = os.fspath(prefix)
    sources = resolve_inputs(source, storage_options=storage_options)
    written = removed = 0
    labels = (
        load_label_map(label_map, storage_options=storage_options)
        if label_map is not None
        else label_map_beside(sources, storage_options)
    )
    map_path = label_map_path(prefix)
    with open_publication(prefix, storage_options) as publication:
        shards = open_shard_writer(
            prefix,
            num_shards,
            max_records,
            max_bytes,
            output_compression,
            index,
            overwrite=overwrite,
            publication=publication,
            storage_options=storage_options,
        )
        with shards as writer:
            policy = DamagePolicy(on_error, max_skipped)
            records = read_records(
                sources,
                policy,
                compression=normalize_compression(compression, allow_auto=True),
                verify=verify,
                storage_options=storage_options,
                max_record_bytes=max_record_bytes,
            )
            for record in records:
                rec = parse_image_record(record, image_key=image_key, label_key=label_key)
                seen.add(rec, bool(drop), bool(drop_classes))
                if rec.filename in drop or rec.text in drop_classes or (keep is not None and not keep(rec)):
                    removed += 1
                    continue
                writer.write(record)
                written += 1
            if not policy.skipped:  # else a name may have been in a skipped record
                seen.check(drop, drop_classes)  # inside the publication: an error publishes nothing
        save_label_map(labels, publication.file(map_path), storage_options=storage_options)
    return PackResult(list(writer.paths), map_path, labels, written, removed=removed)


class _Seen:
    """The file and class names remove_images met, to say which asked-for names no record has."""

    def __init__(self) -> None:
        self.filenames: set[str] = set()
        self.classes: set[str] = set()

    def add(self, rec: ImageRecord, filenames: bool, classes: bool) -> None:
        if filenames:
            self.filenames.add(rec.filename)
        if classes:
            self.classes.add(rec.text)

    def check(self, filenames: set[str], classes: set[str]) -> None:
        for what, asked, met in (("image/filename", filenames, self.filenames), ("class", classes, self.classes)):
            missing = sorted(asked - met)
            if missing:
                close = did_you_mean(missing[0], met - {""})
                names = ", ".join(repr(name) for name in missing[:5]) + (" ..." if len(missing) > 5 else "")
                raise ValueError(f"no record has the {what} {names}{close or '.'} Nothing was removed or written.")
