# Shared test setup.
#
# Markers `tf`, `torch`, `tfx` (tfx-bsl), `ray`, `hf`, `dask`, `grain`, `spark` and `browser` (declared
# in pyproject.toml) skip a test when its library is not installed. CI's environments set
# TFRECORD_LITE_REQUIRE_TF=1 / TFRECORD_LITE_REQUIRE_TORCH=1 / TFRECORD_LITE_REQUIRE_TFX=1 /
# TFRECORD_LITE_REQUIRE_BROWSER=1 (Playwright, and a Chromium, which tasks.py test sets up) /
# TFRECORD_LITE_REQUIRE_ENGINES=1 (the last for all five engines): then the library must import (checked once, in
# a subprocess, so this process stays free of it) and a skipped test of that
# kind, or a test module skipped for the lack of it, fails the whole run.
# TFRECORD_LITE_REQUIRE_NO_GIL=1 (.venvs/ft) fails the run unless the GIL is off from start to end:
# an extension module that does not declare itself free-threading-safe turns it back on when imported.
#
# Hypothesis settings come from one profile, loaded here before any test module
# is imported: "default" for local runs, "ci" when the CI environment variable
# is set (.ci/run sets it), or the one named by --hypothesis-profile. A test
# overrides them only where it truly needs other numbers, and says why.
from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

DATA_DIR = Path(__file__).resolve().parent / "data"
# gcsfs's default file system asks the gRPC storage-control API whether a bucket is hierarchical,
# which fake-gcs-server does not serve (each ask waits 60 s): use its plain JSON-API file system.
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

# marker -> (importable module, env var that makes its tests mandatory)
_OPTIONAL: dict[str, str] = {
    "tf": "tensorflow",
    "torch": "torch",
    "tfx": "tfx_bsl",
    "ray": "ray",
    "hf": "datasets",
    "dask": "distributed",
    "grain": "grain",
    "spark": "pyspark",
    "object_store": "moto",
    "browser": "playwright",
}
_ENGINES = "TFRECORD_LITE_REQUIRE_ENGINES"
_REQUIRE_VAR = {
    "tf": "TFRECORD_LITE_REQUIRE_TF",
    "torch": "TFRECORD_LITE_REQUIRE_TORCH",
    "tfx": "TFRECORD_LITE_REQUIRE_TFX",
    "object_store": "TFRECORD_LITE_REQUIRE_CLOUD",
    "browser": "TFRECORD_LITE_REQUIRE_BROWSER",
}
_REQUIRE_VAR.update(dict.fromkeys(("ray", "hf", "dask", "grain", "spark"), _ENGINES))
_NO_GIL = "TFRECORD_LITE_REQUIRE_NO_GIL"
_skipped: dict[str, list[str]] = {marker: [] for marker in _OPTIONAL}
# test node id -> the names of its markers (its own, its class's and its module's): a report's
# keywords would not do, since they also hold the test's folder and file names (tests/torch/...)
_markers: dict[str, set[str]] = {}

# deadline=None: examples write files, call TensorFlow and share the CPU with other jobs, so their
# time says nothing about a bug. too_slow / data_too_large: the codec strategies build large,
# nested Examples on purpose. CI tries three times as many examples and prints a blob that
# reproduces a failure (@reproduce_failure).
settings.register_profile(
    "default",
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=300, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "default")


def _required(marker: str) -> bool:
    return os.environ.get(_REQUIRE_VAR[marker], "") not in ("", "0")


def _gil_enabled() -> bool:
    is_enabled: Callable[[], bool] = getattr(sys, "_is_gil_enabled", lambda: True)
    return is_enabled()


