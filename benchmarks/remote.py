# Cloud-storage benchmark (issue 11's targets), against moto's S3 server on 127.0.0.1 with a
# fixed latency added to every request (tests/_servers.py; --latency, default 20 ms):
#
#   python benchmarks/remote.py [--quick] [--rounds N] [--latency S] [--prefetch N] [--store s3|http]
#                               [--streaming-only] [--bound] [--out FILE.json]
#
# Measures, each as the median (and spread: lowest..highest) of --rounds rounds, the systems
# compared taking turns within each round (benchmarks/_rounds.py; a ratio's spread is that of
# single rounds):
#   - streaming: the small workload in 64 shards, every record through iter_records, from local
#     disk and from s3:// with prefetch; records/s and the ratio remote / local (target >= 0.7);
#     the same with the bodies received on fsspec's event loop instead (_storage/direct.py switched off);
#     Beside it, the floors the server sets: s3fs fetching the same 64 objects all at once (one
#     gather, no decoding), and our own client fetching them with the streaming's 16 threads and
#     decoding nothing; if that alone is slower than the local read ÷ 0.7, the server bounds us.
#     And the CPU seconds the server process spends on one stream (it shares the 2 cores);
#     --bound adds a native client to the rounds: curl (no Python on the client side) fetching
#     the same first blocks of the 64 objects, --parallel-max 32 (our prefetch depth; and
#     --parallel-immediate: without it curl waits to see whether a connection multiplexes, 1.7 s
#     instead of 0.16 s here), over the same latency, S3 objects by presigned URLs; its wall
#     time, its CPU and the server's. If even curl takes longer than the local read / 0.7, no
#     client can meet the target here. And streaming with curl fetching (the objects fetched into
#     tmpfs files by curl, each decoded as curl reports it complete): the ratio a client whose
#     fetching costs this process nothing would get on this machine;
#   - random access: 1,024 random records of one indexed object, fetched as f[[...]] in batches of
#     256; the time of a batch over one round trip (a 1-byte ranged GET; target <= 4), and how many
#     requests a batch made (never one per record). Beside it, the same ranges fetched by a bare
#     client (s3fs cat_ranges, one gather), and the round trip to a small object: moto copies the
#     whole object on every ranged GET, holding the object's lock, so its cost grows with the object;
#   - memory: peak RSS of a fresh process streaming the shards (above what it had after its imports),
#     and the peak of Python allocations (tracemalloc), against the bound prefetch x the first block
#     (1 MiB) + one streaming block (8 MiB); with small and with 8x larger shards.
# Prints a table and writes JSON (default benchmarks/results/remote.json). Nothing here asserts.
from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
import workloads as W
from _rounds import compare, spread, timed, turns

import tfrecord_lite as tfr
from tests._servers import RangeServer, S3Server
from tfrecord_lite._storage import direct as _direct
from tfrecord_lite._storage import prefetch as _prefetch
from tfrecord_lite._storage import remote as _remote

SHARDS = 64
BATCH = 256
PICKS = 1024


