"""The import contracts that pyproject.toml's [tool.importlinter] holds, checked for real: the
`module_level_forbidden` contract type (tests/contracts.py) breaks on a module-level import of a
forbidden package in a small tree made here (plain, in `try`, in a class body) and keeps on one in
a function or under `if TYPE_CHECKING:`; and importing any module below the adapters really does
not import pyarrow, torch or PIL, while the Arrow code still finds pyarrow at its first use and
then holds the module itself (no placeholder left on its hot paths)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tfrecord_lite as tfr

pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(tfr.__file__).parent
# lint-imports as tasks.py runs it, with the repository root (argv[1]) first on sys.path
LINT = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from importlinter.cli import lint_imports_command as c; sys.exit(c())"
)
CONFIG = """\
[tool.importlinter]
root_package = "pkg"
exclude_type_checking_imports = true
include_external_packages = true
contract_types = ["module_level_forbidden: tests.contracts.ModuleLevelForbiddenContract"]

[[tool.importlinter.contracts]]
name = "light imports"
type = "module_level_forbidden"
source_modules = ["pkg._*"]
forbidden_modules = ["pyarrow", "torch", "PIL"]
"""
FINE = {
    "pkg/__init__.py": "",
    "pkg/adapter.py": "import pyarrow\n",  # not a source module: allowed
    "pkg/_low/__init__.py": "",
    "pkg/_low/inside.py": """\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            import torch

        def image(data):
            import PIL.Image

            return PIL.Image.open(data)

        convert = lambda: __import__("pyarrow")
        """,
}


def lint(tmp_path: Path, files: dict[str, str]) -> subprocess.CompletedProcess[str]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    return subprocess.run(
        [sys.executable, "-c", LINT, str(ROOT), "--config", "pyproject.toml", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_imports_in_functions_and_for_the_type_checker_keep_the_contract(tmp_path: Path) -> None:
    done = lint(tmp_path, FINE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("import pyarrow\n", 1),
        ('"""doc"""\n\ntry:\n    import pyarrow.compute as pc\nexcept ImportError:\n    pc = None\n', 4),
        ("class Images:\n    from PIL import Image\n", 2),
        ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    pass\nelse:\n    import torch\n", 6),
    ],
    ids=["plain", "in-try", "in-class-body", "in-else-of-type-checking"],
)
def test_a_module_level_import_breaks_the_contract(tmp_path: Path, source: str, line: int) -> None:
    done = lint(tmp_path, {**FINE, "pkg/_low/heavy.py": source})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 kept, 1 broken" in done.stdout
    assert "pkg._low.heavy imports" in done.stdout and f"at module level (l.{line})" in done.stdout
    assert "pkg._low.inside" not in done.stdout and "pkg.adapter" not in done.stdout


def test_the_package_keeps_its_contracts() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LINT, str(ROOT), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pyarrow, torch and PIL are imported inside functions only" in done.stdout


def private_modules() -> list[str]:
    """Every module of the folders below the adapters (tfrecord_lite._*), by its file."""
    names = []
    for path in sorted(PACKAGE.glob("_*/**/*.py")) + sorted(PACKAGE.glob("_*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[1] != "__main__":
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_importing_below_the_adapters_imports_no_heavy_package() -> None:
    modules = private_modules()
    assert "tfrecord_lite._arrow.union" in modules and "tfrecord_lite._errors" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in ('pyarrow', 'torch', 'PIL') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.strip() == "[]"


def test_the_arrow_code_imports_pyarrow_at_its_first_use() -> None:
    code = (
        "import sys\n"
        "from tfrecord_lite._arrow import batches, union\n"
        "assert 'pyarrow' not in sys.modules and type(union.pa).__name__ == '_Lazy'\n"
        "from tfrecord_lite.arrow import decode_arrow, write_arrow\n"
        "import tfrecord_lite as tfr\n"
        "batch = decode_arrow([tfr.encode_example({'x': [1, 2]})], {'x': tfr.VarLenFeature('int64')})\n"
        "assert batch.column('x').to_pylist() == [[1, 2]]\n"
        "assert batches.pa is sys.modules['pyarrow']  # the placeholder gave way to the module itself\n"
        "union.concat_batches([batch, batch])\n"
        "assert union.pa is sys.modules['pyarrow']\n"
    )
    pytest.importorskip("pyarrow")
    subprocess.run([sys.executable, "-c", code], timeout=300, check=True)
