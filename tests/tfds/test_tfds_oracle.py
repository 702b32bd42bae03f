"""tfrecord_lite.tfds against TensorFlow Datasets itself: small datasets prepared locally with every
feature connector, several shards per split, two splits, RLDS-shaped episodes and an ArrayRecord
folder; every example of load(...) equals tfds.as_numpy(builder.as_dataset(split=...)), in order,
for every form of split string, decoded and not."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._tfds_builders import canonical, prepare

tfds = pytest.importorskip("tensorflow_datasets")
pytestmark = pytest.mark.tf

from tfrecord_lite import tfds as tfr_tfds
from tfrecord_lite._tfds.split_strings import read_blocks

SPLITS = ["train", "train[:10%]", "train[100:200]", "train+test", "test[-5%:]", "test[1shard]", "all"]


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return prepare("everything", tmp_path_factory.mktemp("tfds"), num_shards=5)


@pytest.fixture(scope="module")
def episodes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return prepare("episodes", tmp_path_factory.mktemp("rlds"), num_shards=3)


def oracle(builder: Any, split: str, *, decode: bool = True) -> list[Any]:
    decoders = None if decode else _skip_decoding(builder.info.features)
    ds = builder.as_dataset(split=split, decoders=decoders)
    return [canonical(ex) for ex in tfds.as_numpy(ds)]


def _skip_decoding(features: Any) -> dict[str, Any]:
    """SkipDecoding for every Image and Video, at any depth (TFDS's decode=False)."""
    out: dict[str, Any] = {}
    for name, feature in features.items():
        if isinstance(feature, (tfds.features.Image, tfds.features.Video)):
            out[name] = tfds.decode.SkipDecoding()
        elif isinstance(feature, tfds.features.FeaturesDict):
            inner = _skip_decoding(feature)
            if inner:
                out[name] = inner
        elif isinstance(feature, tfds.features.Sequence) and isinstance(feature.feature, tfds.features.FeaturesDict):
            inner = _skip_decoding(feature.feature)
            if inner:
                out[name] = inner
        elif isinstance(feature, tfds.features.Sequence) and isinstance(feature.feature, tfds.features.Image):
            out[name] = tfds.decode.SkipDecoding()
    return out


def ours(folder: Path, split: str, *, decode: bool = True) -> list[Any]:
    examples = tfr_tfds.load(folder, split=split, decode=decode)
    streamed = [canonical(ex) for ex in examples]
    assert [canonical(examples[i]) for i in range(len(examples))] == streamed  # random access agrees
    return streamed


@pytest.mark.parametrize("split", SPLITS)
def test_every_connector_and_split_string_equals_tfds(everything: Any, split: str) -> None:
    folder = Path(everything.data_dir)
    theirs = oracle(everything, split)
    assert len(theirs) == everything.info.splits[split].num_examples > 0
    assert ours(folder, split) == theirs


@pytest.mark.parametrize("split", ["train[:10%]", "test"])
def test_undecoded_images_stay_the_bytes_tfds_skips_decoding(everything: Any, split: str) -> None:
    assert ours(Path(everything.data_dir), split, decode=False) == oracle(everything, split, decode=False)


@pytest.mark.parametrize("split", ["train", "test[:50%]+train[-3:]"])
@pytest.mark.parametrize("decode", [True, False])
def test_rlds_episodes_equal_tfds_steps(episodes: Any, split: str, decode: bool) -> None:
    assert ours(Path(episodes.data_dir), split, decode=decode) == oracle(episodes, split, decode=decode)


def test_the_folder_has_several_shards_per_split_and_info_agrees(everything: Any) -> None:
    info = tfr_tfds.info(everything.data_dir)
    theirs = everything.info
    assert (info.name, info.version, info.file_format) == (theirs.name, str(theirs.version), "tfrecord")
    for name, split in info.splits.items():
        assert len(split.files) == theirs.splits[name].num_shards >= 2
        assert split.shard_lengths == tuple(theirs.splits[name].shard_lengths)
        assert [Path(f).name for f in split.files] == [Path(f).name for f in theirs.splits[name].filenames]
    assert info.class_names("label") == theirs.features["label"].names
    assert info.class_names("objects/kind") == theirs.features["objects"]["kind"].names


def test_an_array_record_folder_equals_tfds(tmp_path: Path) -> None:
    pytest.importorskip("array_record")
    builder = prepare("episodes", tmp_path, file_format="array_record", num_shards=3)
    assert tfr_tfds.info(builder.data_dir).file_format == "array_record"
    for split in ("train", "train[5:20]+test[-50%:]"):  # TFDS reads ArrayRecord as a data source only
        source = builder.as_data_source(split=split)  # its scalars are Python values, as_numpy's numpy ones
        theirs = [canonical(source[i], python_scalars=True) for i in range(len(source))]
        examples = tfr_tfds.load(builder.data_dir, split=split)
        assert [canonical(ex, python_scalars=True) for ex in examples] == theirs
        assert [canonical(examples[i], python_scalars=True) for i in range(len(examples))] == theirs


@settings(max_examples=30)
@given(takes=st.lists(st.sampled_from([1, 5, 15, 16, 17, 32, 33, 40]), min_size=1, max_size=40))
def test_the_interleaved_order_is_tf_datas(takes: list[int]) -> None:
    """TFDS's reader: tf.data's interleave(cycle_length=16, block_length=16), parallel and deterministic."""
    import numpy as np
    import tensorflow as tf

    runs = tf.data.Dataset.from_tensor_slices(np.array(takes, np.int64)).enumerate()
    ds = runs.interleave(
        lambda i, n: tf.data.Dataset.range(n).map(lambda x: (i, x)),
        cycle_length=16,
        block_length=16,
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    theirs = [(int(run), int(j)) for run, j in ds.as_numpy_iterator()]
    assert [(run, first + j) for run, first, n in read_blocks(takes, interleave=True) for j in range(n)] == theirs


def test_legacy_features_json_parses_as_tfds_reads_it() -> None:
    from tfrecord_lite._tfds.features import parse_features

    base = "tensorflow_datasets.core.features."
    legacy = {
        "type": base + "features_dict.FeaturesDict",
        "content": {
            "image": {
                "type": base + "image_feature.Image",
                "content": {"shape": [None, None, 3], "dtype": "uint8", "encoding_format": "jpeg"},
            },
            "label": {"type": base + "class_label_feature.ClassLabel", "content": {"num_classes": 10}},
            "text": {"type": base + "text_feature.Text", "content": {}},
            "seq": {
                "type": base + "sequence_feature.Sequence",
                "content": {
                    "feature": {"type": base + "feature.Tensor", "content": {"shape": [3], "dtype": "int32"}},
                    "length": 4,
                },
            },
        },
    }
    theirs = tfds.features.FeatureConnector.from_json(copy.deepcopy(legacy)).to_json()  # the form TFDS writes today
    assert parse_features(legacy) == parse_features(theirs)
