# The `tfrecord` package's writer takes {key: (value, kind)}; handed to encode_example / write_example
# such a pair would be a two-value list (or fail as "a mixed list"). It is refused with the value to
# write instead, in Examples and in SequenceExamples' feature lists; other tuples still encode.
from __future__ import annotations

from pathlib import Path

import pytest

import tfrecord_lite as tfr


@pytest.mark.parametrize(
    ("pair", "instead"),
    [
        ((1, "int"), "{'label': 1}"),
        (([0.5, 2.0], "float"), "{'label': np.asarray([0.5, 2.0], np.float32)}"),
        ((b"cat", "byte"), "{'label': b'cat'}"),
        (("cat", "byte"), "{'label': 'cat'}"),
    ],
)
def test_a_package_pair_is_refused_with_the_value_to_write(pair: tuple[object, str], instead: str) -> None:
    with pytest.raises(tfr.FeatureError) as err:
        tfr.encode_example({"label": pair})
    message = str(err.value)
    assert message.startswith(f"feature 'label': {pair!r} is a (value, kind) pair of the tfrecord package's writer")
    assert instead in message and "tfrecord_lite.compat.tfrecord.TFRecordWriter" in message


def test_write_example_and_feature_lists_refuse_pairs_too(tmp_path: Path) -> None:
    with tfr.TFRecordWriter(tmp_path / "a.tfrecord") as writer, pytest.raises(tfr.FeatureError, match="'int'\\) is a"):
        writer.write_example({"label": (1, "int")})
    steps = [[0, 0, 1], [0, 1, 0]]
    with pytest.raises(tfr.FeatureError, match="here the list of steps goes alone") as err:
        tfr.encode_sequence_example({}, {"tokens": (steps, "int")})
    assert "{'tokens': [[0, 0, 1], [0, 1, 0]]}" in str(err.value)


def test_other_tuples_and_lists_still_encode() -> None:
    record = tfr.encode_example({"a": (1, 2), "b": ("x", "y", "int"), "c": ["cat", "byte"], "d": ("int", "x")})
    values = tfr.decode_example(record)
    assert values["a"].tolist() == [1, 2] and values["b"] == [b"x", b"y", b"int"]
    assert values["c"] == [b"cat", b"byte"]
    assert values["d"] == [b"int", b"x"]
