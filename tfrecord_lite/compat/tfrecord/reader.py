"""The `tfrecord` package's `reader`: records and decoded Examples / SequenceExamples from files.

Strategy: the records come from the library's readers, never from a hand-rolled loop: the whole
file streams through `iter_records` (memory flat, both CRCs checked, GZIP or ZLIB recognised
from the content whatever `compression_type` says); a shard or a random start reads through a
`TFRecordFile` with its index in memory (one scan; GZIP entered at its seek points), which
checks the CRCs of every record it returns. A shard `(i, n)` is the package's contiguous range
of records, `[count * i // n, count * (i + 1) // n)`, counted in the file itself: with or without
an index file, every record goes to exactly one shard. With an index file and no shard, the
package's random start is kept, drawn from numpy's global state as the package draws it.

Values are the package's: an int64_list is a 1-D int64 array, a float_list a 1-D float32 array,
a bytes_list of one value that `bytes`, of any other number of values `np.array(values, bytes)`
(numpy's fixed-width bytes, which drop trailing NUL bytes). The records are decoded by the
library's decoder (`decode_example(record)` with no spec keeps each feature's kind), and
`process_feature` applies the same rule to a `Feature` message, through one function.

Errors about a record's values keep the package's types and messages (code that matches them
still does); the loaders add a note naming the file, the record's number in it and its byte
offset, which the traceback shows (Python >= 3.11), found only when an error is raised.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

import tfrecord_lite as tfr
from tfrecord_lite._records.reader import RecordIterator
from tfrecord_lite.compat.tfrecord import iterator_utils

__all__ = [
    "example_loader",
    "extract_feature_dict",
    "multi_tfrecord_loader",
    "process_feature",
    "sequence_loader",
    "tfrecord_iterator",
    "tfrecord_loader",
]

Description = Sequence[str] | Mapping[str, str | None] | None
Features = dict[str, Any]
SequenceItem = tuple[Features, dict[str, list[Any]]]
T = TypeVar("T")

TYPENAME_MAPPING = {"byte": "bytes_list", "float": "float_list", "int": "int64_list"}
_COMPRESSIONS = (None, "gzip")


class DescriptionError(KeyError):
    """A description names a type the package does not know (a KeyError, as in the package)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _check_compression(compression_type: str | None) -> None:
    if compression_type not in _COMPRESSIONS:
        raise ValueError(
            f"compression_type should be either 'gzip' or None, found {compression_type!r} "
            "(GZIP and ZLIB files are recognised from their content either way)"
        )


def _check_shard(shard: tuple[int, int]) -> tuple[int, int]:
    index, count = shard
    if not 0 <= index < count:
        raise ValueError(f"shard must be (index, count) with 0 <= index < count, found {shard!r}")
    return index, count


def _check_index(index_path: str) -> None:
    """The package's text index must exist where one is named (its records are counted in the file)."""
    if not os.path.exists(index_path):
        raise FileNotFoundError(
            f"index file {index_path!r} not found: create it with "
            "tfrecord.tools.tfrecord2idx.create_index(data_path, index_path), or pass index_path=None "
            "(records are shared out among workers without it)"
        )


Place = Callable[[], tuple[int, int | None]]
"""The record just read: its number in its file and its byte offset (None: not known)."""


