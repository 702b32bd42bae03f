# Fuzz targets for what a hostile client or dataset feeds the viewer and the statistics (run by
# fuzz.py, which describes every target):
#
#   viewer   raw bytes as one HTTP request to the viewer's request handler (no socket: the bytes
#            are its input, its answer is collected): it answers with a status line or closes,
#            never raises; only a request whose one Host header names the server's own address
#            is answered 200 (an HTTP/0.9 request gets no page at all, at most the standard library's error).
#   stats    the input cut into records (and framed), summarised by statistics: it returns or
#            raises a library error; the records it counts are the ones there, and no more
#            features are tracked than the cap (the others are counted as untracked).
from __future__ import annotations

import io
import os
import tempfile
from typing import Any

import tfrecord_lite as tfr
from tfrecord_lite._stats.collect import MAX_FEATURES

_served: dict[str, Any] = {}


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


class _Connection:
    """What the handler reads a request from and writes its answer to, in memory."""

    def __init__(self, data: bytes) -> None:
        self.rfile = io.BytesIO(data)
        self.wfile = io.BytesIO()

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BytesIO:
        return self.rfile if "r" in mode else self.wfile

    def settimeout(self, timeout: float | None) -> None:
        pass

    def setsockopt(self, *args: Any) -> None:
        pass

    def sendall(self, data: bytes) -> None:
        self.wfile.write(data)


def _server() -> Any:
    if "server" not in _served:
        from tfrecord_lite.viewer import Catalog, ViewerServer

        folder = tempfile.mkdtemp(prefix="tfrl-fuzz-viewer-")
        path = os.path.join(folder, "data.tfrecord")
        with tfr.TFRecordWriter(path) as w:
            for i in range(30):
                w.write(tfr.encode_example({"label": [i % 3], "text": [b"<b>%d</b>" % i]}))
        _served["server"] = ViewerServer(Catalog(path, statistics=False))
    return _served["server"]


def fuzz_viewer(data: bytes) -> None:
    from tfrecord_lite.viewer.server import _Handler

    server = _server()
    data = data.replace(b"PORT", str(server.server_address[1]).encode())  # the seeds' own port
    connection = _Connection(data)
    _Handler(connection, ("127.0.0.1", 1), server)  # type: ignore[arg-type]
    answer = connection.wfile.getvalue()
    bare = not answer.startswith(b"HTTP/")  # HTTP/0.9: the library's error page at most, never a page
    _expect(not bare or not answer or b"Error response" in answer, f"a bare answer that is no error: {answer[:60]!r}")
    head = data.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
    hosts = [
        line.split(b":", 1)[1].strip().lower() for line in head.splitlines()[1:] if line.lower().startswith(b"host:")
    ]
    if answer.split(b" ", 2)[1:2] == [b"200"]:
        _expect(
            len(hosts) == 1 and hosts[0].decode("latin-1") in server.hosts,
            f"answered 200 to Host {hosts!r}",
        )


def fuzz_stats(data: bytes) -> None:
    records = [
        data[k : k + max(1, data[0] if data else 1)] for k in range(0, len(data), max(1, data[0] if data else 1))
    ]
    records = records or [b""]
    with tempfile.TemporaryDirectory(prefix="tfrl-fuzz-stats-") as folder:
        path = os.path.join(folder, "data.tfrecord")
        with tfr.TFRecordWriter(path) as w:
            for record in [data, *records]:
                w.write(record)
        try:
            stats = tfr.statistics(path, batch_size=7)
        except tfr.TFRecordError:
            return
        _expect(stats.records == 1 + len(records), f"{stats.records} records counted of {1 + len(records)}")
        _expect(len(stats.features) <= MAX_FEATURES, f"{len(stats.features)} features tracked")
        stats.to_html()
        stats.to_dict()
