# Reading a TFRecord file until its first error, with tfrecord_lite and with TensorFlow: the tests
# of damaged files compare what each yields before the damage, and which error ends it.
from __future__ import annotations

import itertools
from pathlib import Path

import tfrecord_lite as tfr


def read_until_error(path: Path) -> tuple[list[bytes], Exception | None]:
    """(records tfr.iter_records yields, the TFRecordError that ends them or None)."""
    got: list[bytes] = []
    try:
        for record in tfr.iter_records(path):
            got.append(record)
    except tfr.TFRecordError as err:
        return got, err
    return got, None


def tf_read_until_error(
    path: Path, compression: str = "", limit: int | None = None
) -> tuple[list[bytes], Exception | None]:
    """(records tf.data.TFRecordDataset yields, at most `limit`, the tf.errors.OpError that ends them
    or None). `compression` is TensorFlow's: "", "GZIP" or "ZLIB"."""
    import tensorflow as tf

    got: list[bytes] = []
    try:
        for record in itertools.islice(tf.data.TFRecordDataset(str(path), compression_type=compression), limit):
            got.append(record.numpy())
    except tf.errors.OpError as err:
        return got, err
    return got, None


def tf_read(path: Path, compression: str = "") -> list[bytes]:
    """Every record tf.data.TFRecordDataset yields (its error, if one ends them, is raised)."""
    records, err = tf_read_until_error(path, compression)
    if err is not None:
        raise err
    return records
