"""Image datasets as TFRecord shards, laid out the way TensorFlow's image
pipelines expect (image/encoded, image/format, image/height, image/width,
image/class/label, image/class/text, image/filename).

Strategy: packing stores each file's original encoded bytes (re-encoding only
when a resize or a format is asked for); Pillow is used once per image to read
its size and to prove that it decodes, so a broken file is caught at packing
time, with its path, instead of in the middle of a training run. Class ids live
in a JSON label map beside the shards ("<prefix>.labels.json", {name: id});
appending reuses it, so existing ids never change and new classes get new
ids, and skips images whose image/filename the dataset already holds. The new
shards and the label map are one publish.Publication: they appear together or
not at all, and the prefix is locked meanwhile (two appends never interleave).
Pillow (and torch, for ImageTransform) are imported lazily, inside functions, so
`import tfrecord_lite.images` costs nothing extra.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import random
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Union,
)

import numpy as np

from tfrecord_lite._datasets.sharded import existing_shards, open_shard_writer, shard_suffix
from tfrecord_lite._errors import FeatureError, TFRecordError
from tfrecord_lite._example.codec import decode_example, encode_example
from tfrecord_lite._storage.files import StorageOptions, read_whole, split_options, write_whole
from tfrecord_lite._storage.remote import Store, is_url, open_publication
from tfrecord_lite._storage.sources import committed_location

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image as PILImage

__all__ = [
    "IMAGE_EXTENSIONS",
    "ImageDecodeError",
    "ImageRecord",
    "ImageTransform",
    "PackResult",
    "decode_image",
    "decode_image_bytes",
    "iter_image_records",
    "label_map_path",
    "load_label_map",
    "pack_images",
    "parse_image_record",
    "read_image_list",
    "remove_images",
    "save_label_map",
    "scan_image_folder",
    "unpack_images",
]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


PathLike = Union[str, "os.PathLike[str]"]

# Feature keys (TensorFlow's conventions, as in the TF object-detection / slim datasets).
ENCODED = "image/encoded"
FORMAT = "image/format"
HEIGHT = "image/height"
WIDTH = "image/width"
LABEL = "image/class/label"
TEXT = "image/class/text"
FILENAME = "image/filename"

IMAGE_EXTENSIONS = (
    ".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff", ".ppm", ".pgm", ".pbm", ".pnm",
)  # fmt: skip
LABEL_MAP_SUFFIX = ".labels.json"
DEFAULT_SHARD_BYTES = 128 << 20  # a new shard every 128 MiB unless told otherwise

# Pillow's name for a format -> the spelling stored in image/format and used for file extensions.
_FORMAT_NAMES = {"jpeg": "jpeg", "jpg": "jpeg", "png": "png", "webp": "webp", "bmp": "bmp", "gif": "gif",
                 "tiff": "tiff", "tif": "tiff", "ppm": "ppm"}  # fmt: skip
_EXTENSIONS = {"jpeg": ".jpg", "tiff": ".tif"}

OnError = str | Callable[[str, "ImageDecodeError"], None]
Source = PathLike | Iterable[tuple[PathLike, Any]]


class ImageDecodeError(TFRecordError, ValueError):
    """An image file (or the image bytes in a record) cannot be decoded; `.path` names it."""


@dataclass(frozen=True)
class ImageRecord:
    """The fields of one image record; `label` is -1 and text/filename empty when absent."""

    encoded: bytes
    format: str
    height: int
    width: int
    label: int
    text: str
    filename: str

    def decode(self, mode: str | None = "RGB") -> np.ndarray:
        """The pixels as an HWC uint8 array (see decode_image_bytes)."""
        return decode_image_bytes(self.encoded, mode=mode, path=self.filename or None)


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
    duplicates: list[str] = field(default_factory=list)  # image/filename values already in the dataset


# ---------------------------------------------------------------- Pillow access


def _pil() -> Any:
    """The PIL.Image module, or an ImportError that says how to install it."""
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is installed in the dev venv
        raise ImportError("tfrecord_lite.images needs Pillow: pip install 'tfrlite[images]'") from exc
    return Image


def _open_image(data: bytes, path: str | None) -> PILImage.Image:
    """Open and fully decode `data` (Pillow's decompression-bomb guard stays active)."""
    Image = _pil()
    try:
        im: PILImage.Image = Image.open(io.BytesIO(data))
        im.load()  # the header alone does not prove the pixels decode (truncated files)
    except Exception as exc:  # Pillow plugins raise many types on malformed data
        kind = type(exc).__name__
        raise ImageDecodeError(f"cannot decode image: {kind}: {exc}", path=path) from exc
    return im


def _format_name(pillow_format: str | None) -> str:
    name = (pillow_format or "").lower()
    return _FORMAT_NAMES.get(name, name or "unknown")


# ---------------------------------------------------------------- sources


def scan_image_folder(root: PathLike) -> list[tuple[str, str]]:
    """(path, class name) for every image in an ImageFolder tree (one sub-folder per class), sorted.

    Images are found recursively under each class folder; hidden files and files
    without an image extension are ignored, as torchvision's ImageFolder does.
    """
    root = os.fspath(root)
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no such directory: {root}")
    items: list[tuple[str, str]] = []
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    for name in classes:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, name)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                if not fn.startswith(".") and fn.lower().endswith(IMAGE_EXTENSIONS):
                    items.append((os.path.join(dirpath, fn), name))
    return items


