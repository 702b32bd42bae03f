"""Label maps: the class ids of an image dataset, a JSON object {class name: id} beside its shards
("<prefix>.labels.json").

Strategy: ids are given once and never change. A pack starts from the label map already beside
the shards when it appends (and refuses to append without it), merged with one the caller gives;
a class seen for the first time gets the next free id, or its own number when every class name is
a decimal integer (a CSV labelled 1..5 keeps 1..5). The map is written whole, atomically, ordered
by id; while a committed pack is still naming its files, the new map is the one read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence

from tfrecord_lite._datasets.image_records import PathLike
from tfrecord_lite._datasets.sharded import existing_shards, prefix_store, shard_suffix
from tfrecord_lite._storage.files import read_whole, write_whole
from tfrecord_lite._storage.locations import StorageOptions
from tfrecord_lite._storage.sources import committed_location

LABEL_MAP_SUFFIX = ".labels.json"


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


def extend_label_map(label_map: dict[str, int], names: Iterable[str]) -> list[str]:
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


def starting_labels(
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
    elif append and existing_shards(prefix, shard_suffix(compression), prefix_store(prefix, storage_options)):
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


def _existing_label_map(path: str, storage_options: StorageOptions) -> dict[str, int] | None:
    """The label map at `path`, or None where there is none."""
    try:
        return load_label_map(path, storage_options)
    except FileNotFoundError:
        return None


def label_map_beside(shards: Sequence[PathLike], storage_options: StorageOptions = None) -> dict[str, int]:
    """The label map next to a shard 'x/name-00000-of-00004.tfrecord' ('x/name.labels.json'), or {}."""
    for shard in shards:
        stem = re.sub(r"(-\d{5}-of-\d{5})?(\.tfrecords?|\.tfrec)?(\.gz|\.zlib|\.zz)?$", "", os.fspath(shard))
        found = _existing_label_map(label_map_path(stem), storage_options)
        if found is not None:
            return found
    return {}
