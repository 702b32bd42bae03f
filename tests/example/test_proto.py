# The protobuf message classes: generated descriptors are current, messages
# round-trip, field numbers / packed options / oneof are TensorFlow's, and
# nothing lands in the `tensorflow.` proto namespace.
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

import tfrecord_lite as tfr
from tfrecord_lite._example import descriptor as _descriptor

ROOT = Path(__file__).resolve().parents[2]
F = descriptor_pb2.FieldDescriptorProto

# TensorFlow's tensorflow/core/example/{feature,example}.proto, field by field:
# message -> [(field, number, type, repeated, packed, oneof, message type)]
TF_LAYOUT: dict[str, list[tuple[str, int, int, bool, bool, str, str]]] = {
    "BytesList": [("value", 1, F.TYPE_BYTES, True, False, "", "")],
    "FloatList": [("value", 1, F.TYPE_FLOAT, True, True, "", "")],
    "Int64List": [("value", 1, F.TYPE_INT64, True, True, "", "")],
    "Feature": [
        ("bytes_list", 1, F.TYPE_MESSAGE, False, False, "kind", "BytesList"),
        ("float_list", 2, F.TYPE_MESSAGE, False, False, "kind", "FloatList"),
        ("int64_list", 3, F.TYPE_MESSAGE, False, False, "kind", "Int64List"),
    ],
    "Features": [("feature", 1, F.TYPE_MESSAGE, True, False, "", "Features.FeatureEntry")],
    "FeatureList": [("feature", 1, F.TYPE_MESSAGE, True, False, "", "Feature")],
    "FeatureLists": [("feature_list", 1, F.TYPE_MESSAGE, True, False, "", "FeatureLists.FeatureListEntry")],
    "Example": [("features", 1, F.TYPE_MESSAGE, False, False, "", "Features")],
    "SequenceExample": [
        ("context", 1, F.TYPE_MESSAGE, False, False, "", "Features"),
        ("feature_lists", 2, F.TYPE_MESSAGE, False, False, "", "FeatureLists"),
    ],
}


def _layout(message_class: type, package: str) -> list[tuple[str, int, int, bool, bool, str, str]]:
    # Read through DescriptorProto: stable across runtimes (FieldDescriptor.label is gone in 7.x).
    proto = descriptor_pb2.DescriptorProto()
    message_class.DESCRIPTOR.CopyToProto(proto)
    rows = []
    for field in proto.field:
        oneof = proto.oneof_decl[field.oneof_index].name if field.HasField("oneof_index") else ""
        target = field.type_name[len(package) + 2 :] if field.type_name else ""
        repeated = field.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
        rows.append((field.name, field.number, field.type, repeated, field.options.packed, oneof, target))
    return rows


@pytest.mark.parametrize("name", sorted(TF_LAYOUT))
def test_layout_is_tensorflows(name: str) -> None:
    message_class = getattr(tfr, name)
    assert message_class.DESCRIPTOR.full_name == f"tfrecord_lite.{name}"
    assert _layout(message_class, "tfrecord_lite") == TF_LAYOUT[name]


def test_map_entries() -> None:
    for message, value_type in (("Features", "Feature"), ("FeatureLists", "FeatureList")):
        (field,) = getattr(tfr, message).DESCRIPTOR.fields
        entry = field.message_type
        assert entry.GetOptions().map_entry
        key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
        assert (key.number, key.type) == (1, F.TYPE_STRING)
        assert (value.number, value.message_type.full_name) == (2, f"tfrecord_lite.{value_type}")


def test_regenerating_gives_committed_descriptors() -> None:
    pytest.importorskip("grpc_tools")
    spec = importlib.util.spec_from_file_location("_regen", ROOT / "proto" / "regen.py")
    assert spec is not None and spec.loader is not None
    regen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regen)
    committed = regen.TARGET.read_text(encoding="utf-8")
    assert regen.render() == committed, "tfrecord_lite/_example/descriptor.py is stale: run python proto/regen.py"


def test_descriptor_files_are_ours() -> None:
    for serialized in _descriptor.FILES:
        proto = descriptor_pb2.FileDescriptorProto.FromString(serialized)
        assert proto.package == "tfrecord_lite"
        assert proto.name.startswith("tfrecord_lite/")
        assert all(dep.startswith("tfrecord_lite/") for dep in proto.dependency)
        assert proto.syntax == "proto3"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    """Run Python code in a fresh interpreter (a default descriptor pool of its own)."""
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=ROOT)


