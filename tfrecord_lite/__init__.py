"""tfrecord_lite: TFRecord files and tf.train.Example protos without TensorFlow.
The public surface is re-exported here from private modules; everything not
listed in __all__ is internal. Optional dependencies (torch, Pillow, fsspec,
tqdm, pyarrow) are imported only by the edge modules that need them.

The names are loaded lazily (PEP 562): `import tfrecord_lite` costs a few
milliseconds, and numpy / protobuf are imported when a name that needs them is
first used. Command-line help and freshly spawned DataLoader workers start fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tfrecord_lite._errors import (
    CorruptRecordError,
    DataLoaderWarning,
    DecodeError,
    FeatureError,
    IndexFallbackWarning,
    NoInputsError,
    NotTFRecordError,
    RecordTooLargeError,
    StaleIndexError,
    TFRecordError,
    TruncatedRecordError,
)

if TYPE_CHECKING:
    from tfrecord_lite._batches.columnar import decode_examples
    from tfrecord_lite._batches.sequences import decode_sequence_examples
    from tfrecord_lite._datasets.messages import decode_elwc, decode_message, load_message_class
    from tfrecord_lite._datasets.schema import infer_features, infer_sequence_features
    from tfrecord_lite._datasets.sharded import ShardedRecords, ShardedWriter
    from tfrecord_lite._datasets.show import show
    from tfrecord_lite._example.decode import decode_example, decode_sequence_example
    from tfrecord_lite._example.encode import encode_example, encode_sequence_example
    from tfrecord_lite._example.proto import (
        BytesList,
        Example,
        Feature,
        FeatureList,
        FeatureLists,
        Features,
        FloatList,
        Int64List,
        SequenceExample,
        TensorProto,
    )
    from tfrecord_lite._example.ragged import Ragged
    from tfrecord_lite._example.ragged_spec import RaggedFeature
    from tfrecord_lite._example.raw import RawFeature, decode_raw
    from tfrecord_lite._example.sparse import Sparse
    from tfrecord_lite._example.spec import FixedLenFeature, FixedLenSequenceFeature, SparseFeature, VarLenFeature
    from tfrecord_lite._index.write import write_index, write_text_index
    from tfrecord_lite._records.count import count_records
    from tfrecord_lite._records.example_batches import iter_example_batches, iter_sequence_example_batches
    from tfrecord_lite._records.random_access import TFRecordFile
    from tfrecord_lite._records.reader import iter_records
    from tfrecord_lite._records.salvage import SalvageReport, salvage
    from tfrecord_lite._records.verify import VerifyReport, verify_file
    from tfrecord_lite._records.views import RecordsView
    from tfrecord_lite._records.writer import TFRecordWriter
    from tfrecord_lite._stats.collect import statistics
    from tfrecord_lite._stats.results import DatasetStatistics, FeatureStatistics
    from tfrecord_lite._storage.journal import JournalError
    from tfrecord_lite._storage.publish import OutputLockedError
    from tfrecord_lite._storage.sources import resolve_inputs
    from tfrecord_lite._tensor.codec import parse_tensor, serialize_tensor

_LAZY = {
    "_example.decode": ["decode_example", "decode_sequence_example"],
    "_example.encode": ["encode_example", "encode_sequence_example"],
    "_batches.columnar": ["decode_examples"],
    "_example.ragged": ["Ragged"],
    "_example.ragged_spec": ["RaggedFeature"],
    "_batches.sequences": ["decode_sequence_examples"],
    "_records.example_batches": ["iter_example_batches", "iter_sequence_example_batches"],
    "_records.count": ["count_records"],
    "_storage.sources": ["resolve_inputs"],
    "_index.write": ["write_index", "write_text_index"],
    "_records.random_access": ["TFRecordFile"],
    "_example.proto": [
        "BytesList",
        "Example",
        "Feature",
        "FeatureList",
        "FeatureLists",
        "Features",
        "FloatList",
        "Int64List",
        "SequenceExample",
        "TensorProto",
    ],
    "_tensor.codec": ["parse_tensor", "serialize_tensor"],
    "_storage.journal": ["JournalError"],
    "_storage.publish": ["OutputLockedError"],
    "_example.raw": ["RawFeature", "decode_raw"],
    "_records.reader": ["iter_records"],
    "_records.salvage": ["SalvageReport", "salvage"],
    "_datasets.show": ["show"],
    "_records.views": ["RecordsView"],
    "_records.verify": ["VerifyReport", "verify_file"],
    "_datasets.schema": ["infer_features", "infer_sequence_features"],
    "_datasets.messages": ["decode_elwc", "decode_message", "load_message_class"],
    "_datasets.sharded": ["ShardedRecords", "ShardedWriter"],
    "_example.spec": ["FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "VarLenFeature"],
    "_example.sparse": ["Sparse"],
    "_records.writer": ["TFRecordWriter"],
    "_stats.collect": ["statistics"],
    "_stats.results": ["DatasetStatistics", "FeatureStatistics"],
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:  # the API, not importlib or the private submodules
    return sorted([*__all__, "__version__"])


__version__ = "0.1.0"

__all__ = [
    "BytesList",
    "CorruptRecordError",
    "DataLoaderWarning",
    "DatasetStatistics",
    "DecodeError",
    "Example",
    "Feature",
    "FeatureError",
    "FeatureList",
    "FeatureLists",
    "FeatureStatistics",
    "Features",
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "FloatList",
    "IndexFallbackWarning",
    "Int64List",
    "JournalError",
    "NoInputsError",
    "NotTFRecordError",
    "OutputLockedError",
    "Ragged",
    "RaggedFeature",
    "RawFeature",
    "RecordTooLargeError",
    "RecordsView",
    "SalvageReport",
    "SequenceExample",
    "ShardedRecords",
    "ShardedWriter",
    "Sparse",
    "SparseFeature",
    "StaleIndexError",
    "TFRecordError",
    "TFRecordFile",
    "TFRecordWriter",
    "TensorProto",
    "TruncatedRecordError",
    "VarLenFeature",
    "VerifyReport",
    "count_records",
    "decode_elwc",
    "decode_example",
    "decode_examples",
    "decode_message",
    "decode_raw",
    "decode_sequence_example",
    "decode_sequence_examples",
    "encode_example",
    "encode_sequence_example",
    "infer_features",
    "infer_sequence_features",
    "iter_example_batches",
    "iter_records",
    "iter_sequence_example_batches",
    "load_message_class",
    "parse_tensor",
    "resolve_inputs",
    "salvage",
    "serialize_tensor",
    "show",
    "statistics",
    "verify_file",
    "write_index",
    "write_text_index",
]