def read_image_list(path: PathLike) -> list[tuple[str, str]]:
    """(path, label) rows of a CSV file: two columns, an optional `path,label` header line.

    Relative image paths are resolved against the CSV file's folder.
    """
    path = os.fspath(path)
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


def _source_items(source: Source) -> tuple[list[tuple[str, str]], str | None]:
    """(path, class name) items and the root that image/filename is made relative to."""
    if isinstance(source, (str, os.PathLike)):
        src = os.fspath(source)
        if os.path.isdir(src):
            return scan_image_folder(src), src
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


# ---------------------------------------------------------------- label maps


def label_map_path(prefix: PathLike) -> str:
    """Where the label map of the shards written under `prefix` lives: '<prefix>.labels.json'."""
    return os.fspath(prefix) + LABEL_MAP_SUFFIX


def load_label_map(path: PathLike, storage_options: StorageOptions = None) -> dict[str, int]:
    """Read a label map file or object ({"class name": id, ...}); checks that ids are unique ints.
    While a committed pack is still giving its files their final names, its new label map is read."""
    path = os.fspath(path)
    data = json.loads(read_whole(committed_location(path, storage_options), storage_options).decode("utf-8"))
    if not isinstance(data, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in data.values()):
        raise ValueError(f"{path}: a label map must be a JSON object of class name -> integer id")
    if len(set(data.values())) != len(data):
        raise ValueError(f"{path}: two classes share one id")
    return {str(k): int(v) for k, v in data.items()}


def save_label_map(label_map: Mapping[str, int], path: PathLike, storage_options: StorageOptions = None) -> None:
    """Write a label map as JSON ordered by id, atomically (temporary file + rename; one PUT to a URL)."""
    ordered = dict(sorted(label_map.items(), key=lambda kv: kv[1]))
    write_whole(path, (json.dumps(ordered, indent=1, ensure_ascii=False) + "\n").encode(), storage_options)


def _extend_label_map(label_map: dict[str, int], names: Iterable[str]) -> list[str]:
    """Give unseen class names ids without touching existing ones; returns the new names.

    When every class name is a decimal integer the id is that integer (so a CSV
    labelled 1..5 keeps 1..5); otherwise new names get max id + 1, ... in sorted order.
    """
    new = sorted(set(names) - set(label_map))
    if not new:
        return []
    taken = set(label_map.values())
    numeric = all(re.fullmatch(r"\d+", n) for n in list(label_map) + new)
    if numeric and not taken & {int(n) for n in new}:
        for n in new:
            label_map[n] = int(n)
        return new
    nxt = max(taken, default=-1) + 1
    for n in new:
        label_map[n] = nxt
        nxt += 1
    return new


# ---------------------------------------------------------------- packing


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


def _encode_image(
    data: bytes,
    path: str,
    size: tuple[int, int] | None,
    fmt: str | None,
    quality: int,
) -> tuple[bytes, str, int, int]:
    """(bytes to store, format, height, width): the original bytes unless a resize/format asks otherwise."""
    with _open_image(data, path) as im:
        src_fmt = _format_name(im.format)
        width, height = im.size
        target = (width, height)
        if size is not None:
            if size[1] == 0:  # longest side, downscale only
                scale = size[0] / max(width, height)
                if scale < 1:
                    target = (max(1, round(width * scale)), max(1, round(height * scale)))
            else:
                target = size
        out_fmt = src_fmt if fmt is None else fmt
        if target == (width, height) and out_fmt == src_fmt:
            return data, src_fmt, height, width
        out = im.resize(target, _pil().Resampling.BICUBIC) if target != (width, height) else im.copy()
    if out_fmt == "jpeg" and out.mode not in ("RGB", "L", "CMYK"):
        out = out.convert("RGB")
    buf = io.BytesIO()
    options: dict[str, Any] = {"quality": quality} if out_fmt in ("jpeg", "webp") else {}
    out.save(buf, format=out_fmt.upper(), **options)
    return buf.getvalue(), out_fmt, target[1], target[0]


