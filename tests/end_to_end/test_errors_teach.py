"""Errors that teach: each common mistake is answered where it is made, saying what was expected,
what was found and what to do (the key a typo meant, write_example, the spec a dataset needs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr
from tfrecord_lite._example.spec import normalize_dtype

RECORD = tfr.encode_example({"label": 3, "image": b"\x01\x02\x03", "weights": [0.5, 1.5], "labels_extra": [1, 2]})


@pytest.fixture
def shards(tmp_path: Path) -> str:
    """A small dataset on disk: 3 shards of Examples with an int label, bytes image and float weights."""
    prefix = str(tmp_path / "train")
    with tfr.ShardedWriter(prefix, num_shards=3) as writer:
        for i in range(12):
            writer.write_example({"label": i, "image": bytes([i] * 4), "weights": [i / 2, i + 0.25]})
    return prefix


# --------------------------------------------------------------------------- a missing key


def test_a_missing_key_lists_the_record_keys_and_the_close_matches():
    with pytest.raises(tfr.FeatureError) as info:
        tfr.decode_example(RECORD, {"lable": tfr.FixedLenFeature([], "int64")})
    message = str(info.value)
    assert info.value.key == "lable"
    assert "did you mean 'label'" in message
    assert "The record has 'image', 'label', 'labels_extra', 'weights'." in message


def test_a_missing_key_without_close_matches_still_lists_the_keys(shards):
    spec = {"zzz": tfr.FixedLenFeature([], "int64")}
    with pytest.raises(tfr.FeatureError, match=r"missing and its spec has no default_value\. The record has 'image'"):
        next(tfr.iter_example_batches(shards + "-00000-of-00003.tfrecord", features=spec))
    with pytest.raises(tfr.FeatureError, match="did you mean"):
        tfr.decode_examples([RECORD], {"imgae": tfr.FixedLenFeature([], "bytes")})


def test_missing_context_features_and_feature_lists_name_their_close_matches():
    record = tfr.encode_sequence_example({"length": 2}, {"tokens": [[1], [2]]})
    with pytest.raises(tfr.FeatureError, match=r"did you mean 'length'.*has 'length'"):
        tfr.decode_sequence_example(record, {"lenght": tfr.FixedLenFeature([], "int64")}, {})
    with pytest.raises(
        tfr.FeatureError, match=r"feature_list is missing \(allow_missing=False\); did you mean 'tokens'"
    ):
        tfr.decode_sequence_example(record, {}, {"token": tfr.FixedLenSequenceFeature([1], "int64")})


def test_many_keys_are_shortened():
    record = tfr.encode_example({f"k{i:02d}": i for i in range(30)})
    with pytest.raises(tfr.FeatureError, match=r"'k19', \.\.\. \(30 in all\)"):
        tfr.decode_example(record, {"x": tfr.FixedLenFeature([], "int64")})


# --------------------------------------------------------------------------- write() of a non-record


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ({"a": 1}, r"found dict \{'a': 1\}; for a dict of feature values use write_example"),
        (tfr.Example(), r"found a Example message; pass record.SerializeToString\(\), or write_example"),
        ("text", r"found str 'text'; encode text first \(record.encode\(\)\), or use write_example"),
        (7, "found int 7; for a dict of feature values use write_example"),
    ],
)
def test_write_of_a_non_record_points_to_write_example(tmp_path, value, hint):
    with tfr.TFRecordWriter(tmp_path / "a.tfrecord") as writer:
        with pytest.raises(TypeError, match=r"write\(\) takes one serialized record \(bytes or a bytes-like"):
            writer.write(value)
        with pytest.raises(TypeError, match=hint):
            writer.write(value)
        writer.write(bytearray(b"ok"))
    with tfr.ShardedWriter(str(tmp_path / "s"), num_shards=1) as sharded, pytest.raises(TypeError, match=hint):
        sharded.write(value)
    assert list(tfr.iter_records(tmp_path / "a.tfrecord")) == [b"ok"]


# --------------------------------------------------------------------------- specs, checked where they are given


def test_the_tfrecord_packages_descriptions_give_its_values(shards):
    described = {"image": "byte", "label": "int", "weights": "float"}
    path = shards + "-00001-of-00003.tfrecord"
    first = next(iter(tfr.iter_records(path)))
    ours = tfr.decode_example(first, described)
    raw = tfr.decode_example(first)  # every feature, no spec: the values as stored
    assert np.frombuffer(ours["image"], np.uint8).tolist() == list(raw["image"][0])  # the package's uint8 array
    assert ours["label"].dtype == np.int64 and ours["label"].tolist() == raw["label"].tolist()
    assert ours["weights"].dtype == np.float32 and ours["weights"].tolist() == raw["weights"].tolist()
    batch = next(tfr.iter_example_batches(path, features=described))
    assert batch["label"].row(0).tolist() == ours["label"].tolist()


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        (["image", "label"], TypeError, r"found list \['image', 'label'\] — a list of keys has no types"),
        ({"label": "int64"}, tfr.FeatureError, r"found str 'int64'; for a dtype alone write tfr.VarLenFeature"),
        ({"label": 5}, tfr.FeatureError, "expected a FixedLenFeature, VarLenFeature, "),
        ({3: tfr.VarLenFeature("int64")}, TypeError, "keys must be str, found int 3"),
        ("label", TypeError, "must be a dict {key: spec}, found str 'label'"),
    ],
)
def test_bad_specs_are_refused_when_the_decoder_is_built(shards, spec, error, message):
    with pytest.raises(error, match=message):
        tfr.iter_example_batches(shards + "-00000-of-00003.tfrecord", features=spec)  # no batch asked for yet
    with pytest.raises(error, match=message):
        tfr.decode_examples([RECORD], spec)
    if not isinstance(spec, dict) or all(isinstance(key, str) for key in spec):  # one record: no key check
        with pytest.raises(error, match=message):
            tfr.decode_example(RECORD, spec)


def test_batch_decoders_check_their_other_arguments_at_once(shards):
    path = shards + "-00000-of-00003.tfrecord"
    spec = {"label": tfr.FixedLenFeature([], "int64")}
    with pytest.raises(TypeError, match="decoding a batch by columns needs features="):
        tfr.decode_examples([RECORD], None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, found 0"):
        tfr.iter_example_batches(path, features=spec, batch_size=0)
    with pytest.raises(TypeError, match="batch_size must be an int >= 1, found str '8'"):
        tfr.iter_example_batches(path, features=spec, batch_size="8")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown compression 'lz4'"):
        tfr.iter_example_batches(path, features=spec, compression="lz4")
    assert len(next(tfr.iter_example_batches(path, features=spec, batch_size=np.int64(2)))["label"]) == 2


# --------------------------------------------------------------------------- dtype aliases


@pytest.mark.parametrize(
    ("alias", "dtype"),
    [
        ("int", "int64"),
        ("int64", "int64"),
        ("INT64", "int64"),
        (np.int64, "int64"),
        (np.dtype("int64"), "int64"),
        (int, "int64"),
        ("float", "float32"),
        ("float32", "float32"),
        (np.float32, "float32"),
        (float, "float32"),
        ("bytes", "bytes"),
        ("string", "bytes"),
        ("str", "bytes"),
        (bytes, "bytes"),
        (str, "bytes"),
        (np.bytes_, "bytes"),
    ],
)
def test_every_dtype_alias_means_the_same_everywhere(shards, alias, dtype):
    assert normalize_dtype(alias) == dtype
    key = {"int64": "label", "float32": "weights", "bytes": "image"}[dtype]
    path = shards + "-00000-of-00003.tfrecord"
    expected = tfr.decode_example(next(iter(tfr.iter_records(path))), {key: tfr.VarLenFeature(dtype)})[key]
    found = tfr.decode_example(next(iter(tfr.iter_records(path))), {key: tfr.VarLenFeature(alias)})[key]
    assert type(found) is type(expected) and np.array_equal(np.asarray(found), np.asarray(expected))
    assert tfr.FixedLenSequenceFeature([2], alias, allow_missing=True).dtype == dtype


@pytest.mark.parametrize("alias", ["float64", np.float64, "double", "uint8", bool, "object", None, 3, "bfloat16"])
def test_anything_else_is_one_error_listing_the_spellings(alias):
    for make in (lambda: tfr.VarLenFeature(alias), lambda: tfr.FixedLenFeature([], alias)):
        with pytest.raises(
            ValueError, match=r"unsupported dtype .* for a feature spec: use 'int64' / 'int' / np.int64"
        ):
            make()


# --------------------------------------------------------------------------- torch datasets, checked when built


@pytest.fixture
def torch_datasets():
    pytest.importorskip("torch")
    from tfrecord_lite import torch as tt

    return tt


DATASETS = ["TFRecordDataset", "IterableTFRecordDataset"]


@pytest.mark.torch
@pytest.mark.parametrize("name", DATASETS)
@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((None, {"image": "bytes"}), {}, TypeError, "takes 2 positional arguments but 4 were given"),
        ((), {"features": "train.index"}, TypeError, "if it is an index path .* drop it"),
        ((), {"features": ["image", "label"]}, TypeError, "a list of keys has no types"),
        ((), {"features": {"image": "bytes"}}, tfr.FeatureError, "feature 'image': unsupported spec"),
        ((), {"transform": "not callable"}, TypeError, "transform must be a callable"),
        ((), {"context_features": ["a"]}, TypeError, "context_features must be a dict"),
        ((), {"sequence_features": {"s": 1}}, tfr.FeatureError, "feature 's': unsupported spec"),
        ((), {"collate_fn": lambda batch: batch}, TypeError, r"collate_fn must be a tfrecord_lite.torch.Collate"),
        ((), {"output": "tensor"}, ValueError, "output='tensor': use one of 'numpy', 'torch'"),
        ((), {"compression": "lz4"}, ValueError, "unknown compression 'lz4'"),
        ((), {"max_record_bytes": 0}, ValueError, "max_record_bytes must be an int >= 1, found 0"),
    ],
)
def test_datasets_check_specs_and_arguments_when_built(torch_datasets, shards, name, args, kwargs, error, message):
    with pytest.raises(error, match=message):
        getattr(torch_datasets, name)(shards, *args, **kwargs)


@pytest.mark.torch
def test_streaming_and_mixing_arguments_are_checked_when_built(torch_datasets, shards):
    tt = torch_datasets
    spec = {"label": tfr.FixedLenFeature([], "int64")}
    with pytest.raises(TypeError, match=r"batch_size must be an int >= 1, found float 2\.5"):
        tt.IterableTFRecordDataset(shards, features=spec, batch_size=2.5)
    with pytest.raises(ValueError, match="shuffle_buffer must be an int >= 0, found -1"):
        tt.IterableTFRecordDataset(shards, shuffle=True, shuffle_buffer=-1)
    with pytest.raises(TypeError, match="seed must be an int, found str 'abc'"):
        tt.IterableTFRecordDataset(shards, seed="abc")
    source = tt.IterableTFRecordDataset(shards, features=spec)
    with pytest.raises(TypeError, match=r"a list of IterableTFRecordDatasets \(\[ds1, ds2\]\), found one dataset"):
        tt.MixedTFRecordDataset(source)
    with pytest.raises(TypeError, match=r"datasets\[1\] must be an IterableTFRecordDataset, found str"):
        tt.MixedTFRecordDataset([source, shards])


@pytest.mark.torch
def test_datasets_read_with_the_tfrecord_packages_descriptions(torch_datasets, shards):
    described = {"image": "byte", "label": "int", "weights": "float"}
    ds = torch_datasets.TFRecordDataset(shards, features=described)
    expected = tfr.decode_example(ds.raw(5), described)
    label = int(expected["label"][0])
    assert ds[5]["image"] == expected["image"] == bytes([label] * 4)
    assert ds[5]["label"].tolist() == [label] and ds[5]["weights"].tolist() == [label / 2, label + 0.25]
    batch = ds[[0, 5]]  # the spec's VarLenFeatures are padded, with lengths
    assert batch["weights"].shape == (2, 2) and batch["label_length"].tolist() == [1, 1]
    stream = torch_datasets.IterableTFRecordDataset(shards, features=described, batch_size=4)
    assert sorted(int(v) for b in stream for v in b["label"].flatten()) == list(range(12))
