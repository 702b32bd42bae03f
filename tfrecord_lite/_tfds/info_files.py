"""A TensorFlow Datasets folder's metadata: dataset_info.json and features.json read, checked and
made a DatasetInfo (name, version, description, config, file format, feature tree, splits with
their shard lengths and shard files).

Strategy: the folder is local or any URL the storage layer reads; each JSON file is one read
(`read_whole`, one ranged request for an object) capped at MAX_JSON_BYTES, so `info` of a remote
folder costs two reads and never a listing (a local folder without dataset_info.json is looked
into a few levels down, for the error to name the TFDS folders there). Everything in the documents
is untrusted: each field is checked for its type and range before use (shard lengths non-negative
and bounded, their count bounded), and an error names the file and the field. Shard file names come from each split's
`filepathTemplate` (TFDS's default `{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}` when absent),
filled in as TFDS fills it (five-digit shard numbers); a name that is absolute, holds `..`, a
backslash or a scheme, or is empty is refused before any path is built from it, so nothing
outside the folder is ever read. Class names of a ClassLabel come from features.json or, when it
only counts them, from `<key path joined by ->.labels.txt` beside it, read when asked for (without
it, TFDS's names: the class numbers as strings).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from tfrecord_lite._errors import DatasetInfoError
from tfrecord_lite._redact import redact
from tfrecord_lite._repr import count, describe, shown_paths
from tfrecord_lite._storage.files import read_whole
from tfrecord_lite._storage.locations import StorageOptions, is_url
from tfrecord_lite._tfds.features import (
    ClassLabel,
    Feature,
    FeaturesDict,
    Sequence,
    find,
    parse_features,
    walk,
)

MAX_JSON_BYTES = 64 << 20  # dataset_info.json / features.json larger than this are refused
MAX_LABELS_BYTES = 64 << 20
MAX_SHARDS = 1 << 20  # shards of one split
MAX_EXAMPLES = 1 << 48  # examples of one shard
FILE_FORMATS = {"tfrecord": "tfrecord", "array_record": "array_record"}
DEFAULT_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"
_PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")
_NAME = re.compile(r"^[\w.-]+$")


@dataclass(frozen=True)
class SplitInfo:
    """One split: its name, how many examples, how many in each shard, and the shards' full
    paths or URLs in order."""

    name: str
    num_examples: int
    shard_lengths: tuple[int, ...]
    files: tuple[str, ...]

    def __repr__(self) -> str:
        return describe(
            "SplitInfo", repr(self.name), count(self.num_examples, "examples"), f"files={shown_paths(self.files)}"
        )


@dataclass(frozen=True)
class DatasetInfo:
    """What a TFDS folder's dataset_info.json and features.json say.

    `features` is the root of the feature tree (`str(info)` prints it), `splits` maps each split's
    name to its SplitInfo, `source` is the folder, `file_format` "tfrecord" or "array_record",
    `disable_shuffling` TFDS's flag (the examples are then read in file order)."""

    name: str
    version: str
    description: str
    config: str | None
    file_format: str
    features: Feature
    splits: dict[str, SplitInfo]
    source: str
    disable_shuffling: bool = False
    storage_options: StorageOptions = field(default=None, repr=False, compare=False)

    def feature(self, key: str) -> Feature:
        """The connector at `key` ("/"-joined; a Sequence's own feature under the Sequence's key)."""
        return find(self.features, key)

    def feature_keys(self, kind: str | None = None) -> list[str]:
        """The keys of the leaf connectors, depth first, or of every connector of `kind` (its class
        name: "Image", "ClassLabel", "Dataset", ...)."""
        if kind is None:
            return [f.key for f in walk(self.features) if not isinstance(f, (FeaturesDict, Sequence))]
        return [f.key for f in walk(self.features) if f.kind == kind]

    def class_names(self, key: str) -> list[str]:
        """The class names of the ClassLabel feature at `key` ("/"-joined, e.g. "objects/label")."""
        feature = find(self.features, key)
        if not isinstance(feature, ClassLabel):
            raise ValueError(f"feature {key!r} is a {feature.kind}, not a ClassLabel")
        if feature.names is not None:
            return list(feature.names)
        path = join(self.source, "-".join(key.split("/")) + ".labels.txt")
        try:
            data = read_whole(path, self.storage_options, limit=MAX_LABELS_BYTES)
        except FileNotFoundError:  # TFDS names the classes of a bare num_classes by their numbers
            return [str(i) for i in range(feature.num_classes or 0)]
        if len(data) > MAX_LABELS_BYTES:
            raise DatasetInfoError(f"{redact(path)} is larger than {MAX_LABELS_BYTES} bytes")
        return [line.strip() for line in data.decode("utf-8").split("\n") if line.strip()]

    def __repr__(self) -> str:
        splits = "{" + ", ".join(f"{k!r}: {v.num_examples}" for k, v in self.splits.items()) + "}"
        config = f"config={self.config!r}" if self.config else None
        return describe(
            "DatasetInfo", repr(self.name), f"version={self.version!r}", config, f"file_format={self.file_format!r}",
            f"splits={splits}", f"source={redact(self.source)!r}",
        )  # fmt: skip

    def __str__(self) -> str:
        lines = [
            f"{self.name} {self.version}" + (f" ({self.config})" if self.config else "") + f", {self.file_format}",
            f"source: {redact(self.source)}",
        ]
        if self.description:
            lines.append(f"description: {self.description.strip().splitlines()[0]}")
        lines.append("features: " + str(self.features).replace("\n", "\n    "))
        lines.append("splits:")
        for split in self.splits.values():
            lines.append(f"    {split.name}: {split.num_examples} examples in {len(split.files)} shards")
        return "\n".join(lines)


