"""Records of other types as dataset items: a user's protobuf message, and TF Ranking's
ExampleListWithContext.

Strategy: a message is parsed by the protobuf runtime (`FromString` of the class given) and made a
dict of Python values a DataLoader batches: every field of the message is there (proto3 scalars
at their defaults too, so all items have one set of keys), a number or a str or bytes as it is, a
repeated number field a numpy array of its type, a nested message a dict (None when unset), a
repeated message a list of dicts, a map a dict. The class travels to worker processes as its
descriptors (its .proto file and those it imports, serialized) and its full name, and is rebuilt
there in a fresh pool, so a class made from a descriptor set at run time (load_message_class)
pickles like a generated one.

An ExampleListWithContext item is its context's features and, under each example feature's key,
the values of every example stacked (one row per example, as a SequenceExample's feature list
is): what TF Ranking's parser hands a ranking model. Its fields are walked with the Example wire
reader (lengths checked), each Example decoded by the Example decoder with the spec given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

import numpy as np

from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.decode import decode_example
from tfrecord_lite._example.proto import is_repeated
from tfrecord_lite._example.wire import iter_fields

_LEN = 2  # the wire type of a length-delimited field

# numpy dtypes of the protobuf scalar types (FieldDescriptor.TYPE_*), for repeated fields
_DTYPES: dict[int, type[Any]] = {
    1: np.float64,
    2: np.float32,
    3: np.int64,
    4: np.uint64,
    5: np.int32,
    6: np.uint64,
    7: np.uint32,
}
_DTYPES.update({8: np.bool_, 13: np.uint32, 14: np.int32, 15: np.int32, 16: np.int64, 17: np.int32, 18: np.int64})


def is_message_class(value: Any) -> TypeGuard[type[Any]]:
    """Whether `value` is a protobuf message class (generated, or made from a descriptor set)."""
    return isinstance(value, type) and hasattr(value, "DESCRIPTOR") and hasattr(value, "FromString")


def _files_of(descriptor: Any) -> list[bytes]:
    """The serialized FileDescriptorProtos of a message's file and every file it imports,
    dependencies first."""
    from google.protobuf import descriptor_pb2

    ordered: list[bytes] = []
    seen: set[str] = set()

    def visit(file: Any) -> None:
        if file.name in seen:
            return
        seen.add(file.name)
        for dependency in file.dependencies:
            visit(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        ordered.append(proto.SerializeToString())

    visit(descriptor.file)
    return ordered


def descriptor_set_of(message: type[Any]) -> bytes:
    """The FileDescriptorSet (serialized) of a message class's .proto file and every file it
    imports, dependencies first: what `protoc --include_imports --descriptor_set_out` writes."""
    from google.protobuf import descriptor_pb2

    files = [descriptor_pb2.FileDescriptorProto.FromString(data) for data in _files_of(message.DESCRIPTOR)]
    return descriptor_pb2.FileDescriptorSet(file=files).SerializeToString()  # type: ignore[no-any-return]


def _rebuilt(files: list[bytes], name: str) -> MessageDecoder:
    """The decoder of message `name` whose files arrive serialized (in a worker process)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for data in files:
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(data))
    descriptor = pool.FindMessageTypeByName(name)
    if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
        return MessageDecoder(message_factory.GetMessageClass(descriptor))
    return MessageDecoder(message_factory.MessageFactory(pool).GetPrototype(descriptor))


class MessageDecoder:
    """Records of the protobuf message class `message` as dicts (see the module's docstring)."""

    def __init__(self, message: type[Any]) -> None:
        self.message = message
        self.name: str = message.DESCRIPTOR.full_name

    def __reduce__(self) -> tuple[Callable[..., MessageDecoder], tuple[list[bytes], str]]:
        return _rebuilt, (_files_of(self.message.DESCRIPTOR), self.name)

    def __repr__(self) -> str:
        return self.name

    def __call__(self, data: Any) -> dict[str, Any]:
        from google.protobuf.message import DecodeError as ProtoDecodeError

        buf = bytes(data)
        try:
            parsed = self.message.FromString(buf)
        except ProtoDecodeError as err:
            raise DecodeError(f"a record of {len(buf)} bytes is not a valid {self.name}: {err}") from None
        return message_dict(parsed)


def message_dict(message: Any) -> dict[str, Any]:
    """Every field of a parsed message as Python values (see the module's docstring)."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        out[field.name] = _field_value(field, value, message)
    return out


def _field_value(field: Any, value: Any, message: Any) -> Any:
    entry = field.message_type
    repeated = is_repeated(field)
    if entry is not None and entry.GetOptions().map_entry:
        inner = entry.fields_by_name["value"]
        return {k: message_dict(v) if inner.message_type is not None else v for k, v in value.items()}
    if entry is not None:
        if repeated:
            return [message_dict(v) for v in value]
        return message_dict(value) if message.HasField(field.name) else None
    if repeated:
        dtype = _DTYPES.get(field.type)
        return np.array(list(value), dtype=dtype) if dtype is not None else list(value)
    return value


def decode_elwc_item(
    data: Any, features: Mapping[str, Any] | None, context: Mapping[str, Any] | None
) -> dict[str, Any]:
    """An ExampleListWithContext as one item: the context's features (decoded with `context`),
    and each example feature (decoded with `features`) as the stack of every example's value, or
    a list of them when their shapes differ (None for an example without it)."""
    buf = bytes(data)
    item: dict[str, Any] = {}
    examples: list[dict[str, Any]] = []
    for number, wire, start, stop in iter_fields(buf, 0, len(buf)):
        if wire != _LEN or number not in (1, 2):
            raise DecodeError(f"field {number} is not a field of ExampleListWithContext (1: examples, 2: context)")
        if number == 1:
            examples.append(decode_example(buf[start:stop], features))
        else:
            item.update(decode_example(buf[start:stop], context))
    keys = dict.fromkeys(key for example in examples for key in example)
    clash = item.keys() & keys
    if clash:
        raise ValueError(f"keys {sorted(clash)} are both context features and example features")
    for key in keys:
        values = [example.get(key) for example in examples]
        arrays = all(isinstance(v, (np.ndarray, np.generic)) for v in values)  # a FixedLen scalar is a numpy scalar
        shapes = {np.asarray(v).shape for v in values}
        item[key] = np.stack([np.asarray(v) for v in values]) if arrays and len(shapes) == 1 else values
    return item
