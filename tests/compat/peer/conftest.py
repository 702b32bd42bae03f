# The tfrecord package's own tests (copied here, see README.md) run against tfrecord_lite.compat.tfrecord.
# Its torch test imports torch at the top, as the package's does: where torch is missing (the tf env)
# that file is not collected; where torch is present it carries the `torch` marker like our own.
from __future__ import annotations

import importlib.util

import pytest

_TORCH_FILES = ("test_multi_tf_record_dataset.py",)
collect_ignore = [] if importlib.util.find_spec("torch") else list(_TORCH_FILES)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in _TORCH_FILES:
            item.add_marker(pytest.mark.torch)
