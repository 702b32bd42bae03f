"""The viewer served over HTTP: the standard library's ThreadingHTTPServer, bound to 127.0.0.1
unless told otherwise, each GET routed to a page of pages.py.

Strategy: the Catalog opens the files once; each request renders its page from it on a thread of
its own (TFRecordFile reads keep no state, so threads share it). A page that fails answers 500
with the error's text, escaped, and the server goes on. Nothing is served but the pages: no file
of the disk is reachable through a URL.
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


class _Handler(BaseHTTPRequestHandler):
    server: ViewerServer

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query))
        render = self.server.pages.get(url.path)
        status = 200 if render is not None else 404
        try:
            body = render(self.server.catalog, query) if render else not_found(self.server.catalog, url.path)
        except Exception as err:  # a page that fails answers 500 and the server goes on
            status, body = 500, page("Error", f'<p class="damage">{esc(type(err).__name__)}: {esc(scrub(err))}</p>')
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
