"""recordType Message on a real local[2] SparkSession: a user's message from a FileDescriptorSet
(built with descriptor_pb2, as protoc --include_imports writes one) with a field of every
protobuf type, records written by the protobuf runtime, read by Spark with the schema read off
the descriptor, and the rows equal to json_format's decoding of each record; a record that does
not parse names file, record and offset, or is skipped; a recursive message is refused."""

from __future__ import annotations

import base64
import decimal
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark
pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
from google.protobuf import descriptor_pb2, json_format

import tfrecord_lite as tfr
from tests._records import record_starts, write_records
from tfrecord_lite.spark import message_options

F = descriptor_pb2.FieldDescriptorProto


def everything_set() -> bytes:
    """lab/sample.proto: Sample with a field of each scalar type, an enum, a repeated and a nested
    message, a map; Tree, which holds itself."""
    file = descriptor_pb2.FileDescriptorProto(name="lab/sample.proto", package="lab", syntax="proto3")
    kind = file.enum_type.add(name="Kind")
    kind.value.add(name="KIND_UNKNOWN", number=0)
    kind.value.add(name="KIND_CAT", number=1)
    point = file.message_type.add(name="Point")
    point.field.add(name="x", number=1, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
    point.field.add(name="label", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    s = file.message_type.add(name="Sample")
    scalars = [
        ("i32", F.TYPE_INT32), ("si32", F.TYPE_SINT32), ("sf32", F.TYPE_SFIXED32), ("i64", F.TYPE_INT64),
        ("u32", F.TYPE_UINT32), ("u64", F.TYPE_UINT64), ("f", F.TYPE_FLOAT), ("d", F.TYPE_DOUBLE),
        ("b", F.TYPE_BOOL), ("s", F.TYPE_STRING), ("raw", F.TYPE_BYTES),
    ]  # fmt: skip
    for number, (name, kind_) in enumerate(scalars, 1):
        s.field.add(name=name, number=number, type=kind_, label=F.LABEL_OPTIONAL)
    s.field.add(name="kind", number=20, type=F.TYPE_ENUM, label=F.LABEL_OPTIONAL, type_name=".lab.Kind")
    s.field.add(name="tags", number=21, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    s.field.add(name="where", number=22, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".lab.Point")
    s.field.add(name="path", number=23, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".lab.Point")
    entry = s.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    s.field.add(
        name="counts", number=24, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".lab.Sample.CountsEntry"
    )
    tree = file.message_type.add(name="Tree")
    tree.field.add(name="children", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".lab.Tree")
    return descriptor_pb2.FileDescriptorSet(file=[file]).SerializeToString()


def samples(cls: Any) -> list[bytes]:
    out = []
    for i in range(6):
        msg = cls(i32=-i, si32=-2 * i, sf32=3 * i, i64=-(2**40) * i, u32=2**32 - 1 - i, u64=2**64 - 1 - i)
        msg.f, msg.d, msg.b, msg.s, msg.raw = 0.5 * i, 0.25 * i, i % 2 == 1, f"s{i} ✓", bytes([i, 255])
        msg.kind = i % 2
        msg.tags.extend([f"t{j}" for j in range(i)])
        if i % 3:
            msg.where.x, msg.where.label = 1.5 * i, f"p{i}"
        for j in range(i % 3):
            msg.path.add(x=float(j), label=f"q{j}")
        msg.counts.update({f"k{j}": j * i for j in range(i % 4)})
        out.append(msg.SerializeToString())
    return out


def _repeated(field: Any) -> bool:
    found = getattr(field, "is_repeated", None)  # protobuf 7 has no `label`
    return bool(found) if found is not None else field.label == field.LABEL_REPEATED


def expected_row(message: Any) -> dict[str, Any]:
    """A parsed message's row from json_format's dict (what protobuf's JSON decoding gives), each
    field that JSON leaves out at its default filled by its descriptor, in Spark's Python values."""
    return _from_json(message.DESCRIPTOR, json_format.MessageToDict(message, preserving_proto_field_name=True))


def _from_json(descriptor: Any, data: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for field in descriptor.fields:
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            inner = entry.fields_by_name["value"]
            row[field.name] = {k: _json_value(inner, v) for k, v in data.get(field.name, {}).items()}
        elif _repeated(field):
            row[field.name] = [_json_value(field, v) for v in data.get(field.name, [])]
        elif field.name in data:
            row[field.name] = _json_value(field, data[field.name])
        elif entry is not None:
            row[field.name] = None
        elif field.type == F.TYPE_ENUM:
            row[field.name] = field.enum_type.values_by_number[field.default_value].name
        else:
            row[field.name] = _json_value(field, field.default_value)
    return row


def _json_value(field: Any, value: Any) -> Any:
    if field.type == F.TYPE_MESSAGE:
        return _from_json(field.message_type, value)
    if field.type == F.TYPE_BYTES:
        return base64.b64decode(value) if isinstance(value, str) else bytes(value)
    if field.type == F.TYPE_UINT64:
        return decimal.Decimal(int(value))
    if field.type in (F.TYPE_INT64, F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32, F.TYPE_UINT32):
        return int(value)
    if field.type in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return float(value)
    return value


def spark_value(value: Any) -> Any:
    """A Spark Row's value as plain Python (nested Rows as dicts)."""
    if hasattr(value, "asDict"):
        return {k: spark_value(v) for k, v in value.asDict().items()}
    if isinstance(value, list):
        return [spark_value(v) for v in value]
    if isinstance(value, dict):
        return {k: spark_value(v) for k, v in value.items()}
    if isinstance(value, bytearray):
        return bytes(value)
    return value


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[bytes]]:
    folder = tmp_path_factory.mktemp("lab")
    (folder / "lab.pb").write_bytes(everything_set())
    cls = tfr.load_message_class(folder / "lab.pb", message="lab.Sample")
    records = samples(cls)
    write_records(folder / "samples.tfrecord", records)
    return folder, cls, records


def test_messages_read_with_the_schema_of_their_descriptor(
    spark_session: Any, lab: tuple[Path, Any, list[bytes]]
) -> None:
    folder, cls, records = lab
    df = (
        spark_session.read.format("tfrecord")
        .option("recordType", "Message")
        .option("descriptorSet", str(folder / "lab.pb"))
        .option("messageType", "lab.Sample")
        .load(str(folder / "samples.tfrecord"))
    )
    assert df.schema.simpleString() == (
        "struct<i32:int,si32:int,sf32:int,i64:bigint,u32:bigint,u64:decimal(20,0),f:float,d:double,"
        "b:boolean,s:string,raw:binary,kind:string,tags:array<string>,where:struct<x:float,label:string>,"
        "path:array<struct<x:float,label:string>>,counts:map<string,bigint>>"
    )
    rows = sorted((spark_value(row.asDict()) for row in df.collect()), key=lambda r: -r["i32"])
    assert rows == [expected_row(cls.FromString(r)) for r in records]
    assert rows[5]["u64"] == 2**64 - 6 and rows[1]["kind"] == "KIND_CAT"
    # a class: its descriptor set travels in the options
    by_class = (
        spark_session.read.format("tfrecord").options(**message_options(cls)).load(str(folder / "samples.tfrecord"))
    )
    assert sorted(row.i32 for row in by_class.select("i32").collect()) == [-5, -4, -3, -2, -1, 0]


def test_a_record_not_of_the_message_is_located_or_skipped(
    spark_session: Any, lab: tuple[Path, Any, list[bytes]], tmp_path: Path
) -> None:
    folder, _, records = lab
    path = write_records(tmp_path / "mixed.tfrecord", [*records[:3], b"\x0a\xff\xff", *records[3:]])
    at = record_starts(path.read_bytes())[3]
    reader = (
        spark_session.read.format("tfrecord")
        .options(recordType="Message", descriptorSet=str(folder / "lab.pb"), messageType="lab.Sample")
        .schema("i32 int, s string")
    )
    with pytest.raises(Exception, match=rf"not a valid lab\.Sample.*mixed\.tfrecord, record 3, at byte offset {at}"):
        reader.load(str(path)).collect()
    skipped = reader.option("on_error", "skip").load(str(path)).collect()
    assert sorted(row.i32 for row in skipped) == [-5, -4, -3, -2, -1, 0]


def test_wrong_names_and_recursive_messages_fail_before_the_job(
    spark_session: Any, lab: tuple[Path, Any, list[bytes]]
) -> None:
    folder, _, _ = lab
    reader = spark_session.read.format("tfrecord").options(recordType="Message", descriptorSet=str(folder / "lab.pb"))
    with pytest.raises(Exception, match=r"defines no message 'lab\.Sampel'.*lab\.Sample"):
        reader.option("messageType", "lab.Sampel").load(str(folder / "samples.tfrecord")).schema  # noqa: B018
    with pytest.raises(Exception, match=r"lab\.Tree is recursive: Tree\.children holds a lab\.Tree"):
        reader.option("messageType", "lab.Tree").load(str(folder / "samples.tfrecord")).schema  # noqa: B018
    df = spark_session.createDataFrame([(1,)], "i32 int")
    with pytest.raises(Exception, match="recordType Message is read only"):
        df.write.format("tfrecord").mode("overwrite").options(
            recordType="Message", descriptorSet=str(folder / "lab.pb"), messageType="lab.Sample"
        ).save(str(folder / "out"))


def test_elwc_records_read_as_their_context_and_examples(spark_session: Any, tmp_path: Path) -> None:
    from tests.datasets.test_messages import elwc

    lists = [
        elwc(
            {"query": f"q{i}".encode(), "qid": i},
            [{"doc": f"d{i}{j}".encode(), "rel": j, "emb": [0.5 * j] * (j + 1)} for j in range(i + 1)],
        )
        for i in range(3)
    ]
    path = write_records(tmp_path / "ranking.tfrecord", lists)
    df = spark_session.read.format("tfrecord").option("recordType", "ELWC").load(str(path))
    assert df.schema.simpleString() == (
        "struct<qid:bigint,query:string,doc:array<string>,emb:array<array<float>>,rel:array<bigint>>"
    )
    rows = sorted((row.asDict() for row in df.collect()), key=lambda r: r["qid"])
    for row, record in zip(rows, lists, strict=True):
        context, examples = tfr.decode_elwc(record)
        assert row["qid"] == context["qid"][0] and row["query"] == context["query"][0].decode()
        assert row["doc"] == [e["doc"][0].decode() for e in examples]
        assert row["rel"] == [int(e["rel"][0]) for e in examples]
        assert row["emb"] == [e["emb"].tolist() for e in examples]