def join(folder: str, name: str) -> str:
    """`name` (checked to stay inside) under `folder`, a path or URL."""
    if is_url(folder):
        return folder.rstrip("/") + "/" + name
    return os.path.join(folder, *name.split("/"))


def read_info(source: str, storage_options: StorageOptions = None) -> DatasetInfo:
    """The DatasetInfo of the folder `source` (two reads: dataset_info.json, features.json)."""
    folder = os.fspath(source)
    try:
        info_doc = _read_json(join(folder, "dataset_info.json"), storage_options)
    except FileNotFoundError as err:
        found = [] if is_url(folder) else _folders_below(folder)
        if found:
            raise FileNotFoundError(f"{err}; TFDS folders below it: {', '.join(found)}") from None
        raise
    features_doc = _read_json(join(folder, "features.json"), storage_options)
    return info_from_documents(folder, info_doc, features_doc, storage_options)


def _folders_below(folder: str, depth: int = 3, shown: int = 5, visits: int = 2000) -> list[str]:
    """Up to `shown` local folders at most `depth` levels below `folder` that hold a
    dataset_info.json (DATA_DIR/NAME/CONFIG/VERSION is three), looking into `visits` folders at
    most, for an error message."""
    found: list[str] = []
    base = os.path.abspath(folder)
    for visited, (here, dirs, files) in enumerate(os.walk(base)):
        if visited >= visits:
            break
        if "dataset_info.json" in files and here != base:
            found.append(os.path.relpath(here, base))
        if here[len(base) :].count(os.sep) >= depth:
            dirs.clear()
        dirs.sort()
        if len(found) >= shown:
            break
    return found


def _read_json(path: str, storage_options: StorageOptions) -> Any:
    try:
        data = read_whole(path, storage_options, limit=MAX_JSON_BYTES)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{redact(path)} is missing: a TFDS folder holds dataset_info.json and features.json "
            "(e.g. DATA_DIR/NAME/CONFIG/VERSION)"
        ) from None
    if len(data) > MAX_JSON_BYTES:
        raise DatasetInfoError(f"{redact(path)} is larger than {MAX_JSON_BYTES} bytes")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as err:
        raise DatasetInfoError(f"{redact(path)} is not valid JSON: {err}") from None


