"""TensorFlow as the maker of records of other message types: a user's message from a descriptor
set protoc writes, and TF Ranking's ExampleListWithContext, both encoded by `tf.io.encode_proto`
from the set and written by `tf.io.TFRecordWriter`, then read by tfrecord_lite equal to the
protobuf runtime's own decoding (and, for the user's message, to `tf.io.decode_proto`'s).

Skipped as a whole when TensorFlow is not installed."""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from google.protobuf import descriptor_pb2, json_format

import tfrecord_lite as tfr
from tfrecord_lite._datasets.messages import is_elwc
from tfrecord_lite._datasets.schema import collect_schema

pytestmark = pytest.mark.tf

RANK_PROTO = """syntax = "proto3";
package rank;
message Query {
  string text = 1;
  repeated float scores = 2;
  int64 id = 3;
  Where where = 4;
  message Where { string country = 1; bool mobile = 2; }
}
"""


def _protoc_set(tmp_path: Path) -> Path:
    (tmp_path / "rank.proto").write_text(RANK_PROTO)
    out = tmp_path / "rank.pb"
    done = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp_path}", "--include_imports"]
        + [f"--descriptor_set_out={out}", str(tmp_path / "rank.proto")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        pytest.skip(f"protoc (grpc_tools) did not run: {done.stderr}")
    return out


def _write(path: Path, records: Any) -> None:
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


def test_a_users_message_made_by_tensorflow_reads_as_the_runtime_and_tf_decode_it(tmp_path: Path) -> None:
    descriptors = _protoc_set(tmp_path)
    where = tf.io.encode_proto(
        tf.constant([[1, 1], [1, 0], [0, 0]], tf.int32),
        [tf.constant([["FR"], ["JP"], [""]]), tf.constant([[True], [False], [False]])],
        ["country", "mobile"],
        "rank.Query.Where",
        descriptor_source=str(descriptors),
    )
    records = tf.io.encode_proto(
        tf.constant([[1, 2, 1, 1], [1, 0, 1, 1], [1, 3, 1, 0]], tf.int32),
        [
            tf.constant([["red shoes"], ["ünïcode"], ["x"]]),
            tf.constant([[0.5, 0.25, 0.0], [0, 0, 0], [1.0, 2.0, -3.5]], tf.float32),
            tf.constant([[7], [-1], [1 << 40]], tf.int64),
            tf.reshape(where, [3, 1]),
        ],
        ["text", "scores", "id", "where"],
        "rank.Query",
        descriptor_source=str(descriptors),
    ).numpy()
    _write(tmp_path / "queries.tfrecord", records)

    cls = tfr.load_message_class(descriptors, message="rank.Query")
    read = [tfr.decode_message(r, message=cls) for r in tfr.iter_records(str(tmp_path / "queries.tfrecord"))]
    runtime = [json_format.MessageToDict(cls.FromString(r), preserving_proto_field_name=True) for r in records]
    assert read == runtime
    assert read[0] == {
        "text": "red shoes",
        "scores": [0.5, 0.25],
        "id": "7",
        "where": {"country": "FR", "mobile": True},
    }
    assert read[2]["id"] == str(1 << 40) and "where" not in read[2]
    _, (text, scores, ids) = tf.io.decode_proto(
        records, "rank.Query", ["text", "scores", "id"], [tf.string, tf.float32, tf.int64],
        descriptor_source=str(descriptors),
    )  # fmt: skip
    assert [r.get("text", "") for r in read] == [t.decode() for t in text.numpy()[:, 0]]
    np.testing.assert_array_equal([r.get("scores", [0.0])[0] for r in read], scores.numpy()[:, 0])
    assert [int(r.get("id", 0)) for r in read] == ids.numpy()[:, 0].tolist()
    schema = collect_schema(records)  # no Example: every record counted as not one
    assert schema.raw == 3 and not schema.features


def _elwc_set(tmp_path: Path) -> Path:
    """A descriptor set of tensorflow_serving's ExampleListWithContext, with the Example protos it
    imports taken from TensorFlow's own generated descriptors."""
    files = []
    for proto in (tf.train.Feature, tf.train.Example):
        file = descriptor_pb2.FileDescriptorProto()
        proto.DESCRIPTOR.file.CopyToProto(file)
        files.append(file)
    elwc = descriptor_pb2.FileDescriptorProto(
        name="tensorflow_serving/apis/input.proto",
        package="tensorflow.serving",
        syntax="proto3",
        dependency=[files[1].name],
    )
    message = elwc.message_type.add(name="ExampleListWithContext")
    field = descriptor_pb2.FieldDescriptorProto
    message.field.add(
        name="examples", number=1, type=field.TYPE_MESSAGE, label=field.LABEL_REPEATED, type_name=".tensorflow.Example"
    )
    message.field.add(
        name="context", number=2, type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL, type_name=".tensorflow.Example"
    )
    path = tmp_path / "input.pb"
    path.write_bytes(descriptor_pb2.FileDescriptorSet(file=[*files, elwc]).SerializeToString())
    return path


def _example(features: dict[str, Any]) -> bytes:
    feature = {}
    for key, value in features.items():
        if isinstance(value[0], bytes):
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
        elif isinstance(value[0], float):
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
        else:
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=value))
    return bytes(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


def _runtime_features(example: Any) -> dict[str, list[Any]]:
    out = {}
    for key, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        out[key] = list(getattr(feature, kind).value) if kind else []
    return out


def test_elwc_made_by_tensorflow_reads_as_the_runtime_decodes_it(tmp_path: Path) -> None:
    descriptors = _elwc_set(tmp_path)
    first = [{"doc": [b"a"], "rel": [2], "score": [0.5, 0.25]}, {"doc": [b"b"], "rel": [0]}]
    lists = [({"query": [b"red shoes"], "query_id": [7]}, first), ({"query": ["ünïcode".encode()]}, [{"rel": [1]}])]
    records = []
    for context, examples in lists:
        encoded = tf.io.encode_proto(
            tf.constant([[len(examples), 1]], tf.int32),
            [
                tf.constant([[_example(e) for e in examples] + [b""] * (2 - len(examples))]),
                tf.constant([[_example(context)]]),
            ],
            ["examples", "context"],
            "tensorflow.serving.ExampleListWithContext",
            descriptor_source=str(descriptors),
        )
        records.append(encoded.numpy()[0])
    _write(tmp_path / "lists.tfrecord", records)

    cls = tfr.load_message_class(descriptors, message="tensorflow.serving.ExampleListWithContext")
    for record, (context, examples) in zip(tfr.iter_records(str(tmp_path / "lists.tfrecord")), lists, strict=True):
        assert is_elwc(record)
        ours_context, ours_examples = tfr.decode_elwc(record)
        runtime = cls.FromString(record)
        expected = [_runtime_features(e) for e in runtime.examples]
        assert _runtime_features(runtime.context) == {k: list(v) for k, v in context.items()}
        assert len(expected) == len(examples)
        for ours, theirs in zip(
            [ours_context, *ours_examples], [_runtime_features(runtime.context), *expected], strict=True
        ):
            assert sorted(ours) == sorted(theirs)
            for key, value in theirs.items():
                np.testing.assert_array_equal(
                    np.asarray(ours[key]), np.asarray(value, dtype=np.asarray(ours[key]).dtype)
                )
        assert tfr.decode_message(record, message=cls) == json_format.MessageToDict(
            runtime, preserving_proto_field_name=True
        )