def _load_image(
    path: str, *, size: tuple[int, int] | None, fmt: str | None, quality: int
) -> tuple[bytes, str, int, int] | ImageDecodeError:
    """Read and check one image file: _encode_image's result, or the error that stops it."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        return ImageDecodeError(f"cannot read image: {exc.strerror or exc}", path=path)
    try:
        return _encode_image(raw, path, size, fmt, quality)
    except ImageDecodeError as err:
        return err


def _in_threads(func: Callable[[Any], Any], items: Sequence[Any], workers: int | None) -> Iterator[Any]:
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


def image_example(encoded: bytes, fmt: str, height: int, width: int, label: int, text: str, filename: str) -> bytes:
    """One serialized Example with TensorFlow's image keys."""
    return encode_example(
        {
            ENCODED: [encoded],
            FORMAT: [fmt.encode()],
            HEIGHT: [height],
            WIDTH: [width],
            LABEL: [label],
            TEXT: [text.encode("utf-8")],
            FILENAME: [filename.encode("utf-8")],
        }
    )


def _report(on_error: OnError, err: ImageDecodeError, skipped: list[tuple[str, str]]) -> None:
    """Apply the on_error policy to one bad image: raise it, or record (and pass on) the skip."""
    if on_error == "raise":
        raise err
    skipped.append((err.path or "", err.reason))
    if callable(on_error):
        on_error(err.path or "", err)


def _starting_labels(
    prefix: str,
    compression: str | None,
    append: bool,
    label_map: PathLike | Mapping[str, int] | None,
    storage_options: StorageOptions,
) -> dict[str, int]:
    """The label map packing starts from: the existing one when appending, merged with a given one."""
    labels: dict[str, int] = {}
    map_path = label_map_path(prefix)
    existing = _existing_label_map(map_path, storage_options) if append else None
    if existing is not None:
        labels = existing
    elif append and existing_shards(prefix, shard_suffix(compression), _store(prefix, storage_options)):
        raise FileNotFoundError(
            f"appending to the shards of {prefix} needs their label map {map_path} (it is missing), "
            "so that class ids stay the same"
        )
    given = (
        dict(label_map)
        if isinstance(label_map, Mapping)
        else load_label_map(label_map, storage_options)
        if label_map
        else {}
    )
    for name, ident in given.items():
        if labels.get(name, ident) != ident:
            raise ValueError(f"label map conflict for class {name!r}: existing id {labels[name]}, given {ident}")
        labels[name] = ident
    if len(set(labels.values())) != len(labels):
        raise ValueError("the label map gives two classes the same id")
    return labels


def _store(prefix: str, storage_options: StorageOptions) -> Store | None:
    """The store of a URL prefix (None for a local one): where existing shards are listed."""
    return Store(prefix, *split_options(storage_options)) if is_url(prefix) else None


def _existing_label_map(path: str, storage_options: StorageOptions) -> dict[str, int] | None:
    try:
        return load_label_map(path, storage_options)
    except FileNotFoundError:
        return None


