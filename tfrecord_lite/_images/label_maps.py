"""Label maps: the class ids of an image dataset, a JSON object {class name: id} beside its shards
("<prefix>.labels.json").

Strategy: ids are given once and never change. A pack starts from the label map already beside
the shards when it appends (and refuses to append without it), merged with one the caller gives;
a class seen for the first time gets the next free id, or its own number when every class name is
a decimal integer (a CSV labelled 1..5 keeps 1..5). A label map the caller gives is complete: a
class it lacks is an error unless the caller asks to extend it. The map is written whole,
atomically, ordered by id; while a committed pack is still naming its files, the new map is the
one read. A given map may also be a text file (one class name a line, ids by line order; or
`id name` lines) or a CSV file with an `id,name` header (either order); every format is checked
the same way (integer ids >= 0, no name or id twice), each error naming the file and the line.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tfrecord_lite._compression.kinds import SUFFIX_PATTERN
from tfrecord_lite._datasets.sharded import existing_shards, prefix_store, shard_suffix
from tfrecord_lite._images.records import PathLike
from tfrecord_lite._storage.files import read_whole, write_whole
from tfrecord_lite._storage.locations import StorageOptions
from tfrecord_lite._storage.sources import committed_location

LABEL_MAP_SUFFIX = ".labels.json"
FORMATS = (
    'a JSON object {"cat": 0, ...}, a .txt file of class names (one a line, ids by line order) or of '
    "`id name` lines, or a .csv file with an id,name header"
)
_ID_NAME_LINE = re.compile(r"\s*(\d+)\s+(\S.*?)\s*")
_ID_COLUMNS, _NAME_COLUMNS = ("id", "label", "index"), ("name", "class", "class_name")


def label_map_path(prefix: PathLike) -> str:
    """Where the label map of the shards written under `prefix` lives: '<prefix>.labels.json'."""
    return os.fspath(prefix) + LABEL_MAP_SUFFIX


def load_label_map(source: PathLike, *, storage_options: StorageOptions = None) -> dict[str, int]:
    """Read a label map file or object (a path or a URL): JSON ({"class name": id, ...}; also any file that starts
    with '{'), a .txt file (one class name a line, ids 0, 1, ... by line order; or `id name` lines)
    or a .csv file with an `id,name` (or `name,id`) header. Ids must be unique integers >= 0; an
    error names the file and the line. While a committed pack is still giving its files their final
    names, its new label map is read."""
    path = os.fspath(source)
    data = read_whole(committed_location(path, storage_options), storage_options)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"label map {path}: not UTF-8 text; a label map is {FORMATS}") from None
    lower = path.lower()
    if lower.endswith(".csv"):
        return _checked_pairs(_csv_pairs(text, path), path)
    if lower.endswith(".json") or text.lstrip().startswith("{"):
        return check_label_map(_json_object(text, path), f"label map {path}")
    return _checked_pairs(_text_pairs(text, path), path)


def check_label_map(label_map: Any, where: str = "label_map") -> dict[str, int]:
    """`label_map` as {class name: id}, checked: a mapping of names to integer ids >= 0, no id twice.
    An id given as text ("0") is an error that says so, not a silent conversion."""
    if not isinstance(label_map, Mapping):
        raise ValueError(f"{where}: a label map maps class names to integer ids, found {type(label_map).__name__}")
    out: dict[str, int] = {}
    owner: dict[int, str] = {}
    for name, ident in label_map.items():
        if isinstance(ident, bool) or not isinstance(ident, int):
            raise ValueError(
                f"{where}: class {name!r} has the id {ident!r} ({type(ident).__name__}); ids are integers "
                f"(write {ident.strip()} rather than {json.dumps(ident)})"
                if isinstance(ident, str) and ident.strip().isdigit()
                else f"{where}: class {name!r} has the id {ident!r} ({type(ident).__name__}); ids are integers >= 0"
            )
        if ident < 0:
            raise ValueError(f"{where}: class {name!r} has the id {ident}; ids are integers >= 0")
        if ident in owner:
            raise ValueError(f"{where}: classes {owner[ident]!r} and {str(name)!r} share the id {ident}")
        owner[ident] = str(name)
        out[str(name)] = int(ident)
    return out


def _json_object(text: str, path: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"label map {path}, line {err.lineno}: not valid JSON ({err.msg}, column {err.colno}); a label map "
            f"is {FORMATS}"
        ) from None


Pairs = list[tuple[int, str, int]]  # (line number, class name, id)


def _text_pairs(text: str, path: str) -> Pairs:
    """A text label map's classes: `id name` lines when the first line looks like one, else one
    class name a line, its id the line's number - 1 (an empty line inside would shift them: an error)."""
    lines = text.rstrip().splitlines()
    if not lines:
        raise ValueError(f"label map {path}: the file is empty; a label map is {FORMATS}")
    if _ID_NAME_LINE.fullmatch(lines[0]) is None:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                raise ValueError(
                    f"label map {path}, line {number}: empty line; in a file of one class name a line, "
                    "a class's id is its line number - 1, so no line may be empty"
                )
        return [(number, line.strip(), number - 1) for number, line in enumerate(lines, 1)]
    pairs = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        match = _ID_NAME_LINE.fullmatch(line)
        if match is None:
            raise ValueError(f"label map {path}, line {number}: expected `id name` as on line 1, found {line!r}")
        pairs.append((number, match.group(2), int(match.group(1))))
    return pairs


