"""Spark SQL types for a user's protobuf message, and records of it as rows of those types: what
the Spark data source reads with recordType "Message" (tfrecord_lite.spark), without pyspark.

Strategy: the Spark schema (its JSON form) is read off the message's descriptor, never off the
data, as Spark's own protobuf connector (from_protobuf) reads it: int32, sint32 and sfixed32 are
`integer`; int64, sint64, sfixed64, uint32 and fixed32 `long` (a uint32 does not fit an integer);
uint64 and fixed64 `decimal(20,0)`, which holds every one of them (a long would turn those of
2^63 and more negative); float, double, bool, string and bytes their Spark types; an enum its
value's name as a `string` (a number no name has: the number as text); a repeated field an
`array`, a map field a `map`, a nested message a `struct` of its fields. A message that holds
itself, at any depth, has no Spark type: it is an error naming the path that comes back to it.
Each record is parsed by the protobuf runtime (FromString) and walked by the same descriptor
into one row of Python values; a nested message that is not set, and a scalar with presence
(proto2, proto3 `optional`, oneof members) that is not set, are null; a proto3 scalar without
presence is its value, the default included, as the runtime reads it. Rows become an Arrow
record batch of the Arrow schema Spark expects (pyarrow imported at first use).
"""

from __future__ import annotations

import decimal
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tfrecord_lite._arrow.lazy import lazy
from tfrecord_lite._errors import DecodeError

if TYPE_CHECKING:
    import pyarrow as pa
else:  # imported at first use (lazy.py)
    pa = lazy("pyarrow", globals(), "pa")

# FieldDescriptor.TYPE_* -> Spark's JSON type name
_SPARK_TYPES = {
    1: "double", 2: "float", 3: "long", 4: "decimal(20,0)", 5: "integer", 6: "decimal(20,0)", 7: "long",
    8: "boolean", 9: "string", 12: "binary", 13: "long", 14: "string", 15: "integer", 16: "long",
    17: "integer", 18: "long",
}  # fmt: skip
_MESSAGE, _GROUP, _ENUM, _UINT64, _FIXED64 = 11, 10, 14, 4, 6


def _repeated(field: Any) -> bool:
    """Whether a FieldDescriptor is repeated (protobuf 7 has only `is_repeated`, protobuf < 5.28 only `label`)."""
    found = getattr(field, "is_repeated", None)
    return bool(found) if found is not None else bool(field.label == field.LABEL_REPEATED)


def _field(name: str, data_type: Any) -> dict[str, Any]:
    return {"name": name, "type": data_type, "nullable": True, "metadata": {}}


def message_spark_fields(descriptor: Any) -> list[dict[str, Any]]:
    """The Spark fields (JSON form) of the message `descriptor` (a protobuf Descriptor), one per
    field of the message, in its order (see the module's docstring for the types).

    Raises ValueError for a recursive message, naming the path back to the message it repeats."""
    return _fields(descriptor, [descriptor.full_name], descriptor.name)


def _fields(descriptor: Any, seen: list[str], path: str) -> list[dict[str, Any]]:
    return [_field(field.name, _field_type(field, seen, f"{path}.{field.name}")) for field in descriptor.fields]


def _field_type(field: Any, seen: list[str], path: str) -> Any:
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
        return {
            "type": "map",
            "keyType": _value_type(key, seen, path),
            "valueType": _value_type(value, seen, path),
            "valueContainsNull": True,
        }
    element = _value_type(field, seen, path)
    if _repeated(field):
        return {"type": "array", "elementType": element, "containsNull": True}
    return element


def _value_type(field: Any, seen: list[str], path: str) -> Any:
    """The Spark type of one value of `field` (an element of a repeated one)."""
    if field.type in (_MESSAGE, _GROUP):
        name = field.message_type.full_name
        if name in seen:
            raise ValueError(
                f"message {seen[0]} is recursive: {path} holds a {name} again, which no Spark type can hold; "
                "read the records with recordType ByteArray and parse them with the protobuf runtime"
            )
        return {"type": "struct", "fields": _fields(field.message_type, [*seen, name], path)}
    return _SPARK_TYPES[field.type]


def message_row(parsed: Any) -> dict[str, Any]:
    """A parsed message as one row of Python values of its Spark fields (see the module's docstring)."""
    row: dict[str, Any] = {}
    for field in parsed.DESCRIPTOR.fields:
        row[field.name] = _row_value(field, parsed)
    return row


def _row_value(field: Any, parsed: Any) -> Any:
    value = getattr(parsed, field.name)
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        inner = entry.fields_by_name["value"]
        return [(_scalar(entry.fields_by_name["key"], k), _one(inner, v)) for k, v in value.items()]
    if _repeated(field):
        return [_one(field, v) for v in value]
    try:
        if not parsed.HasField(field.name):
            return None
    except ValueError:  # a proto3 scalar without presence: its value, the default included
        pass
    return _one(field, value)


def _one(field: Any, value: Any) -> Any:
    if field.type in (_MESSAGE, _GROUP):
        return message_row(value)
    return _scalar(field, value)


def _scalar(field: Any, value: Any) -> Any:
    if field.type == _ENUM:
        named = field.enum_type.values_by_number.get(value)
        return named.name if named is not None else str(value)
    if field.type in (_UINT64, _FIXED64):
        return decimal.Decimal(value)
    return value


def message_rows(records: Sequence[bytes], message: type[Any]) -> Iterator[tuple[int, dict[str, Any] | DecodeError]]:
    """(k, row) of each record `k` of `records` parsed as `message`; a record that does not
    parse gives (k, DecodeError) naming the message type, for the caller to place and raise or skip."""
    from google.protobuf.message import DecodeError as ProtoDecodeError

    full = message.DESCRIPTOR.full_name
    for k, record in enumerate(records):
        try:
            parsed = message.FromString(bytes(record))
        except ProtoDecodeError as err:
            yield k, DecodeError(f"a record of {len(record)} bytes is not a valid {full}: {err}")
            continue
        yield k, message_row(parsed)


def message_batch(rows: Sequence[dict[str, Any]], target: pa.Schema, constants: dict[str, Any] | None = None) -> Any:
    """Rows (message_row's) as an Arrow record batch of `target` (the Arrow schema Spark expects),
    the fields of `constants` (partition values) filled with their value."""
    arrays = []
    for field in target:
        if constants is not None and field.name in constants:
            arrays.append(pa.array([constants[field.name]] * len(rows), type=field.type))
        else:
            arrays.append(pa.array([row.get(field.name) for row in rows], type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)
