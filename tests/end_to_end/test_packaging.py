# The distribution's name and contents. `tasks.py package` builds the real sdist and wheel
# and smoke-tests the wheel; here its archive checks are shown to catch what they are for
# (on small archives built in the test), and every install hint in the code and the docs
# is checked to name the distribution and extras that exist.
from __future__ import annotations

import importlib.util
import io
import re
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 has no tomllib; pip brings tomli with it
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
VERSION = "1.2.3"
DIST_INFO = f"tfrlite-{VERSION}.dist-info"
GOOD_WHEEL = {
    "tfrecord_lite/__init__.py": "",
    "tfrecord_lite/py.typed": "",
    f"{DIST_INFO}/METADATA": f"Metadata-Version: 2.4\nName: tfrlite\nVersion: {VERSION}\n\nREADME\n",
    f"{DIST_INFO}/RECORD": "",
}
GOOD_SDIST = [
    "PKG-INFO",
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
    "tfrecord_lite/__init__.py",
    "tfrecord_lite/py.typed",
]


@pytest.fixture(scope="module")
def tasks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_wheel(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def make_sdist(path: Path, names: list[str], top: str = f"tfrlite-{VERSION}") -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name in names:
            info = tarfile.TarInfo(f"{top}/{name}")
            archive.addfile(info, io.BytesIO(b""))
    return path


def test_a_complete_wheel_and_sdist_pass(tasks: ModuleType, tmp_path: Path) -> None:
    assert tasks.wheel_problems(make_wheel(tmp_path / "w.whl", GOOD_WHEEL), VERSION) == []
    assert tasks.sdist_problems(make_sdist(tmp_path / "s.tar.gz", GOOD_SDIST), VERSION) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"tests/example/test_codec.py": ""}, "holds tests"),
        ({"benchmarks/run.py": ""}, "holds benchmarks"),
        ({"tfrecord_lite/__pycache__/x.cpython-311.pyc": ""}, "holds tfrecord_lite/__pycache__"),
        ({"tfrecord_lite/py.typed": None}, "lacks tfrecord_lite/py.typed"),
        ({f"{DIST_INFO}/METADATA": "Name: tfrecord-lite\nVersion: 1.2.3\n\n"}, "Name 'tfrecord-lite'"),
        ({f"{DIST_INFO}/METADATA": "Name: tfrlite\nVersion: 1.2.4\n\n"}, "Version '1.2.4', expected '1.2.3'"),
        ({f"{DIST_INFO}/METADATA": None}, f"no {DIST_INFO}/METADATA"),
    ],
)
def test_wheel_problems_are_found(
    tasks: ModuleType, tmp_path: Path, change: dict[str, str | None], problem: str
) -> None:
    files = {**GOOD_WHEEL, **change}
    wheel = make_wheel(tmp_path / "w.whl", {name: text for name, text in files.items() if text is not None})
    problems = tasks.wheel_problems(wheel, VERSION)
    assert any(problem in found for found in problems), problems


@pytest.mark.parametrize(
    ("names", "problem"),
    [
        ([*GOOD_SDIST, ".venvs/py/bin/python"], "holds .venvs/py/bin/python"),
        ([*GOOD_SDIST, "tests/example/test_codec.py"], "holds tests/example/test_codec.py"),
        ([name for name in GOOD_SDIST if name != "CHANGELOG.md"], "lacks CHANGELOG.md"),
    ],
)
def test_sdist_problems_are_found(tasks: ModuleType, tmp_path: Path, names: list[str], problem: str) -> None:
    problems = tasks.sdist_problems(make_sdist(tmp_path / "s.tar.gz", names), VERSION)
    assert any(problem in found for found in problems), problems


def test_sdist_of_another_version_is_found(tasks: ModuleType, tmp_path: Path) -> None:
    sdist = make_sdist(tmp_path / "s.tar.gz", GOOD_SDIST, top="tfrlite-1.2.4")
    assert any("outside tfrlite-1.2.3/" in found for found in tasks.sdist_problems(sdist, VERSION))


def documents() -> list[Path]:
    """The files a user reads an install line in: the package's messages, the README, the docs."""
    return [*ROOT.glob("tfrecord_lite/**/*.py"), ROOT / "README.md", *ROOT.glob("docs/**/*.md")]


def test_install_hints_name_the_distribution_and_extras_that_exist() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "tfrlite"
    extras = set(project["optional-dependencies"])
    named: set[str] = set()
    for path in documents():
        text = path.read_text(encoding="utf-8")
        wrong = re.findall(r"pip install\s+[\"']?tfrecord[-_.]lite\b", text)
        assert not wrong, f"{path.relative_to(ROOT)} tells users to install {wrong}: the distribution is tfrlite"
        for group in re.findall(r"\btfrlite\[([\w,\s-]+)\]", text):
            named |= {extra.strip() for extra in group.split(",")}
    assert named, "no install hint names an extra"
    assert named <= extras, f"install hints name extras pyproject.toml lacks: {sorted(named - extras)}"
