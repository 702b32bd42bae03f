# The fuzzer's targets on their seed corpus and on the inputs fuzzing found (each once
# leaked an exception that is not the library's own), so those stay fixed between the
# timed fuzzing runs of `tasks.py test`.
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOUND = {
    "index": [
        b"99999999999999999999999 1",  # OverflowError converting the text index
        b"0 18446744073709551615",
        b"0 16\n16 9223372036854775807",  # offset + length past int64
    ],
}


@pytest.fixture(scope="module")
def fuzz() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz", ROOT / "fuzzer" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    argv, sys.argv = sys.argv, ["fuzz.py", "--hypothesis"]  # never atheris here
    try:
        spec.loader.exec_module(module)
    finally:
        sys.argv = argv
    return module


@pytest.mark.parametrize("target", ["example", "framing", "gzip", "index", "stats", "tensor", "viewer"])
def test_every_target_passes_its_corpus_and_what_fuzzing_found(fuzz: ModuleType, target: str) -> None:
    inputs = fuzz.corpus(target) + FOUND.get(target, [])
    assert fuzz.corpus(target), f"fuzzer/corpus/{target}/ is empty"
    for data in inputs:
        fuzz.TARGETS[target](data)
