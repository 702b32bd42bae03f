"""Ranged GETs on the calling thread, for HTTP(S) URLs and S3 objects, without fsspec's
event loop. fsspec's stores receive a body on their asyncio loop (aiohttp), in small
pieces at a few Python calls each, all under the GIL beside the thread decoding records,
and s3fs adds aiobotocore's work per request. Here a request runs on the thread that asks
(a prefetch or range worker), over a kept-alive http.client connection, and the body is
received by readinto into buffers of up to PIECE bytes: the socket's recv runs without
the GIL, and a MiB costs a few Python calls. Streaming from S3 takes half the CPU it took
through s3fs; from HTTP a little less (benchmarks/RESULTS.md).

  - HTTP(S): fsspec's HTTPFileSystem, when the only options it was given are headers
    (anything else, an aiohttp option such as a proxy, is aiohttp's to honour: fsspec
    reads); user and password in a URL become basic auth, as aiohttp makes them.
  - S3: s3fs, requests signed with SigV4 (botocore's signer) with the credentials, region
    and endpoint of the client s3fs built from the user's storage_options (keys, profile,
    environment, role: whatever it resolved, refreshed when they expire); the URL of a
    bucket (virtual-host or path style) is taken once from a URL that client presigns.
    Request options (requester pays, SSE-C keys), versioned paths, ARNs, proxies or
    custom TLS settings stay with s3fs.

`target(fs)` is None for any other store or setting. An answer a plain GET does not
expect (a redirect, 400, 401, 403: another region, a signature our client got wrong) or a
TLS failure raises Unsupported before any byte is taken: bodies then asks through fsspec,
which knows redirects and its own configuration, and stops using this path for that
filesystem. Errors name the URL without credentials or query (locations.redact).
"""

from __future__ import annotations

import base64
import functools
import http.client
import os
import ssl
import threading
import urllib.parse
import urllib.request
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfrecord_lite._redact import redact, scrub

PIECE = 8 << 20  # bytes received into one buffer
TIMEOUT = 60.0  # seconds a connection may wait for the server (botocore's default read timeout)
IDLE = 64  # kept-alive connections kept per server
USER_AGENT = "tfrecord-lite"  # what servers see (their logs tell this path from fsspec's)


class Unsupported(Exception):
    """This request has to go through fsspec (see the module comment)."""


class StatusError(OSError):
    """The server answered with an error status (`status`; 5xx, 408 and 429 are retried)."""

    def __init__(self, status: int, reason: str, url: str) -> None:
        super().__init__(scrub(f"HTTP {status} {reason} from {redact(url)}"))
        self.status = status


Request = tuple[str, dict[str, str]]  # (URL, headers) of one GET


class Target:
    """How to GET ranges of the objects of one filesystem: `request(fs, path, range_header)`, None
    when that object cannot be fetched directly. It holds no reference to the filesystem (the
    filesystem is the key it is kept under)."""

    def __init__(self, request: Callable[[Any, str, str], Request | None]) -> None:
        self.request = request
        self.enabled = True


_TARGETS: weakref.WeakKeyDictionary[Any, Target | None] = weakref.WeakKeyDictionary()
_TARGETS_LOCK = threading.Lock()


def target(fs: Any) -> Target | None:
    """The direct path of `fs`, or None (another store, or options only fsspec honours)."""
    with _TARGETS_LOCK:
        try:
            found = _TARGETS[fs]
        except KeyError:
            found = _TARGETS[fs] = _make_target(fs)
        except TypeError:  # a filesystem that cannot be weakly referenced
            return None
    return found if found is not None and found.enabled else None


def _make_target(fs: Any) -> Target | None:
    protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
    if {"http", "https"} & protocols and hasattr(fs, "encode_url"):
        return _http_target(fs)
    if {"s3", "s3a"} & protocols and hasattr(fs, "get_s3"):
        return Target(_S3Signer().request)
    return None


