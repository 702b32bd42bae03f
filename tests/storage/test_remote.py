# Reading and writing objects in stores, against real servers on 127.0.0.1 (tests/_servers.py):
# moto's S3 through s3fs, fake-gcs-server through gcsfs, and an HTTP range server that adds
# latency, fails requests or cuts connections. The oracle is always the same records read
# from a local file by the local reader.
from __future__ import annotations

import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._records import write_records
from tfrecord_lite._errors import RemoteError
from tfrecord_lite._storage import direct as _direct
from tfrecord_lite._storage import remote as _remote

pytestmark = pytest.mark.object_store

COMPRESSIONS = ["", "gzip", "zlib"]


def make_records(n: int = 300, size: int = 200) -> list[bytes]:
    return [(f"record {i:06d} ".encode() * (1 + (i * 7919) % size))[: 1 + (i * 7919) % size] for i in range(n)]


def write_local(path: Path, records: list[bytes], compression: str = "") -> bytes:
    """Write the file and return its bytes, to put in a store."""
    return write_records(path, records, compression).read_bytes()


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> int:
    """Stream in 4 KiB ranged requests, so one object takes many, and retry fast."""
    monkeypatch.setattr(_remote, "STREAM_BLOCK", 4096)
    monkeypatch.setattr(_remote, "RETRY", _remote.Retry(attempts=4, delay=0.01))
    return 4096


# ----------------------------------------------------------------------------- streaming


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_http_stream_equals_local(http_server: Any, tmp_path: Path, compression: str) -> None:
    records = make_records()
    data = write_local(tmp_path / "x", records, compression)
    url = http_server.put(f"/x-{compression}.tfrecord", data)
    assert list(tfr.iter_records(url)) == list(tfr.iter_records(tmp_path / "x")) == records


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_s3_stream_equals_local(s3: Any, tmp_path: Path, compression: str) -> None:
    records = make_records()
    data = write_local(tmp_path / "x", records, compression)
    url = f"{s3.bucket}/dir/x.tfrecord"
    s3.fs.pipe(url, data)
    assert list(tfr.iter_records(url, storage_options=s3.storage_options)) == records
    assert list(tfr.iter_records(url, storage_options=s3.fs)) == records  # a filesystem object works too


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_gcs_stream_equals_local(gcs: Any, tmp_path: Path, compression: str) -> None:
    records = make_records()
    data = write_local(tmp_path / "x", records, compression)
    url = f"{gcs.bucket}/x.tfrecord"
    gcs.fs.pipe(url, data)
    assert list(tfr.iter_records(url, storage_options=gcs.storage_options)) == records


def test_streaming_reads_by_ranges(http_server: Any, tmp_path: Path, small_blocks: int) -> None:
    data = write_local(tmp_path / "x", make_records(400))
    url = http_server.put("/ranges.tfrecord", data)
    assert len(list(tfr.iter_records(url))) == 400
    starts = [int(r[2].split("=")[1].split("-")[0]) for r in http_server.faults.gets("/ranges")]
    assert starts == list(range(0, len(data) + 1, small_blocks))[: len(starts)]
    assert len(starts) == len(data) // small_blocks + 1


# ----------------------------------------------------------------------------- failures


def range_starts(gets: list[tuple[str, str, str | None]]) -> list[int]:
    return [int((r[2] or "bytes=0-").split("=")[1].split("-")[0]) for r in gets]


# cuts inside the first record's header (5), the gzip header (4), at a header's end (12) and deep in a body
@pytest.mark.parametrize("cut", [1, 4, 5, 12, 1000, 4095])
@pytest.mark.parametrize("compression", ["", "gzip"])
def test_cut_connections_resume_at_the_byte_reached(
    http_server: Any, tmp_path: Path, small_blocks: int, compression: str, cut: int
) -> None:
    records = make_records(2000, 300)
    data = write_local(tmp_path / "x", records, compression)
    assert len(data) > 6 * small_blocks
    url = http_server.put(f"/cut-{compression}-{cut}", data)
    never = 1 << 30
    # the 1st request is cut after `cut` bytes; the 2nd block's request after 100, and its retry after 10
    http_server.faults.cut_after = [cut, never, 100, 10]
    got = list(tfr.iter_records(url))
    assert got == records  # none lost, none repeated
    block = small_blocks
    starts = range_starts(http_server.faults.gets(f"/cut-{compression}-{cut}"))
    assert starts[:6] == [0, cut, block, block + 100, block + 110, 2 * block]


@pytest.mark.parametrize("cut", [5, 1000])
@pytest.mark.parametrize("compression", ["", "gzip"])
def test_s3_cut_connection_resumes_at_the_byte_reached(
    s3: Any, tmp_path: Path, small_blocks: int, compression: str, cut: int
) -> None:
    records = make_records(1000, 300)
    data = write_local(tmp_path / "x", records, compression)
    url = f"{s3.bucket}/cut.tfrecord"
    s3.fs.pipe(url, data)
    s3.faults.reset()
    s3.faults.cut_after = [1 << 30, cut]
    assert list(tfr.iter_records(url, storage_options=s3.storage_options, compression=compression)) == records
    starts = range_starts(s3.faults.gets("/cut.tfrecord"))
    assert starts[:3] == [0, small_blocks, small_blocks + cut]


