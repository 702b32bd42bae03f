"""Protobuf message classes for Example / SequenceExample and their parts, and TensorProto.

Strategy: no generated _pb2 modules (they pin a protobuf runtime range).
_example/descriptor.py holds the serialized FileDescriptorProtos that protoc built
from proto/tfrecord_lite/*.proto (package `tfrecord_lite`, so they coexist
with TensorFlow's `tensorflow.*` messages in one process). At import we add
them to the default descriptor pool and build the classes with whichever
factory API the installed runtime has: `message_factory.GetMessageClass`
(protobuf >= 4.22) or `MessageFactory(pool).GetPrototype` (4.21, removed in
later runtimes). Works on every protobuf from 4.21 to 7.x.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FileDescriptor

from tfrecord_lite._example.descriptor import FILES

__all__ = [
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "Int64Words",
    "SequenceExample",
    "TensorProto",
    "TensorShapeProto",
    "is_repeated",
]

_POOL = descriptor_pool.Default()


def _add_file(serialized: bytes) -> FileDescriptor:
    """Add one serialized FileDescriptorProto to the default pool, or reuse an identical copy."""
    wanted = descriptor_pb2.FileDescriptorProto.FromString(serialized)
    try:
        existing = _POOL.FindFileByName(wanted.name)
    except KeyError:
        _POOL.AddSerializedFile(serialized)
        return _POOL.FindFileByName(wanted.name)
    found = descriptor_pb2.FileDescriptorProto()
    existing.CopyToProto(found)
    if found != wanted:
        raise ImportError(
            f"the protobuf descriptor pool already holds a different {wanted.name!r}; "
            "another copy of tfrecord_lite with other message definitions is loaded"
        )
    return existing


def _class_factory() -> Callable[[Descriptor], Any]:
    get_message_class: Callable[[Descriptor], Any] | None = getattr(message_factory, "GetMessageClass", None)
    if get_message_class is not None:
        return get_message_class
    get_prototype: Callable[[Descriptor], Any] = message_factory.MessageFactory(_POOL).GetPrototype
    return get_prototype


def _build() -> dict[str, Any]:
    make = _class_factory()
    classes: dict[str, Any] = {}
    for serialized in FILES:
        file = _add_file(serialized)
        for name, descriptor in file.message_types_by_name.items():
            cls = make(descriptor)
            # Let pickle find the classes here (DataLoader workers, multiprocessing).
            cls.__module__ = __name__
            classes[name] = cls
    return classes


_CLASSES = _build()

BytesList = _CLASSES["BytesList"]
FloatList = _CLASSES["FloatList"]
Int64List = _CLASSES["Int64List"]
Int64Words = _CLASSES["Int64Words"]  # internal: see varints.packed_varints
Feature = _CLASSES["Feature"]
Features = _CLASSES["Features"]
FeatureList = _CLASSES["FeatureList"]
FeatureLists = _CLASSES["FeatureLists"]
Example = _CLASSES["Example"]
SequenceExample = _CLASSES["SequenceExample"]
TensorProto = _CLASSES["TensorProto"]
TensorShapeProto = _CLASSES["TensorShapeProto"]


def is_repeated(field: Any) -> bool:
    """Whether a FieldDescriptor of any message is repeated, on every runtime: protobuf 7 has only
    `is_repeated`, protobuf before 5.28 only `label`."""
    found = getattr(field, "is_repeated", None)
    return bool(found) if found is not None else bool(field.label == field.LABEL_REPEATED)
