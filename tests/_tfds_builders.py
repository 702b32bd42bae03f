"""Small TensorFlow Datasets builders, prepared locally (nothing downloaded), that the tfds tests read
with tfrecord_lite.tfds and with TFDS itself as the oracle: `Everything` holds every feature connector
TFDS writes (and every Tensor dtype), `Episodes` is RLDS-shaped (a `steps` Dataset per episode).
tests/data/tfds/make_expected.py writes the py venv's stored folders with the same builders.
Importing this module imports nothing; `builders()` imports tensorflow_datasets.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

TRAIN, TEST = 240, 40
# the builders' module as TFDS sees it: one name, so that it does not look for the code in a package
# through importlib_resources (not a dependency of tensorflow-datasets 4.9)
_MODULE = "tfds_test_builders"  # examples: train[100:200] makes sense, test[-5%:] is 2 of them


@functools.cache
def builders() -> dict[str, Any]:
    """The builder classes by name (defined once: TFDS registers a builder class by its name)."""
    import tensorflow_datasets as tfds

    F = tfds.features

    class Everything(tfds.core.GeneratorBasedBuilder):  # type: ignore[misc]
        VERSION = tfds.core.Version("1.2.0")
        __module__ = _MODULE
        SIZES = (TRAIN, TEST)

        def _info(self) -> Any:
            dtypes = {
                name: F.Tensor(shape=(2,), dtype=np.dtype(name))
                for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
            }
            dtypes.update(
                {name: F.Tensor(shape=(), dtype=np.dtype(name)) for name in ("float16", "float32", "float64")}
            )
            return tfds.core.DatasetInfo(
                builder=self,
                description="Every feature connector, for tfrecord_lite's tests.",
                features=F.FeaturesDict(
                    {
                        "image": F.Image(shape=(8, 6, 3)),
                        "gray_jpeg": F.Image(shape=(None, None, 1), encoding_format="jpeg"),
                        "rgba": F.Image(shape=(None, None, 4)),
                        "deep": F.Image(shape=(4, 4, 1), dtype=np.uint16),
                        "depth": F.Image(shape=(3, 2, 1), dtype=np.float32),
                        "label": F.ClassLabel(names=["cat", "dog", "bird"]),
                        "text": F.Text(),
                        "score": F.Scalar(dtype=np.float32),
                        "flag": np.bool_,
                        "name": F.Tensor(shape=(), dtype=np.str_),
                        "words": F.Tensor(shape=(None,), dtype=np.str_),
                        "ragged_rows": F.Tensor(shape=(2, None), dtype=np.int32),
                        "any_shape": F.Tensor(shape=(None, None), dtype=np.float32, encoding="zlib"),
                        "packed": F.Tensor(shape=(2, 3), dtype=np.uint64, encoding="bytes"),
                        "dtypes": dtypes,
                        "objects": F.Sequence(
                            {"bbox": F.BBoxFeature(), "kind": F.ClassLabel(num_classes=4), "note": F.Text()}
                        ),
                        "fixed": F.Sequence(np.float32, length=3),
                        "nested_lists": F.Sequence(F.Sequence(np.int64)),
                        "frames": F.Sequence(F.Image(shape=(None, None, 3))),
                        "nested": {"a": np.uint8, "b": {"c": F.Tensor(shape=(3,), dtype=np.float16)}},
                        "box": F.BBoxFeature(),
                        "audio": F.Audio(shape=(None,), dtype=np.int16, sample_rate=8000),
                        "maybe": F.Scalar(dtype=np.int64, optional=True),
                        "translation": F.Translation(languages=["fr", "en"]),
                        "any_language": F.TranslationVariableLanguages(),
                        "labeled": F.LabeledImage(labels=["sky", "sea"], shape=(3, 3, 1)),
                        "maybe_pair": F.Tensor(shape=(2,), dtype=np.float32, optional=True),
                        "video": F.Video(shape=(None, 4, 4, 3)),
                    }
                ),
            )

        def _split_generators(self, dl_manager: Any) -> Any:
            train, test = self.SIZES
            return {"train": self._generate_examples(train, 0), "test": self._generate_examples(test, 1)}

        def _generate_examples(self, n: int, seed: int) -> Any:
            for i in range(n):
                yield i, everything_example(i, seed)

    class Episodes(tfds.core.GeneratorBasedBuilder):  # type: ignore[misc]
        VERSION = tfds.core.Version("0.1.0")
        __module__ = _MODULE

        def _info(self) -> Any:
            return tfds.core.DatasetInfo(
                builder=self,
                description="RLDS-shaped episodes.",
                features=F.FeaturesDict(
                    {
                        "steps": F.Dataset(
                            {
                                "observation": {
                                    "image": F.Image(shape=(4, 4, 3)),
                                    "state": F.Tensor(shape=(2,), dtype=np.float64),
                                },
                                "action": F.Tensor(shape=(3,), dtype=np.float32),
                                "reward": F.Scalar(dtype=np.float32),
                                "discount": F.Scalar(dtype=np.float32),
                                "is_first": np.bool_,
                                "is_last": np.bool_,
                                "is_terminal": np.bool_,
                                "language_instruction": F.Text(),
                            }
                        ),
                        "episode_metadata": {"file_path": F.Text(), "episode_id": np.int32},
                    }
                ),
            )

        def _split_generators(self, dl_manager: Any) -> Any:
            return {"train": self._generate_examples(24, 0), "test": self._generate_examples(6, 1)}

        def _generate_examples(self, n: int, seed: int) -> Any:
            for i in range(n):
                yield i, episode(i, seed)

    return {"everything": Everything, "episodes": Episodes}


def everything_example(i: int, seed: int) -> dict[str, Any]:
    import tensorflow_datasets as tfds

    rng = np.random.default_rng(1000 * seed + i)
    k = i % 3
    return {
        "image": rng.integers(0, 256, (8, 6, 3), dtype=np.uint8),
        "gray_jpeg": rng.integers(0, 256, (5 + k, 7, 1), dtype=np.uint8),
        "rgba": rng.integers(0, 256, (2, 3 + k, 4), dtype=np.uint8),
        "deep": rng.integers(0, 65536, (4, 4, 1), dtype=np.uint16),
        "depth": rng.random((3, 2, 1), dtype=np.float32),
        "label": i % 3,
        "text": f"example {i} ✓",
        "score": i * 0.25,
        "flag": i % 2 == 0,
        "name": f"n{i}",
        "words": [f"w{j}" for j in range(k)],
        "ragged_rows": np.arange(2 * k, dtype=np.int32).reshape(2, k),
        "any_shape": rng.random((k, k + 1), dtype=np.float32),
        "packed": np.array([[1, 2, 3], [4, 5, 2**64 - 1 - i]], np.uint64),
        "dtypes": {
            "int8": np.array([-128, i % 127], np.int8),
            "int16": np.array([-32768, i], np.int16),
            "int32": np.array([-(2**31), i], np.int32),
            "int64": np.array([-(2**63), i], np.int64),
            "uint8": np.array([255, i % 256], np.uint8),
            "uint16": np.array([65535, i], np.uint16),
            "uint32": np.array([2**32 - 1, i], np.uint32),
            "uint64": np.array([2**64 - 1, i], np.uint64),
            "float16": np.float16(i / 3),
            "float32": np.float32(i / 7),
            "float64": i / 11,
        },
        "objects": {
            "bbox": [tfds.features.BBox(0.1 * j, 0.0, 0.5, 0.25 * (j + 1)) for j in range(k)],
            "kind": [(i + j) % 4 for j in range(k)],
            "note": [f"o{j}" for j in range(k)],
        },
        "fixed": [0.5, 1.5, float(i)],
        "nested_lists": [list(range(j)) for j in range(k + 1)][: k + 1 if i % 4 else 0],
        "frames": [rng.integers(0, 256, (2, 3, 3), dtype=np.uint8) for _ in range(k)],
        "nested": {"a": i % 256, "b": {"c": np.array([i, 1, 2], np.float16)}},
        "box": tfds.features.BBox(0.1, 0.2, 0.5, 0.75),
        "audio": rng.integers(-1000, 1000, (5 + i % 7,), dtype=np.int16),
        "maybe": i if i % 2 else None,
        "translation": {"en": f"the cat {i}", "fr": f"le chat {i}"},
        "any_language": {"en": f"dog {i}", "de": [f"Hund {i}", "Köter"]} if k else {"en": "dog"},
        "labeled": rng.integers(0, 2, (3, 3, 1), dtype=np.uint8),
        "maybe_pair": None if i % 3 else np.array([i, -i], np.float32),
        "video": rng.integers(0, 256, (k + 1, 4, 4, 3), dtype=np.uint8),
    }


def episode(i: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(5000 + 1000 * seed + i)
    n = 1 + i % 4
    return {
        "steps": [
            {
                "observation": {
                    "image": rng.integers(0, 256, (4, 4, 3), dtype=np.uint8),
                    "state": np.array([j, i / 2]),
                },
                "action": rng.random(3, dtype=np.float32),
                "reward": float(j == n - 1),
                "discount": 1.0,
                "is_first": j == 0,
                "is_last": j == n - 1,
                "is_terminal": j == n - 1,
                "language_instruction": f"pick block {i}",
            }
            for j in range(n)
        ],
        "episode_metadata": {"file_path": f"episode_{i}.npy", "episode_id": i},
    }


def prepare(
    name: str,
    data_dir: Path,
    *,
    file_format: str = "tfrecord",
    num_shards: int = 5,
    sizes: tuple[int, int] = (TRAIN, TEST),
) -> Any:
    """Prepare builder `name` under `data_dir` (no download) and hand back the builder; `sizes` are
    Everything's (train, test) example counts."""
    import tensorflow_datasets as tfds

    cls = builders()[name]
    cls.SIZES = sizes
    builder = cls(data_dir=str(data_dir), file_format=file_format)
    builder.download_and_prepare(download_config=tfds.download.DownloadConfig(num_shards=num_shards))
    return builder


