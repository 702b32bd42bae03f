"""Hive-style partition folders (`key=value/` under a dataset's root), as Spark's partitionBy
writes them and its file sources read them back: the folder of a row's values when writing,
and, when reading a root, its files with the values their folders give.

Strategy: a value is written as Spark writes it: its text with the characters that a path
cannot hold (or that Spark reserves) escaped as %XX, and a null as __HIVE_DEFAULT_PARTITION__.
Reading walks the root (local folders with os.walk, stores through fsspec's walk), takes the
folders whose every level below the root is `key=value` (hidden and `_` folders passed over),
and lists each as one folder of TFRecord files (resolve_inputs); the keys must be the same in
every folder. A key's type is inferred from all its values, as Spark infers it: integer if each
fits 32 bits, else long, else double, else string.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from tfrecord_lite._errors import NoInputsError
from tfrecord_lite._storage.locations import StorageOptions, filesystem, is_url, split_options
from tfrecord_lite._storage.sources import natural_key, resolve_inputs

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_ESCAPED = set("\"#%'*/:=?\\\x7f{[]^")
_SEGMENT = re.compile(r"^([^=]+)=(.*)$")
Values = dict[str, "str | None"]


def _escape(text: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED or ord(ch) < 0x20 else ch for ch in text)


def value_text(value: Any) -> str:
    """A partition value as Spark writes it in a folder name."""
    if value is None:
        return DEFAULT_PARTITION
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        raise TypeError("a binary column cannot partition a dataset (Spark refuses it too)")
    return _escape(str(value))


def partition_folder(names: Sequence[str], values: Sequence[Any]) -> str:
    """The relative folder of a row whose partition columns `names` hold `values`."""
    return "/".join(f"{_escape(name)}={value_text(value)}" for name, value in zip(names, values, strict=True))


def _parse(relative: str) -> Values | None:
    """{key: value text (None: null)} of a folder below the root, None when a level is not key=value."""
    found: Values = {}
    for segment in [s for s in relative.replace("\\", "/").split("/") if s]:
        match = _SEGMENT.match(segment)
        if match is None or segment.startswith((".", "_")):
            return None
        key, text = unquote(match.group(1)), unquote(match.group(2))
        found[key] = None if text == DEFAULT_PARTITION else text
    return found


def _folders(root: str, storage_options: StorageOptions) -> list[str] | None:
    """Every folder below `root` (itself included), None when `root` is no folder."""
    if not is_url(root):
        if not os.path.isdir(root):
            return None
        return [dirpath for dirpath, _, _ in os.walk(root)]
    options, fs_given = split_options(storage_options)
    fs, path = filesystem(root, options, fs_given)
    if not fs.isdir(path):
        return None
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return [root] + [
        f"{protocol}://{folder}" for folder, _, _ in fs.walk(path) if folder.rstrip("/") != path.rstrip("/")
    ]


def partitioned_files(paths: Sequence[str], storage_options: StorageOptions = None) -> list[tuple[str, Values]]:
    """(file, partition values) of every TFRecord file under `paths`: a folder with key=value
    folders below it gives theirs; any other path (a file, a glob, a plain folder) its files with
    no values. Files in natural order; the keys of every partitioned file must agree."""
    found: list[tuple[str, Values]] = []
    for root in paths:
        folders = _folders(root, storage_options)
        below = [(folder, _parse(folder[len(root) :])) for folder in folders or []]
        partitioned = [(folder, values) for folder, values in below if values]
        if not partitioned:
            found += [(path, {}) for path in resolve_inputs(root, storage_options=storage_options)]
            continue
        for folder, values in sorted(partitioned, key=lambda item: natural_key(item[0])):
            try:
                files = resolve_inputs(folder, storage_options=storage_options)
            except NoInputsError:
                continue
            found += [(path, values) for path in files]
    keys = {tuple(values) for _, values in found if values}
    if len(keys) > 1 or (keys and any(not values for _, values in found)):
        raise ValueError(f"the partition folders of {list(paths)} name different keys: {sorted(keys)}")
    if not found:
        raise NoInputsError(f"no TFRecord files in {list(paths)}")
    return found


def _fits(texts: list[str], kind: type) -> bool:
    try:
        for text in texts:
            kind(text)
    except ValueError:
        return False
    return True


def partition_types(found: Sequence[tuple[str, Values]]) -> dict[str, str]:
    """{key: Spark type name} of the partition keys, inferred from every value as Spark does."""
    keys = next((list(values) for _, values in found if values), [])
    types = {}
    for key in keys:
        texts = [text for _, values in found if (text := values[key]) is not None]
        if _fits(texts, int):
            small = all(-(2**31) <= int(text) < 2**31 for text in texts)
            types[key] = "integer" if small else "long"
        elif _fits(texts, float):
            types[key] = "double"
        else:
            types[key] = "string"
    return types


def typed_values(values: Mapping[str, str | None], types: Mapping[str, str]) -> dict[str, Any]:
    """The partition `values` of a file as Python values of their `types` (Spark type names:
    inferred, or the read schema's; integral types other than these four are ints)."""
    convert: dict[str, Callable[[str], Any]] = {
        "string": str,
        "double": float,
        "float": float,
        "boolean": lambda text: text.lower() == "true",
    }
    return {key: None if text is None else convert.get(types[key], int)(text) for key, text in values.items()}
