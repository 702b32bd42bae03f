"""A TFDS split as a pyarrow Table and a Hugging Face Dataset, one row per example in the Split's
order, typed from the feature tree (never inferred from the values).

Strategy: `arrow_schema` maps each connector to an Arrow type: a FeaturesDict to a struct, a
Sequence or Dataset to a list of its feature's type, a Tensor of rank r to r nested lists of its
dtype (a scalar to the dtype itself), a Sequence of a FeaturesDict to a struct of lists (as TFDS
hands it back: a dict of sequences), Text and bytes tensors to binary, an Image or Video to binary
(its encoded bytes) or, decoded, nested lists of its pixels. Rows are made by turning each decoded
example into Python values (arrays by `tolist`, a Dataset's steps as a list of step structs) and
handed to pyarrow in batches of BATCH rows with that schema, so memory holds one batch of Python
values at a time. The Hugging Face Dataset is written by `datasets.Dataset.from_generator` from the
examples (streamed into its Arrow cache, which the pickled Split names), with `datasets` features:
an `Image()` where TFDS has an Image (its bytes in the struct<bytes, path> Image() stores) and a
`ClassLabel` with its names where TFDS has one. pyarrow and datasets are imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from tfrecord_lite._tfds.features import (
    ClassLabel,
    Dataset,
    Feature,
    FeaturesDict,
    Image,
    Sequence,
    Tensor,
    Video,
)

if TYPE_CHECKING:  # pragma: no cover
    from tfrecord_lite._tfds.reading import Split

BATCH = 1024


def arrow_schema(root: Feature, *, decode: bool) -> Any:
    """The pyarrow schema of a split's rows (the root must be a FeaturesDict)."""
    import pyarrow as pa

    kind = arrow_type(root, decode=decode)
    if not pa.types.is_struct(kind):
        return pa.schema([pa.field("value", kind)])
    return pa.schema([kind.field(i) for i in range(kind.num_fields)])


def arrow_type(node: Feature, *, decode: bool) -> Any:
    """The Arrow type of one connector's values."""
    import pyarrow as pa

    if isinstance(node, FeaturesDict):
        return pa.struct([pa.field(name, arrow_type(child, decode=decode)) for name, child in node.features.items()])
    if isinstance(node, Sequence) and not isinstance(node, Dataset) and isinstance(node.feature, FeaturesDict):
        columns = {
            name: Sequence(child.key, feature=child, length=node.length)
            for name, child in node.feature.features.items()
        }
        return arrow_type(FeaturesDict(node.key, features=columns), decode=decode)  # TFDS: a dict of sequences
    if isinstance(node, Sequence):
        return pa.list_(arrow_type(node.feature, decode=decode))
    if isinstance(node, (Image, Video)):
        if not decode:
            return pa.list_(pa.binary()) if isinstance(node, Video) else pa.binary()
        return _nested(pa.from_numpy_dtype(np.dtype(node.dtype)), len(node.shape))
    if isinstance(node, Tensor):
        if node.dtype == "object":
            return _nested(pa.binary(), len(node.shape))
        return _nested(pa.from_numpy_dtype(np.dtype(node.dtype)), len(node.shape))
    raise TypeError(f"no Arrow type for {node.kind}")  # pragma: no cover - the tree has no other kinds


def _nested(kind: Any, rank: int) -> Any:
    import pyarrow as pa

    for _ in range(rank):
        kind = pa.list_(kind)
    return kind


def python_value(value: Any) -> Any:
    """A decoded value as plain Python (arrays by tolist, numpy scalars by item)."""
    if isinstance(value, dict):
        return {k: python_value(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [python_value(v) for v in value]
    return value


def split_table(examples: Split) -> Any:
    """The examples of a Split as a pyarrow Table (in the Split's order)."""
    import pyarrow as pa

    schema = arrow_schema(examples.info.features, decode=examples._decode)
    wrap = not isinstance(examples.info.features, FeaturesDict)
    batches, rows = [], []
    for example in examples:
        rows.append({"value": python_value(example)} if wrap else python_value(example))
        if len(rows) == BATCH:
            batches.append(pa.RecordBatch.from_pylist(rows, schema=schema))
            rows = []
    if rows or not batches:
        batches.append(pa.RecordBatch.from_pylist(rows, schema=schema))
    return pa.Table.from_batches(batches, schema=schema)


def hf_features(root: Feature, names: Any) -> Any:
    """The `datasets` Features of a split's table (decode=False): Image and ClassLabel where TFDS
    has them; `names(key)` gives a ClassLabel's class names."""
    import datasets

    def feature(node: Feature) -> Any:
        if isinstance(node, FeaturesDict):
            return {name: feature(child) for name, child in node.features.items()}
        if isinstance(node, Dataset):
            return [feature(node.feature)]
        if isinstance(node, Sequence) and isinstance(node.feature, FeaturesDict):
            return {name: datasets.Sequence(feature(child)) for name, child in node.feature.features.items()}
        if isinstance(node, Sequence):
            return datasets.Sequence(feature(node.feature))
        if isinstance(node, Image) and node.dtype == "uint8":
            return datasets.Image()
        if isinstance(node, ClassLabel) and not node.shape:
            return datasets.ClassLabel(names=names(node.key))
        return datasets.Features.from_arrow_schema(
            __import__("pyarrow").schema([("x", arrow_type(node, decode=False))])
        )["x"]

    return datasets.Features(feature(root))


def hf_dataset(examples: Split) -> Any:
    """The examples of a Split (read with decode=False) as a Hugging Face Dataset."""
    import datasets

    features = hf_features(examples.info.features, examples.info.class_names)
    return datasets.Dataset.from_generator(_hf_rows, features=features, gen_kwargs={"examples": examples})


def _hf_rows(examples: Split) -> Iterator[dict[str, Any]]:
    """The rows of `examples` for `datasets` (a module-level generator: datasets pickles it and its
    arguments to name its cache). Arrays stay numpy arrays: datasets converts them by their dtype
    (Python ints past int64, such as a uint64's, it cannot)."""

    features = hf_features(examples.info.features, examples.info.class_names)
    for example in examples:
        yield {k: _hf_value(features[k], v) for k, v in example.items()}


def _hf_value(feature: Any, value: Any) -> Any:
    import datasets

    if isinstance(feature, datasets.Image):
        return {"bytes": value, "path": None}
    if isinstance(feature, dict):
        return {k: _hf_value(feature[k], v) for k, v in value.items()}
    return value
