"""The package's layout rules, read from its source (docs/architecture.md states them).

Which layer may import which, and that nothing imports in a circle, is import-linter's to check
(`python3 tasks.py lint`, the contracts in pyproject.toml). These tests hold what it does not: the size
of a module, its docstring, and that a layer offers the others only plain names, and that a test
reaches into the private names of no module but the one it unit-tests."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tfrecord_lite"
GENERATED = {PACKAGE / "_example" / "descriptor.py"}
MAX_LINES = 600


def modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py") if path not in GENERATED)


def dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, module, name) of every `from tfrecord_lite... import name` in the file, wherever it is."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tfrecord_lite"):
            for alias in node.names:
                yield node.lineno, str(node.module), alias.name


def is_module(dotted_name: str) -> bool:
    path = ROOT.joinpath(*dotted_name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def private_uses(path: Path) -> set[str]:
    """The modules of the package whose private names the file uses: imported by name, or read as an
    attribute of a module it imported (`from tfrecord_lite._wire import framing; framing._X`)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    owners = {module for _, module, name in imported_names(path) if is_private(name)}
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tfrecord_lite"):
            aliases.update(
                {
                    a.asname or a.name: f"{node.module}.{a.name}"
                    for a in node.names
                    if is_module(f"{node.module}.{a.name}")
                }
            )
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.asname and a.name.startswith("tfrecord_lite")})
    owners.update(
        aliases[node.value.id]
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
        if is_private(node.attr)
    )
    return owners


def subpackage(module: str) -> str:
    """The folder a module belongs to: 'tfrecord_lite._index' for tfrecord_lite._index.sidecar."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else module


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@pytest.mark.parametrize("path", modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_a_module_is_at_most_600_lines_and_opens_with_its_docstring(path: Path) -> None:
    lines = path.read_text().count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines; split it by concern"
    assert ast.get_docstring(ast.parse(path.read_text())), f"{path.relative_to(ROOT)} has no module docstring"


def test_no_private_name_is_imported_from_another_subpackage() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name} from {module}"
        for path in modules()
        for line, module, name in imported_names(path)
        if is_private(name) and subpackage(module) != subpackage(dotted(path))
    ]
    assert not found, "private names used across layers (offer a plain name instead):\n" + "\n".join(found)


def test_a_test_reaches_into_the_private_names_of_one_module_at_most() -> None:
    crossing = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        owners = private_uses(path)
        if len(owners) > 1:
            crossing[str(path.relative_to(ROOT))] = sorted(owners)
    assert not crossing, f"tests using the private names of several modules: {crossing}"


def test_the_rules_see_every_kind_of_violation(tmp_path: Path) -> None:
    """The helpers above find a private import across folders and ignore one inside a folder."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f():\n"
        "    from tfrecord_lite._wire.framing import _HIDDEN\n"
        "from tfrecord_lite._wire.crc import masked_crc\n"
    )
    names = list(imported_names(sample))
    assert names == [(3, "tfrecord_lite._wire.crc", "masked_crc"), (2, "tfrecord_lite._wire.framing", "_HIDDEN")]
    assert subpackage("tfrecord_lite._wire.framing") != subpackage("tfrecord_lite._records.writer")
    assert subpackage("tfrecord_lite._wire.framing") == subpackage("tfrecord_lite._wire.resync")
    assert is_private("_HIDDEN") and not is_private("__version__") and not is_private("masked_crc")


def test_a_private_attribute_of_an_imported_module_counts(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "from tfrecord_lite._wire import framing\n"
        "import tfrecord_lite._errors as errors\n"
        "framing._HIDDEN, errors._other, framing.scan\n"
    )
    assert private_uses(sample) == {"tfrecord_lite._wire.framing", "tfrecord_lite._errors"}


# ---------------------------------------------------------------- docs/architecture.md and the tree

PAGE = ROOT / "docs" / "architecture.md"
MAX_MODULES = 15  # per folder


def described_folder_only(path: Path) -> bool:
    """A package __init__.py that holds nothing but its docstring: the folder's description, which the
    page gives as the folder's heading and introduction rather than as a row."""
    tree = ast.parse(path.read_text())
    return path.name == "__init__.py" and all(
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in tree.body
    )


def tree_modules() -> set[str]:
    """Every module of the package that the page must name, as a path relative to tfrecord_lite/."""
    return {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "__pycache__" not in path.parts and not described_folder_only(path)
    }


def page_modules(text: str) -> set[str]:
    """The modules the page's tables name, as paths relative to tfrecord_lite/: each `### ` section
    under "What each folder owns" is about the folder its heading names first (`_wire`, `cli`, ...),
    or about the package's top level (no folder named: the adapters, `_errors`, `_repr`, ...); a
    row's first cell is a module of that folder."""
    owned = text.split("## What each folder owns", 1)[1].split("\n## ", 1)[0]
    found = set()
    folder = ""
    for line in owned.splitlines():
        if line.startswith("### "):
            named = re.findall(r"`([^`]+)`", line)
            folder = named[0] if named and (PACKAGE / named[0]).is_dir() else ""
        elif (row := re.match(r"\| `([^`]+\.py)` \|", line)) is not None:
            found.add(f"{folder}/{row.group(1)}" if folder else row.group(1))
    return found


def test_the_architecture_page_names_every_module_and_only_those() -> None:
    on_page, in_tree = page_modules(PAGE.read_text()), tree_modules()
    assert in_tree - on_page == set(), "modules missing from docs/architecture.md"
    assert on_page - in_tree == set(), "docs/architecture.md names modules that do not exist"


def test_the_page_check_sees_a_missing_and_an_extra_module() -> None:
    text = PAGE.read_text()
    assert "wire/framing.py" not in page_modules(text.replace("| `framing.py` |", "| framing |"))
    extra = text.replace(
        "### `_wire`: the framing on bytes\n", "### `_wire`: the framing on bytes\n\n| `ghost.py` | x |\n"
    )
    assert "_wire/ghost.py" in page_modules(extra) - tree_modules()
    assert {
        "torch/streaming.py",
        "_redact.py",
        "__init__.py",
        "cli/__init__.py",
        "compat/tfrecord/torch/dataset.py",
    } <= (page_modules(text))


def test_no_folder_holds_more_than_15_modules() -> None:
    crowded = {
        str(folder.relative_to(PACKAGE)): count
        for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__")]
        if (count := sum(1 for f in folder.glob("*.py") if f.name != "__init__.py")) > MAX_MODULES
    }
    assert crowded == {}, f"folders of more than {MAX_MODULES} modules (split them by idea): {crowded}"
