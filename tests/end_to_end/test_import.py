# `import tfrecord_lite` stays light: in a fresh interpreter it must not even try
# to import the optional libraries (they are imported lazily, where used), and it
# must work on a machine where they are not installed at all.
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = ("tensorflow", "torch", "PIL", "fsspec", "tqdm")

# A meta-path finder placed first records every attempt to import an optional library
# and makes it fail as if the library were not installed.
_BLOCK = """
import json, sys
OPTIONAL = {optional!r}
attempts = []

class Block:
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in OPTIONAL:
            attempts.append(fullname)
            raise ModuleNotFoundError(f"No module named {{fullname!r}} (blocked by test_import)")
        return None

sys.meta_path.insert(0, Block())
"""
_PROBE = """
import tfrecord_lite
heavy = sorted(m for m in ("numpy", "google.protobuf", "crc32c") if m in sys.modules)
for name in tfrecord_lite.__all__:  # every public name resolves, and pulls in no optional library either
    getattr(tfrecord_lite, name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in OPTIONAL)
print(json.dumps({"attempts": attempts, "loaded": loaded, "all": list(tfrecord_lite.__all__), "heavy": heavy}))
"""


def _run_without(optional: tuple[str, ...], code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter where the `optional` libraries cannot be imported."""
    script = _BLOCK.format(optional=optional) + code
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False)


def _probe() -> dict[str, list[str]]:
    proc = _run_without(OPTIONAL, _PROBE)
    assert proc.returncode == 0, f"import tfrecord_lite failed without the optional libraries:\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_import_touches_no_optional_library() -> None:
    result = _probe()
    assert result["attempts"] == [], f"import tfrecord_lite tried to import {result['attempts']}"
    assert result["loaded"] == []


def test_import_itself_is_light() -> None:
    """The public names load lazily: importing the package loads none of its dependencies."""
    assert _probe()["heavy"] == []


def test_public_api_present() -> None:
    names = set(_probe()["all"])
    core = {
        "TFRecordWriter",
        "iter_records",
        "encode_example",
        "decode_example",
        "encode_sequence_example",
        "decode_sequence_example",
        "FixedLenFeature",
        "VarLenFeature",
        "FixedLenSequenceFeature",
        "TFRecordError",
        "CorruptRecordError",
        "TruncatedRecordError",
        "DecodeError",
        "FeatureError",
        "Example",
        "SequenceExample",
        "Features",
        "Feature",
        "BytesList",
        "FloatList",
        "Int64List",
        "FeatureList",
        "FeatureLists",
    }
    assert core <= names, f"missing from tfrecord_lite.__all__: {sorted(core - names)}"


def test_torch_adapter_without_torch_says_how_to_install() -> None:
    proc = _run_without(("torch",), "import tfrecord_lite.torch\n")
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode != 0
    assert last.startswith("ModuleNotFoundError: tfrecord_lite.torch needs PyTorch"), proc.stderr
    assert "pip install 'tfrlite[torch]'" in last
