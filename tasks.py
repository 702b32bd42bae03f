#!/usr/bin/env python3
"""Developer tasks that set up their own environments (stdlib only, Python >= 3.10).

    python3 tasks.py demo [args]    run the demo (in .venvs/py)
    python3 tasks.py test [--only=py|tf] [pytest args]
                                    build the docs (mkdocs build --strict, with py), then run the
                                    test suite twice: .venvs/py (no TensorFlow, oldest protobuf,
                                    torch) and .venvs/tf (tensorflow-cpu, newest protobuf)
    python3 tasks.py docs [--serve] build the docs site into site/ (or serve it live)
    python3 tasks.py bench [args]   run benchmarks/run.py against TensorFlow and `tfrecord`

Each environment lives in .venvs/NAME and is built once: a stamp file holds a hash of what
it installs (its requirements below, the package's dependencies and extras) and the
interpreter; a change to any of those rebuilds it from scratch.
"""

# Strategy: one table (ENVS) says what each venv holds; `ensure` builds a venv from that
# table with `python -m venv --clear` + one `pip install`, and writes the stamp only after
# pip succeeded, so an interrupted setup is redone next time. Commands then run inside the
# venvs with plain subprocess calls.
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 has no tomllib; pip brings tomli with it
    from pip._vendor import tomli as tomllib

ROOT = Path(__file__).resolve().parent
VENVS = ROOT / ".venvs"
OLDEST_PROTOBUF = "4.21.12"
TORCH = "torch==2.13.0"  # pinned: served from this machine's wheel cache, never the multi-GB CUDA build
TENSORFLOW = "tensorflow-cpu==2.21.0"

# name -> (what it is for, pip requirements besides the package itself, package extras)
ENVS: dict[str, tuple[str, list[str], str]] = {
    "py": (
        f"no TensorFlow, protobuf {OLDEST_PROTOBUF} (oldest supported), torch",
        [f"protobuf=={OLDEST_PROTOBUF}", TORCH, "torchdata", "scikit-learn"],
        "test,torch,images,cli,remote,arrow,lint,docs,package",
    ),
    "tf": (
        f"{TENSORFLOW}, newest protobuf it allows",
        [TENSORFLOW, "protobuf<8", "grpcio-tools"],
        "test",
    ),
    "bench": (
        "the `tfrecord` package to compare against",
        ["tfrecord==1.14.6", TORCH],
        "",
    ),
}
# pytest environment per test venv: the library that venv exists for must not be skipped.
REQUIRE = {"py": {"TFRECORD_LITE_REQUIRE_TORCH": "1"}, "tf": {"TFRECORD_LITE_REQUIRE_TF": "1"}}
DEMO_MODULES = ("tfrecord_lite._demo", "tfrecord_lite.demo")


def log(message: str) -> None:
    """Print a tasks.py progress line (flushed, so it interleaves with child output)."""
    print(f"[tasks] {message}", flush=True)


def python_of(name: str) -> Path:
    """The interpreter of venv `name`."""
    return VENVS / name / "bin" / "python"


