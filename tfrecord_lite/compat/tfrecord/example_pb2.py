"""The `tfrecord` package's `example_pb2`: the tf.train message classes.

Strategy: the package ships its own generated copy of TensorFlow's example.proto; this module
re-exports the library's classes of the same messages (`tfrecord_lite.Example`, ...), which
read and write the same bytes, so one protobuf registry holds them once.
"""

from __future__ import annotations

from tfrecord_lite import (
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

__all__ = [
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
]
