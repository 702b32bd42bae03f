"""`tfrecord-lite head/cat` on records of other message types, as a user runs them: a message of a
FileDescriptorSet (`--proto SET.pb --message pkg.Msg`), and TF Ranking's ExampleListWithContext."""

from __future__ import annotations

import json
from pathlib import Path

from google.protobuf import json_format

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests.datasets.test_messages import descriptor_set, elwc, orders, runtime_class


def _orders_file(tmp_path: Path) -> tuple[Path, Path, list[bytes], object]:
    data = descriptor_set()
    (tmp_path / "shop.pb").write_bytes(data)
    reference = runtime_class(data, "shop.Order")
    records = orders(reference)
    with tfr.TFRecordWriter(str(tmp_path / "orders.tfrecord")) as writer:
        for record in records:
            writer.write(record)
    return tmp_path / "orders.tfrecord", tmp_path / "shop.pb", records, reference


def test_cat_json_decodes_as_the_protobuf_runtime(tmp_path: Path) -> None:
    path, proto, records, reference = _orders_file(tmp_path)
    proc = run_cli("cat", "--json", "--full", str(path), "--proto", str(proto), "--message", "shop.Order")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    expected = [
        json_format.MessageToDict(reference.FromString(r), preserving_proto_field_name=True)  # type: ignore[attr-defined]
        for r in records
    ]
    assert [line["message"] for line in lines] == expected
    assert {line["type"] for line in lines} == {"message"}


def test_head_shows_the_fields(tmp_path: Path) -> None:
    path, proto, _, _ = _orders_file(tmp_path)
    proc = run_cli("head", "-n", "2", "--skip", "1", str(path), "--proto", str(proto), "--message", "shop.Order")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.split("\n\n")[0].splitlines()
    assert first[0].endswith("orders.tfrecord #1")
    assert '  note        {"text": "gift 1 ✓"}' in first and '  order_id    "1001"' in first


def test_a_wrong_message_name_and_a_bad_record_are_one_line_errors(tmp_path: Path) -> None:
    path, proto, _, _ = _orders_file(tmp_path)
    proc = run_cli("head", str(path), "--proto", str(proto), "--message", "shop.Oder")
    assert proc.returncode != 0
    assert "did you mean 'shop.Order'" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = run_cli("head", str(path), "--proto", str(proto))
    assert proc.returncode != 0 and "--message" in proc.stderr
    bad = tmp_path / "bad.tfrecord"
    with tfr.TFRecordWriter(str(bad)) as writer:
        writer.write(b"\x12\x03ok!")  # item_names: fine
        writer.write(b"\x0a\x05a")  # a length past the end
    proc = run_cli("cat", str(bad), "--proto", str(proto), "--message", "shop.Order")
    assert proc.returncode != 0
    assert "bad.tfrecord record #1, byte offset 21" in proc.stderr and "not a valid shop.Order" in proc.stderr


def test_elwc_recognised_and_forced(tmp_path: Path) -> None:
    path = tmp_path / "rank.tfrecord"
    with tfr.TFRecordWriter(str(path)) as writer:
        writer.write(elwc({"query": b"red shoes"}, [{"doc": b"a", "rel": 2}, {"doc": b"b", "rel": 0}]))
        writer.write(elwc({}, []))  # empty: no telling it from an empty Example
    proc = run_cli("head", str(path))
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout.split("\n\n")
    assert "(ExampleListWithContext)" in shown[0] and "examples: 2" in shown[0] and "red shoes" in shown[0]
    assert "ExampleListWithContext" not in shown[1]
    proc = run_cli("cat", "--json", "--elwc", str(path))
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["type"] == lines[1]["type"] == "elwc"
    assert lines[0]["examples"][1]["rel"] == {"kind": "int64", "values": [0]} and lines[1]["examples"] == []
    proc = run_cli("schema", str(path), "--elwc")
    assert proc.returncode == 0, proc.stderr
    assert "rel" in proc.stdout and "query" in proc.stdout


def test_schema_of_a_users_messages_lists_their_fields(tmp_path: Path) -> None:
    path, proto, records, reference = _orders_file(tmp_path)
    proc = run_cli("schema", "--json", str(path), "--proto", str(proto), "--message", "shop.Order")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    rows = {row["key"]: row for row in report["features"]}
    assert report["records"] == 5 and report["not_examples"] == 0
    # the runtime's own view of which fields each record sets (a proto3 zero is not on the wire)
    parsed = [reference.FromString(r) for r in records]  # type: ignore[attr-defined]
    for key in ("order_id", "item_names", "total", "note", "weight"):
        assert rows[key]["present"] == sum(any(f.name == key for f, _ in p.ListFields()) for p in parsed), key
    assert rows["order_id"]["kind"] == "int64" and rows["weight"]["kind"] == "double"
    assert rows["item_names"]["kind"] == "string" and rows["item_names"]["min_values"] == 1
    assert rows["item_names"]["max_values"] == 4
    assert rows["total"]["kind"] == "message" and rows["total.currency"]["kind"] == "string"
    assert rows["note.text"]["present"] == 2 and rows["total.cents"]["section"] == "fields"
    proc = run_cli("schema", "--spec-json", str(path), "--proto", str(proto), "--message", "shop.Order")
    assert proc.returncode != 0 and "no Example spec decodes them" in proc.stderr
