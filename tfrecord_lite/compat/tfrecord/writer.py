"""The `tfrecord` package's `writer`: `TFRecordWriter.write(datum, sequence_datum=None)` with
`{key: (value, kind)}` dicts, kind "byte", "float" or "int".

Strategy: the record is built as the package builds it, message by message with the tf.train
classes and serialized by the protobuf runtime (its map order included), so the bytes are the
package's byte for byte; the file is the library's `TFRecordWriter` (framing and CRCs, the file
lock, and GZIP when `compression_type="gzip"`, which the package's writer lacks). A value that
the runtime refuses for its kind becomes an error naming the feature and the kind.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

import numpy as np

import tfrecord_lite as tfr
from tfrecord_lite._wire.crc import masked_crc

__all__ = ["TFRecordWriter"]

Datum = Mapping[str, tuple[Any, str]]
_LISTS = {
    "byte": ("bytes_list", tfr.BytesList),
    "float": ("float_list", tfr.FloatList),
    "int": ("int64_list", tfr.Int64List),
}


class KindError(KeyError):
    """A (value, kind) pair whose kind is not "byte", "float" or "int" (a KeyError, as in the package)."""

    def __str__(self) -> str:
        return str(self.args[0])


def _feature(key: str, value: Any, kind: Any) -> Any:
    """One Feature message of `value` as a list of `kind`, as the package builds it."""
    if kind not in _LISTS:
        pair = f"({_short(value)}, {kind!r})"
        raise KindError(f"feature {key!r}: unknown kind {kind!r} in {pair}: use 'byte', 'float' or 'int'")
    field, list_class = _LISTS[kind]
    values = value if isinstance(value, (list, tuple, np.ndarray)) else [value]
    try:
        return tfr.Feature(**{field: list_class(value=values)})
    except (TypeError, ValueError) as err:
        raise type(err)(f"feature {key!r}: cannot write {_short(value)} as {kind!r}: {err}") from None


def _short(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _pair(key: str, entry: Any) -> tuple[Any, Any]:
    if not (isinstance(entry, tuple) and len(entry) == 2):
        raise TypeError(
            f"feature {key!r}: expected a (value, kind) pair such as ({_short(entry)}, 'int'), found {_short(entry)}"
        )
    return entry


def _features(datum: Datum) -> Any:
    return tfr.Features(feature={key: _feature(key, *_pair(key, entry)) for key, entry in datum.items()})


def _feature_lists(datum: Mapping[str, tuple[Sequence[Any], str]]) -> Any:
    lists = {}
    for key, entry in datum.items():
        steps, kind = _pair(key, entry)
        lists[key] = tfr.FeatureList(feature=[_feature(key, step, kind) for step in steps])
    return tfr.FeatureLists(feature_list=lists)


class TFRecordWriter:
    """Writes Examples (or SequenceExamples) given as `{key: (value, kind)}` to a TFRecord file.

    `compression_type`: None or "gzip" (an addition: the package writes plain files only).
    Also a context manager."""

    def __init__(self, data_path: str, compression_type: str | None = None) -> None:
        self.file = tfr.TFRecordWriter(data_path, compression=compression_type, buffered=True)

    def close(self) -> None:
        """Close the tfrecord file."""
        self.file.close()

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def write(self, datum: Datum, sequence_datum: Mapping[str, tuple[Sequence[Any], str]] | None = None) -> None:
        """Write one Example of `datum`, or with `sequence_datum` one SequenceExample (`datum` its
        context, `sequence_datum` its feature lists: `{key: (steps, kind)}`)."""
        if sequence_datum is None:
            record = TFRecordWriter.serialize_tf_example(datum)
        else:
            record = TFRecordWriter.serialize_tf_sequence_example(datum, sequence_datum)
        self.file.write(record)

    @staticmethod
    def masked_crc(data: bytes) -> bytes:
        """The masked CRC32C of `data`, as the 4 bytes the file holds."""
        return struct.pack("<I", masked_crc(data))

    @staticmethod
    def serialize_tf_example(datum: Datum) -> bytes:
        """The serialized Example of `{key: (value, kind)}`."""
        return bytes(tfr.Example(features=_features(datum)).SerializeToString())

    @staticmethod
    def serialize_tf_sequence_example(
        context_datum: Datum, features_datum: Mapping[str, tuple[Sequence[Any], str]]
    ) -> bytes:
        """The serialized SequenceExample of a context and feature lists, both `{key: (value, kind)}`."""
        message = tfr.SequenceExample(context=_features(context_datum), feature_lists=_feature_lists(features_datum))
        return bytes(message.SerializeToString())
