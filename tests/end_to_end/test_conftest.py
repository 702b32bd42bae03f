# Tests of the suite's own rule (tests/conftest.py): with TFRECORD_LITE_REQUIRE_<LIB>=1, a skipped
# test marked for that library fails the run, and a skipped test that is not marked does not, even
# in a folder named like the marker. Each case is a real pytest run in a subprocess over a small
# tree in tmp_path, with this suite's conftest loaded as a plugin.
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _OPTIONAL, _REQUIRE_VAR

ROOT = Path(__file__).resolve().parents[2]
SKIPPING_TEST = """
import pytest

{decorator}
def test_skips():
    pytest.skip("for a reason of its own")
"""


@pytest.fixture
def marker() -> str:
    """A marker whose library this venv has (requiring one that is missing stops the run at once)."""
    for name, module in _OPTIONAL.items():
        if importlib.util.find_spec(module) is not None:
            return name
    pytest.skip(f"none of {', '.join(_OPTIONAL.values())} is installed")


def run_pytest(tree: Path, marker: str) -> subprocess.CompletedProcess[str]:
    (tree / "pytest.ini").write_text("[pytest]\n")  # the tree's own rootdir, not this project's
    env = {**os.environ, "PYTHONPATH": str(ROOT), _REQUIRE_VAR[marker]: "1"}
    cmd = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", str(tree)]
    return subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)


def test_unmarked_skip_in_a_folder_named_like_the_marker_passes(tmp_path: Path, marker: str) -> None:
    folder = tmp_path / marker
    folder.mkdir()
    (folder / f"test_{marker}.py").write_text(SKIPPING_TEST.format(decorator=""))
    proc = run_pytest(tmp_path, marker)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 skipped" in proc.stdout


def test_marked_skip_fails_the_run(tmp_path: Path, marker: str) -> None:
    (tmp_path / "test_plain.py").write_text(SKIPPING_TEST.format(decorator=f"@pytest.mark.{marker}"))
    proc = run_pytest(tmp_path, marker)
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, proc.stdout + proc.stderr
    assert f"but 1 `{marker}` test(s) were skipped" in proc.stderr