def info_from_documents(
    folder: str, info_doc: Any, features_doc: Any, storage_options: StorageOptions = None
) -> DatasetInfo:
    """A DatasetInfo from the two decoded JSON documents of `folder`."""
    where = redact(join(folder, "dataset_info.json"))
    if not isinstance(info_doc, dict):
        raise DatasetInfoError(f"{where}: expected a JSON object, found {type(info_doc).__name__}")
    name = _string(info_doc, "name", where, required=True)
    if not _NAME.match(name):
        raise DatasetInfoError(f"{where}: 'name' {name!r} is not a dataset name")
    file_format = _string(info_doc, "fileFormat", where) or "tfrecord"
    if file_format not in FILE_FORMATS:
        raise DatasetInfoError(f"{where}: unknown fileFormat {file_format!r} (known: {', '.join(FILE_FORMATS)})")
    features = parse_features(features_doc, redact(join(folder, "features.json")))
    splits_doc = info_doc.get("splits", [])
    if not isinstance(splits_doc, list):
        raise DatasetInfoError(f"{where}: 'splits' must be a list, found {type(splits_doc).__name__}")
    splits: dict[str, SplitInfo] = {}
    for k, entry in enumerate(splits_doc):
        split = _split(entry, f"{where}: splits[{k}]", folder, name, file_format)
        if split.name in splits:
            raise DatasetInfoError(f"{where}: split {split.name!r} is listed twice")
        splits[split.name] = split
    return DatasetInfo(
        name=name,
        version=_string(info_doc, "version", where),
        description=_string(info_doc, "description", where),
        config=_string(info_doc, "configName", where) or None,
        file_format=file_format,
        features=features,
        splits=splits,
        source=folder,
        disable_shuffling=bool(info_doc.get("disableShuffling", False)),
        storage_options=storage_options,
    )


def _string(doc: dict[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = doc.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise DatasetInfoError(f"{where}: {key!r} must be a string, found {type(value).__name__}")
    return value


def _split(entry: Any, where: str, folder: str, dataset: str, file_format: str) -> SplitInfo:
    if not isinstance(entry, dict):
        raise DatasetInfoError(f"{where}: expected an object, found {type(entry).__name__}")
    name = _string(entry, "name", where, required=True)
    if not _NAME.match(name):
        raise DatasetInfoError(f"{where}: split name {name!r} is not a split name")
    lengths = entry.get("shardLengths")
    if lengths is None:
        raise DatasetInfoError(f"{where} ({name}): no 'shardLengths' (written by TFDS 4.0 and later)")
    if not isinstance(lengths, list):
        raise DatasetInfoError(f"{where} ({name}): 'shardLengths' must be a list, found {type(lengths).__name__}")
    if len(lengths) > MAX_SHARDS:
        raise DatasetInfoError(f"{where} ({name}): {len(lengths)} shards (at most {MAX_SHARDS})")
    shard_lengths = tuple(_count(v, f"{where} ({name}): shardLengths", MAX_EXAMPLES) for v in lengths)
    template = _string(entry, "filepathTemplate", where) or DEFAULT_TEMPLATE
    names = [
        _file_name(template, where, dataset=dataset, split=name, file_format=file_format, index=i, total=len(lengths))
        for i in range(len(lengths))
    ]
    return SplitInfo(name, sum(shard_lengths), shard_lengths, tuple(join(folder, n) for n in names))


def _count(value: Any, what: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise DatasetInfoError(f"{what}: expected an integer, found {type(value).__name__} {value!r}")
    try:
        n = int(value)
    except ValueError:
        raise DatasetInfoError(f"{what}: expected an integer, found {value!r}") from None
    if not 0 <= n <= high:
        raise DatasetInfoError(f"{what}: {n} is out of range [0, {high}]")
    return n


def _file_name(template: str, where: str, *, dataset: str, split: str, file_format: str, index: int, total: int) -> str:
    """A shard's file name from TFDS's template, refused unless it stays inside the folder."""
    values = {
        "DATASET": dataset,
        "SPLIT": split,
        "FILEFORMAT": file_format,
        "SHARD_INDEX": f"{index:05d}",
        "NUM_SHARDS": f"{total:05d}",
        "SHARD_X_OF_Y": f"{index:05d}-of-{total:05d}",
    }

    def fill(match: re.Match[str]) -> str:
        if match.group(1) not in values:
            raise DatasetInfoError(
                f"{where}: filepathTemplate {template!r} has an unknown placeholder {match.group(0)}"
            )
        return values[match.group(1)]

    name = _PLACEHOLDER.sub(fill, template)
    parts = name.split("/")
    if (
        not name
        or name.startswith("/")
        or "\\" in name
        or ":" in name
        or any(p in ("", ".", "..") for p in parts)
        or posixpath.normpath(name) != name
    ):
        raise DatasetInfoError(
            f"{where}: shard file name {name!r} (from filepathTemplate {template!r}) leaves the folder"
        )
    return name
