"""Spark SQL types for a user's protobuf message, and records of it as rows of those types: what
the Spark data source reads with recordType "Message" (tfrecord_lite.spark), without pyspark; and
the same for TF Ranking's ExampleListWithContext (recordType "ELWC").

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

An ExampleListWithContext's schema is inferred from sampled records, as an Example's is: each
context feature a column (a scalar where every record holds one value), each example feature an
array with one element per example of the list (a scalar element where every example holds one
value, else an array), so one row is one list, as TF Ranking's parser hands it to a model. Its
Examples are decoded by the Example decoder without a spec, the list walked with the Example wire
reader (lengths checked); a string column takes bytes that Arrow checks are UTF-8.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tfrecord_lite._arrow.lazy import lazy
from tfrecord_lite._errors import DecodeError, FeatureError
from tfrecord_lite._example.decode import decode_example
from tfrecord_lite._example.proto import is_repeated
from tfrecord_lite._example.wire import iter_fields

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
    if is_repeated(field):
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
    if is_repeated(field):
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
            continue
        try:
            arrays.append(pa.array([row.get(field.name) for row in rows], type=field.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as err:
            hint = " (bytes that are not UTF-8: read it as binary)" if "utf8" in str(err).lower() else ""
            raise FeatureError(field.name, f"cannot be read as Arrow {field.type}{hint}: {err}") from None
    return pa.RecordBatch.from_arrays(arrays, schema=target)


# --------------------------------------------------------------------------- ExampleListWithContext

_LEN = 2  # the wire type of a length-delimited field
_INFERRED = {"int64": "long", "float32": "float"}


def elwc_parts(record: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An ExampleListWithContext as (its context's features, each example's), decoded without a
    spec; a field other than 1 (examples) or 2 (context) is a DecodeError."""
    buf = bytes(record)
    context: dict[str, Any] = {}
    examples: list[dict[str, Any]] = []
    for number, wire, start, stop in iter_fields(buf, 0, len(buf)):
        if wire != _LEN or number not in (1, 2):
            raise DecodeError(f"field {number} is not a field of ExampleListWithContext (1: examples, 2: context)")
        decoded = decode_example(buf[start:stop])
        if number == 1:
            examples.append(decoded)
        else:
            context.update(decoded)
    return context, examples


class _Seen:
    """What the sample holds of one key: its kind, how often it had exactly one value, whether a
    bytes value was not UTF-8 text."""

    def __init__(self) -> None:
        self.kind = ""
        self.ones = 0
        self.binary = False

    def note(self, value: Any) -> None:
        values = list(value) if isinstance(value, list) else value
        self.kind = "bytes" if isinstance(values, list) else "int64" if values.dtype.kind in "iu" else "float32"
        self.ones += len(values) == 1
        if isinstance(values, list) and not self.binary:
            try:
                for v in values:
                    bytes(v).decode("utf-8")
            except UnicodeDecodeError:
                self.binary = True


def elwc_spark_fields(records: Iterable[bytes], bytes_type: str = "auto") -> list[dict[str, Any]]:
    """The Spark fields of sampled ExampleListWithContext records: each context feature a column as
    an Example's is (its leaf type where every record has it with one value, else an array), then
    each example feature an array over the examples (of its leaf type where every example has it
    with one value, else of arrays). Bytes are `bytes_type` ("auto": string where every sampled
    value is UTF-8 text, else binary). A key of both the context and the examples is a ValueError."""
    context: dict[str, _Seen] = {}
    examples: dict[str, _Seen] = {}
    lists = count = 0
    for record in records:
        found, listed = elwc_parts(record)
        lists += 1
        for key, value in found.items():
            context.setdefault(key, _Seen()).note(value)
        for example in listed:
            count += 1
            for key, value in example.items():
                examples.setdefault(key, _Seen()).note(value)
    clash = sorted(context.keys() & examples.keys())
    if clash:
        raise ValueError(f"keys {clash} are both context features and example features: no one column holds them")

    def leaf(seen: _Seen) -> str:
        if seen.kind != "bytes":
            return _INFERRED[seen.kind]
        if bytes_type == "auto":
            return "binary" if seen.binary else "string"
        return bytes_type

    def array(element: Any) -> dict[str, Any]:
        return {"type": "array", "elementType": element, "containsNull": True}

    # keys sorted, the context's first
    fields = [_field(k, leaf(s) if s.ones == lists else array(leaf(s))) for k, s in sorted(context.items())]
    fields += [_field(k, array(leaf(s) if s.ones == count else array(leaf(s)))) for k, s in sorted(examples.items())]
    return fields


def elwc_row(record: bytes, target: pa.Schema) -> dict[str, Any]:
    """An ExampleListWithContext as one row of `target`'s fields: a context feature by its column's
    type, an example feature as the list of each example's value (null where one lacks it)."""
    context, examples = elwc_parts(record)
    row: dict[str, Any] = {}
    for field in target:
        key = field.name
        if key in context:
            row[key] = _feature_value(key, context[key], field.type)
        elif any(key in example for example in examples):
            inner = field.type.value_type if pa.types.is_list(field.type) else None
            if inner is None:
                raise FeatureError(key, "is an example feature: its Spark type is an array over the examples")
            row[key] = [_feature_value(key, e[key], inner) if key in e else None for e in examples]
    return row


def _feature_value(key: str, value: Any, target: pa.DataType) -> Any:
    values = [bytes(v) for v in value] if isinstance(value, list) else value.tolist()
    if pa.types.is_list(target):
        return values
    if len(values) > 1:
        raise FeatureError(key, f"has {len(values)} values; its Spark type holds one: declare an array")
    return values[0] if values else None