def _http_target(fs: Any) -> Target | None:
    from fsspec.implementations.http import get_client

    only_headers = set(getattr(fs, "kwargs", {})) <= {"headers"} and set(fs.client_kwargs) <= {"headers"}
    if not only_headers or getattr(fs, "get_client", get_client) is not get_client:
        return None
    base = {**fs.client_kwargs.get("headers", {}), **fs.kwargs.get("headers", {})}

    def request(fs: Any, path: str, range_header: str) -> Request | None:
        url = str(fs.encode_url(path))
        parts = urllib.parse.urlsplit(url)
        headers = dict(base, Range=range_header)
        if parts.username is not None or parts.password is not None:  # as aiohttp: basic auth from the URL
            user = urllib.parse.unquote(parts.username or "")
            secret = urllib.parse.unquote(parts.password or "")
            headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
            host = parts.netloc.rpartition("@")[2]
            url = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, ""))
        return url, headers

    return Target(request)


def _proxied(url: str) -> bool:
    """Whether the environment sends `url` through a proxy (botocore honours that; we do not), as
    the environment was when the URL's server was first asked about."""
    parts = urllib.parse.urlsplit(url)
    return _proxied_server(parts.scheme, parts.hostname or "")


@functools.lru_cache(maxsize=256)
def _proxied_server(scheme: str, host: str) -> bool:
    return scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(host)


@dataclass
class _Bucket:
    base: str  # the bucket's URL, to which a quoted key is appended
    region: str
    credentials: Any  # botocore credentials, None when requests go unsigned
    frozen: Any = None  # their current values


@dataclass
class _S3Signer:
    """SigV4-signed GETs with the configuration of the client s3fs made (module comment)."""

    buckets: dict[str, _Bucket | None] = field(default_factory=dict)

    def request(self, fs: Any, path: str, range_header: str) -> Request | None:
        bucket, key, version = fs.split_path(path)
        if version or not key or ":" in bucket:
            return None
        where = self.buckets.get(bucket)
        if where is None and bucket not in self.buckets:
            try:
                where = self._bucket(fs, bucket)
            except Exception:  # whatever s3fs's client cannot tell us, s3fs itself will say when it reads
                where = None
            self.buckets[bucket] = where
        if where is None:
            return None
        from botocore.utils import percent_encode

        url = where.base + percent_encode(key, safe="/~")
        headers = {"Range": range_header}
        if where.credentials is not None:
            headers = self._signed(fs, where, url, headers)
        return url, headers

    def _bucket(self, fs: Any, bucket: str) -> _Bucket | None:
        import botocore
        from fsspec.asyn import sync

        if fs.req_kw or getattr(fs, "s3_additional_kwargs", None):
            return None
        config = fs.config_kwargs
        if config.get("proxies") or config.get("client_cert") or "verify" in fs.client_kwargs:
            return None
        client = sync(fs.loop, _client, fs, bucket)
        signer = client._request_signer
        unsigned = signer.signature_version is botocore.UNSIGNED
        if not unsigned and signer.signature_version not in ("s3v4", "v4"):  # an older signature: s3fs's
            return None
        probe = "tfrecord-lite-probe"
        presigned = sync(fs.loop, client.generate_presigned_url, "get_object", {"Bucket": bucket, "Key": probe})
        base = presigned.split("?", 1)[0]
        if not base.endswith("/" + probe) or _proxied(base):
            return None
        credentials = None if unsigned else signer._credentials
        return _Bucket(base[: -len(probe)], signer.region_name, credentials)

    def _signed(self, fs: Any, where: _Bucket, url: str, headers: dict[str, str]) -> dict[str, str]:
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from fsspec.asyn import sync

        credentials = where.credentials
        if where.frozen is None or getattr(credentials, "refresh_needed", lambda: False)():
            where.frozen = sync(fs.loop, credentials.get_frozen_credentials)
        request = AWSRequest(method="GET", url=url, headers=headers)
        S3SigV4Auth(where.frozen, "s3", where.region).add_auth(request)
        return dict(request.headers.items())


async def _client(fs: Any, bucket: str) -> Any:
    """The aiobotocore client s3fs uses for `bucket`."""
    await fs.set_session()
    return await fs.get_s3(bucket)


# ----------------------------------------------------------------------------- the GET


_IDLE_CONNECTIONS: dict[tuple[str, str, int | None], list[http.client.HTTPConnection]] = {}
_IDLE_LOCK = threading.Lock()
_TLS: list[ssl.SSLContext] = []
os.register_at_fork(after_in_child=_IDLE_CONNECTIONS.clear)  # a child never shares its parent's sockets