def pack_images(
    source: Source,
    out_prefix: PathLike,
    *,
    num_shards: int | None = None,
    max_records: int | None = None,
    max_bytes: int | None = None,
    shuffle: bool = True,
    seed: int = 0,
    label_map: PathLike | Mapping[str, int] | None = None,
    resize: int | tuple[int, int] | None = None,
    format: str | None = None,
    quality: int = 95,
    on_error: OnError = "raise",
    append: bool = False,
    overwrite: bool = False,
    allow_duplicates: bool = False,
    compression: str | None = None,
    index: bool = True,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
    workers: int | None = None,
    storage_options: StorageOptions = None,
) -> PackResult:
    """Pack images into sharded TFRecords with a label map beside them.

    `source` is an ImageFolder root, a CSV of `path,label`, or an iterable of
    (path, label). Shards: `num_shards`, `max_records` or `max_bytes` (default
    128 MiB each). The original encoded bytes are stored unless `resize` (longest
    side, or (width, height)) or `format` ('jpeg', 'png', 'webp') asks otherwise.
    Order: sorted, then shuffled with `seed` (reproducible). An image that does
    not decode raises ImageDecodeError (on_error='raise'), or is skipped and
    listed in the result ('skip', or a callable(path, error) told about each).
    With `append=True` the existing shards stay as they are, new shards are added
    and the label map is extended (existing ids never change); images whose
    image/filename is already in the dataset are left out (listed in `duplicates`)
    unless `allow_duplicates`. `overwrite=True` replaces existing shards. The shards
    and the label map appear together when packing ends, or not at all (an error or
    a killed process leaves the previous dataset); a second packer of the same
    prefix meanwhile raises OutputLockedError. Files are read and
    checked by `workers` threads (default: up to 8); the output order does not
    depend on it. `progress(iterable, total)` may wrap the loop (e.g. with tqdm).
    `out_prefix` may be a URL (s3://bucket/photos, with `storage_options` for fsspec):
    the shards, their sidecars and, last, the label map are published as in
    docs/cloud.md ("Writing").
    """
    prefix = os.fspath(out_prefix)
    if num_shards is None and max_records is None and max_bytes is None:
        max_bytes = DEFAULT_SHARD_BYTES
    size = _parse_size(resize)
    fmt = None if format is None else _FORMAT_NAMES.get(format.lower())
    if format is not None and fmt is None:
        raise ValueError(f"unknown image format {format!r}: use one of jpeg, png, webp, bmp, gif, tiff")
    if on_error not in ("raise", "skip") and not callable(on_error):
        raise ValueError(f"on_error must be 'raise', 'skip' or a callable, got {on_error!r}")

    with open_publication(prefix, storage_options) as publication:
        labels = _starting_labels(prefix, compression, append, label_map, storage_options)
        items, root = _source_items(source)
        if not items:
            name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else "the list given"
            hint = (
                " (an image folder tree has one sub-folder per class, the images inside)" if os.path.isdir(name) else ""
            )
            raise ValueError(f"no images found in {name}{hint}")
        duplicates: list[str] = []
        if append and not allow_duplicates:
            items, duplicates = _new_items(items, root, _packed_filenames(prefix, compression, storage_options))
        new_classes = _extend_label_map(labels, (name for _, name in items))
        if shuffle:
            random.Random(seed).shuffle(items)

        skipped: list[tuple[str, str]] = []
        written = 0
        load = functools.partial(_load_image, size=size, fmt=fmt, quality=quality)
        todo: Iterable[Any] = zip(items, _in_threads(load, [p for p, _ in items], workers), strict=False)
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
        with shards as writer:
            for (path, name), loaded in todo:
                if isinstance(loaded, ImageDecodeError):
                    _report(on_error, loaded, skipped)
                    continue
                data, fmt_name, height, width = loaded
                record = image_example(data, fmt_name, height, width, labels[name], name, _stored_filename(path, root))
                writer.write(record)
                written += 1
        map_path = label_map_path(prefix)
        save_label_map(labels, publication.file(map_path), storage_options)  # published last: see docs/cloud.md
    return PackResult(list(writer.paths), map_path, labels, written, skipped, new_classes, duplicates=duplicates)


def _packed_filenames(prefix: str, compression: str | None, storage_options: StorageOptions) -> set[str]:
    """The image/filename values of the shards already written under `prefix`."""
    from tfrecord_lite._example.spec import VarLenFeature
    from tfrecord_lite._records.example_batches import iter_example_batches

    names: set[str] = set()
    for _, shard in existing_shards(prefix, shard_suffix(compression), _store(prefix, storage_options)):
        spec = {FILENAME: VarLenFeature("string")}
        for batch in iter_example_batches(shard, spec, storage_options=storage_options):
            names.update(value.decode("utf-8", "replace") for row in batch[FILENAME] for value in row)
    return names


def _new_items(
    items: list[tuple[str, str]], root: str | None, packed: set[str]
) -> tuple[list[tuple[str, str]], list[str]]:
    """(items whose stored file name is not in `packed`, the stored names of the others)."""
    fresh, duplicates = [], []
    for item in items:
        stored = _stored_filename(item[0], root)
        if stored in packed:
            duplicates.append(stored)
        else:
            fresh.append(item)
    return fresh, duplicates


# ---------------------------------------------------------------- reading


def _first(values: Any, default: Any) -> Any:
    if values is None or len(values) == 0:
        return default
    return values[0]


