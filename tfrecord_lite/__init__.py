# tfrecord_lite: TFRecord files and tf.train.Example protos without TensorFlow.
# The public surface is re-exported here from private modules; everything not
# listed in __all__ is internal. Optional dependencies (torch, Pillow, fsspec,
# tqdm) are imported only by the edge modules that need them.
from ._errors import CorruptRecordError, DecodeError, FeatureError, TFRecordError, TruncatedRecordError
from ._spec import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from ._codec import decode_example, decode_sequence_example, encode_example, encode_sequence_example
from ._columnar import Ragged, decode_examples, iter_example_batches
from ._reader import iter_records
from ._writer import TFRecordWriter
from ._index import StaleIndexError, write_index, write_text_index
from ._indexed import TFRecordFile
from ._sharded import ShardedRecords, ShardedWriter
from ._proto import BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List, SequenceExample

__version__ = "0.1.0"

__all__ = [
    "TFRecordWriter",
    "iter_records",
    "TFRecordFile",
    "ShardedRecords",
    "ShardedWriter",
    "write_index",
    "write_text_index",
    "StaleIndexError",
    "encode_example",
    "decode_example",
    "decode_examples",
    "iter_example_batches",
    "Ragged",
    "encode_sequence_example",
    "decode_sequence_example",
    "FixedLenFeature",
    "VarLenFeature",
    "FixedLenSequenceFeature",
    "TFRecordError",
    "CorruptRecordError",
    "TruncatedRecordError",
    "DecodeError",
    "FeatureError",
    "Example",
    "SequenceExample",
    "Features",
    "Feature",
    "BytesList",
    "FloatList",
    "Int64List",
    "FeatureList",
    "FeatureLists",
]