@pytest.mark.parametrize("cut", [5, 1000])
@pytest.mark.parametrize("compression", ["", "gzip"])
def test_gcs_cut_connection_resumes_at_the_byte_reached(
    gcs: Any, tmp_path: Path, small_blocks: int, compression: str, cut: int
) -> None:
    records = make_records(1000, 300)
    data = write_local(tmp_path / "x", records, compression)
    url = f"{gcs.bucket}/cut.tfrecord"
    gcs.fs.pipe(url, data)
    options = gcs.faulty_storage_options  # through a proxy that cuts the second body after `cut` bytes
    gcs.faults.reset()
    gcs.faults.cut_after = [1 << 30, cut]
    assert list(tfr.iter_records(url, storage_options=options, compression=compression)) == records
    starts = range_starts(gcs.faults.gets("/cut.tfrecord"))
    assert starts[:3] == [0, small_blocks, small_blocks + cut]


def test_random_access_resumes_a_cut_range(http_server: Any, tmp_path: Path) -> None:
    records = make_records(500)
    data = write_local(tmp_path / "x", records)
    tfr.TFRecordFile(str(tmp_path / "x")).close()  # writes no sidecar: the object is scanned once
    url = http_server.put("/ra-cut", data)
    with tfr.TFRecordFile(url, index=False) as f:
        http_server.faults.cut_after = [7, 3000]
        assert f[list(range(0, 500, 3))] == records[::3]


def test_server_errors_are_retried(http_server: Any, tmp_path: Path, small_blocks: int) -> None:
    records = make_records(50)
    url = http_server.put("/flaky", write_local(tmp_path / "x", records))
    http_server.faults.fail_next = 3
    assert list(tfr.iter_records(url)) == records


def test_a_server_that_keeps_failing_ends_in_a_clear_error(http_server: Any, tmp_path: Path, small_blocks: int) -> None:
    records = make_records(6000, 800)  # over 1 MiB: the reader has not fetched it all after 20 records
    data = write_local(tmp_path / "x", records)
    http_server.put("/down.tfrecord", data)
    secret_url = http_server.endpoint.replace("http://", "http://user:hunter2@") + "/down.tfrecord?X-Sig=s3cr3t"
    got: list[bytes] = []

    def read_while_the_server_goes_down() -> None:
        for i, record in enumerate(tfr.iter_records(secret_url)):
            got.append(record)
            if i == 20:
                http_server.faults.fail_next = 1000

    with pytest.raises(RemoteError) as info:
        read_while_the_server_goes_down()
    err = info.value
    assert got == records[: len(got)] and 20 < len(got) < len(records)
    assert err.offset is not None and 0 < err.offset < len(data) and err.offset % small_blocks == 0
    assert err.url == http_server.endpoint + "/down.tfrecord"
    shown = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    assert "after 4 attempts" in str(err) and "503" in str(err) and err.url in str(err)
    assert "hunter2" not in shown and "s3cr3t" not in shown


def test_missing_object(http_server: Any, s3: Any) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        list(tfr.iter_records(http_server.url("/nope")))
    with pytest.raises(FileNotFoundError, match="nope"):
        list(tfr.iter_records(f"{s3.bucket}/nope", storage_options=s3.storage_options))


# ----------------------------------------------------------------------------- the direct path
# HTTP(S) and S3 ranges are fetched by _storage/direct.py (http.client on the asking thread, signed by
# botocore for S3), everything else and any setting it does not honour by fsspec: the servers'
# logs of User-Agents tell which client asked.


def direct(agents: list[str]) -> list[bool]:
    return [agent.startswith(_direct.USER_AGENT) for agent in agents]


def test_http_and_s3_ranges_are_fetched_directly(http_server: Any, s3: Any, tmp_path: Path) -> None:
    records = make_records()
    data = write_local(tmp_path / "x", records)
    assert list(tfr.iter_records(http_server.put("/direct.tfrecord", data))) == records
    key = "odd name/ü+x %20.tfrecord"  # quoted in the URL as botocore quotes it, and signed so
    s3.fs.pipe(f"{s3.bucket}/{key}", data)
    assert list(tfr.iter_records(f"{s3.bucket}/{key}", storage_options=s3.storage_options)) == records
    bucket, _, _ = s3.fs.split_path(s3.bucket)
    s3.fs.call_s3("put_object_acl", Bucket=bucket, Key=key, ACL="public-read")
    anonymous = {**s3.storage_options, "anon": True}  # unsigned requests
    anonymous.pop("key"), anonymous.pop("secret")
    assert list(tfr.iter_records(f"{s3.bucket}/{key}", storage_options=anonymous)) == records
    agents = http_server.faults.agents + s3.faults.agents
    assert len(agents) == 3 and all(direct(agents))


@pytest.fixture
def s3_checking_signatures(s3: Any) -> Iterator[dict[str, Any]]:
    """moto's S3 with authentication on (it recomputes every SigV4 signature and refuses a wrong one),
    and the storage_options of an IAM user allowed everything."""
    import urllib.request

    import botocore.session

    iam = botocore.session.get_session().create_client(
        "iam", endpoint_url=s3.endpoint, region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s"
    )
    user = "reader-" + s3.bucket.rpartition("-")[2]
    iam.create_user(UserName=user)
    allow_all = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'
    iam.put_user_policy(UserName=user, PolicyName="all", PolicyDocument=allow_all)
    key = iam.create_access_key(UserName=user)["AccessKey"]
    options = {**s3.storage_options, "key": key["AccessKeyId"], "secret": key["SecretAccessKey"]}

    def authenticate(count: str) -> None:
        url = f"{s3.endpoint}/moto-api/reset-auth"
        urllib.request.urlopen(urllib.request.Request(url, count.encode(), {"Content-Type": "text/plain"})).read()

    authenticate("0")
    try:
        yield options
    finally:
        authenticate("inf")


