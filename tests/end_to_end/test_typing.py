# The public API's annotations, checked the way users meet them: every page's Python blocks
# (as tests/end_to_end/test_docs.py runs them, one module per page) go through mypy, so a signature
# narrower than what the docs write (FixedLenFeature([2], ...) with a tuple-typed shape,
# a dtype given as np.float32) fails here. tfrecord_lite's own strict check is
# `tasks.py lint`; this is the other side, the code that calls it.
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.end_to_end.test_docs import PAGES, ROOT, parse_blocks

pytest.importorskip("mypy", reason="mypy comes with the lint extra (.venvs/py)")

# Page blocks reuse names for values of other types, as a reader's session would; mypy
# lets a name change type with --allow-redefinition-new (which needs --local-partial-types).
# var-annotated ("read = []" needs a type) is about the example's own variables, not the API.
MYPY_FLAGS = [
    "--python-version",
    "3.10",
    "--ignore-missing-imports",
    "--allow-redefinition-new",
    "--local-partial-types",
    "--disable-error-code=var-annotated",
]


# Pages whose examples mypy does not accept yet (each leaves this set once they type-check): none.
NOT_YET_TYPED: set[str] = set()


def _page_source(page: Path) -> str:
    """The page's Python blocks as one module, each line at its line number in the page."""
    lines: list[str] = []
    for block in parse_blocks(page):
        if block.lang == "python":
            lines += [""] * (block.line - len(lines)) + block.code.splitlines()
    return "\n".join(lines) + "\n" if lines else ""


def _page_modules(folder: Path) -> dict[Path, Path]:
    """{module: page} for each page with Python blocks; the module is named after the page."""
    modules = {}
    for page in PAGES:
        if str(page.relative_to(ROOT)) in NOT_YET_TYPED:
            continue
        source = _page_source(page)
        if source:
            name = "_".join(page.relative_to(ROOT).with_suffix("").parts).replace("-", "_").lower()
            module = folder / f"page_{name}.py"
            module.write_text(source, encoding="utf-8")
            modules[module] = page
    return modules


@pytest.mark.slow
def test_docs_examples_type_check(tmp_path: Path) -> None:
    modules = _page_modules(tmp_path)
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "mypy", *MYPY_FLAGS, "--cache-dir", str(tmp_path / ".mypy_cache")]
    proc = subprocess.run(
        [*cmd, *map(str, modules)], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    report = proc.stdout + proc.stderr
    for module, page in modules.items():  # name the pages: their line numbers are the modules'
        report = report.replace(module.name, str(page.relative_to(ROOT)))
    assert proc.returncode == 0, f"mypy finds errors in the docs' examples:\n{report}"