def _stamp_value(name: str) -> str:
    """What venv `name` was built from: its ENVS entry, the package's dependencies and the interpreter.

    Only what pip installs counts, so editing tasks.py or pyproject.toml elsewhere keeps the venvs."""
    _, requirements, extras = ENVS[name]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project.get("optional-dependencies", {})
    wanted_extras = [extra for extra in extras.split(",") if extra]
    deps = [project["name"], *project["dependencies"], *(dep for extra in wanted_extras for dep in optional[extra])]
    parts = [*requirements, extras, *deps, sys.version, sys.executable]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def run(cmd: list[str], env: dict[str, str] | None = None) -> int:
    """Run a command from the repo root; return its exit code."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(cmd, cwd=ROOT, env=full_env, stdin=subprocess.DEVNULL, check=False).returncode


def ensure(name: str) -> Path:
    """Create venv `name` if it is missing or stale; return its interpreter."""
    stamp = VENVS / name / ".tasks-stamp"
    wanted = _stamp_value(name)
    if stamp.exists() and stamp.read_text() == wanted and python_of(name).exists():
        return python_of(name)
    purpose, requirements, extras = ENVS[name]
    log(f"setting up .venvs/{name} ({purpose}); done once, reused until pyproject.toml or tasks.py change")
    started = time.monotonic()
    if subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENVS / name)], check=False).returncode:
        sys.exit(f"[tasks] could not create .venvs/{name} with {sys.executable} -m venv")
    package = f"{ROOT}[{extras}]" if extras else str(ROOT)
    pip = [str(python_of(name)), "-m", "pip", "--disable-pip-version-check", "install", "--progress-bar", "off"]
    if run([*pip, "-q", "-e", package, *requirements]):
        sys.exit(f"[tasks] pip install into .venvs/{name} failed (see above); rerun to retry")
    stamp.write_text(wanted)
    log(f".venvs/{name} ready in {time.monotonic() - started:.0f} s")
    return python_of(name)


def task_test(args: list[str]) -> int:
    """Run the suite in each test venv; non-zero if any run fails."""
    names = ["py", "tf"]
    if args and args[0].startswith("--only="):
        names = [args[0].split("=", 1)[1]]
        args = args[1:]
        if names[0] not in REQUIRE:
            sys.exit(f"[tasks] --only must be one of {', '.join(REQUIRE)}")
    pythons = {name: ensure(name) for name in names}  # set up everything before testing anything
    docs = None
    if "py" in pythons:
        with tempfile.TemporaryDirectory() as site:
            docs = build_docs(pythons["py"], ["build", "--site-dir", site])
    results: dict[str, int] = {}
    for name in names:
        log(f"pytest in .venvs/{name}: {ENVS[name][0]}")
        results[name] = run([str(pythons[name]), "-m", "pytest", *args], env=REQUIRE[name])
    log("summary:")
    for name, code in results.items():
        verdict = "passed" if code == 0 else f"FAILED (pytest exit code {code})"
        if code < 0:
            verdict = f"FAILED (pytest killed by signal {-code}: a crash, see the traceback above)"
        log(f"  .venvs/{name} ({ENVS[name][0]}): {verdict}")
    if docs is not None:
        log(f"  docs (mkdocs build --strict): {'passed' if docs == 0 else 'FAILED (see the warnings above)'}")
    return 0 if not docs and all(code == 0 for code in results.values()) else 1


def build_docs(python: Path, mkdocs_args: list[str]) -> int:
    """Run mkdocs (strict: broken links and references fail) with `python`, from the repo root."""
    log(f"docs: mkdocs {' '.join(mkdocs_args)} --strict")
    return run([str(python), "-m", "mkdocs", *mkdocs_args, "--strict"], env={"NO_MKDOCS_2_WARNING": "1"})


def task_docs(args: list[str]) -> int:
    """Build the docs site into site/, or serve it with live reload (--serve)."""
    if args not in ([], ["--serve"]):
        sys.exit("[tasks] usage: python3 tasks.py docs [--serve]")
    return build_docs(ensure("py"), ["serve"] if args else ["build"])


def task_demo(args: list[str]) -> int:
    """Run the package demo in .venvs/py."""
    for module in DEMO_MODULES:
        relative = Path(*module.split("."))
        if (ROOT / relative).with_suffix(".py").exists() or (ROOT / relative / "__init__.py").exists():
            break
    else:
        log(f"no demo module in this checkout (looked for {', '.join(DEMO_MODULES)})")
        return 1
    return run([str(ensure("py")), "-m", module, *args])


def task_bench(args: list[str]) -> int:
    """Run benchmarks/run.py against TensorFlow (.venvs/tf) and `tfrecord` (.venvs/bench)."""
    script = ROOT / "benchmarks" / "run.py"
    if not script.exists():
        log("benchmarks/run.py is not in this checkout")
        return 1
    tf_python, bench_python, python = ensure("tf"), ensure("bench"), ensure("py")
    cmd = [str(python), str(script), "--tf-python", str(tf_python), "--tfrecord-python", str(bench_python)]
    # tfrecord_lite is measured in .venvs/bench too: the newest protobuf, as its peers have
    cmd += ["--lite-python", str(bench_python)]
    return run([*cmd, *args])


TASKS = {"test": task_test, "demo": task_demo, "bench": task_bench, "docs": task_docs}


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 (a user may run it with an older python3)
        sys.exit("tasks.py needs Python >= 3.10")
    if not argv or argv[0] not in TASKS:
        print(__doc__)
        return 2
    return TASKS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