class Server:
    """moto's S3 or the HTTP range server (tests/_servers.py) in a process of its own, so that its
    request handling does not share this process's GIL with the reader being measured; latency is
    set, and (HTTP) objects are put, through a pipe."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._conn, child = multiprocessing.Pipe()
        self._proc = multiprocessing.Process(target=_serve, args=(child, kind), daemon=True)
        self._proc.start()
        self.endpoint, self.storage_options = self._conn.recv()

    def _ask(self, *message: Any) -> Any:
        self._conn.send(message)
        return self._conn.recv()

    def set_latency(self, seconds: float) -> None:
        self._ask("latency", seconds)

    def put(self, name: str, data: bytes, fs: Any) -> str:
        if self.kind == "http":
            return str(self._ask("put", f"/bench/{name}", data))
        fs.pipe(f"s3://bench/{name}", data)
        return f"s3://bench/{name}"

    def filesystem(self) -> Any:
        if self.kind == "http":
            return None
        import s3fs

        fs = s3fs.S3FileSystem(skip_instance_cache=True, **self.storage_options)
        fs.call_s3("create_bucket", Bucket="bench")
        return fs

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server process has used so far (Linux; 0 elsewhere)."""
        try:
            with open(f"/proc/{self._proc.pid}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self._conn.send(None)
        self._proc.join(10)


def _serve(conn: Any, kind: str) -> None:
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with S3Server() if kind == "s3" else RangeServer() as server:
        conn.send((server.endpoint, getattr(server, "storage_options", None)))
        while (message := conn.recv()) is not None:
            if message[0] == "latency":
                server.faults.latency = message[1]
                conn.send("ok")
            else:
                conn.send(server.put(message[1], message[2]))


class Requests:
    """Counts the ranged requests this process makes (RemoteObject.read_range), for the batch column."""

    def __init__(self) -> None:
        self.count = 0
        original = _remote.RemoteObject.read_range

        def counted(obj: _remote.RemoteObject, start: int, end: int) -> bytes:
            self.count += 1
            return original(obj, start, end)

        _remote.RemoteObject.read_range = counted  # type: ignore[method-assign]


def write_shards(folder: str, rows: list[dict[str, Any]], shards: int) -> list[str]:
    with tfr.ShardedWriter(os.path.join(folder, "train"), num_shards=shards) as w:
        for row in rows:
            w.write_example(row)
    return w.paths


def upload(server: Server, fs: Any, paths: list[str], sidecars: bool = True) -> list[str]:
    urls = []
    for p in paths:
        name = os.path.relpath(p, os.path.dirname(os.path.dirname(p))).replace(os.sep, "-")
        with open(p, "rb") as fh:
            urls.append(server.put(name, fh.read(), fs))
        if sidecars and os.path.exists(p + ".tfrlidx"):
            with open(p + ".tfrlidx", "rb") as fh:
                server.put(name + ".tfrlidx", fh.read(), fs)
    return urls


def bare_fetch(fs: Any, urls: list[str]) -> int:
    """The floor: the objects' bytes fetched by s3fs in one gather, nothing decoded."""
    return sum(len(v) for v in fs.cat([u.split("://", 1)[1] for u in urls]).values())


def fetch_only(urls: list[str], prefetch: int, options: Any) -> int:
    """The other floor: our client fetching what streaming fetches (each object's first block),
    `prefetch` requests at a time as streaming makes them, nothing decoded."""
    objects = [_remote.RemoteObject(u, options) for u in urls]
    with ThreadPoolExecutor(min(prefetch, _prefetch.MAX_THREADS) or 1) as pool:
        return sum(map(len, pool.map(_remote.fetch_head, objects)))


def bare_ranges(fs: Any, url: str, ranges: list[tuple[int, int]]) -> int:
    """The ranges of one batch fetched by s3fs in one gather (the requests our batch makes)."""
    path = url.split("://", 1)[1]
    data = fs.cat_ranges([path] * len(ranges), [a for a, _ in ranges], [b for _, b in ranges])
    return sum(len(d) for d in data)


def curl_config(fs: Any, urls: list[str], outputs: list[str], folder: str) -> str:
    """A curl config file fetching each URL into its output; S3 objects by presigned URLs (signed
    by s3fs with the same credentials)."""
    plain = [u if fs is None else fs.sign(u, expiration=24 * 3600) for u in urls]
    path = os.path.join(folder, f"curl-{len(os.listdir(folder))}.conf")
    with open(path, "w") as fh:
        for url, output in zip(plain, outputs, strict=True):
            fh.write(f'url = "{url}"\noutput = "{output}"\n')
    return path


def curl(config: str, parallel: int, *more: str) -> list[str]:
    """curl fetching each object's first block (what fetch_head asks), `parallel` at a time."""
    command = ["curl", "--silent", "--show-error", "--fail", "--no-progress-meter", "--parallel"]
    command += ["--parallel-immediate", "--parallel-max", str(parallel), "--range", f"0-{_remote.HEAD_BLOCK - 1}"]
    return [*command, *more, "--config", config]


def curl_fetch(config: str, parallel: int) -> int:
    """The native floor: curl fetching the objects, one process, no Python, nothing decoded."""
    subprocess.run(curl(config, parallel), check=True)
    return 0


def curl_stream(config: str, parallel: int, outputs: list[str]) -> int:
    """Streaming with fetching that costs this process nothing: curl (another process) fetches the
    objects into tmpfs files and names each as it completes; each is decoded, in order, when there."""
    names = ["stdbuf", "-oL", *curl(config, parallel, "--write-out", "%{filename_effective}\n")]
    done: set[str] = set()
    n = k = 0
    with subprocess.Popen(names, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            done.add(line.strip())
            while k < len(outputs) and outputs[k] in done:
                n += count_all([outputs[k]])
                k += 1
    return n


def curl_startup() -> float:
    """Seconds curl takes to start and exit with nothing to fetch (part of each curl round)."""
    return statistics.median(
        timed(lambda: subprocess.run(["curl", "--version"], capture_output=True))[0] for _ in range(5)
    )


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def count_all(sources: list[Any]) -> int:
    n = 0
    for source in sources:
        for _ in tfr.iter_records(source):
            n += 1
    return n


def _stream(urls: list[str], prefetch: int, options: Any) -> int:
    n = 0
    for source in _prefetch.prefetched(urls, prefetch, options):
        for _ in tfr.iter_records(source):
            n += 1
    return n


def _stream_via_fsspec(urls: list[str], prefetch: int, options: Any) -> int:
    """_stream with every body received on fsspec's event loop (aiohttp), as before _storage/direct.py."""
    saved = _direct.target
    _direct.target = lambda fs: None  # type: ignore[assignment]
    try:
        return _stream(urls, prefetch, options)
    finally:
        _direct.target = saved  # type: ignore[assignment]


def peak_memory(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _rss_child(conn: Any, urls: list[str], prefetch: int, options: Any) -> None:
    import resource

    import s3fs  # noqa: F401  (imported before the baseline: what streaming costs is what we measure)

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _stream(urls, prefetch, options)
    conn.send((base * 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024))


def peak_rss(urls: list[str], prefetch: int, options: Any) -> tuple[int, int]:
    """(peak RSS, its growth while streaming) of a fresh process that streams `urls`."""
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_rss_child, args=(child, urls, prefetch, options))
    proc.start()
    base, peak = parent.recv()
    proc.join(30)
    return peak, peak - base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a tenth of the workload")
    parser.add_argument("--rounds", "--runs", dest="rounds", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.020, help="seconds added to every request")
    parser.add_argument("--prefetch", type=int, default=_prefetch.PREFETCH)
    parser.add_argument("--store", choices=["s3", "http"], default="s3", help="moto's S3, or the HTTP range server")
    parser.add_argument("--streaming-only", action="store_true", help="skip random access and memory")
    parser.add_argument("--bound", action="store_true", help="add curl fetching the objects to the rounds")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "remote.json"))
    args = parser.parse_args()
    small = (W.QUICK if args.quick else W.FULL)[0]
    rows = list(small.rows())
    results: dict[str, Any] = {
        "workload": small.description,
        "store": args.store,
        "latency_s": args.latency,
        "runs": args.rounds,
        "rounds": args.rounds,
    }
    server = Server(args.store)
    requests = Requests()
    with tempfile.TemporaryDirectory() as tmp:
        fs = server.filesystem()
        options = server.storage_options
        local = write_shards(os.path.join(tmp, "shards"), rows, SHARDS)
        urls = upload(server, fs, local)
        one = write_shards(os.path.join(tmp, "one"), rows, 1)
        [one_url] = upload(server, fs, one)
        server.set_latency(args.latency)

        # -- streaming: local, remote with prefetch, the bare client's floor and (every other round)
        #    remote without prefetch take turns in each round
        systems: dict[str, Callable[[], Any]] = {
            "local": lambda: count_all(local),
            "remote": lambda: _stream(urls, args.prefetch, options),
            "fsspec": lambda: _stream_via_fsspec(urls, args.prefetch, options),
            "bare": lambda: bare_fetch(fs, urls) if fs is not None else 0,
            "fetch": lambda: fetch_only(urls, args.prefetch, options),
            "serial": lambda: _stream(urls, 0, options),
        }
        if args.bound:
            if shutil.which("curl") is None:
                parser.error("--bound needs curl on PATH")
            parallel = min(args.prefetch, _prefetch.MAX_THREADS)
            config = curl_config(fs, urls, ["/dev/null"] * len(urls), tmp)
            shm = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else tmp)
            fetched = [os.path.join(shm, f"{k}.tfrecord") for k in range(len(urls))]
            fed = curl_config(fs, urls, fetched, tmp)
            systems["curl"] = lambda: curl_fetch(config, parallel)
            systems["curl_stream"] = lambda: curl_stream(fed, parallel, fetched)
            systems["curl"]()  # warm-up
            assert systems["curl_stream"]() == len(rows)
        for name in ("local", "remote", "fsspec", "fetch"):  # warm-up: imports, connections, page cache
            systems[name]()
        times: dict[str, list[float]] = {name: [] for name in systems}
        cpu: dict[str, list[float]] = {name: [] for name in systems}
        server_cpu: dict[str, list[float]] = {name: [] for name in systems}
        counts = set()
        for k, name in turns(list(systems), args.rounds):
            if name == "serial" and k % 2:
                continue
            before, server_before = time.process_time() + children_cpu(), server.cpu_seconds()
            spent, got = timed(systems[name])
            cpu[name].append(time.process_time() + children_cpu() - before)
            times[name].append(spent)
            server_cpu[name].append(server.cpu_seconds() - server_before)
            if name in ("local", "remote", "fsspec", "curl_stream"):
                counts.add(got)
        assert counts == {len(rows)}
        local_times, remote_times = times["local"], times["remote"]
        ratio = compare(remote_times, local_times)  # remote records/s over local's
        n = len(rows)
        results["streaming"] = {
            "records": n,
            "shards": SHARDS,
            "prefetch": args.prefetch,
            "local_s": spread(local_times),
            "remote_s": spread(remote_times),
            "remote_no_prefetch_s": spread(times["serial"]),
            "bare_client_fetch_s": spread(times["bare"]) if fs is not None else None,
            "fetch_only_s": spread(times["fetch"]),
            "fetch_only_cpu_s": spread(cpu["fetch"]),
            "local_cpu_s": spread(cpu["local"]),
            "remote_cpu_s": spread(cpu["remote"]),
            "server_cpu_per_stream_s": spread(server_cpu["remote"]),
            "local_records_per_s": n / statistics.median(local_times),
            "remote_records_per_s": n / statistics.median(remote_times),
            "ratio": ratio["median"],
            "ratio_spread": [ratio["low"], ratio["high"]],
            "remote_via_fsspec_s": spread(times["fsspec"]),
            "remote_via_fsspec_cpu_s": spread(cpu["fsspec"]),
            "ratio_via_fsspec": compare(times["fsspec"], local_times),
        }
        if args.bound:
            results["streaming"]["curl"] = {
                "parallel": min(args.prefetch, _prefetch.MAX_THREADS),
                "wall_s": spread(times["curl"]),
                "cpu_s": spread(cpu["curl"]),
                "server_cpu_s": spread(server_cpu["curl"]),
                "budget_s": statistics.median(local_times) / 0.7,
                "startup_s": curl_startup(),
                "fetch_only_server_cpu_s": spread(server_cpu["fetch"]),
                "stream_s": spread(times["curl_stream"]),
                "stream_cpu_s": spread(cpu["curl_stream"]),
                "stream_ratio": compare(times["curl_stream"], local_times),
            }
            shutil.rmtree(shm)

        if args.streaming_only:
            server.close()
            finish(results, args.out)
            return
        # -- random access
        probe = _remote.RemoteObject(one_url, options)
        small_probe = _remote.RemoteObject(urls[0], options)
        rtt_times: list[float] = []
        rtt_small: list[float] = []
        for _ in range(9):
            rtt_times.append(timed(lambda: probe.read_range(0, 1))[0])
            rtt_small.append(timed(lambda: small_probe.read_range(0, 1))[0])
        rng = np.random.default_rng(7)
        with tfr.TFRecordFile(one_url, storage_options=options) as f:
            oracle = tfr.TFRecordFile(one[0])
            batch_times: list[float] = []
            bare_times: list[float] = []
            counts: list[int] = []
            for _ in range(args.rounds):
                picks = rng.integers(0, len(f), PICKS).tolist()
                for k in range(0, PICKS, BATCH):
                    batch = picks[k : k + BATCH]
                    before = requests.count
                    spent, got = timed(functools.partial(f.__getitem__, batch))
                    batch_times.append(spent)
                    counts.append(requests.count - before)
                    assert got == oracle[batch]
                    if fs is not None:  # the same requests by a bare client, in turn
                        at = f._offsets
                        ranges = _remote.coalesce((int(at[i]), int(at[i + 1])) for i in batch)
                        bare_times.append(timed(functools.partial(bare_ranges, fs, one_url, ranges))[0])
        rtt = statistics.median(rtt_times)
        results["random_access"] = {
            "records_in_object": len(rows),
            "batch": BATCH,
            "round_trip_s": spread(rtt_times),
            "round_trip_small_object_s": spread(rtt_small),
            "bare_client_batch_s": spread(bare_times) if bare_times else None,
            "batch_s": spread(batch_times),
            "batch_over_round_trip": statistics.median(batch_times) / rtt,
            "batch_over_round_trip_spread": [min(batch_times) / rtt, max(batch_times) / rtt],
            "requests_per_batch": spread([float(r) for r in counts]),
        }

        # -- memory while streaming: small shards, then 8x larger ones (8 shards)
        server.set_latency(0)
        big = write_shards(os.path.join(tmp, "big"), rows, SHARDS // 8)
        big_urls = upload(server, fs, big, sidecars=False)
        bound = args.prefetch * _remote.HEAD_BLOCK + _remote.STREAM_BLOCK
        rss_small = peak_rss(urls, args.prefetch, options)
        rss_large = peak_rss(big_urls, args.prefetch, options)
        results["memory"] = {
            "bound_bytes": bound,
            "peak_rss_small_shards_bytes": rss_small[0],
            "rss_growth_small_shards_bytes": rss_small[1],
            "peak_rss_large_shards_bytes": rss_large[0],
            "rss_growth_large_shards_bytes": rss_large[1],
            "peak_small_shards_bytes": peak_memory(lambda: _stream(urls, args.prefetch, options)),
            "peak_large_shards_bytes": peak_memory(lambda: _stream(big_urls, args.prefetch, options)),
            "shard_bytes_small": os.path.getsize(local[0]),
            "shard_bytes_large": os.path.getsize(big[0]),
        }
    server.close()
    finish(results, args.out)


def finish(results: dict[str, Any], out: str) -> None:
    report(results)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as fh:
        json.dump(results, fh, indent=2)


def report(r: dict[str, Any]) -> None:
    print(
        f"{r['store']}; workload: {r['workload']}; {r['latency_s'] * 1000:.0f} ms added per request; "
        f"{r['rounds']} rounds; load average {os.getloadavg()[0]:.2f}"
    )
    report_streaming(r)
    if "random_access" in r:
        report_random_access(r)


def report_streaming(r: dict[str, Any]) -> None:
    s = r["streaming"]
    print(
        f"streaming {s['records']} records in {s['shards']} shards: local {s['local_records_per_s']:,.0f} rec/s, "
        f"{r['store']} with prefetch={s['prefetch']} {s['remote_records_per_s']:,.0f} rec/s -> ratio {s['ratio']:.2f} "
        f"(spread {s['ratio_spread'][0]:.2f}..{s['ratio_spread'][1]:.2f}; target >= 0.70); "
        f"without prefetch {s['remote_no_prefetch_s']['median']:.2f} s"
    )
    if s["bare_client_fetch_s"]:
        b = s["bare_client_fetch_s"]
        print(
            f"  floor: a bare s3fs gather of the 64 objects (no decoding) {b['median']:.3f} s "
            f"({b['low']:.3f}..{b['high']:.3f}); local read {s['local_s']['median']:.3f} s, "
            f"ours {s['remote_s']['median']:.3f} s"
        )
    v = s["ratio_via_fsspec"]
    print(
        f"  the same bodies received on fsspec's event loop (aiohttp): ratio {v['median']:.2f} "
        f"({v['low']:.2f}..{v['high']:.2f}), {s['remote_via_fsspec_s']['median']:.3f} s, "
        f"CPU {s['remote_via_fsspec_cpu_s']['median']:.3f} s"
    )
    f, lc, rc, sc = s["fetch_only_s"], s["local_cpu_s"], s["remote_cpu_s"], s["server_cpu_per_stream_s"]
    print(
        f"  our client fetching the 64 first blocks, nothing decoded: {f['median']:.3f} s "
        f"({f['low']:.3f}..{f['high']:.3f}) (local read ÷ 0.7 = {s['local_s']['median'] / 0.7:.3f} s); "
        f"CPU: local {lc['median']:.3f} s, ours {rc['median']:.3f} s, "
        f"fetching only {s['fetch_only_cpu_s']['median']:.3f} s, "
        f"the server {sc['median']:.3f} s a stream ({sc['low']:.3f}..{sc['high']:.3f})"
    )
    if "curl" in s:
        report_bound(s)


def report_bound(s: dict[str, Any]) -> None:
    c = s["curl"]
    w, cc, sc = c["wall_s"], c["cpu_s"], c["server_cpu_s"]
    print(
        f"  bound: curl --parallel-max {c['parallel']} fetching the 64 first blocks {w['median']:.3f} s "
        f"({w['low']:.3f}..{w['high']:.3f}; {c['startup_s']:.3f} s of it starting curl) against the budget "
        f"{c['budget_s']:.3f} s; curl's CPU "
        f"{cc['median']:.3f} s, the server's {sc['median']:.3f} s ({sc['low']:.3f}..{sc['high']:.3f}); "
        f"the server's while our client fetches {c['fetch_only_server_cpu_s']['median']:.3f} s"
    )
    r, t, cc = c["stream_ratio"], c["stream_s"], c["stream_cpu_s"]
    print(
        f"  streaming with curl fetching (into tmpfs, decoded as each object completes): ratio "
        f"{r['median']:.2f} ({r['low']:.2f}..{r['high']:.2f}), {t['median']:.3f} s, CPU (ours + curl's) "
        f"{cc['median']:.3f} s"
    )


def report_random_access(r: dict[str, Any]) -> None:
    ra, m = r["random_access"], r["memory"]
    print(
        f"random access, batches of {ra['batch']}: {ra['batch_s']['median'] * 1000:.1f} ms a batch "
        f"(spread {ra['batch_s']['low'] * 1000:.1f}..{ra['batch_s']['high'] * 1000:.1f}), round trip "
        f"{ra['round_trip_s']['median'] * 1000:.1f} ms -> {ra['batch_over_round_trip']:.2f}x (target <= 4); "
        f"{ra['requests_per_batch']['median']:.0f} requests a batch (max {ra['requests_per_batch']['high']:.0f})"
    )
    bare = ra["bare_client_batch_s"]
    print(
        f"  round trip to a {r['memory']['shard_bytes_small'] / 2**10:.0f} KiB object "
        f"{ra['round_trip_small_object_s']['median'] * 1000:.1f} ms"
        + (
            f"; the same ranges by a bare s3fs gather {bare['median'] * 1000:.1f} ms a batch "
            f"({bare['low'] * 1000:.1f}..{bare['high'] * 1000:.1f})"
            if bare
            else ""
        )
    )
    print(
        f"memory: peak {m['peak_small_shards_bytes'] / 2**20:.1f} MiB "
        f"({m['shard_bytes_small'] / 2**10:.0f} KiB shards), "
        f"{m['peak_large_shards_bytes'] / 2**20:.1f} MiB ({m['shard_bytes_large'] / 2**20:.1f} MiB shards); "
        f"bound prefetch x 1 MiB + 8 MiB = {m['bound_bytes'] / 2**20:.0f} MiB"
    )
    print(
        f"  peak RSS of a fresh streaming process: {m['peak_rss_small_shards_bytes'] / 2**20:.0f} MiB "
        f"(+{m['rss_growth_small_shards_bytes'] / 2**20:.1f} MiB while streaming) small shards, "
        f"{m['peak_rss_large_shards_bytes'] / 2**20:.0f} MiB "
        f"(+{m['rss_growth_large_shards_bytes'] / 2**20:.1f} MiB) large"
    )


if __name__ == "__main__":
    main()
