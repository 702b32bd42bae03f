# tfrecord_lite: TFRecord files and tf.train.Example protos without TensorFlow.
# The public surface is re-exported here from private modules; everything not
# listed in __all__ is internal. Optional dependencies (torch, Pillow, fsspec,
# tqdm) are imported only by the edge modules that need them.
from ._codec import decode_example, decode_sequence_example, encode_example, encode_sequence_example
from ._columnar import Ragged, decode_examples, iter_example_batches
from ._errors import CorruptRecordError, DecodeError, FeatureError, TFRecordError, TruncatedRecordError
from ._index import StaleIndexError, write_index, write_text_index
from ._indexed import TFRecordFile
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
from ._reader import iter_records
from ._sharded import ShardedRecords, ShardedWriter
from ._spec import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from ._writer import TFRecordWriter

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
    "Int64List",
    "Ragged",
    "SequenceExample",
    "ShardedRecords",
    "ShardedWriter",
    "StaleIndexError",
    "TFRecordError",
    "TFRecordFile",
    "TFRecordWriter",
    "TruncatedRecordError",
    "VarLenFeature",
    "decode_example",
    "decode_examples",
    "decode_sequence_example",
    "encode_example",
    "encode_sequence_example",
    "iter_example_batches",
    "iter_records",
    "write_index",
    "write_text_index",
]