def parse_image_record(record: bytes | Mapping[str, Any]) -> ImageRecord:
    """The image fields of one record (serialized Example bytes, or a dict from decode_example)."""
    ex = decode_example(record) if isinstance(record, (bytes, bytearray, memoryview)) else record
    encoded = _first(ex.get(ENCODED), None)
    if not isinstance(encoded, (bytes, bytearray)):
        raise FeatureError(ENCODED, "missing or not bytes: this is not an image record")

    def text(key: str) -> str:
        value = _first(ex.get(key), b"")
        return bytes(value).decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)

    def number(key: str, default: int) -> int:
        value = _first(ex.get(key), default)
        return int(value) if not isinstance(value, (bytes, bytearray)) else default

    return ImageRecord(
        encoded=bytes(encoded),
        format=text(FORMAT),
        height=number(HEIGHT, 0),
        width=number(WIDTH, 0),
        label=number(LABEL, -1),
        text=text(TEXT),
        filename=text(FILENAME),
    )


def iter_image_records(
    paths: PathLike | Sequence[PathLike], *, compression: str = "auto", storage_options: StorageOptions = None
) -> Iterator[ImageRecord]:
    """ImageRecord for every record of one file or several (in the given order); URLs with
    `storage_options` for fsspec."""
    from tfrecord_lite._records.reader import iter_records

    for path in [paths] if isinstance(paths, (str, os.PathLike)) else paths:
        for i, record in enumerate(iter_records(path, compression=compression, storage_options=storage_options)):
            try:
                yield parse_image_record(record)
            except FeatureError as err:
                raise FeatureError(err.key, f"{err.detail} (record {i} of {os.fspath(path)})") from None


def _to_array(im: PILImage.Image, mode: str | None) -> np.ndarray:
    if mode is not None and im.mode != mode:
        im = im.convert(mode)
    elif im.mode not in ("L", "RGB", "RGBA", "LA", "CMYK"):
        im = im.convert("RGBA" if "A" in im.getbands() else "RGB")
    arr = np.array(im, dtype=np.uint8)  # a writable copy (np.asarray would be read-only)
    return arr[:, :, None] if arr.ndim == 2 else arr


def decode_image_bytes(encoded: bytes, *, mode: str | None = "RGB", path: str | None = None) -> np.ndarray:
    """Decode encoded image bytes (JPEG, PNG, ...) into an HWC uint8 array.

    `mode` is a Pillow mode to convert to ('RGB' -> 3 channels, 'L' -> 1, 'RGBA'
    -> 4), or None to keep the image's own (palette images become RGB/RGBA).
    The result is always 3-D. Raises ImageDecodeError naming `path` on bad data.
    """
    with _open_image(bytes(encoded), path) as im:
        return _to_array(im, mode)


def decode_image(record: bytes | Mapping[str, Any], *, mode: str | None = "RGB") -> np.ndarray:
    """The image of one record (serialized Example or decoded dict) as an HWC uint8 array."""
    return parse_image_record(record).decode(mode)


class ImageTransform:
    """A `transform=` for tfrecord_lite.torch datasets: record -> (CHW image tensor, label).

    The image is decoded with Pillow and converted to `mode`; `augment` (e.g. a
    torchvision transform) is applied to the PIL image if given. Without an
    augment returning a tensor, the result is a uint8 CHW tensor, or float32 in
    [0, 1] with `scale=True`. Picklable, so it works in spawned DataLoader workers.
    """

    def __init__(
        self, mode: str | None = "RGB", *, scale: bool = False, augment: Callable[[Any], Any] | None = None
    ) -> None:
        self.mode = mode
        self.scale = scale
        self.augment = augment

    def __call__(self, record: bytes | Mapping[str, Any]) -> tuple[Any, int]:
        import torch

        rec = parse_image_record(record)
        if self.augment is None:
            image = torch.from_numpy(rec.decode(self.mode)).permute(2, 0, 1).contiguous()
        else:
            with _open_image(rec.encoded, rec.filename or None) as im:
                converted = im.convert(self.mode) if self.mode is not None and im.mode != self.mode else im
                out = self.augment(converted)
            if isinstance(out, torch.Tensor):
                return out, rec.label
            image = torch.from_numpy(_to_array(out, None)).permute(2, 0, 1).contiguous()
        if self.scale:
            image = image.to(torch.float32).div_(255.0)
        return image, rec.label


# ---------------------------------------------------------------- unpacking and removing


