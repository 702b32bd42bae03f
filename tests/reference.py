# An independent reference decoder for the tests: it parses with the protobuf
# runtime (tfr.Example.FromString, upb or python) and converts the messages to
# the same plain form as tfr.decode_example without a spec. The decoder in
# tfrecord_lite._example (wire.py parses, decode.py materialises) must agree
# with it on every input.
from __future__ import annotations

from typing import Any

import google.protobuf
import numpy as np

import tfrecord_lite as tfr


def feature_values(feature: Any) -> Any:
    kind = feature.WhichOneof("kind")
    if kind == "int64_list":
        return np.array(list(feature.int64_list.value), dtype=np.int64)
    if kind == "float_list":
        return np.array(list(feature.float_list.value), dtype=np.float32)
    if kind == "bytes_list":
        return list(feature.bytes_list.value)
    return None


# The protobuf runtime is an oracle for damaged input only from 4.25 on: 4.21's upb parser can crash the
# interpreter on malformed messages and 4.22's accepts keys that are not UTF-8.
SOUND_ON_MALFORMED_INPUT = tuple(int(p) for p in google.protobuf.__version__.split(".")[:2]) >= (4, 25)


def decode_example(data: bytes) -> dict[str, Any]:
    msg = tfr.Example.FromString(data)
    return {key: feature_values(f) for key, f in msg.features.feature.items()}


def decode_sequence_example(data: bytes) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    msg = tfr.SequenceExample.FromString(data)
    context = {key: feature_values(f) for key, f in msg.context.feature.items()}
    lists = {key: [feature_values(f) for f in fl.feature] for key, fl in msg.feature_lists.feature_list.items()}
    return context, lists


def same_value(a: Any, b: Any) -> bool:
    """Equality of decoded values: floats by their bits (so -0.0 != 0.0), any NaN equal to any NaN."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and a == b
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":  # NaN equals NaN (payloads may be quieted through a double); -0.0 != 0.0
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b)) and a[~nan].tobytes() == b[~nan].tobytes())
    return bool(np.array_equal(a, b))


def same_features(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