def test_s3_signatures_are_checked_and_accepted(s3: Any, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    records = make_records()
    key = "signed/ü+x %20.tfrecord"
    s3.fs.pipe(f"{s3.bucket}/{key}", write_local(tmp_path / "x", records))
    options = request.getfixturevalue("s3_checking_signatures")
    s3.faults.agents.clear()
    assert list(tfr.iter_records(f"{s3.bucket}/{key}", storage_options=options)) == records
    assert direct(s3.faults.agents) == [True]  # moto accepted our signature: no second try through s3fs
    wrong = {**options, "secret": "not-the-secret", "skip_instance_cache": True}
    with pytest.raises(RemoteError, match="signature we calculated does not match") as info:
        list(tfr.iter_records(f"{s3.bucket}/{key}", storage_options=wrong))
    assert "not-the-secret" not in str(info.value)


def test_the_direct_path_keeps_no_filesystem_alive(s3: Any, tmp_path: Path) -> None:
    import gc
    import weakref

    import s3fs

    records = make_records(20)
    s3.fs.pipe(f"{s3.bucket}/alive.tfrecord", write_local(tmp_path / "x", records))
    fs = s3fs.S3FileSystem(skip_instance_cache=True, **s3.storage_options)
    assert list(tfr.iter_records(f"{s3.bucket}/alive.tfrecord", storage_options=fs)) == records
    assert _direct.target(fs) is not None
    gone = weakref.ref(fs)
    del fs
    gc.collect()
    assert gone() is None


def test_options_only_aiohttp_honours_go_through_fsspec(http_server: Any, tmp_path: Path) -> None:
    records = make_records(2000, 300)
    url = http_server.put("/via-aiohttp", write_local(tmp_path / "x", records))
    http_server.faults.cut_after = [1000]  # and a cut body resumes on that path too
    assert list(tfr.iter_records(url, storage_options={"client_kwargs": {"trust_env": False}})) == records
    assert http_server.faults.agents and not any(direct(http_server.faults.agents))
    assert range_starts(http_server.faults.gets("/via-aiohttp"))[:2] == [0, 1000]


def test_a_server_that_refuses_the_direct_client_is_read_through_fsspec(
    http_server: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    records = make_records()
    url = http_server.put("/refused", write_local(tmp_path / "x", records))
    options = {"headers": {"X-Test": request.node.nodeid}}  # a filesystem of its own (fsspec caches them)
    http_server.faults.forbid_agent = _direct.USER_AGENT
    assert list(tfr.iter_records(url, storage_options=options)) == records
    assert list(tfr.iter_records(url, storage_options=options)) == records
    assert direct(http_server.faults.agents) == [True, False, False]  # refused once, then fsspec's client


def test_s3_errors_name_the_object_and_no_credentials(s3: Any, tmp_path: Path, small_blocks: int) -> None:
    url = f"{s3.bucket}/down.tfrecord"
    s3.fs.pipe(url, write_local(tmp_path / "x", make_records()))
    s3.faults.fail_next = 1000
    with pytest.raises(RemoteError) as info:
        list(tfr.iter_records(url, storage_options=s3.storage_options))
    err = info.value
    shown = "".join(traceback.format_exception(type(err), err, err.__traceback__))
    assert err.offset == 0 and "503" in str(err) and "after 4 attempts" in str(err)
    assert "testing-secret" not in shown and "Signature" not in shown and "testing-key" not in shown
    assert all(direct(s3.faults.agents))


def test_s3_without_credentials_fails_at_once(s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    url = f"{s3.bucket}/x.tfrecord"
    s3.fs.pipe(url, write_local(tmp_path / "x", make_records(5)))
    options = {"client_kwargs": s3.storage_options["client_kwargs"], "skip_instance_cache": True}
    with pytest.raises(RemoteError, match="NoCredentialsError") as info:
        list(tfr.iter_records(url, storage_options=options))
    assert "attempts" not in str(info.value)  # asked once: no retry finds credentials
    assert s3.faults.gets("x.tfrecord") == []


# ----------------------------------------------------------------------------- writing


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_s3_write_appears_only_at_close(s3: Any, compression: str) -> None:
    records = make_records(3000, 3000)  # > 5 MiB uncompressed: a multipart upload
    url = f"{s3.bucket}/out.tfrecord"
    with tfr.TFRecordWriter(url, compression=compression, storage_options=s3.storage_options) as w:
        for r in records:
            w.write(r)
            if len(r) == 1:
                assert not s3.fs.exists(url)
        assert not s3.fs.exists(url)
    assert list(tfr.iter_records(url, storage_options=s3.storage_options)) == records


def write_then_fail(url: str, records: list[bytes], storage_options: Any) -> None:
    with tfr.TFRecordWriter(url, storage_options=storage_options) as w:
        for r in records:
            w.write(r)
        w.flush()
        raise KeyError("boom")


@pytest.mark.parametrize("n", [10, 3000])
def test_s3_write_interrupted_leaves_no_object(s3: Any, n: int) -> None:
    url = f"{s3.bucket}/broken.tfrecord"
    with pytest.raises(KeyError):
        write_then_fail(url, make_records(n, 3000), s3.storage_options)
    assert not s3.fs.exists(url)
    s3.fs.invalidate_cache()
    assert s3.fs.ls(s3.bucket) == []
    assert s3.fs.call_s3("list_multipart_uploads", Bucket=s3.bucket[5:]).get("Uploads", []) == []


def test_s3_writer_dropped_unclosed_leaves_no_object(s3: Any) -> None:
    url = f"{s3.bucket}/dropped.tfrecord"
    w = tfr.TFRecordWriter(url, storage_options=s3.storage_options)
    w.write(b"x" * 100)
    del w
    assert not s3.fs.exists(url)


def test_gcs_write_and_interrupted_write(gcs: Any) -> None:
    records = make_records(200)
    url = f"{gcs.bucket}/ok.tfrecord.gz"
    with tfr.TFRecordWriter(url, compression="gzip", storage_options=gcs.storage_options) as w:
        for r in records:
            w.write(r)
    assert list(tfr.iter_records(url, storage_options=gcs.storage_options)) == records
    bad = f"{gcs.bucket}/broken.tfrecord"
    with pytest.raises(KeyError):
        write_then_fail(bad, records, gcs.storage_options)
    gcs.fs.invalidate_cache()
    assert not gcs.fs.exists(bad)


# ----------------------------------------------------------------------------- messages and helpers


def test_coalesce_joins_nearby_spans() -> None:
    assert _remote.coalesce([(50, 60), (0, 10), (12, 20)], gap=5) == [(0, 20), (50, 60)]
    assert _remote.coalesce([(0, 10), (5, 8), (100, 200)], gap=0) == [(0, 10), (100, 200)]


def cli(*args: str, s3: Any = None) -> str:
    """The stdout of `tfrecord-lite ARGS` in a subprocess, which must succeed; with `s3`, its AWS
    clients find that server."""
    proc = run_cli(*args, env=s3.environment if s3 is not None else None)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cli_reads_urls(http_server: Any, tmp_path: Path) -> None:
    records = [tfr.encode_example({"i": [i]}) for i in range(30)]
    http_server.put("/cli.tfrecord.gz", write_local(tmp_path / "x", records, "gzip"))
    url = http_server.url("/cli.tfrecord.gz")
    assert "30" in cli("count", url)
    cli("verify", url)
    assert '"i"' in cli("head", "-n", "2", url) or "i" in cli("head", "-n", "2", url)


# ----------------------------------------------------------------------------- shards and random access


def write_shards(prefix: str, records: list[bytes], storage_options: Any, **kw: Any) -> list[str]:
    with tfr.ShardedWriter(prefix, storage_options=storage_options, **kw) as w:
        for r in records:
            w.write(r)
    return w.paths


def test_sharded_writer_to_s3_uploads_shards_and_sidecars(s3: Any, tmp_path: Path) -> None:
    records = make_records(500)
    paths = write_shards(f"{s3.bucket}/ds/train", records, s3.storage_options, max_records=120)
    assert [p.rsplit("/", 1)[1] for p in paths] == [f"train-{i:05d}-of-00005.tfrecord" for i in range(5)]
    s3.fs.invalidate_cache()
    listed = sorted(p.rsplit("/", 1)[1] for p in s3.fs.ls(f"{s3.bucket}/ds"))
    assert listed == sorted([p.rsplit("/", 1)[1] for p in paths] + [p.rsplit("/", 1)[1] + ".tfrlidx" for p in paths])
    local = write_shards(str(tmp_path / "train"), records, None, max_records=120)
    for url, path in zip(paths, local, strict=True):  # byte for byte what the local writer makes
        assert s3.fs.cat_file(url) == Path(path).read_bytes()
        with tfr.TFRecordFile(url, storage_options=s3.storage_options) as f:
            assert f.index_path == url + ".tfrlidx"  # the uploaded sidecar is fresh, and used
            assert list(f) == list(tfr.TFRecordFile(path))
    with tfr.ShardedRecords(paths, storage_options=s3.storage_options) as ds:
        assert list(ds) == records
    with pytest.raises(FileExistsError):
        write_shards(f"{s3.bucket}/ds/train", records, s3.storage_options)


def test_sharded_writer_interrupted_leaves_no_object(s3: Any) -> None:
    def fail_midway() -> None:
        with tfr.ShardedWriter(f"{s3.bucket}/ds/x", storage_options=s3.storage_options, num_shards=3) as w:
            for r in make_records(3000, 3000):
                w.write(r)
            raise KeyError("boom")

    with pytest.raises(KeyError):
        fail_midway()
    s3.fs.invalidate_cache()
    assert s3.fs.find(s3.bucket) == []
    assert s3.fs.call_s3("list_multipart_uploads", Bucket=s3.bucket[5:]).get("Uploads", []) == []


@pytest.mark.parametrize("where", ["http", "s3"])
def test_random_access_equals_local(where: str, http_server: Any, s3: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    records = make_records(3000, 2000)
    data = write_local(tmp_path / "x.tfrecord", records)
    if where == "http":
        url, options, log = http_server.put("/ra.tfrecord", data), None, http_server.faults
    else:
        url, options, log = f"{s3.bucket}/ra.tfrecord", s3.storage_options, s3.faults
        s3.fs.pipe(url, data)
    local = tfr.TFRecordFile(tmp_path / "x.tfrecord", index=False)
    with tfr.TFRecordFile(url, storage_options=options) as f:  # no sidecar: one scan, cached locally
        assert len(f) == len(local) and f.index_path is not None
        assert f.index_path.startswith(str(tmp_path / "cache"))
        picks = [int(i) for i in np.random.default_rng(0).integers(0, len(f), 300)]
        log.requests.clear()
        assert f[picks] == local[picks]
        assert 0 < len(log.gets()) <= 8  # coalesced: never one request per record
        assert [f[i] for i in (0, -1, 1234)] == [local[i] for i in (0, -1, 1234)]
        assert f[10:20] == local[10:20]
    with tfr.TFRecordFile(url, storage_options=options) as f:  # the cached index is used: no scan
        assert f[5] == records[5]


def test_random_access_with_a_text_index_url_and_stale_cache(
    http_server: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    records = make_records(200)
    data = write_local(tmp_path / "x.tfrecord", records)
    tfr.write_text_index(tmp_path / "x.tfrecord", destination=tmp_path / "x.idx")
    url = http_server.put("/t.tfrecord", data)
    index_url = http_server.put("/t.idx", (tmp_path / "x.idx").read_bytes())
    with tfr.TFRecordFile(url, index=index_url) as f:
        assert list(f) == records
    with tfr.TFRecordFile(url) as f:
        assert len(f) == 200
    more = write_local(tmp_path / "y.tfrecord", records + records[:7])
    http_server.put("/t.tfrecord", more)  # the object changed: its ETag too, so the cache misses
    with tfr.TFRecordFile(url) as f:
        assert len(f) == 207


def test_random_access_into_a_gzip_object_without_a_sidecar(http_server: Any, tmp_path: Path) -> None:
    records = make_records(10)
    url = http_server.put("/c.tfrecord.gz", write_local(tmp_path / "x", records, "gzip"))
    with tfr.TFRecordFile(url) as f:  # indexed by one streaming pass (points in memory)
        assert f.compression == "gzip" and f[[9, 0]] == [records[9], records[0]]


@pytest.mark.parametrize("prefetch", [0, 1, 4])
def test_iter_records_over_an_s3_glob_with_prefetch(s3: Any, tmp_path: Path, prefetch: int) -> None:
    records = make_records(900)
    paths = write_shards(
        f"{s3.bucket}/g/train", records, s3.storage_options, num_shards=12, compression="gzip", suffix=".tfrecord.gz"
    )
    assert len(paths) == 12
    got = list(
        tfr.iter_records(
            f"{s3.bucket}/g/train-*-of-*.tfrecord.gz", storage_options=s3.storage_options, prefetch=prefetch
        )
    )
    assert sorted(got) == sorted(records)  # round-robin shards: every record once
    assert list(tfr.iter_records(paths, storage_options=s3.fs, prefetch=prefetch)) == got
    assert list(tfr.iter_records(f"{s3.bucket}/g/train", storage_options=s3.storage_options)) == got  # a prefix


def test_gcs_glob_and_shards(gcs: Any) -> None:
    records = make_records(300)
    paths = write_shards(f"{gcs.bucket}/train", records, gcs.storage_options, max_records=100)
    assert len(paths) == 3
    assert list(tfr.iter_records(f"{gcs.bucket}/train-*", storage_options=gcs.storage_options)) == records
    with tfr.ShardedRecords(f"{gcs.bucket}/train", storage_options=gcs.storage_options) as ds:
        assert ds[[0, 150, 299]] == [records[0], records[150], records[299]]


@pytest.mark.torch
def test_torch_streaming_dataset_with_two_workers_over_s3(s3: Any) -> None:
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from tfrecord_lite.torch import IterableTFRecordDataset

    records = [tfr.encode_example({"i": [i]}) for i in range(500)]
    write_shards(f"{s3.bucket}/t/train", records, s3.storage_options, num_shards=6)
    ds = IterableTFRecordDataset(
        f"{s3.bucket}/t/train", features={"i": tfr.FixedLenFeature([], "int64")}, storage_options=s3.storage_options
    )
    got = [int(item["i"]) for item in DataLoader(ds, batch_size=None, num_workers=2)]
    assert sorted(got) == list(range(500))  # every record exactly once across the two workers


def test_cli_reshard_and_convert_to_s3(s3: Any, tmp_path: Path) -> None:
    records = [tfr.encode_example({"i": [i]}) for i in range(40)]
    write_local(tmp_path / "in.tfrecord", records)
    cli("reshard", str(tmp_path / "in.tfrecord"), "-o", f"{s3.bucket}/cli/ds", "--shards", "3", "-q", s3=s3)
    cli("convert", str(tmp_path / "in.tfrecord"), f"{s3.bucket}/cli/all.tfrecord.gz", "-q", s3=s3)
    assert "40" in cli("count", f"{s3.bucket}/cli/ds-*-of-*.tfrecord", s3=s3)
    got = tfr.iter_records(f"{s3.bucket}/cli/all.tfrecord.gz", storage_options=s3.storage_options)
    assert list(got) == records
    s3.fs.invalidate_cache()
    names = sorted(p.rsplit("/", 1)[1] for p in s3.fs.find(f"{s3.bucket}/cli"))
    shards = [f"ds-0000{k}-of-00003.tfrecord" for k in range(3)]
    assert names == sorted(["all.tfrecord.gz", *shards, *(n + ".tfrlidx" for n in shards)])  # nothing staged is left


# ----------------------------------------------------------------------------- images to a bucket


def image_tree(root: Path, names: list[str], seed: int = 0) -> Path:
    pil = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(seed)
    for k, name in enumerate(names):
        path = root / ("cat" if k % 2 else "dog") / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pil.fromarray(rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)).save(path, format="PNG")
    return root


def test_pack_images_to_s3_publishes_shards_sidecars_then_the_label_map(s3: Any, tmp_path: Path) -> None:
    from tfrecord_lite import images

    tree = image_tree(tmp_path / "photos", [f"{k}.png" for k in range(12)])
    local = images.pack_images(tree, prefix=tmp_path / "out" / "pets", num_shards=3)
    s3.faults.reset()
    prefix = f"{s3.bucket}/ds/pets"
    result = images.pack_images(tree, prefix=prefix, num_shards=3, storage_options=s3.storage_options)
    s3.fs.invalidate_cache()
    names = sorted(p.rsplit("/", 1)[1] for p in s3.fs.find(f"{s3.bucket}/ds"))
    shards = [f"pets-0000{k}-of-00003.tfrecord" for k in range(3)]
    assert names == sorted(["pets.labels.json", *shards, *(n + ".tfrlidx" for n in shards)])  # nothing staged left
    assert images.load_label_map(result.label_map_path, storage_options=s3.storage_options) == local.label_map
    got = [images.parse_image_record(r) for r in tfr.iter_records(result.paths, storage_options=s3.storage_options)]
    assert got == [images.parse_image_record(r) for r in tfr.iter_records(local.paths)]
    # the objects get their final names (a copy each) shards first, the label map last
    finals = [r[1].rsplit("/", 1)[1] for r in s3.faults.requests if r[0] == "PUT" and "publish-" not in r[1]]
    assert finals[-1] == "pets.labels.json" and set(finals[:-1]) >= set(shards)
    # appending reads the label map back from the bucket: ids stay, a new class gets the next id
    more = image_tree(tmp_path / "more", ["x.png"], seed=1)  # bytes not packed yet
    (more / "dog").rename(more / "ant")
    again = images.pack_images(more, prefix=prefix, append=True, num_shards=1, storage_options=s3.storage_options)
    assert again.label_map == {**local.label_map, "ant": 2}
    grown = tfr.ShardedRecords(prefix, storage_options=s3.storage_options)
    assert len(grown) == 13  # the old shards renamed to the new total, in the bucket too:
    assert [p.rsplit("/", 1)[1] for p in grown.paths] == [f"pets-0000{k}-of-00004.tfrecord" for k in range(4)]
    assert all(shard.index_path for shard in grown.shards)


def test_pack_images_to_s3_interrupted_leaves_nothing(s3: Any, tmp_path: Path) -> None:
    from tfrecord_lite import images

    tree = image_tree(tmp_path / "photos", [f"{k}.png" for k in range(6)])
    (tree / "cat" / "broken.png").write_bytes(b"not a png")
    with pytest.raises(images.ImageDecodeError):
        images.pack_images(tree, prefix=f"{s3.bucket}/ds/pets", num_shards=2, storage_options=s3.storage_options)
    s3.fs.invalidate_cache()
    assert s3.fs.find(f"{s3.bucket}/ds") == []  # no shard, no label map, no staging object


def test_cli_pack_images_to_s3_and_remove_images(s3: Any, tmp_path: Path) -> None:
    tree = image_tree(tmp_path / "photos", [f"{k}.png" for k in range(8)])
    cli("pack-images", str(tree), f"{s3.bucket}/cli/pets", "--shards", "2", "-q", s3=s3)
    assert "8" in cli("count", f"{s3.bucket}/cli/pets-*-of-*.tfrecord", s3=s3)
    cli(
        "remove-images",
        f"{s3.bucket}/cli/pets-*-of-*.tfrecord",
        "-o",
        f"{s3.bucket}/cli/few",
        "--class",
        "cat",
        "-q",
        s3=s3,
    )
    from tfrecord_lite import images

    assert images.load_label_map(f"{s3.bucket}/cli/few.labels.json", storage_options=s3.storage_options) == {
        "cat": 0,
        "dog": 1,
    }
    kept = tfr.iter_records(f"{s3.bucket}/cli/few-*-of-*.tfrecord", storage_options=s3.storage_options)
    assert sorted(images.parse_image_record(r).text for r in kept) == ["dog"] * 4


def test_pack_images_to_gcs(gcs: Any, tmp_path: Path) -> None:
    from tfrecord_lite import images

    tree = image_tree(tmp_path / "photos", [f"{k}.png" for k in range(6)])
    result = images.pack_images(tree, prefix=f"{gcs.bucket}/ds/pets", num_shards=2, storage_options=gcs.storage_options)
    assert images.load_label_map(result.label_map_path, storage_options=gcs.storage_options) == {"cat": 0, "dog": 1}
    assert len(list(tfr.iter_records(result.paths, storage_options=gcs.storage_options))) == 6


# ----------------------------------------------------------------------------- GZIP / ZLIB by URL


def compressed_with_sidecar(tmp_path: Path, compression: str, n: int = 3000) -> tuple[Path, list[bytes]]:
    """A compressed file (about 8x smaller than its records) and its seek-point sidecar (points every
    64 KiB of records; indexed_gzip makes none in incompressible data)."""
    from tfrecord_lite._index.gzip_index import write_gzip_index

    rng = np.random.default_rng(5)
    records = [f"record {i:06d} {rng.integers(0, 10**9)} ".encode() * int(rng.integers(1, 12)) for i in range(n)]
    path = tmp_path / f"x.tfrecord.{compression}"
    write_local(path, records, {"gz": "gzip", "zz": "zlib"}[compression])
    write_gzip_index(str(path), str(path) + ".tfrlidx", spacing=64 << 10)
    return path, records


@pytest.mark.parametrize("where", ["http", "s3"])
def test_gzip_random_access_by_url_equals_local(
    where: str, http_server: Any, s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("indexed_gzip")
    monkeypatch.setattr(_remote, "CACHE_BLOCK", 16 << 10)
    path, records = compressed_with_sidecar(tmp_path, "gz", n=60000)
    data, sidecar = path.read_bytes(), (tmp_path / "x.tfrecord.gz.tfrlidx").read_bytes()
    if where == "http":
        url, options, server = http_server.put("/x.tfrecord.gz", data), None, http_server
        http_server.put("/x.tfrecord.gz.tfrlidx", sidecar)
    else:
        url, options, server = f"{s3.bucket}/x.tfrecord.gz", s3.storage_options, s3
        s3.fs.pipe(url, data)
        s3.fs.pipe(url + ".tfrlidx", sidecar)
    server.faults.reset()
    with tfr.TFRecordFile(url, storage_options=options) as f, tfr.TFRecordFile(str(path)) as local:
        assert f.compression == "gzip" and len(f) == len(local) == len(records)
        assert f[42500] == local[42500] == records[42500]
        fetched = sum(
            int(r[2].split("-")[1]) - int(r[2].split("=")[1].split("-")[0]) + 1
            for r in server.faults.gets(".gz")
            if r[1].endswith(".gz") and r[2] and not r[2].endswith("-")
        )
        assert fetched < len(data) // 2  # from a seek point near the record, not from the start
        picks = [7, 59999, 1500, 7, 42]
        assert f[picks] == local[picks] == [records[i] for i in picks]
        assert f[-3:] == records[-3:]
        assert list(f) == records


def test_zlib_object_without_a_sidecar_is_indexed_by_one_pass(http_server: Any, tmp_path: Path) -> None:
    path, records = compressed_with_sidecar(tmp_path, "zz", n=800)
    url = http_server.put("/x.tfrecord.zz", path.read_bytes())  # no sidecar uploaded
    with tfr.TFRecordFile(url) as f:
        assert f.compression == "zlib" and len(f) == 800
        assert f[[799, 0, 400]] == [records[799], records[0], records[400]]


def test_gzip_object_with_a_stale_sidecar(http_server: Any, tmp_path: Path) -> None:
    path, _ = compressed_with_sidecar(tmp_path, "gz", n=500)
    data = path.read_bytes()
    url = http_server.put("/s.tfrecord.gz", data[:-1] + bytes([data[-1] ^ 1]))  # same size, other last bytes
    http_server.put("/s.tfrecord.gz.tfrlidx", (tmp_path / "x.tfrecord.gz.tfrlidx").read_bytes())
    with pytest.raises(tfr.StaleIndexError, match="first or last bytes"):
        tfr.TFRecordFile(url, on_stale="raise")


# ----------------------------------------------------------------------------- write_index on URLs


def object_gets(server: Any, url: str) -> int:
    """How many GETs the object at `url` (not its sidecar) was asked for."""
    name = url.rsplit("/", 1)[1]
    return len([r for r in server.faults.gets(name) if r[1].endswith(name)])


@pytest.mark.parametrize("where", ["s3", "gcs"])
@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_write_index_uploads_the_sidecar_next_to_the_object(
    where: str, compression: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = request.getfixturevalue(where)
    records = make_records(3000, 2000)
    local = tmp_path / "x.tfrecord"
    url = f"{store.bucket}/d/x.tfrecord" + {"": "", "gzip": ".gz", "zlib": ".zz"}[compression]
    store.fs.pipe(url, write_local(local, records, compression))
    assert tfr.write_index(url, storage_options=store.storage_options) == url + ".tfrlidx"
    store.fs.invalidate_cache()
    assert store.fs.exists(url + ".tfrlidx") and not (tmp_path / "cache").exists()  # uploaded, not cached
    options = store.faulty_storage_options if where == "gcs" else store.storage_options
    store.faults.requests.clear()
    with tfr.TFRecordFile(url, storage_options=options, on_stale="raise") as f, tfr.TFRecordFile(local) as oracle:
        assert f.index_path == url + ".tfrlidx" and len(f) == len(oracle) == 3000  # fresh, and used
        picks = [2999, 0, 1234, 7]
        assert f[picks] == oracle[picks] == [records[i] for i in picks]
        assert object_gets(store, url) <= 8  # no pass over the object


def test_write_index_replaces_a_stale_sidecar_and_leaves_none_on_failure(s3: Any, tmp_path: Path) -> None:
    records = make_records(300)
    url = f"{s3.bucket}/x.tfrecord"
    s3.fs.pipe(url, write_local(tmp_path / "a", records[:100]))
    tfr.write_index(url, storage_options=s3.storage_options)
    s3.fs.pipe(url, write_local(tmp_path / "b", records))  # the object changed: its sidecar is stale
    with pytest.raises(tfr.StaleIndexError):
        tfr.TFRecordFile(url, storage_options=s3.storage_options, on_stale="raise")
    tfr.write_index(url, storage_options=s3.storage_options)
    with tfr.TFRecordFile(url, storage_options=s3.storage_options, on_stale="raise") as f:
        assert list(f) == records
    data = bytearray(s3.fs.cat_file(url))
    data[-6] ^= 1  # the last record's payload: its CRC fails
    s3.fs.pipe(f"{s3.bucket}/bad.tfrecord", bytes(data))
    with pytest.raises(tfr.CorruptRecordError, match=r"bad\.tfrecord"):
        tfr.write_index(f"{s3.bucket}/bad.tfrecord", storage_options=s3.storage_options)
    s3.fs.invalidate_cache()
    assert not s3.fs.exists(f"{s3.bucket}/bad.tfrecord.tfrlidx")  # no sidecar, not even a partial one


def test_write_index_over_http_needs_a_place_to_write(http_server: Any, tmp_path: Path) -> None:
    records = make_records(200)
    url = http_server.put("/h.tfrecord", write_local(tmp_path / "x", records))
    with pytest.raises(PermissionError, match="takes no uploads") as caught:
        tfr.write_index(url)
    assert url + ".tfrlidx" in str(caught.value) and http_server.faults.gets() == []  # refused before reading
    target = tmp_path / "h.tfrlidx"
    assert tfr.write_index(url, destination=target) == str(target)
    with tfr.TFRecordFile(url, index=target, on_stale="raise") as f:
        assert f[[199, 3]] == [records[199], records[3]]


def test_write_index_reads_a_gzip_object_once(http_server: Any, tmp_path: Path) -> None:
    pytest.importorskip("indexed_gzip")  # which seeks back after every chunk it inflates
    path, records = compressed_with_sidecar(tmp_path, "gz", n=60000)
    data = path.read_bytes()
    url = http_server.put("/once.tfrecord.gz", data)
    http_server.faults.requests.clear()
    tfr.write_index(url, destination=tmp_path / "once.tfrlidx")
    fetched = sum(
        min(len(data), int(r[2].split("-")[1]) + 1) - int(r[2].split("=")[1].split("-")[0])
        for r in http_server.faults.gets("/once.tfrecord.gz")
    )
    assert fetched <= len(data) + 2 * _remote.CACHE_BLOCK  # each byte once, plus the blocks sniffed and checked
    with tfr.TFRecordFile(url, index=tmp_path / "once.tfrlidx", on_stale="raise") as f:
        assert f[[59999, 3]] == [records[59999], records[3]]


def test_cli_index_uploads_sidecars_to_s3(s3: Any, http_server: Any, tmp_path: Path) -> None:
    records = make_records(120)
    for name, compression in (("a.tfrecord", ""), ("b.tfrecord.gz", "gzip")):
        s3.fs.pipe(f"{s3.bucket}/c/{name}", write_local(tmp_path / name, records, compression))
    out = cli("index", f"{s3.bucket}/c/*", s3=s3)
    assert out.splitlines() == [
        f"{s3.bucket}/c/a.tfrecord: 120 records, index {s3.bucket}/c/a.tfrecord.tfrlidx",
        f"{s3.bucket}/c/b.tfrecord.gz: 120 records, index {s3.bucket}/c/b.tfrecord.gz.tfrlidx",
    ]
    s3.fs.invalidate_cache()
    assert sorted(p.rsplit("/", 1)[1] for p in s3.fs.find(f"{s3.bucket}/c")) == [
        "a.tfrecord",
        "a.tfrecord.tfrlidx",
        "b.tfrecord.gz",
        "b.tfrecord.gz.tfrlidx",
    ]
    assert "120 records" in cli("index", f"{s3.bucket}/c/*", s3=s3)  # again: the sidecars are not inputs
    url = http_server.put("/cli-index.tfrecord.gz", write_local(tmp_path / "h", records, "gzip"))
    assert "(in memory: HTTP(S) takes no uploads)" in cli("index", url)


# ----------------------------------------------------------------------------- storage_options everywhere


def example_records(n: int = 60) -> list[bytes]:
    return [tfr.encode_example({"label": [i % 3], "x": [float(i), 0.5], "text": [b"t" * (i % 4)]}) for i in range(n)]


@pytest.mark.parametrize("how", ["options", "filesystem"])
def test_storage_options_reach_every_reader(s3: Any, tmp_path: Path, how: str) -> None:
    from tfrecord_lite import arrow
    from tfrecord_lite._records.verify import verify_file

    options = s3.storage_options if how == "options" else s3.filesystem()  # a dict, or an fsspec filesystem
    records = example_records()
    local = write_shards(str(tmp_path / "ds"), records, None, num_shards=2)
    remote = write_shards(f"{s3.bucket}/ds/x", records, options, num_shards=2)
    prefix = f"{s3.bucket}/ds/x"
    assert tfr.infer_features(prefix, storage_options=options) == tfr.infer_features(str(tmp_path / "ds"))
    assert tfr.infer_features(remote, max_records=5, storage_options=options) == tfr.infer_features(
        local, max_records=5
    )
    assert tfr.count_records(prefix, storage_options=options) == tfr.count_records(local) == len(records)
    assert tfr.count_records(remote[1], verify=True, storage_options=options) == tfr.count_records(local[1])
    assert verify_file(remote[0], storage_options=options).records == verify_file(local[0]).records
    report = tfr.salvage(remote[1], destination=tmp_path / "saved.tfrecord", storage_options=options)
    assert report.records == len(tfr.TFRecordFile(local[1]))
    assert list(tfr.iter_records(str(tmp_path / "saved.tfrecord"))) == list(tfr.iter_records(local[1]))
    table = arrow.read_arrow(prefix, storage_options=options)
    assert table.equals(arrow.read_arrow(local))
    out = f"{s3.bucket}/out/all.tfrecord.gz"
    assert arrow.write_arrow(table, out, compression="gzip", storage_options=options) == len(records)
    assert arrow.read_arrow(out, storage_options=options).equals(table)
    s3.fs.invalidate_cache()
    assert [p.rsplit("/", 1)[1] for p in s3.fs.find(f"{s3.bucket}/out")] == ["all.tfrecord.gz"]  # nothing staged


def test_image_readers_take_storage_options(s3: Any, tmp_path: Path) -> None:
    from tfrecord_lite import images

    tree = image_tree(tmp_path / "photos", [f"{k}.png" for k in range(5)])
    fs = s3.filesystem()
    packed = images.pack_images(tree, prefix=f"{s3.bucket}/ds/pets", num_shards=2, storage_options=fs)
    got = sorted(r.filename for r in images.iter_image_records(packed.paths, storage_options=fs))
    assert got == sorted(f"{cls}/{k}.png" for k, cls in enumerate(["dog", "cat"] * 3) if k < 5)
    assert images.unpack_images(packed.paths, destination=tmp_path / "back", storage_options=fs) == 5
    for original in tree.rglob("*.png"):
        assert (tmp_path / "back" / original.relative_to(tree)).read_bytes() == original.read_bytes()