def canonical(value: Any, *, python_scalars: bool = False) -> Any:
    """A decoded example (ours, or tfds.as_numpy's) as plain JSON-able data that keeps every type,
    dtype, shape and byte: equal canonical forms mean equal examples. A tf.RaggedTensor (TFDS's
    nested sequences) and our list of arrays both become ("ragged", nested lists); a nested dataset
    (RLDS steps) and our list of step dicts both become ("list", steps); empty, both are ("empty",).
    `python_scalars`: numpy scalars compared as the Python values TFDS's data sources hand back."""
    if python_scalars and isinstance(value, np.generic) and value.dtype != object:
        value = value.item()
    if isinstance(value, (bool, int, float)):
        return ["python", repr(value)]
    if isinstance(value, dict):
        return {"dict": {str(k): canonical(v, python_scalars=python_scalars) for k, v in value.items()}}
    if isinstance(value, bytes):
        return ["bytes", value.hex()]
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ["objects", list(value.shape), [bytes(v).hex() for v in value.ravel()]]
        return ["array", value.dtype.str, list(value.shape), value.tobytes().hex()]
    if isinstance(value, np.generic):
        return ["scalar", value.dtype.str, value.tobytes().hex()]
    if type(value).__name__ == "RaggedTensor":
        rows = _plain(value.to_list())
        return ["ragged", rows] if rows else ["empty"]
    if isinstance(value, list) and not value:
        return ["empty"]
    if isinstance(value, list) and value and not isinstance(value[0], dict):
        return ["ragged", _plain(value)]
    if isinstance(value, list) or type(value).__name__ in ("_IterableDataset", "PythonDataSource"):
        items = [canonical(v, python_scalars=python_scalars) for v in value]
        return ["list", items] if items else ["empty"]
    raise TypeError(f"no canonical form for {type(value).__name__}")


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    return value
