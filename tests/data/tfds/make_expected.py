"""Writes the TFDS folders under tests/data/tfds/ and what TFDS itself decodes from them
(expected.json.gz), for the tests that run without TensorFlow (tests/tfds/test_tfds_stored.py).
Run in the tf venv from the repository root:

    PYTHONPATH=. .venvs/tf/bin/python tests/data/tfds/make_expected.py
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests._tfds_builders import canonical, prepare

HERE = Path(__file__).resolve().parent
SPLITS = {
    "everything": ["train", "train[:10%]", "train[5:15]", "train+test", "test[-25%:]"],
    "episodes": ["train", "test[:50%]+train[-3:]"],
}


def main() -> None:
    import tensorflow_datasets as tfds

    expected: dict[str, dict[str, list[object]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, splits in SPLITS.items():
            builder = prepare(name, Path(tmp) / name, num_shards=2, sizes=(20, 8))
            target = HERE / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(builder.data_dir, target)
            expected[name] = {
                split: [canonical(ex) for ex in tfds.as_numpy(builder.as_dataset(split=split))] for split in splits
            }
    with gzip.open(HERE / "expected.json.gz", "wt") as fh:
        json.dump(expected, fh)


if __name__ == "__main__":
    main()