def _indexed_records(data_path: str, shard: tuple[int, int] | None) -> Iterator[tuple[bytes, Place]]:
    """The records of `shard` (its contiguous range), or without one every record from a random one
    on, wrapping round; through an index of the file held in memory. Each with its Place."""
    with tfr.TFRecordFile(data_path, index=False) as records:
        total = len(records)
        order: Iterable[int]
        if shard is None:
            first = int(np.random.choice(total)) if total else 0  # the package's one draw, over its index
            order = [*range(first, total), *range(first)]
        else:
            index, count = shard
            order = range(total * index // count, total * (index + 1) // count)
        for i in order:
            yield records[i], functools.partial(_indexed_place, records, i)


def _indexed_place(records: tfr.TFRecordFile, i: int) -> tuple[int, int | None]:
    return i, records.offset(i)


def _streamed_records(path: str) -> Iterator[tuple[bytes, Place]]:
    """The records of the file at `path`, streamed, each with its Place."""
    records = tfr.iter_records(path)
    records.placements.keep(1)
    for i, record in enumerate(records):
        yield record, functools.partial(_streamed_place, records, i)


def _streamed_place(records: RecordIterator, i: int) -> tuple[int, int | None]:
    found = records.placements.where(i)
    return (i, None) if found is None else (found[1], found[2])


def _placed_records(
    data_path: str, index_path: str | None, shard: tuple[int, int] | None, compression_type: str | None
) -> Iterator[tuple[bytes, Place]]:
    """tfrecord_iterator's records, each with its Place."""
    _check_compression(compression_type)
    path = os.fspath(data_path)
    if shard is not None:
        return _indexed_records(path, _check_shard(shard))
    if index_path is not None:
        _check_index(os.fspath(index_path))
        return _indexed_records(path, None)
    return _streamed_records(path)


def _placed_values(
    data_path: str,
    index_path: str | None,
    shard: tuple[int, int] | None,
    compression_type: str | None,
    values: Callable[[bytes], T],
) -> Iterator[T]:
    """values(record) for each record; an error gets a note naming the file, the record and its offset."""
    for record, place in _placed_records(data_path, index_path, shard, compression_type):
        try:
            out = values(record)
        except (TypeError, KeyError, ValueError) as err:
            if hasattr(err, "add_note"):  # Python >= 3.11
                number, offset = place()
                at = f", at byte offset {offset}" if offset is not None else ""
                err.add_note(f"(in {os.fspath(data_path)}, record {number}{at})")
            raise
        yield out


def tfrecord_iterator(
    data_path: str,
    index_path: str | None = None,
    shard: tuple[int, int] | None = None,
    compression_type: str | None = None,
) -> Iterator[memoryview]:
    """The records of a TFRecord file as memoryviews (each its own: keeping them is safe).

    `shard=(index, count)`: this shard's contiguous range of records, each record in exactly one
    shard (with or without `index_path`). `index_path` without `shard`: every record, starting at
    a random one and wrapping round, as the package does. `compression_type`: None or "gzip"."""
    for record, _ in _placed_records(data_path, index_path, shard, compression_type):
        yield memoryview(record)


def package_value(kind: str, values: Any) -> Any:
    """A feature's values as the package gives them, by the kind of list that holds them."""
    if kind == "bytes_list":
        return values[0] if len(values) == 1 else np.array(values, dtype=bytes)
    if kind == "float_list":
        return np.array(values, dtype=np.float32)
    return np.array(values, dtype=np.int64)


def _kind_of(key: str, value: Any) -> str:
    """The list kind of a value the library's decoder gave without a spec."""
    if value is None:
        raise ValueError(f"feature {key!r} holds no value list (a Feature without bytes_list, float_list, int64_list)")
    if isinstance(value, list):
        return "bytes_list"
    return "float_list" if value.dtype == np.float32 else "int64_list"


def _check_type(key: str, typename: str | None, inferred: str, typename_mapping: Mapping[str, str]) -> None:
    if typename is None:
        return
    if typename not in typename_mapping:
        known = ", ".join(repr(k) for k in typename_mapping)
        raise DescriptionError(f"unknown type {typename!r} for `{key}`: use one of {known}, or None")
    if typename_mapping[typename] != inferred:
        reverse = {v: k for k, v in typename_mapping.items()}
        raise TypeError(f"Incompatible type '{typename}' for `{key}` (should be '{reverse[inferred]}').")


def process_feature(feature: Any, typename: str | None, typename_mapping: Mapping[str, str], key: str) -> Any:
    """One `Feature` message's value as the package gives it, its kind checked against `typename`."""
    fields = feature.ListFields()
    if not fields:
        return _package_feature(key, None, typename, typename_mapping)
    descriptor, values = fields[0]
    inferred = descriptor.name
    _check_type(key, typename, inferred, typename_mapping)
    return package_value(inferred, values.value)


def _package_feature(key: str, value: Any, typename: str | None, typename_mapping: Mapping[str, str]) -> Any:
    """A value of the library's decoder (no spec) as the package gives it."""
    inferred = _kind_of(key, value)
    _check_type(key, typename, inferred, typename_mapping)
    return package_value(inferred, value)


def _as_description(description: Description, all_keys: Iterable[str]) -> Mapping[str, str | None]:
    if description is None or len(description) == 0:
        return dict.fromkeys(all_keys, None)
    if isinstance(description, Mapping):
        return description
    if isinstance(description, str):
        raise TypeError(f"a description is a list of keys or a dict {{key: type}}, found the str {description!r}")
    return dict.fromkeys(description, None)


def _select(values: Mapping[str, Any], description: Description, convert: Any) -> Features:
    """The described keys of decoded `values`, each converted by `convert(key, value, typename)`."""
    out = {}
    for key, typename in _as_description(description, values).items():
        if key not in values:
            raise KeyError(f"Key {key} doesn't exist (select from {list(values)})!")
        out[key] = convert(key, values[key], typename)
    return out


def _example_values(values: Mapping[str, Any], description: Description) -> Features:
    def convert(key: str, value: Any, typename: str | None) -> Any:
        return _package_feature(key, value, typename, TYPENAME_MAPPING)

    return _select(values, description, convert)


def _sequence_values(lists: Mapping[str, list[Any]], description: Description) -> dict[str, list[Any]]:
    def convert(key: str, steps: list[Any], typename: str | None) -> list[Any]:
        return [_package_feature(key, step, typename, TYPENAME_MAPPING) for step in steps]

    return _select(lists, description, convert)


def extract_feature_dict(features: Any, description: Description, typename_mapping: Mapping[str, str]) -> Any:
    """The described features of a `Features` message (a dict of values) or of a `FeatureLists`
    message (a dict of lists of values, one per step), as the package gives them."""
    if isinstance(features, tfr.FeatureLists):
        lists = features.feature_list

        def steps(key: str, value: Any, typename: str | None) -> list[Any]:
            return [process_feature(f, typename, typename_mapping, key) for f in value.feature]

        return _select(lists, description, steps)
    if isinstance(features, tfr.Features):

        def one(key: str, value: Any, typename: str | None) -> Any:
            return process_feature(value, typename, typename_mapping, key)

        return _select(features.feature, description, one)
    raise TypeError(
        f"Incompatible type: features should be either of type example_pb2.Features or "
        f"example_pb2.FeatureLists and not {type(features)}"
    )


def example_loader(
    data_path: str,
    index_path: str | None,
    description: Description = None,
    shard: tuple[int, int] | None = None,
    compression_type: str | None = None,
) -> Iterator[Features]:
    """The Examples of a file as dicts of the package's values (see tfrecord_iterator for the rest)."""

    def values(record: bytes) -> Features:
        return _example_values(tfr.decode_example(record), description)

    return _placed_values(data_path, index_path, shard, compression_type, values)


def sequence_loader(
    data_path: str,
    index_path: str | None,
    context_description: Description = None,
    features_description: Description = None,
    shard: tuple[int, int] | None = None,
    compression_type: str | None = None,
) -> Iterator[SequenceItem]:
    """The SequenceExamples of a file as (context, feature lists) pairs of the package's values."""

    def values(record: bytes) -> SequenceItem:
        context, lists = tfr.decode_sequence_example(record)
        return _example_values(context, context_description), _sequence_values(lists, features_description)

    return _placed_values(data_path, index_path, shard, compression_type, values)


def tfrecord_loader(
    data_path: str,
    index_path: str | None,
    description: Description = None,
    shard: tuple[int, int] | None = None,
    sequence_description: Description = None,
    compression_type: str | None = None,
) -> Iterator[Any]:
    """example_loader (dicts), or sequence_loader ((context, feature lists) pairs) when
    `sequence_description` is given, even empty."""
    if sequence_description is not None:
        return sequence_loader(data_path, index_path, description, sequence_description, shard, compression_type)
    return example_loader(data_path, index_path, description, shard, compression_type)


def multi_tfrecord_loader(
    data_pattern: str,
    index_pattern: str | None,
    splits: Mapping[str, float],
    description: Description = None,
    sequence_description: Description = None,
    compression_type: str | None = None,
    infinite: bool = True,
    shard: tuple[int, int] | None = None,
) -> Iterator[Any]:
    """Items of several files (`data_pattern.format(split)` for each split) drawn at random with the
    splits' weights; `infinite=False` ends when every file is exhausted."""
    loaders = [
        functools.partial(
            tfrecord_loader,
            data_path=data_pattern.format(split),
            index_path=index_pattern.format(split) if index_pattern is not None else None,
            description=description,
            sequence_description=sequence_description,
            compression_type=compression_type,
            shard=shard,
        )
        for split in splits
    ]
    return iterator_utils.sample_iterators(loaders, list(splits.values()), infinite=infinite)