def _no_gil_required() -> bool:
    return os.environ.get(_NO_GIL, "") not in ("", "0")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _no_gil_required() and _gil_enabled():
        pytest.exit(f"{_NO_GIL}=1 but {sys.executable} runs with the GIL", returncode=3)
    for marker, module in _OPTIONAL.items():
        if not _required(marker):
            continue
        proc = subprocess.run([sys.executable, "-c", f"import {module}"], check=False, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
            pytest.exit(f"{_REQUIRE_VAR[marker]}=1 but `import {module}` fails:\n{tail}", returncode=3)


def pytest_report_header(config: pytest.Config) -> list[str]:
    import numpy
    from google.protobuf import __version__ as protobuf_version
    from google.protobuf.internal import api_implementation

    profile = settings.get_current_profile_name()
    return [
        f"tfrecord_lite deps: protobuf {protobuf_version} ({api_implementation.Type()}), numpy {numpy.__version__}",
        f"hypothesis profile {profile!r}: max_examples={settings.default.max_examples}",
        f"GIL {'enabled' if _gil_enabled() else 'disabled (free-threaded CPython)'}",
    ]


@pytest.hookimpl(trylast=True)  # after any plugin that adds markers to the collected tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    _markers.update({item.nodeid: {mark.name for mark in item.iter_markers()} for item in items})


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker, module in _OPTIONAL.items():
        if item.get_closest_marker(marker) and importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        for marker in _OPTIONAL.keys() & _markers.get(report.nodeid, set()):
            _skipped[marker].append(report.nodeid)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    # A module that calls pytest.importorskip("tensorflow") (or "torchdata...") at import is skipped
    # whole, before its tests (and their markers) exist: catch it by the module named in the reason.
    if report.skipped:
        reason = str(report.longrepr)
        for marker, module in _OPTIONAL.items():
            if f"'{module}" in reason:
                _skipped[marker].append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for marker, nodeids in _skipped.items():
        if nodeids and _required(marker):
            shown = "\n  ".join(nodeids[:20])
            sys.stderr.write(
                f"\nERROR: {_REQUIRE_VAR[marker]}=1 but {len(nodeids)} `{marker}` test(s) were skipped:\n  {shown}\n"
            )
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if _no_gil_required() and _gil_enabled():
        sys.stderr.write(f"\nERROR: {_NO_GIL}=1 but a module imported during the tests turned the GIL on\n")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def data_dir() -> Path:
    """tests/data: the committed test files (e.g. the TFX corpus under data_dir / "tfx")."""
    return DATA_DIR


@pytest.fixture
def tmp_file(tmp_path: Path) -> Callable[[str], Path]:
    """Factory for fresh paths in this test's temporary directory: tmp_file("a.tfrecord")."""

    def make(name: str = "data.tfrecord") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    return make


# ----------------------------------------------------------------------------- object-store servers
# Started once per session on 127.0.0.1 (see tests/_servers.py); each test gets them with their
# faults cleared, and a bucket of its own.


@pytest.fixture(scope="session")
def _http_server() -> Iterator[Any]:
    for module in ("fsspec", "aiohttp", "requests"):  # fsspec's HTTPFileSystem reads http(s):// (extra `remote`)
        pytest.importorskip(module)
    from tests._servers import RangeServer

    with RangeServer() as server:
        yield server


@pytest.fixture
def http_server(_http_server: Any) -> Iterator[Any]:
    """The HTTP range server (faults cleared): `http_server.put("/x", data)` returns the URL."""
    _http_server.faults.reset()
    yield _http_server
    _http_server.faults.reset()


@pytest.fixture(scope="session")
def _s3_server() -> Iterator[Any]:
    pytest.importorskip("moto")
    pytest.importorskip("s3fs")
    from tests._servers import S3Server

    with S3Server() as server:
        yield server


@pytest.fixture
def s3(_s3_server: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """moto's S3 server with a fresh bucket: `s3.bucket` ("s3://NAME"), `s3.storage_options`, `s3.fs`."""
    _s3_server.faults.reset()
    fs = _s3_server.filesystem()
    name = "t-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    fs.call_s3("create_bucket", Bucket=name)
    _s3_server.bucket = f"s3://{name}"
    _s3_server.fs = fs
    yield _s3_server
    _s3_server.faults.reset()


@pytest.fixture(scope="session")
def _gcs_server() -> Iterator[Any]:
    pytest.importorskip("gcsfs")
    from tests._servers import GCSServer, fake_gcs_binary

    binary = fake_gcs_binary()
    if binary is None:
        pytest.skip("fake-gcs-server is not installed")
    with GCSServer(binary) as server:
        yield server


@pytest.fixture
def gcs(_gcs_server: Any, request: pytest.FixtureRequest) -> Any:
    """fake-gcs-server with a fresh bucket: `gcs.bucket` ("gs://NAME"), `gcs.storage_options`, `gcs.fs`."""
    import gcsfs

    fs = gcsfs.GCSFileSystem(**_gcs_server.storage_options)
    name = "t-" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    fs.mkdir(name)
    _gcs_server.bucket = f"gs://{name}"
    _gcs_server.fs = fs
    return _gcs_server


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """A real local Ray cluster of 2 CPUs for the session (the code under test runs unchanged on a
    multi-node cluster joined with ray.init(address="auto")); shut down at the end."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # started by a docs page that used Ray Data without ray.init
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    """A real distributed.LocalCluster of 2 worker processes and a client on it; closed at the end."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    """A real local[2] SparkSession for the session, its Python workers on this interpreter with
    the checkout importable, and the "tfrecord" data source registered; stopped at the end. Java
    missing skips (fails under TFRECORD_LITE_REQUIRE_ENGINES=1)."""
    import shutil

    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        if _required("spark"):
            pytest.fail("TFRECORD_LITE_REQUIRE_ENGINES=1 but no Java is installed for Spark")
        pytest.skip("Spark needs Java, which is not installed")
    from pyspark.sql import SparkSession

    root = str(Path(__file__).resolve().parents[1])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("FATAL")
    from tfrecord_lite.spark import register

    register(spark)
    yield spark
    spark.stop()