def _safe_part(name: str, fallback: str) -> str:
    """One path component from untrusted text: no separators, no '.'/'..', no control characters."""
    cleaned = re.sub(r"[\x00-\x1f/\\:]", "_", name).strip()
    return fallback if cleaned in ("", ".", "..") else cleaned


def unpack_images(
    paths: PathLike | Sequence[PathLike],
    out_dir: PathLike,
    *,
    compression: str = "auto",
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
    storage_options: StorageOptions = None,
) -> int:
    """Write every image back to `out_dir/<class>/<file name>` (an ImageFolder tree); returns the count.
    `paths` may be URLs (`storage_options` for fsspec); `out_dir` is a local folder.

    The stored bytes are written unchanged. Names come from image/class/text and
    image/filename, sanitised so nothing lands outside `out_dir`; clashes get
    '-1', '-2', ... suffixes. Records without a name become <class>/<n>.<format>.
    """
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    count = 0
    records: Iterable[ImageRecord] = iter_image_records(paths, compression=compression, storage_options=storage_options)
    if progress is not None:
        records = progress(records, 0)
    for rec in records:
        cls = _safe_part(rec.text or (str(rec.label) if rec.label >= 0 else ""), "unlabelled")
        ext = _EXTENSIONS.get(rec.format, "." + rec.format if rec.format else ".img")
        base = _safe_part(rec.filename.replace("\\", "/").rsplit("/", 1)[-1], f"{count:08d}{ext}")
        folder = os.path.join(out_dir, cls)
        os.makedirs(folder, exist_ok=True)
        stem, suffix = os.path.splitext(base)
        target, n = os.path.join(folder, base), 0
        while True:
            try:
                with open(target, "xb") as f:
                    f.write(rec.encoded)
                break
            except FileExistsError:
                n += 1
                target = os.path.join(folder, f"{stem}-{n}{suffix}")
        count += 1
    return count


def remove_images(
    paths: PathLike | Sequence[PathLike],
    out_prefix: PathLike,
    *,
    filenames: Iterable[str] = (),
    keep: Callable[[ImageRecord], bool] | None = None,
    label_map: PathLike | None = None,
    num_shards: int | None = None,
    max_records: int | None = None,
    max_bytes: int | None = None,
    compression: str | None = None,
    index: bool = True,
    overwrite: bool = False,
    storage_options: StorageOptions = None,
) -> PackResult:
    """Copy image records into new shards under `out_prefix`, leaving some out.

    A record is dropped when its image/filename is in `filenames` or `keep(record)`
    is false. Records are copied byte for byte; the label map (`label_map`, or the
    one beside the first input shard's prefix) is copied beside the new shards
    unchanged, so label ids stay valid; both appear together, or not at all.
    `overwrite=True` replaces existing shards of `out_prefix`. Inputs and `out_prefix`
    may be URLs (`storage_options` for fsspec). Returns counts of written and removed.
    """
    from tfrecord_lite._records.reader import iter_records

    drop = set(filenames)
    prefix = os.fspath(out_prefix)
    sources = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    written = removed = 0
    labels = (
        load_label_map(label_map, storage_options)
        if label_map is not None
        else _label_map_beside(sources, storage_options)
    )
    map_path = label_map_path(prefix)
    with open_publication(prefix, storage_options) as publication:
        shards = open_shard_writer(
            prefix,
            num_shards,
            max_records,
            max_bytes,
            compression,
            index,
            overwrite=overwrite,
            publication=publication,
            storage_options=storage_options,
        )
        with shards as writer:
            for path in sources:
                for record in iter_records(path, storage_options=storage_options):
                    rec = parse_image_record(record)
                    if rec.filename in drop or (keep is not None and not keep(rec)):
                        removed += 1
                        continue
                    writer.write(record)
                    written += 1
        save_label_map(labels, publication.file(map_path), storage_options)
    return PackResult(list(writer.paths), map_path, labels, written, removed=removed)


def _label_map_beside(shards: Sequence[PathLike], storage_options: StorageOptions = None) -> dict[str, int]:
    """The label map next to a shard 'x/name-00000-of-00004.tfrecord' ('x/name.labels.json'), or {}."""
    for shard in shards:
        stem = re.sub(r"(-\d{5}-of-\d{5})?(\.tfrecords?|\.tfrec)?(\.gz|\.zlib|\.zz)?$", "", os.fspath(shard))
        found = _existing_label_map(label_map_path(stem), storage_options)
        if found is not None:
            return found
    return {}
