"""TensorFlow Datasets folders read without TensorFlow or tensorflow-datasets: `info` and `load`
(`import tfrecord_lite` never imports this module).

A prepared TFDS folder (`DATA_DIR/NAME/CONFIG/VERSION`, holding dataset_info.json, features.json
and the shards), local or at any URL the readers take, is read as TFDS reads it: split strings
resolved from the shard lengths, the shards in TFDS's order, each example decoded by the feature
connectors of features.json into what `tfds.as_numpy(builder.as_dataset(split=...))` hands back.
The knowledge of TFDS lives in `tfrecord_lite/_tfds/`; this module is the public names.
"""

from __future__ import annotations

import os
from typing import Any

from tfrecord_lite._errors import DatasetInfoError
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions
from tfrecord_lite._tfds.features import Feature
from tfrecord_lite._tfds.info_files import DatasetInfo, SplitInfo, read_info
from tfrecord_lite._tfds.reading import ReaderOptions, Split
from tfrecord_lite._tfds.tables import split_table

__all__ = [
    "DatasetInfo",
    "DatasetInfoError",
    "Feature",
    "Split",
    "SplitInfo",
    "info",
    "load",
    "to_arrow",
    "to_hf_dataset",
]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


def info(source: str | os.PathLike[str], *, storage_options: StorageOptions = None) -> DatasetInfo:
    """What a TFDS folder holds: name, version, description, config, file format, the feature
    tree (`str(info)` prints it), and its splits with their example counts and shard files.

    `source` is the folder holding dataset_info.json (a path, or a URL such as
    `gs://bucket/data/mnist/3.0.1`); a remote folder costs two reads, the two JSON files.
    Raises DatasetInfoError when they are not what TFDS writes, FileNotFoundError when missing.
    """
    return read_info(os.fspath(source), storage_options)


def load(
    source: str | os.PathLike[str],
    *,
    split: str = "train",
    decode: bool = True,
    shuffle_files: bool = False,
    seed: int | None = None,
    num_threads: int = 1,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Split:
    """The examples of `split` of the TFDS folder `source`, as a Split: `len`, `[i]`, iteration.

    `split` takes TFDS's forms: "train", "train[:10%]", "train[100:200]", "train+test",
    "test[-5%:]", "train[1shard]", "all". Example i is the one tfds.as_numpy hands back i-th
    (the shards interleaved as TFDS interleaves them). `decode=False` keeps images, videos and
    lazily encoded audio as their encoded bytes. `shuffle_files=True` reads the shards in an order
    drawn from `seed`. `num_threads=N` decodes N examples at once on threads while iterating (the
    order stays). The reader options are those of every reader (docs/conventions.md);
    an ArrayRecord folder (`file_format: array_record`) needs the arrayrecord extra.
    """
    options = ReaderOptions(compression, verify, on_error, max_skipped, storage_options, max_record_bytes)
    dataset = read_info(os.fspath(source), storage_options)
    return Split(
        dataset, split, decode=decode, shuffle_files=shuffle_files, seed=seed, num_threads=num_threads, options=options
    )


def to_arrow(
    source: str | os.PathLike[str],
    *,
    split: str = "train",
    decode: bool = False,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Any:
    """The examples of `split` as a pyarrow Table, one row each in load()'s order: nested
    FeaturesDicts as struct columns, sequences as lists, arrays as (nested) lists, images as their
    encoded bytes unless `decode=True`, a Dataset feature (RLDS steps) as a list of step structs."""
    examples = load(
        source,
        split=split,
        decode=decode,
        compression=compression,
        verify=verify,
        on_error=on_error,
        max_skipped=max_skipped,
        storage_options=storage_options,
        max_record_bytes=max_record_bytes,
    )
    return split_table(examples)


def to_hf_dataset(
    source: str | os.PathLike[str],
    *,
    split: str = "train",
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> Any:
    """The examples of `split` as a Hugging Face `datasets.Dataset`, with an `Image` feature where
    TFDS has an Image and a `ClassLabel` (with its names) where TFDS has one."""
    from tfrecord_lite._tfds.tables import hf_dataset

    examples = load(
        source,
        split=split,
        decode=False,
        compression=compression,
        verify=verify,
        on_error=on_error,
        max_skipped=max_skipped,
        storage_options=storage_options,
        max_record_bytes=max_record_bytes,
    )
    return hf_dataset(examples)
