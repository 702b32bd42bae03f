# Every code block of README.md and docs/**/*.md runs here, so the docs cannot drift from the code.
#
# One test per page. The fence language of a block decides what happens to it (the rules are
# documented for writers in docs/development.md):
#   python          executed; the blocks of a page run in order, in one namespace, in a fresh
#                   temporary working directory
#   sh              every command line must call `tfrecord-lite`; each runs in bash (pipefail) in
#                   that directory and must exit with status 0
#   text, console-norun
#                   shown, never run: output samples, and commands that cannot run here
#                   (pip install, python3 tasks.py ...)
# Any other language fails the test, so a block cannot drop out of testing by a typo.
#
# A block that needs an optional library is marked on the line before its fence with
# `<!-- docs-test: needs torch, PIL -->` (importable module names). Where one of them is missing,
# the page runs up to that block and the test is skipped from there, saying which block and why.
#
# Files that a page's text says exist before its first block (an image folder, say) are made by
# that page's entry in SETUPS, a function with a docstring saying what it makes; nothing else is
# prepared. `tfrecord-lite` in sh blocks is this interpreter running `-m tfrecord_lite` on the
# package these tests import.
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import tfrecord_lite

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN = {"python", "sh"}
SHOWN = {"text", "console-norun"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`{]*)")
NEEDS = re.compile(r"<!--\s*docs-test:\s*needs\s+(?P<modules>[\w., ]+?)\s*-->")
SH_TIMEOUT = 300


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    needs: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def parse_blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, with their `docs-test: needs` markers."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        body = [_dedent(line, indent) for line in lines[i + 1 : end]]
        before = next((line for line in reversed(lines[:i]) if line.strip()), "")
        marker = NEEDS.search(before)
        needs = [name.strip() for name in marker["modules"].split(",")] if marker else []
        blocks.append(Block(page, i + 1, opening["lang"].lower(), "\n".join(body) + "\n", needs))
        i = end + 1
    return blocks


def _dedent(line: str, indent: int) -> str:
    """A line of a fenced block inside a list item, without the item's indentation."""
    return line[indent:] if line[:indent].strip() == "" else line.lstrip()


def command_lines(code: str) -> Iterator[str]:
    """The command lines of an sh block: backslash continuations joined, blanks and comments left out."""
    pending = ""
    for line in code.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command, pending = (pending + line).strip(), ""
        if command and not command.startswith("#"):
            yield command


# ---------------------------------------------------------------- per-page setup


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A plain RGB PNG of one colour (stdlib only, so the setup needs no Pillow)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\0" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def _image_folder(root: Path, classes: dict[str, int], start: int = 0) -> None:
    for class_number, (name, count) in enumerate(classes.items()):
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(start, start + count):
            colour = (40 * class_number + 30, 7 * i % 256, 200 - 11 * i % 200)
            (folder / f"{i:04d}.png").write_bytes(_png(32, 32, colour))


def photos(tmp: Path) -> None:
    """`photos/`: an image folder tree, `cat/` and `dog/`, 12 PNG files each (32×32, RGB)."""
    _image_folder(tmp / "photos", {"cat": 12, "dog": 12})


def photos_and_more(tmp: Path) -> None:
    """`photos/` as above; `new_photos/`: 4 more `dog/` and 4 `fox/` PNG files;
    `photos.csv`: `path,label` rows for the files under `photos/`."""
    photos(tmp)
    _image_folder(tmp / "new_photos", {"dog": 4, "fox": 4}, start=100)
    rows = [f"{path.relative_to(tmp)},{path.parent.name}" for path in sorted((tmp / "photos").rglob("*.png"))]
    (tmp / "photos.csv").write_text("path,label\n" + "\n".join(rows) + "\n")


def mnist_folder(tmp: Path) -> None:
    """`mnist/3.0.1/`: a prepared TFDS folder (tests/_tfds.py), an `image` (28×28×1 PNG) and a
    `label` (ClassLabel, 10 classes); train: 80 examples in 2 shards, test: 20 in 1."""
    from tests._tfds import write_tfds_folder

    write_tfds_folder(tmp)


def tfds_folders(tmp: Path) -> None:
    """`mnist/3.0.1/` as above, and `episodes/`: tests/data/tfds/episodes, RLDS episodes made by TFDS."""
    mnist_folder(tmp)
    shutil.copytree(
        ROOT / "tests" / "data" / "tfds" / "episodes", tmp / "episodes", ignore=shutil.ignore_patterns("*.tfrlidx")
    )


def photos_and_mnist(tmp: Path) -> None:
    """`photos/` as above, and `mnist/3.0.1/` as for docs/tfds.md."""
    photos(tmp)
    mnist_folder(tmp)


SETUPS: dict[str, Callable[[Path], None]] = {
    "README.md": photos,
    "docs/tfds.md": tfds_folders,
    "docs/images.md": photos_and_more,
    "docs/cli.md": photos_and_mnist,
}


# ---------------------------------------------------------------- running


@pytest.fixture(scope="module")
def shim_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH whose `tfrecord-lite` runs this interpreter on the package under test."""
    folder = tmp_path_factory.mktemp("bin")
    script = folder / "tfrecord-lite"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tfrecord_lite "$@"\n')
    script.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


def run_python(block: Block, namespace: dict[str, object]) -> None:
    # padded with blank lines so that tracebacks show the Markdown file's own line numbers
    code = compile("\n" * block.line + block.code, str(block.page), "exec")
    exec(code, namespace)


def run_sh(block: Block, env: dict[str, str]) -> None:
    for command in command_lines(block.code):
        assert "tfrecord-lite" in command, (
            f"{block.where}: `{command}` does not call tfrecord-lite; fence commands that cannot run here "
            "as console-norun"
        )
        proc = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            env=env,
            capture_output=True,
            text=True,
            timeout=SH_TIMEOUT,
            check=False,
        )
        assert proc.returncode == 0, (
            f"{block.where}: `{command}` exited with {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )


def missing_modules(block: Block) -> list[str]:
    return [name for name in block.needs if importlib.util.find_spec(name) is None]


# A page whose blocks need an engine carries that engine's marker, so the engines' environment
# (which selects its tests by marker) runs it, and a skip there fails when engines are required.
ENGINE_MARKERS = {
    "ray": "ray",
    "datasets": "hf",
    "dask": "dask",
    "distributed": "dask",
    "grain": "grain",
    "pyspark": "spark",
}


def page_param(page: Path) -> Any:
    needs = {name for block in parse_blocks(page) for name in block.needs}
    marks = [getattr(pytest.mark, ENGINE_MARKERS[name]) for name in sorted(needs & ENGINE_MARKERS.keys())]
    return pytest.param(page, marks=marks, id=str(page.relative_to(ROOT)))


@pytest.mark.parametrize("page", [page_param(page) for page in PAGES])
def test_page_code_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shim_path: str) -> None:
    blocks = parse_blocks(page)
    for block in blocks:
        assert block.lang in RUN | SHOWN, (
            f"{block.where}: fence language {block.lang!r} is neither run {RUN} nor shown {SHOWN}"
        )
    monkeypatch.chdir(tmp_path)
    setup = SETUPS.get(str(page.relative_to(ROOT)))
    if setup is not None:
        setup(tmp_path)
    package_root = str(Path(tfrecord_lite.__file__).resolve().parent.parent)
    env = {**os.environ, "PATH": shim_path, "PYTHONPATH": package_root}
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in blocks:
        if block.lang not in RUN:
            continue
        missing = missing_modules(block)
        if missing:
            pytest.skip(f"{block.where} and the rest of the page need {', '.join(missing)} (not installed)")
        if block.lang == "python":
            run_python(block, namespace)
        else:
            run_sh(block, env)


# ---------------------------------------------------------------- the collector itself


def test_parse_blocks_sees_indented_fences_and_markers(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n```python\nx = 1\n```\n\n- item\n\n  <!-- docs-test: needs torch, PIL -->\n  ```sh\n"
        "  tfrecord-lite count a \\\n    b  # total\n  # note\n  ```\n~~~text\n```\n~~~\n"
    )
    blocks = parse_blocks(page)
    assert [(b.line, b.lang, b.needs) for b in blocks] == [
        (3, "python", []),
        (10, "sh", ["torch", "PIL"]),
        (15, "text", []),
    ]
    assert blocks[0].code == "x = 1\n"
    assert [line.split() for line in command_lines(blocks[1].code)] == [
        ["tfrecord-lite", "count", "a", "b", "#", "total"]
    ]
    assert blocks[2].code == "```\n"


def test_setups_name_existing_pages() -> None:
    names = {str(page.relative_to(ROOT)) for page in PAGES}
    assert set(SETUPS) <= names, f"SETUPS names pages that do not exist: {set(SETUPS) - names}"


def test_readme_links_point_at_files_that_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [target.split("#")[0] for target in targets if "://" not in target and not target.startswith("#")]
    assert local, "the README links to the docs pages"
    missing = [target for target in local if target and not (ROOT / target).exists()]
    assert not missing, f"README.md links to missing files: {missing}"