def get(url: str, headers: dict[str, str], start: int, end: int, into: list[bytes], name: str) -> None:
    """Append the body of a GET of bytes start..end (asked in `headers`' Range) to `into` as it
    arrives; on an error, `into` holds what arrived before it. `name` is the URL for messages."""
    parts = urllib.parse.urlsplit(url)
    key = (parts.scheme, parts.hostname or "", parts.port)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    conn, response = _send(key, target, {**headers, "User-Agent": USER_AGENT})
    try:
        _answer(response, start, end, into, name)
    except BaseException:
        conn.close()
        raise
    if response.isclosed() and not response.will_close:  # the body was read to its end
        _release(key, conn)
    else:
        conn.close()


def _send(
    key: tuple[str, str, int | None], target: str, headers: dict[str, str]
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """(connection, response whose headers arrived) of a GET; a kept-alive connection the server
    closed meanwhile is replaced by a new one."""
    conn, reused = _connection(key)
    while True:
        try:
            conn.request("GET", target, headers=headers)
            return conn, conn.getresponse()
        except ssl.SSLError as err:
            conn.close()
            raise Unsupported(f"TLS: {err}") from None
        except (ConnectionResetError, BrokenPipeError):
            conn.close()
            if not reused:
                raise
        except BaseException:
            conn.close()
            raise
        conn, reused = _connection(key, fresh=True)


def _answer(response: http.client.HTTPResponse, start: int, end: int, into: list[bytes], name: str) -> None:
    status = response.status
    if status in (200, 206):
        skip = start if status == 200 else 0  # a server that ignores Range sends it all
        _body(response, skip, end - start, into)
        return
    response.read(1 << 16)  # the error's text, so that the connection is clean (a longer one closes it)
    if status == 416:  # a range at or past the end of the object
        return
    if status == 404:
        raise FileNotFoundError(f"no such object: {name}")
    if 300 <= status < 500 and status not in (408, 429):
        raise Unsupported(f"HTTP {status}")
    raise StatusError(status, response.reason, name)


def _body(response: http.client.HTTPResponse, skip: int, wanted: int, into: list[bytes]) -> None:
    """Receive `wanted` bytes of the body after `skip` into buffers of PIECE bytes at most."""
    while skip > 0:
        dropped = response.read(min(skip, PIECE))
        if not dropped:
            return
        skip -= len(dropped)
    length = response.length  # None when the body is chunked
    remaining = wanted if length is None else min(wanted, length)
    while remaining > 0:
        buffer = bytearray(min(remaining, PIECE))
        got = _fill(response, buffer, into)
        remaining -= got
        if got < len(buffer):
            if length is None:
                return  # a chunked body ends where it ends
            raise ConnectionError(f"the connection closed {length - remaining} bytes into a body of {length}")


def _fill(response: http.client.HTTPResponse, buffer: bytearray, into: list[bytes]) -> int:
    """Read into `buffer` until it is full or the body ends; append what arrived to `into`, also
    when an error interrupts it."""
    view = memoryview(buffer)
    got = 0
    try:
        while got < len(buffer):
            n = response.readinto(view[got:])
            if not n:
                break
            got += n
    finally:
        if got:
            into.append(bytes(view[:got]))
    return got


def _connection(key: tuple[str, str, int | None], fresh: bool = False) -> tuple[http.client.HTTPConnection, bool]:
    """(a connection to the server, whether it was kept alive from an earlier request)."""
    if not fresh:
        with _IDLE_LOCK:
            idle = _IDLE_CONNECTIONS.get(key)
            if idle:
                return idle.pop(), True
    scheme, host, port = key
    if scheme == "https":
        if not _TLS:
            _TLS.append(ssl.create_default_context())
        return http.client.HTTPSConnection(host, port, timeout=TIMEOUT, context=_TLS[0]), False
    return http.client.HTTPConnection(host, port, timeout=TIMEOUT), False


def _release(key: tuple[str, str, int | None], conn: http.client.HTTPConnection) -> None:
    with _IDLE_LOCK:
        idle = _IDLE_CONNECTIONS.setdefault(key, [])
        if len(idle) < IDLE:
            idle.append(conn)
            return
    conn.close()
