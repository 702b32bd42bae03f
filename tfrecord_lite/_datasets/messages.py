"""Records of other message types: a user's own protobuf message, and TF Ranking's ELWC.

Strategy: a user's message is decoded by the protobuf runtime itself, never by a parser of ours.
Its class is either given (a generated class) or built from a `FileDescriptorSet` (what
`protoc --include_imports --descriptor_set_out=SET.pb` writes): the set's files are added to a
fresh `DescriptorPool` dependencies first, the message is looked up by its fully qualified name
(a name the set lacks is an error listing the close ones and the ones there are), and the class
is made by `message_factory.GetMessageClass` where the runtime has it (protobuf >= 4.22) and by
`MessageFactory().GetPrototype` before. A record becomes a dict with `json_format.MessageToDict`
(the .proto field names kept), so it shows as JSON would.

`ExampleListWithContext` (field 1: repeated Example `examples`; field 2: Example `context`) is
walked on the wire, its Examples handed to the Example decoder. Sniffing it is structural and
strict: every top-level field is field 1 or 2 and length-delimited, each holds an Example (only
field-1 Features), and some Example holds a feature entry. An Example or a SequenceExample never
passes: their Features and FeatureLists hold map entries with a field 2 (the value), which a
Features message cannot have.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from tfrecord_lite._errors import DecodeError
from tfrecord_lite._example.decode import decode_example
from tfrecord_lite._example.proto import is_repeated
from tfrecord_lite._example.validate import did_you_mean

__all__ = [
    "decode_elwc",
    "decode_message",
    "is_elwc",
    "load_message_class",
    "message_fields",
    "message_names",
]

_LEN = 2  # the wire type of a length-delimited field
_ENTRY_KEY, _ENTRY_VALUE = 1, 2


def _files(data: bytes, where: str) -> list[Any]:
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError as ProtoDecodeError

    try:
        files = list(descriptor_pb2.FileDescriptorSet.FromString(data).file)
    except ProtoDecodeError as err:
        raise ValueError(f"{where} is not a FileDescriptorSet (protoc --descriptor_set_out): {err}") from None
    if not files:
        raise ValueError(f"{where} is not a FileDescriptorSet (protoc --descriptor_set_out): it holds no .proto file")
    return files


def _nested_names(prefix: str, messages: Any) -> Iterator[str]:
    for message in messages:
        name = f"{prefix}{message.name}"
        yield name
        yield from _nested_names(name + ".", message.nested_type)


def message_names(source: str | os.PathLike[str] | bytes) -> list[str]:
    """The fully qualified names of every message a FileDescriptorSet (a path or its bytes) defines."""
    data, where = _read_set(source)
    return sorted(
        name
        for file in _files(data, where)
        for name in _nested_names(f"{file.package}." if file.package else "", file.message_type)
    )


def _read_set(source: str | os.PathLike[str] | bytes) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "the descriptor set"
    with open(source, "rb") as f:
        return f.read(), os.fspath(source)


def _in_dependency_order(files: list[Any]) -> list[Any]:
    """The set's files, each after the files it imports (protoc writes them so; a set built by hand
    may not)."""
    by_name = {f.name: f for f in files}
    ordered: list[Any] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in by_name:
            return
        seen.add(name)
        for dep in by_name[name].dependency:
            visit(dep)
        ordered.append(by_name[name])

    for f in files:
        visit(f.name)
    return ordered


def load_message_class(source: str | os.PathLike[str] | bytes, *, message: str) -> type[Any]:
    """The protobuf message class named `message` (fully qualified, `pkg.Msg`) in the
    FileDescriptorSet at `source` (a path, or its bytes), built by the protobuf runtime.

    Raises ValueError when the set does not define it, naming the close names and those there are."""
    from google.protobuf import descriptor_pool, message_factory

    data, where = _read_set(source)
    files = _files(data, where)
    pool = descriptor_pool.DescriptorPool()
    for file in _in_dependency_order(files):
        try:
            pool.Add(file)
        except (TypeError, ValueError) as err:
            hint = "was it written with --include_imports?"
            raise ValueError(f"{where}: {file.name} cannot be loaded ({err}); {hint}") from None
    names = message_names(data)
    if message not in names:
        shown = ", ".join(names[:20]) + (f", ... ({len(names)} in all)" if len(names) > 20 else "")
        close = did_you_mean(message, names) or ";"
        raise ValueError(f"{where} defines no message {message!r}{close} it defines {shown}")
    descriptor = pool.FindMessageTypeByName(message)
    if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
        return message_factory.GetMessageClass(descriptor)  # type: ignore[no-any-return]
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # type: ignore[no-any-return]


def decode_message(source: bytes, *, message: type[Any], where: str = "") -> dict[str, Any]:
    """One record of the protobuf message class `message` (generated, or `load_message_class`'s)
    as a dict, as `json_format.MessageToDict` makes it with the .proto field names.

    Raises DecodeError naming the message type (and `where`, the record's place) when the bytes do
    not parse as one."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError as ProtoDecodeError

    try:
        parsed = message.FromString(bytes(source))
    except ProtoDecodeError as err:
        at = f" ({where})" if where else ""
        full = message.DESCRIPTOR.full_name
        raise DecodeError(f"record{at} of {len(source)} bytes is not a valid {full}: {err}") from None
    return json_format.MessageToDict(parsed, preserving_proto_field_name=True)  # type: ignore[no-any-return]


_TYPE_NAMES = {
    1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64", 7: "fixed32", 8: "bool",
    9: "string", 10: "group", 11: "message", 12: "bytes", 13: "uint32", 14: "enum", 15: "sfixed32",
    16: "sfixed64", 17: "sint32", 18: "sint64",
}  # fmt: skip


def message_fields(source: bytes, *, message: type[Any], where: str = "") -> Iterator[tuple[str, str, int]]:
    """The fields a record of `message` holds, for a schema: (path, protobuf type, how many values)
    of each field set, nested messages walked with dotted paths ("total.cents", a repeated one's
    items under "items[]."). A proto3 scalar at its default is not on the wire, so not counted.

    Raises DecodeError, as decode_message does, when the bytes do not parse as one."""
    from google.protobuf.message import DecodeError as ProtoDecodeError

    try:
        parsed = message.FromString(bytes(source))
    except ProtoDecodeError as err:
        at = f" ({where})" if where else ""
        raise DecodeError(f"record{at} is not a valid {message.DESCRIPTOR.full_name}: {err}") from None
    yield from _walk(parsed, "")


def _walk(parsed: Any, prefix: str) -> Iterator[tuple[str, str, int]]:
    for field, value in parsed.ListFields():
        path = prefix + field.name
        repeated = is_repeated(field)
        kind = _TYPE_NAMES.get(field.type, str(field.type))
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            yield path, "map", len(value)
            continue
        yield path, kind, len(value) if repeated else 1
        if field.message_type is not None:
            for item in value if repeated else [value]:
                yield from _walk(item, f"{path}[]." if repeated else f"{path}.")


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while pos < end and shift < 64:
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7
    raise DecodeError("a varint runs past its message")


def _fields(buf: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, value start, value end) of each field of buf[start:end]; only
    length-delimited fields are read into (others end the walk with a DecodeError, as ELWC and
    Example have none at the levels walked here)."""
    pos = start
    while pos < end:
        tag, pos = _varint(buf, pos, end)
        if tag & 7 != _LEN:
            raise DecodeError(f"field {tag >> 3} has wire type {tag & 7}, not a message")
        size, pos = _varint(buf, pos, end)
        if size > end - pos:
            raise DecodeError(f"field {tag >> 3} claims {size} bytes where {end - pos} are left")
        yield tag >> 3, _LEN, pos, pos + size
        pos += size


def _entries_of_example(buf: bytes, start: int, end: int) -> int | None:
    """How many feature entries the Example at buf[start:end] holds; None if it is no Example whose
    Features hold entries of a key and a value. An Example's own Features fail at its first entry,
    so telling one costs a few fields, not a walk of the record."""
    count = 0
    for number, _, s, e in _fields(buf, start, end):
        if number != 1:
            return None
        for entry_number, _, es, ee in _fields(buf, s, e):
            if entry_number != 1:
                return None
            fields = {n for n, _, _, _ in _fields(buf, es, ee)}
            if not fields <= {_ENTRY_KEY, _ENTRY_VALUE} or _ENTRY_VALUE not in fields:
                return None
            count += 1
    return count


def _elwc_spans(buf: bytes) -> list[tuple[int, int, int]] | None:
    spans = []
    entries = 0
    for number, _, s, e in _fields(buf, 0, len(buf)):
        if number not in (1, 2):
            return None
        found = _entries_of_example(buf, s, e)
        if found is None:
            return None
        entries += found
        spans.append((number, s, e))
    return spans if entries else None


def is_elwc(source: bytes) -> bool:
    """Whether a record is unmistakably an ExampleListWithContext (and no Example or SequenceExample)."""
    try:
        return _elwc_spans(bytes(source)) is not None
    except DecodeError:
        return False


def decode_elwc(source: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An ExampleListWithContext record as (its context's features, each example's features),
    every Example decoded without a spec by the Example decoder.

    Raises DecodeError when the record is no ExampleListWithContext."""
    buf = bytes(source)
    context: dict[str, Any] = {}
    examples: list[dict[str, Any]] = []
    for number, _, s, e in _fields(buf, 0, len(buf)):
        if number == 1:
            examples.append(decode_example(buf[s:e]))
        elif number == 2:
            context.update(decode_example(buf[s:e]))
        else:
            raise DecodeError(f"field {number} is not a field of ExampleListWithContext (1: examples, 2: context)")
    return context, examples
