"""Every page's code blocks import only what the extras it names install: a reader who runs
`pip install 'tfrlite[arrow]'` because the page says so can run the page. The imports of each
page's Python blocks (ast, top-level names) are checked against the standard library, the core
dependencies and the distributions of the extras the page names (`[arrow]`, `".[images,cli]"`),
or a package the page itself says to install (`pip install ... pandas`)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from tests.end_to_end.test_docs import PAGES, ROOT, parse_blocks

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 has no tomllib; pip brings tomli with it
    from pip._vendor import tomli as tomllib

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
# distributions whose import name is not their name
IMPORT_NAMES = {"pillow": "PIL", "protobuf": "google", "import-linter": "importlinter", "tensorflow-cpu": "tensorflow"}
EXTRA_NAMED = re.compile(r"\[([a-z][a-z0-9,-]*)\](?!\()")  # [arrow] or [images,cli], not a [link](...)
PIP_INSTALL = re.compile(r"pip install ([^\n`]*)")
USES = {".to_pandas(": "pandas"}  # calls that import a module the code does not name


def module_of(requirement: str) -> str:
    name = re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower()
    return IMPORT_NAMES.get(name, name.replace("-", "_"))


def installed_by(page: Path) -> set[str]:
    """The top-level modules the page's named extras (and named pip installs) bring, and the core's."""
    text = page.read_text()
    named = {extra for group in EXTRA_NAMED.findall(text) for extra in group.split(",") if extra in EXTRAS}
    modules = {module_of(r) for r in PROJECT["dependencies"]} | {"tfrecord_lite", "tests"}
    modules |= {module_of(r) for extra in named for r in EXTRAS[extra]}
    for line in PIP_INSTALL.findall(text):
        modules |= {module_of(word) for word in line.split() if re.fullmatch(r"[A-Za-z][\w.-]*", word)}
    return modules


def imports_of(page: Path) -> set[str]:
    found: set[str] = set()
    for block in parse_blocks(page):
        if block.lang != "python":
            continue
        found |= {module for call, module in USES.items() if call in block.code}
        for node in ast.walk(ast.parse(block.code)):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_a_page_imports_only_what_its_extras_install(page: Path) -> None:
    missing = imports_of(page) - installed_by(page) - set(sys.stdlib_module_names)
    assert not missing, f"{page.name} imports {sorted(missing)}, which no extra it names installs"
