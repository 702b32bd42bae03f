# tfrecord_lite.compat.tfrecord: its names are the package's (module tree and top level), and importing
# it imports no torch until its torch submodule is used; `import tfrecord_lite` imports none of it.
from __future__ import annotations

import subprocess
import sys

import pytest


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()


def test_torch_is_imported_only_when_the_torch_submodule_is_used() -> None:
    code = (
        "import sys, tfrecord_lite, tfrecord_lite.compat.tfrecord as tfrecord\n"
        "tfrecord.tools.create_index, tfrecord.example_pb2.Example, tfrecord.TFRecordWriter\n"
        "print('torch' in sys.modules)\n"
    )
    assert _run(code) == "False"
    plain = "import sys, tfrecord_lite as t; t.TFRecordWriter; print('tfrecord_lite.compat' in sys.modules)"
    assert _run(plain) == "False"


@pytest.mark.torch
def test_the_torch_submodule_is_an_attribute_as_in_the_package() -> None:
    pytest.importorskip("torch")
    import tfrecord_lite.compat.tfrecord as tfrecord

    assert tfrecord.torch.TFRecordDataset is tfrecord.torch.dataset.TFRecordDataset
    assert tfrecord.torch.MultiTFRecordDataset.__module__ == "tfrecord_lite.compat.tfrecord.torch.dataset"


def test_the_names_are_the_packages() -> None:
    package = pytest.importorskip("tfrecord")
    import tfrecord_lite.compat.tfrecord as tfrecord

    modules = {"crc32c", "division", "functools", "gzip", "io", "np", "os", "struct", "typing", "warnings"}
    theirs = {n for n in dir(package) if not n.startswith("_")} - modules
    assert theirs <= set(tfrecord.__all__)
    for module in ("reader", "writer", "iterator_utils", "tools.tfrecord2idx"):
        ours_module, their_module = tfrecord, package
        for part in module.split("."):
            ours_module, their_module = getattr(ours_module, part), getattr(their_module, part)
        public = {n for n in vars(their_module) if callable(getattr(their_module, n)) and not n.startswith("_")}
        public = {n for n in public if getattr(their_module, n).__module__ == their_module.__name__}
        assert public <= set(dir(ours_module)), module
    messages = {n for n in vars(package.example_pb2) if n[0].isupper() and n != "DESCRIPTOR"}
    assert messages <= set(dir(tfrecord.example_pb2))
