"""A split of a prepared TFDS folder written out, for `tfrecord-lite tfds export`: as Parquet, as
one plain TFRecord file or as image files in class folders; and a DatasetInfo as plain JSON
values, for `tfrecord-lite tfds info --json`.

Strategy: every export reads the split as `load` selects it (a Split: the split string resolved
from the shard lengths, the examples in the order TFDS reads them), with the caller's reader
options. TFRecord: the split's raw records are copied as they are (`Split.iter_records`), so the
file holds TFDS's own Example encoding, decodes with the same features.json, and record i is
example i of `load`. Parquet: the rows of `to_arrow` (images as their encoded bytes), typed from
the feature tree and written BATCH rows at a time, so memory holds one batch. Images: the split
read with decode=False, each image's stored bytes written unchanged to `<class name>/<n>.<format>`
through the ImageFolderWriter of image records (names made safe, nothing written outside the
destination); it needs an Image and a ClassLabel outside any sequence, and says so before anything
is written when the features lack one. A file output is written under a temporary name beside it
and renamed into place when complete (_storage/atomic.replacing), so a failed export leaves no
partial file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from tfrecord_lite._compression.kinds import compression_by_name
from tfrecord_lite._errors import DatasetInfoError
from tfrecord_lite._html.images import sniff_image_format
from tfrecord_lite._images.codec import EXTENSIONS
from tfrecord_lite._images.unpacking import ImageFolderWriter
from tfrecord_lite._records.writer import TFRecordWriter
from tfrecord_lite._redact import redact
from tfrecord_lite._storage.atomic import replacing
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite._tfds.features import ClassLabel, Feature, FeaturesDict, Image
from tfrecord_lite._tfds.info_files import DatasetInfo, read_info
from tfrecord_lite._tfds.reading import ReaderOptions, Split
from tfrecord_lite._tfds.split_strings import resolve
from tfrecord_lite._tfds.tables import BATCH, arrow_schema, python_value

ExportTarget = Literal["parquet", "tfrecord", "images"]
TARGETS: tuple[str, ...] = ("parquet", "tfrecord", "images")
Progress = Callable[[Iterable[Any], int], Iterable[Any]]


@dataclass(frozen=True)
class Exported:
    """What an export wrote: `count` examples (images, for images) to `destination`."""

    to: str
    destination: str
    count: int


def export_split(
    source: str | os.PathLike[str] | DatasetInfo,
    *,
    split: str = "train",
    to: ExportTarget,
    destination: str | os.PathLike[str],
    overwrite: bool = False,
    image_key: str | None = None,
    label_key: str | None = None,
    progress: Progress | None = None,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Exported:
    """Write `split` of the TFDS folder `source` (or its DatasetInfo) to the local `destination` as
    `to` says: "parquet" (one file), "tfrecord" (one file, GZIP / ZLIB when its name ends so) or
    "images" (a folder of class folders named by the `label_key` ClassLabel's names, each file the
    stored bytes of the `image_key` Image, by default as image_and_label picks them; `overwrite`
    replaces files of the same names, else a folder holding files is refused with
    FileExistsError). The reader options are those of every reader."""
    if to not in TARGETS:
        raise ValueError(f"cannot export to {to!r}: choose one of {', '.join(TARGETS)}")
    options = ReaderOptions(compression, verify, on_error, max_skipped, storage_options, max_record_bytes)
    info = source if isinstance(source, DatasetInfo) else read_info(os.fspath(source), storage_options)
    path = os.fspath(destination)
    if to == "images":
        image, label, names = image_and_label(info, image_key, label_key)
        examples = Split(info, split, decode=False, options=options)
        count = _write_images(_shown(examples, progress, len(examples)), image, label, names, path, overwrite)
    elif to == "tfrecord":
        examples = Split(info, split, options=options)
        with replacing(path) as partial:
            count = _write_records(_shown(examples.iter_records(), progress, len(examples)), partial, path)
    else:
        examples = Split(info, split, decode=False, options=options)
        with replacing(path) as partial:
            count = _write_parquet(_shown(examples, progress, len(examples)), info.features, partial)
    return Exported(to, path, count)


def _shown(items: Iterable[Any], progress: Progress | None, total: int) -> Iterable[Any]:
    return items if progress is None else progress(items, total)


def _write_records(records: Iterable[bytes], partial: str, path: str) -> int:
    count = 0
    with TFRecordWriter(partial, compression=compression_by_name(path) or None) as writer:
        for record in records:
            writer.write(record)
            count += 1
    return count


def _write_parquet(examples: Iterable[Any], root: Feature, partial: str) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(root, decode=False)
    wrap = not isinstance(root, FeaturesDict)
    count, rows = 0, []
    with pq.ParquetWriter(partial, schema) as writer:
        for example in examples:
            rows.append({"value": python_value(example)} if wrap else python_value(example))
            if len(rows) == BATCH:
                writer.write_batch(pa.RecordBatch.from_pylist(rows, schema=schema))
                count, rows = count + len(rows), []
        if rows or not count:
            writer.write_batch(pa.RecordBatch.from_pylist(rows, schema=schema))
    return count + len(rows)


def check_split(info: DatasetInfo, split: str) -> None:
    """Raise ValueError, saying what is wrong, when `split` is not a split string of `info`."""
    resolve(split, info.splits)


def top_level(root: Feature) -> list[Feature]:
    """The connectors reachable from the root through FeaturesDicts only (none inside a sequence),
    in the order features.json lists them."""
    if not isinstance(root, FeaturesDict):
        return [root]
    return [leaf for child in root.children() for leaf in top_level(child)]


def image_and_label(
    info: DatasetInfo, image_key: str | None = None, label_key: str | None = None
) -> tuple[str, str, list[str]]:
    """(image key, label key, class names) for an export into class folders: the Image and the
    ClassLabel at the keys given, else those outside any sequence named `image` and `label` (TFDS's
    usual names), else the first uint8 Image (else the first Image) and the first ClassLabel;
    DatasetInfoError naming the folder when there is none, or a key names something else."""
    features = {f.key: f for f in top_level(info.features)}
    images = sorted(
        (f for f in features.values() if isinstance(f, Image)), key=lambda f: (f.key != "image", f.dtype != "uint8")
    )
    labels = sorted((f for f in features.values() if isinstance(f, ClassLabel)), key=lambda f: f.key != "label")
    image = _chosen(info, features, image_key, Image) or (images[0] if images else None)
    label = _chosen(info, features, label_key, ClassLabel) or (labels[0] if labels else None)
    if image is None or label is None:
        lacking = " or ".join(name for name, f in (("Image", image), ("ClassLabel", label)) if f is None)
        raise DatasetInfoError(
            f"{redact(info.source)}: exporting images into class folders needs an Image and a ClassLabel "
            f"feature outside any sequence, and it has no {lacking} there (--to parquet or tfrecord "
            "exports any dataset)"
        )
    return image.key, label.key, info.class_names(label.key)


def _chosen(info: DatasetInfo, features: dict[str, Feature], key: str | None, kind: type[Feature]) -> Feature | None:
    """The feature at `key` when it is a `kind` outside any sequence (DatasetInfoError when not); None without a key."""
    if key is None:
        return None
    found = features.get(key)
    if not isinstance(found, kind):
        what = f"is a {found.kind}" if found is not None else "is not a feature outside any sequence"
        choices = sorted(k for k, f in features.items() if isinstance(f, kind))
        raise DatasetInfoError(
            f"{redact(info.source)}: {key!r} {what}, not {_a(kind.__name__)} (the {kind.__name__} features "
            f"outside any sequence: {choices})"
        )
    return found


def _a(name: str) -> str:
    return f"{'an' if name[0] in 'AEIOU' else 'a'} {name}"


def _at(example: Any, key: str) -> Any:
    for part in key.split("/"):
        example = example[part]
    return example


def _write_images(
    examples: Iterable[Any], image: str, label: str, names: list[str], destination: str, overwrite: bool
) -> int:
    writer = ImageFolderWriter(destination, overwrite=overwrite)
    for i, example in enumerate(examples):
        data = bytes(_at(example, image))
        number = int(_at(example, label))
        name = names[number] if 0 <= number < len(names) else str(number)
        fmt = sniff_image_format(data) or ""
        writer.write(name, data, EXTENSIONS.get(fmt, (".img",))[0], f"{i:08d}")
    return writer.count


def info_dict(info: DatasetInfo) -> dict[str, Any]:
    """A DatasetInfo as JSON values: its identity, features (the tree's lines), splits and the
    class names of each ClassLabel outside a sequence (where the folder names them)."""
    class_names = {}
    for feature in top_level(info.features):
        if isinstance(feature, ClassLabel):
            with contextlib.suppress(OSError, ValueError):
                class_names[feature.key] = info.class_names(feature.key)
    return {
        "name": info.name,
        "version": info.version,
        "config": info.config,
        "description": info.description,
        "file_format": info.file_format,
        "source": redact(info.source),
        "features": str(info.features).splitlines(),
        "class_names": class_names,
        "splits": {
            name: {
                "num_examples": split.num_examples,
                "shard_lengths": list(split.shard_lengths),
                "files": [redact(f) for f in split.files],
            }
            for name, split in info.splits.items()
        },
    }
