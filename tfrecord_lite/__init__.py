# tfrecord_lite: TFRecord files and tf.train.Example protos without TensorFlow.
# The public surface is re-exported here from private modules; everything not
# listed in __all__ is internal. Optional dependencies (torch, Pillow, fsspec,
# tqdm, pyarrow) are imported only by the edge modules that need them.
#
# The names are loaded lazily (PEP 562): `import tfrecord_lite` costs a few
# milliseconds, and numpy / protobuf are imported when a name that needs them is
# first used. Command-line help and freshly spawned DataLoader workers start fast.
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import (
    CorruptRecordError,
    DecodeError,
    FeatureError,
    NoInputsError,
    NotTFRecordError,
    TFRecordError,
    TruncatedRecordError,
)

if TYPE_CHECKING:
    from ._codec import decode_example, decode_sequence_example, encode_example, encode_sequence_example
    from ._columnar import Ragged, decode_examples
    from ._count import count_records
    from ._example_batches import iter_example_batches
    from ._proto import (
        BytesList,
        Example,
        Feature,
        FeatureList,
        FeatureLists,
        Features,
        FloatList,
        Int64List,
        SequenceExample,
    )
    from ._publish import OutputLockedError
    from ._random_access import TFRecordFile
    from ._raw import decode_raw
    from ._reader import iter_records
    from ._salvage import SalvageReport, salvage
    from ._schema import infer_features
    from ._sharded import ShardedRecords, ShardedWriter
    from ._sidecar import IndexFallbackWarning, StaleIndexError, write_index, write_text_index
    from ._sources import resolve_inputs
    from ._spec import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
    from ._writer import TFRecordWriter

_LAZY = {
    "_codec": ["decode_example", "decode_sequence_example", "encode_example", "encode_sequence_example"],
    "_columnar": ["Ragged", "decode_examples"],
    "_example_batches": ["iter_example_batches"],
    "_count": ["count_records"],
    "_sources": ["resolve_inputs"],
    "_sidecar": ["IndexFallbackWarning", "StaleIndexError", "write_index", "write_text_index"],
    "_random_access": ["TFRecordFile"],
    "_proto": [
        "BytesList",
        "Example",
        "Feature",
        "FeatureList",
        "FeatureLists",
        "Features",
        "FloatList",
        "Int64List",
        "SequenceExample",
    ],
    "_publish": ["OutputLockedError"],
    "_raw": ["decode_raw"],
    "_reader": ["iter_records"],
    "_salvage": ["SalvageReport", "salvage"],
    "_schema": ["infer_features"],
    "_sharded": ["ShardedRecords", "ShardedWriter"],
    "_spec": ["FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature"],
    "_writer": ["TFRecordWriter"],
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
    "DecodeError",
    "Example",
    "Feature",
    "FeatureError",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "FloatList",
    "IndexFallbackWarning",
    "Int64List",
    "NoInputsError",
    "NotTFRecordError",
    "OutputLockedError",
    "Ragged",
    "SalvageReport",
    "SequenceExample",
    "ShardedRecords",
    "ShardedWriter",
    "StaleIndexError",
    "TFRecordError",
    "TFRecordFile",
    "TFRecordWriter",
    "TruncatedRecordError",
    "VarLenFeature",
    "count_records",
    "decode_example",
    "decode_examples",
    "decode_raw",
    "decode_sequence_example",
    "encode_example",
    "encode_sequence_example",
    "infer_features",
    "iter_example_batches",
    "iter_records",
    "resolve_inputs",
    "salvage",
    "write_index",
    "write_text_index",
]
