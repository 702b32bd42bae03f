# The viewer's record browser: milliseconds to serve a page of 50 records with their thumbnails
# (GET /records?start=N over HTTP, the whole body read) at the first, middle and last page of a
# file of 1M records with small embedded PNG images, and one record (GET /record?i=N) at the
# same places. The server (tfrecord_lite.viewer.ViewerServer on 127.0.0.1, port 0) runs in this
# process on its own thread; the client is http.client. The places take turns in rounds (after a
# warm-up request each); each result is the median with the lowest and highest round. The file
# is written into .work/ the first time (viewer-<count>.tfrecord), its index sidecar on first open.
#
#   python benchmarks/viewer.py [--quick] [--rounds N] [--count N]
from __future__ import annotations

import argparse
import http.client
import io
import os
import sys
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _rounds import rounds, spread

import tfrecord_lite as tfr
from tfrecord_lite.viewer import Catalog, ViewerServer

WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".work")
CLASSES = ("cat", "dog", "bird", "fish")
TARGET_MS = 200


def _png(k: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (24, 24), (k * 60 % 256, 120, 200)).save(out, "PNG")
    return out.getvalue()


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _payload(example: bytes) -> bytes:
    """The Features message inside a serialized Example (its field 1)."""
    at = 1
    while example[at] & 0x80:
        at += 1
    return example[at + 1 :]


def dataset(count: int) -> str:
    """A file of `count` labelled image records (`id`, label, a 24x24 PNG), written once."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"viewer-{count}.tfrecord")
    if os.path.exists(path):
        return path
    heads = [
        _payload(
            tfr.encode_example(
                {"image/encoded": [_png(k)], "image/class/label": [k], "image/class/text": [name.encode()]}
            )
        )
        for k, name in enumerate(CLASSES)
    ]
    with tfr.TFRecordWriter(path + ".tmp") as writer:
        for i in range(count):
            features = heads[i % len(CLASSES)] + _payload(tfr.encode_example({"id": [i]}))
            writer.write(b"\x0a" + _varint(len(features)) + features)
    os.replace(path + ".tmp", path)
    return path


def getter(url: str, path: str):
    parts = urlsplit(url)

    def get() -> int:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        conn.close()
        assert response.status == 200 and body.count(b"<img") >= (50 if "records" in path else 1), path
        return len(body)

    return get


def main() -> None:
    parser = argparse.ArgumentParser(description="the viewer's record pages: milliseconds per page")
    parser.add_argument("--quick", action="store_true", help="100k records instead of 1M")
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    count = args.count or (100_000 if args.quick else 1_000_000)
    started = time.perf_counter()
    path = dataset(count)
    size = os.path.getsize(path) / 1e6
    print(f"file: {count:,} records, {size:.0f} MB (ready in {time.perf_counter() - started:.1f} s)")
    started = time.perf_counter()
    catalog = Catalog(path, statistics=False)
    print(f"opened (index read or built) in {time.perf_counter() - started:.2f} s")
    server = ViewerServer(catalog)
    server.start()
    places = {"first": 0, "middle": count // 2 // 50 * 50, "last": (count - 1) // 50 * 50}
    fns = {f"page of 50 at {name} ({at:,})": getter(server.url, f"/records?start={at}") for name, at in places.items()}
    fns.update({f"record at {name} ({at:,})": getter(server.url, f"/record?i={at}") for name, at in places.items()})
    try:
        times = rounds(fns, args.rounds)
    finally:
        server.shutdown()
        server.server_close()
        catalog.close()
    print("\n| request | ms, median (lowest..highest round) | target |")
    print("|---|---:|---|")
    for name, seconds in times.items():
        s = spread([t * 1000 for t in seconds])
        target = f"≤ {TARGET_MS} ms: {'met' if s['high'] <= TARGET_MS else 'missed'}" if name.startswith("page") else ""
        print(f"| {name} | {s['median']:.1f} ({s['low']:.1f}..{s['high']:.1f}) | {target} |")
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
