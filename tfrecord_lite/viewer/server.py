"""The viewer served over HTTP: the standard library's ThreadingHTTPServer, bound to 127.0.0.1
unless told otherwise, each GET routed to a page of pages.py.

Strategy: the Catalog opens the files once; each request renders its page from it on a thread of
its own (TFRecordFile reads keep no state, so threads share it). A page that fails answers 500
with the error's text, escaped, and the server goes on. Nothing is served but the pages: no file
of the disk is reachable through a URL.

Hostile clients: a request whose `Host` header does not name the address the server is bound to
(127.0.0.1, localhost or [::1] with its port for a loopback address; the address given otherwise)
answers 421, so a web page whose name was rebound to 127.0.0.1 reads nothing (DNS rebinding);
an HTTP/0.9 request (no status line in the answer) gets nothing.
At most MAX_THREADS requests are served at once (a connection past that answers 503 and is
closed), and each connection's socket gives up after REQUEST_TIMEOUT seconds of silence, so idle
or half-open connections cannot pin threads.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tfrecord_lite._html.style import page
from tfrecord_lite._html.values import esc
from tfrecord_lite._redact import scrub
from tfrecord_lite.viewer.catalog import Catalog
from tfrecord_lite.viewer.pages import PAGES, not_found

MAX_THREADS = 16  # requests served at once
REQUEST_TIMEOUT = 10.0  # seconds a connection may stay silent
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The `Host` header values (lower case) that name a server bound to `host`:`port`."""
    names = LOOPBACK if host.lower() in LOOPBACK else (host,)
    return frozenset(f"[{n.lower()}]:{port}" if ":" in n else f"{n.lower()}:{port}" for n in names)


class _Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    timeout = REQUEST_TIMEOUT

    def do_GET(self) -> None:
        if self.request_version == "HTTP/0.9":  # no status line, no headers: nothing a browser sends
            self.close_connection = True
            return
        if (self.headers.get("Host") or "").strip().lower() not in self.server.hosts:
            self._answer(421, page("Misdirected", "<p>This server answers only requests for its own address.</p>"))
            return
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query))
        render = self.server.pages.get(url.path)
        status = 200 if render is not None else 404
        try:
            body = render(self.server.catalog, query) if render else not_found(self.server.catalog, url.path)
        except Exception as err:  # a page that fails answers 500 and the server goes on
            status, body = 500, page("Error", f'<p class="damage">{esc(type(err).__name__)}: {esc(scrub(err))}</p>')
        self._answer(status, body)

    def _answer(self, status: int, body: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", "default-src 'none'; img-src data:; style-src 'unsafe-inline'")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


class ViewerServer(ThreadingHTTPServer):
    """The viewer of `catalog` at `host`:`port` (0: a free port); `url` says where."""

    daemon_threads = True
    request_queue_size = MAX_THREADS

    def __init__(
        self,
        catalog: Catalog,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        verbose: bool = False,
    ) -> None:
        super().__init__((host, port), _Handler)
        self.catalog = catalog
        self.verbose = verbose
        self.pages = PAGES
        self.hosts = allowed_hosts(host, int(self.server_address[1]))
        self._slots = threading.BoundedSemaphore(MAX_THREADS)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve on a thread of the bounded pool; past MAX_THREADS, answer 503 and close."""
        if not self._slots.acquire(blocking=False):
            try:
                request.settimeout(1.0)
                request.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/"

    def start(self) -> threading.Thread:
        """Serve on a background thread (stop with `shutdown()`)."""
        thread = threading.Thread(target=self.serve_forever, name="tfrecord-lite-viewer", daemon=True)
        thread.start()
        return thread
