"""A prepared TensorFlow Datasets folder as the viewer sees it: recognised by the dataset_info.json
it holds, its shards in the order of its splits, each split a range of the catalog's record numbers,
the class names of its ClassLabel, and the overview's part that says so (the splits, their example
counts and shards, and the features' tree).

Strategy: tfrecord_lite.tfds reads the folder's JSON (no record is read for it); the records are
shown as the viewer shows any Example, so a TFDS Image (encoded PNG or JPEG bytes) is a thumbnail
and the ClassLabel's ids are named by the class names. A split is found for a record number by a
binary search over the splits' first numbers.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from typing import Any

from tfrecord_lite._html.values import esc
from tfrecord_lite._redact import redact
from tfrecord_lite._storage.files import read_head
from tfrecord_lite._storage.locations import is_url
from tfrecord_lite._stream.options import StorageOptions
from tfrecord_lite._tfds.export import top_level
from tfrecord_lite._tfds.features import ClassLabel

INFO_FILE = "dataset_info.json"


@dataclass(frozen=True)
class SplitRange:
    """A split of the folder: its `name`, the catalog's number of its first record, its record count."""

    name: str
    start: int
    count: int


def tfds_info(source: Any, storage_options: StorageOptions = None) -> Any:
    """The DatasetInfo of `source` when it names one folder (a path or URL, or a list of just it)
    that holds dataset_info.json, else None (any other source is read as TFRecord files)."""
    if isinstance(source, (list, tuple)) and len(source) == 1:
        source = source[0]
    if not isinstance(source, (str, os.PathLike)):
        return None
    folder = os.fspath(source)
    if not _holds_info(folder, storage_options):
        return None
    from tfrecord_lite import tfds

    info = tfds.info(folder, storage_options=storage_options)
    if info.file_format != "tfrecord":
        raise ValueError(
            f"{redact(folder)} holds {info.file_format} shards: the viewer shows TFRecord shards only "
            "(tfrecord_lite.tfds.load reads this folder)"
        )
    return info


def _holds_info(folder: str, storage_options: StorageOptions) -> bool:
    if not is_url(folder):
        return os.path.isfile(os.path.join(folder, INFO_FILE))
    try:
        read_head(folder.rstrip("/") + "/" + INFO_FILE, 1, storage_options)
    except (OSError, ValueError):
        return False
    return True


def shard_files(info: Any) -> list[str]:
    """Every split's shards, the splits in the order dataset_info.json lists them."""
    return [str(path) for split in info.splits.values() for path in split.files]


def split_ranges(info: Any, lengths: list[int]) -> list[SplitRange]:
    """Each split as a range of record numbers, `lengths` being the records of each of shard_files
    (as the files hold them: a shard that dataset_info.json miscounts moves no other split)."""
    ranges, start, k = [], 0, 0
    for name, split in info.splits.items():
        count = sum(lengths[k : k + len(split.files)])
        ranges.append(SplitRange(name, start, count))
        start, k = start + count, k + len(split.files)
    return ranges


def split_of(ranges: list[SplitRange], i: int) -> tuple[str, int] | None:
    """(split name, number within the split) of record `i`, or None outside every split."""
    k = bisect.bisect_right([r.start for r in ranges], i) - 1
    if k < 0 or i >= ranges[k].start + ranges[k].count:
        return None
    return ranges[k].name, i - ranges[k].start


def class_label(info: Any) -> tuple[str, list[str]] | None:
    """(key, class names) of the first ClassLabel outside any sequence, or None; names are the
    numbers themselves where the folder gives none."""
    label = next((f for f in top_level(info.features) if isinstance(f, ClassLabel)), None)
    if label is None:
        return None
    try:
        names = list(info.class_names(label.key))
    except (OSError, ValueError):
        names = []
    return label.key, names


def overview_html(info: Any, ranges: list[SplitRange]) -> str:
    """The overview's TFDS part: name and version, the splits, the features' tree."""
    rows = "".join(
        f'<tr><td><a href="records?start={r.start}">{esc(r.name)}</a></td><td>{r.count}</td>'
        f"<td>{r.start}..{r.start + r.count - 1 if r.count else r.start}</td>"
        f"<td>{len(info.splits[r.name].files)}</td></tr>"
        for r in ranges
    )
    head = "<tr><th>split</th><th>examples</th><th>records</th><th>shards</th></tr>"
    config = f" ({esc(info.config)})" if info.config else ""
    title = f"<h3>TensorFlow Datasets: {esc(info.name)} {esc(info.version)}{config}</h3>"
    description = f'<p class="note">{esc(info.description)}</p>' if info.description else ""
    where = f'<p class="note">{esc(redact(info.source))}, {esc(info.file_format)}</p>'
    splits = f'<table class="splits"><thead>{head}</thead><tbody>{rows}</tbody></table>'
    features = f'<details class="features" open><summary>features</summary><pre>{esc(info.features)}</pre></details>'
    return f'<div class="tfds">{title}{description}{where}{splits}{features}</div>'