def _csv_pairs(text: str, path: str) -> Pairs:
    """A CSV label map's classes, by its header: `id,name` or `name,id`."""
    rows = [(number, row) for number, row in enumerate(csv.reader(text.splitlines()), 1) if any(c.strip() for c in row)]
    header = [c.strip().lower() for c in rows[0][1]] if rows else []
    if len(header) != 2 or not ({header[0], header[1]} & set(_ID_COLUMNS) and set(header) & set(_NAME_COLUMNS)):
        raise ValueError(
            f"label map {path}, line {rows[0][0] if rows else 1}: expected a header `id,name` (or `name,id`), "
            f"found {','.join(rows[0][1]) if rows else 'nothing'!r}"
        )
    id_column = 0 if header[0] in _ID_COLUMNS else 1
    pairs = []
    for number, row in rows[1:]:
        if len(row) != 2 or not row[id_column].strip().isdigit():
            raise ValueError(
                f"label map {path}, line {number}: expected {header[0]},{header[1]} with an integer id >= 0, "
                f"found {','.join(row)!r}"
            )
        pairs.append((number, row[1 - id_column].strip(), int(row[id_column])))
    return pairs


def _checked_pairs(pairs: Pairs, path: str) -> dict[str, int]:
    """{name: id} of a text or CSV label map; a name or id given twice is an error naming both lines."""
    name_line: dict[str, int] = {}
    id_line: dict[int, int] = {}
    for number, name, ident in pairs:
        if name in name_line:
            raise ValueError(f"label map {path}, line {number}: class {name!r} is on line {name_line[name]} already")
        if ident in id_line:
            raise ValueError(f"label map {path}, line {number}: id {ident} is on line {id_line[ident]} already")
        name_line[name], id_line[ident] = number, number
    return {name: ident for _, name, ident in pairs}


def save_label_map(
    label_map: Mapping[str, int], destination: PathLike, *, storage_options: StorageOptions = None
) -> None:
    """Write a label map as JSON ordered by id to `destination` (a path or a URL), atomically (temporary
    file + rename; one PUT to a URL)."""
    ordered = dict(sorted(label_map.items(), key=lambda kv: kv[1]))
    write_whole(destination, (json.dumps(ordered, indent=1, ensure_ascii=False) + "\n").encode(), storage_options)


def add_new_classes(label_map: dict[str, int], names: Iterable[str]) -> list[str]:
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
        check_label_map(label_map)
        if isinstance(label_map, Mapping)
        else load_label_map(label_map, storage_options=storage_options)
        if label_map
        else {}
    )
    for name, ident in given.items():
        if labels.get(name, ident) != ident:
            raise ValueError(f"label map conflict for class {name!r}: existing id {labels[name]}, given {ident}")
        labels[name] = ident
    check_label_map(labels, "the label map given and the existing one together")
    return labels


def missing_classes(label_map: Mapping[str, int], names: Iterable[str], where: str) -> None:
    """A ValueError naming the classes of `names` that a given label map lacks (none: nothing)."""
    missing = sorted(set(names) - set(label_map))
    if missing:
        shown = ", ".join(repr(n) for n in missing[:10]) + (", ..." if len(missing) > 10 else "")
        raise ValueError(
            f"{len(missing)} of the classes to pack {'is' if len(missing) == 1 else 'are'} not in the label map "
            f"{where}: {shown}; extend_label_map=True (--extend-label-map) gives new classes the next free ids"
        )


def _existing_label_map(path: str, storage_options: StorageOptions) -> dict[str, int] | None:
    """The label map at `path`, or None where there is none."""
    try:
        return load_label_map(path, storage_options=storage_options)
    except FileNotFoundError:
        return None


def label_map_beside(shards: Sequence[PathLike], storage_options: StorageOptions = None) -> dict[str, int]:
    """The label map next to a shard 'x/name-00000-of-00004.tfrecord' ('x/name.labels.json'), or {}."""
    for shard in shards:
        stem = re.sub(rf"(-\d{{5}}-of-\d{{5}})?(\.tfrecords?|\.tfrec)?{SUFFIX_PATTERN}?$", "", os.fspath(shard))
        found = _existing_label_map(label_map_path(stem), storage_options)
        if found is not None:
            return found
    return {}
