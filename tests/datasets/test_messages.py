"""Records of other message types: a user's own message from a FileDescriptorSet (built here with
descriptor_pb2, and with protoc where grpc_tools is installed), decoded equal to the protobuf
runtime's own decoding; TF Ranking's ExampleListWithContext, made from our Example encoder wrapped
by hand in its wire format, recognised and decoded."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory

import tfrecord_lite as tfr
from tfrecord_lite._datasets.schema import collect_schema, decode_record, schema_specs

F = descriptor_pb2.FieldDescriptorProto


def descriptor_set() -> bytes:
    """Two files: shop/money.proto (Money) and shop/order.proto (Order, with a nested Note), the
    importing file first, as a set made by hand may have it."""
    money = descriptor_pb2.FileDescriptorProto(name="shop/money.proto", package="shop", syntax="proto3")
    m = money.message_type.add(name="Money")
    m.field.add(name="currency", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m.field.add(name="cents", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    order = descriptor_pb2.FileDescriptorProto(
        name="shop/order.proto", package="shop", syntax="proto3", dependency=["shop/money.proto"]
    )
    o = order.message_type.add(name="Order")
    note = o.nested_type.add(name="Note")
    note.field.add(name="text", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    o.field.add(name="order_id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    o.field.add(name="item_names", number=2, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    o.field.add(name="total", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".shop.Money")
    o.field.add(name="note", number=4, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".shop.Order.Note")
    o.field.add(name="weight", number=5, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    return descriptor_pb2.FileDescriptorSet(file=[order, money]).SerializeToString()


def runtime_class(data: bytes, name: str) -> Any:
    """The message class as the protobuf runtime makes it, for the expected values."""
    pool = descriptor_pool.DescriptorPool()
    files = {f.name: f for f in descriptor_pb2.FileDescriptorSet.FromString(data).file}
    for file_name in ("shop/money.proto", "shop/order.proto"):
        pool.Add(files[file_name])
    descriptor = pool.FindMessageTypeByName(name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


def orders(cls: Any) -> list[bytes]:
    out = []
    for i in range(5):
        msg = cls(order_id=1000 + i, item_names=[f"item-{j}" for j in range(i)], weight=0.5 * i)
        msg.total.currency = "EUR"
        msg.total.cents = 199 * i
        if i % 2:
            msg.note.text = f"gift {i} ✓"
        out.append(msg.SerializeToString())
    return out


def test_descriptor_set_records_decode_as_the_runtime_does(tmp_path: Path) -> None:
    data = descriptor_set()
    (tmp_path / "shop.pb").write_bytes(data)
    reference = runtime_class(data, "shop.Order")
    records = orders(reference)
    with tfr.TFRecordWriter(str(tmp_path / "orders.tfrecord")) as writer:
        for record in records:
            writer.write(record)
    cls = tfr.load_message_class(tmp_path / "shop.pb", message="shop.Order")
    read = [tfr.decode_message(r, message=cls) for r in tfr.iter_records(str(tmp_path / "orders.tfrecord"))]
    expected = [json_format.MessageToDict(reference.FromString(r), preserving_proto_field_name=True) for r in records]
    assert read == expected
    assert read[3]["note"] == {"text": "gift 3 ✓"} and read[3]["order_id"] == "1003"  # int64 as JSON has it
    note = tfr.load_message_class(data, message="shop.Order.Note")  # a nested message, by its full name
    assert tfr.decode_message(note(text="x").SerializeToString(), message=note) == {"text": "x"}


def test_a_generated_class_is_taken_as_it_is() -> None:
    record = tfr.encode_example({"label": 3})
    assert decode_record(record, tfr.Example).features == json_format.MessageToDict(
        tfr.Example.FromString(record), preserving_proto_field_name=True
    )


def test_an_unknown_message_name_lists_the_close_and_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"no message 'shop\.Ordr'; did you mean 'shop\.Order'.*shop\.Money"):
        tfr.load_message_class(descriptor_set(), message="shop.Ordr")
    with pytest.raises(ValueError, match="not a FileDescriptorSet"):
        tfr.load_message_class(b"\xff\xff\xff", message="shop.Order")


def test_a_record_that_does_not_parse_names_its_place() -> None:
    cls = tfr.load_message_class(descriptor_set(), message="shop.Order")
    with pytest.raises(tfr.DecodeError, match=r"record \(a.tfrecord #4\) of 3 bytes is not a valid shop\.Order"):
        tfr.decode_message(b"\x0a\x05a", message=cls, where="a.tfrecord #4")


@pytest.mark.skipif(importlib.util.find_spec("grpc_tools") is None, reason="grpc_tools (protoc) not installed")
def test_a_set_written_by_protoc(tmp_path: Path) -> None:
    (tmp_path / "rank.proto").write_text(
        'syntax = "proto3";\npackage rank;\nimport "google/protobuf/timestamp.proto";\n'
        "message Query { string text = 1; repeated float scores = 2; google.protobuf.Timestamp at = 3; }\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp_path}", "--include_imports"]
        + [f"--descriptor_set_out={tmp_path / 'rank.pb'}", str(tmp_path / "rank.proto")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:  # grpc_tools without its bundled well-known protos
        pytest.skip(done.stderr)
    cls = tfr.load_message_class(tmp_path / "rank.pb", message="rank.Query")
    msg = cls(text="shoes", scores=[0.5, 0.25])
    msg.at.seconds = 1_700_000_000
    got = tfr.decode_message(msg.SerializeToString(), message=cls)
    assert got == {"text": "shoes", "scores": [0.5, 0.25], "at": "2023-11-14T22:13:20Z"}


# ---------------------------------------------------------------- ExampleListWithContext


def _field(number: int, payload: bytes) -> bytes:
    size = len(payload)
    varint = bytearray()
    while True:
        byte, size = size & 0x7F, size >> 7
        varint.append(byte | (0x80 if size else 0))
        if not size:
            break
    return bytes([number << 3 | 2]) + bytes(varint) + payload


def elwc(context: dict[str, Any], examples: list[dict[str, Any]]) -> bytes:
    """ExampleListWithContext on the wire: field 1 each example, field 2 the context."""
    body = b"".join(_field(1, tfr.encode_example(e)) for e in examples)
    return body + _field(2, tfr.encode_example(context))


def test_elwc_is_recognised_and_decoded_as_its_examples() -> None:
    record = elwc(
        {"query": b"red shoes", "query_id": 7},
        [{"doc": b"a", "relevance": 2, "score": [0.5, 0.25]}, {"doc": b"b", "relevance": 0}],
    )
    assert tfr.decode_elwc(record)[0] == tfr.decode_example(tfr.encode_example({"query": b"red shoes", "query_id": 7}))
    dec = decode_record(record)
    assert dec.kind == "elwc"
    assert dec.features["query"] == [b"red shoes"] and list(dec.features["query_id"]) == [7]
    assert [list(e["relevance"]) for e in dec.examples] == [[2], [0]]
    np.testing.assert_array_equal(dec.examples[0]["score"], np.array([0.5, 0.25], np.float32))


def test_examples_and_sequence_examples_are_never_taken_for_elwc() -> None:
    example = tfr.encode_example({"doc": b"a", "relevance": 2})
    sequence = tfr.encode_sequence_example({"id": 1}, {"frames": [[1.0], [2.0]]})
    assert decode_record(example).kind == "example"
    assert decode_record(sequence).kind == "sequence"
    assert decode_record(elwc({}, [])).kind != "elwc"  # nothing in it: no telling
    assert decode_record(elwc({}, []), "elwc").kind == "elwc"


def test_schema_of_elwc_records() -> None:
    records = [elwc({"q": b"x"}, [{"rel": 1}, {"rel": 0, "extra": 1.5}]), elwc({"q": b"y"}, [{"rel": 2}])]
    schema = collect_schema(records)
    rows = {(r["section"], r["key"]): r for r in schema.rows()}
    assert set(rows) == {("context", "q"), ("examples", "rel"), ("examples", "extra")}
    assert rows[("examples", "rel")]["kind"] == "int64" and schema.raw == 0
    with pytest.raises(tfr.DecodeError, match="ExampleListWithContext"):
        schema_specs(schema)


def test_spark_types_of_a_message_and_rows_that_do_not_fit_them() -> None:
    pa = pytest.importorskip("pyarrow")
    from tfrecord_lite._arrow.spark_messages import elwc_row, message_batch, message_row, message_spark_fields

    order = runtime_class(descriptor_set(), "shop.Order")
    fields = {f["name"]: f["type"] for f in message_spark_fields(order.DESCRIPTOR)}
    assert fields["order_id"] == "long" and fields["item_names"]["elementType"] == "string"
    assert fields["note"] == {
        "type": "struct",
        "fields": [{"name": "text", "type": "string", "nullable": True, "metadata": {}}],
    }
    row = message_row(order.FromString(orders(order)[2]))
    assert row["note"] is None and row["total"] == {"currency": "EUR", "cents": 398}
    target = pa.schema([("order_id", pa.int32())])
    with pytest.raises(tfr.FeatureError, match="'order_id': cannot be read as Arrow int32"):
        message_batch([{"order_id": 2**40}], target)
    with pytest.raises(tfr.FeatureError, match="'doc': is an example feature"):
        elwc_row(elwc({"q": b"x"}, [{"doc": b"a"}]), pa.schema([("doc", pa.string())]))