def test_pool_has_no_tensorflow_names() -> None:
    # A fresh interpreter: only what loading the message classes puts in the default pool.
    code = (
        "import tfrecord_lite._example.proto\n"
        "from google.protobuf import descriptor_pool\n"
        "pool = descriptor_pool.Default()\n"
        "for name in ('tensorflow.Example', 'tensorflow.Feature', 'tensorflow.SequenceExample'):\n"
        "    try:\n"
        "        pool.FindMessageTypeByName(name)\n"
        "    except KeyError:\n"
        "        continue\n"
        "    raise SystemExit('found ' + name)\n"
        "for name in ('tensorflow/core/example/example.proto', 'tensorflow/core/example/feature.proto'):\n"
        "    try:\n"
        "        pool.FindFileByName(name)\n"
        "    except KeyError:\n"
        "        continue\n"
        "    raise SystemExit('found ' + name)\n"
        "print(pool.FindMessageTypeByName('tfrecord_lite.Example').file.name)\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert proc.stdout.strip() == "tfrecord_lite/example.proto"


def test_reimport_reuses_the_pool_entry() -> None:
    code = (
        "import importlib, tfrecord_lite._example.proto as p\n"
        "first = p.Example\n"
        "importlib.reload(p)\n"
        "assert p.Example.DESCRIPTOR is first.DESCRIPTOR\n"
        "assert p.Example.FromString(first(features={}).SerializeToString()) == p.Example(features={})\n"
    )
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr


def test_conflicting_pool_entry_is_refused() -> None:
    # Someone else registered a different file under our name: import fails with a clear message.
    code = (
        "from google.protobuf import descriptor_pb2, descriptor_pool\n"
        "other = descriptor_pb2.FileDescriptorProto(name='tfrecord_lite/feature.proto', package='other')\n"
        "other.message_type.add(name='BytesList')\n"
        "descriptor_pool.Default().Add(other)\n"
        "import tfrecord_lite._example.proto\n"
    )
    proc = _run(code)
    assert proc.returncode != 0
    assert "already holds a different 'tfrecord_lite/feature.proto'" in proc.stderr


def _sample_example() -> tfr.Example:
    example = tfr.Example()
    feature = example.features.feature
    feature["ints"].int64_list.value.extend([0, 1, -1, 2**63 - 1, -(2**63)])
    feature["floats"].float_list.value.extend([0.5, -0.0, float("inf")])
    feature["bytes"].bytes_list.value.extend([b"", b"\x00\xff", "ü".encode()])
    feature["empty"].int64_list.SetInParent()
    feature["kindless"].SetInParent()
    return example


def test_example_round_trip() -> None:
    example = _sample_example()
    back = tfr.Example.FromString(example.SerializeToString())
    assert back == example
    feature = back.features.feature
    assert list(feature["ints"].int64_list.value) == [0, 1, -1, 2**63 - 1, -(2**63)]
    assert list(feature["floats"].float_list.value) == [0.5, -0.0, float("inf")]
    assert list(feature["bytes"].bytes_list.value) == [b"", b"\x00\xff", "ü".encode()]
    assert feature["empty"].WhichOneof("kind") == "int64_list"
    assert feature["kindless"].WhichOneof("kind") is None


def test_sequence_example_round_trip() -> None:
    seq = tfr.SequenceExample()
    seq.context.feature["id"].bytes_list.value.append(b"x")
    steps = seq.feature_lists.feature_list["tokens"].feature
    for i in range(3):
        steps.add().int64_list.value.extend(range(i))
    seq.feature_lists.feature_list["none"].SetInParent()
    back = tfr.SequenceExample.FromString(seq.SerializeToString())
    assert back == seq
    assert [list(step.int64_list.value) for step in back.feature_lists.feature_list["tokens"].feature] == [
        [],
        [0],
        [0, 1],
    ]
    assert len(back.feature_lists.feature_list["none"].feature) == 0


def test_numeric_lists_serialize_packed() -> None:
    # Packed: one length-delimited field 1 (tag 0x0a) holding the values back to back.
    assert tfr.Int64List(value=[1, 2, 300]).SerializeToString() == b"\x0a\x04\x01\x02\xac\x02"
    assert tfr.FloatList(value=[1.0]).SerializeToString() == b"\x0a\x04\x00\x00\x80\x3f"
    # Unpacked input (one tag per value, as old writers emit) parses to the same values.
    assert list(tfr.Int64List.FromString(b"\x08\x01\x08\x02").value) == [1, 2]


def test_messages_pickle() -> None:
    import pickle

    example = _sample_example()
    assert pickle.loads(pickle.dumps(example)) == example


@pytest.mark.tf
def test_descriptors_match_tensorflow() -> None:
    from tensorflow.core.example import example_pb2, feature_pb2

    for name in TF_LAYOUT:
        tf_class = getattr(example_pb2 if "Example" in name else feature_pb2, name)
        assert tf_class.DESCRIPTOR.full_name == f"tensorflow.{name}"
        assert _layout(tf_class, "tensorflow") == _layout(getattr(tfr, name), "tfrecord_lite")
    # Both live in one pool, side by side, and share the wire format.
    ours = _sample_example()
    theirs = example_pb2.Example.FromString(ours.SerializeToString())
    assert tfr.Example.FromString(theirs.SerializeToString()) == ours
