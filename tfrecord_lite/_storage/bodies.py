"""The body of one ranged GET, received piece by piece into a list, so that a read broken
mid-body can ask again for exactly the bytes it still lacks (remote.RemoteObject).
HTTP(S) and S3 objects are fetched on the calling thread by _storage/direct.py when it can (no
event loop, the body received without the GIL). Otherwise: fsspec only returns a range
whole (cat_file), and s3fs even retries a broken body from its start, so S3, HTTP(S) and
GCS get a chunked GET of their own, on the filesystem's own client and event loop:

  - S3 (s3fs): botocore's get_object with a Range, its streaming Body read in chunks;
  - HTTP(S) (fsspec's HTTPFileSystem): aiohttp's session.get with a Range header;
  - GCS (gcsfs): the object's media link, GET on gcsfs's aiohttp session with its
    credentials' headers and a Range header, the body read as for HTTP(S).

The whole GET runs as one coroutine on that loop (one hand-over between threads per
request, not one per chunk: with a thread decoding beside it, each hand-over waits for
the GIL, and per-chunk hand-overs more than doubled the time of a small shard's GET).
Any other store (memory, ...) reads the range whole through cat_file: it resumes at
the start of the request instead. A range starting at or past the end of the object
yields nothing (S3, GCS and HTTP answer 416 there).
"""

from __future__ import annotations

from typing import Any

from tfrecord_lite._storage.locations import redact

CHUNK = 256 << 10  # bytes asked of a body at a time


def receive(fs: Any, path: str, start: int, end: int, into: list[bytes]) -> None:
    """Append the bytes start..end of the object at `path` (fewer at its end) to `into` as they
    arrive; on an error, `into` holds what arrived before it."""
    if end <= start:
        return
    if _received_directly(fs, path, start, end, into):
        return
    from fsspec.asyn import sync

    protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
    if {"s3", "s3a"} & protocols and hasattr(fs, "_call_s3"):
        sync(fs.loop, _s3_body, fs, path, start, end, into)
    elif {"http", "https"} & protocols and hasattr(fs, "set_session"):
        sync(fs.loop, _http_body, fs, path, start, end, into)
    elif {"gs", "gcs"} & protocols and hasattr(fs, "_get_headers"):
        sync(fs.loop, _gcs_body, fs, path, start, end, into)
    else:
        data = fs.cat_file(path, start=start, end=end)
        if data:
            into.append(data)


def _received_directly(fs: Any, path: str, start: int, end: int, into: list[bytes]) -> bool:
    """Whether direct.py fetched the range (False: fsspec's turn, nothing was received)."""
    from tfrecord_lite._storage import direct  # http.client and ssl: imported when a URL is read

    target = direct.target(fs)
    request = target.request(fs, path, f"bytes={start}-{end - 1}") if target is not None else None
    if target is None or request is None:
        return False
    url, headers = request
    try:
        direct.get(url, headers, start, end, into, redact(url))
    except direct.Unsupported:
        target.enabled = False  # fsspec knows what this server wants: ask it from now on
        return False
    return True


async def _s3_body(fs: Any, path: str, start: int, end: int, into: list[bytes]) -> None:
    bucket, key, version = fs.split_path(path)
    kw = dict(fs.req_kw, Range=f"bytes={start}-{end - 1}")
    if version:
        kw["VersionId"] = version
    try:
        response = await fs._call_s3("get_object", Bucket=bucket, Key=key, **kw)
    except OSError as err:
        if "InvalidRange" in str(err) or "416" in str(err):
            return
        raise
    body = response["Body"]
    try:
        while piece := await body.read(CHUNK):
            into.append(piece)
    finally:
        body.close()


async def _http_body(fs: Any, path: str, start: int, end: int, into: list[bytes]) -> None:
    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", None) or {}, Range=f"bytes={start}-{end - 1}")
    session = await fs.set_session()
    response = await session.get(fs.encode_url(path), headers=headers, **kw)
    try:
        if response.status == 416:
            return
        fs._raise_not_found_for_status(response, path)
        await _body(response, start, end, into)
    finally:
        response.release()


async def _gcs_body(fs: Any, path: str, start: int, end: int, into: list[bytes]) -> None:
    from gcsfs.retry import validate_response

    await fs._set_session()
    headers = fs._get_headers({"Range": f"bytes={start}-{end - 1}"})
    params = fs._get_params({})
    response = await fs.session.get(fs.url(path), params=params, headers=headers, timeout=fs.requests_timeout)
    try:
        if response.status == 416:
            return
        if response.status >= 400:
            validate_response(response.status, await response.read(), path)
        await _body(response, start, end, into)
    finally:
        response.release()


async def _body(response: Any, start: int, end: int, into: list[bytes]) -> None:
    """Append the bytes start..end of an aiohttp response to a ranged GET to `into` as they arrive."""
    skip = start if response.status == 200 else 0  # a server that ignores Range sends it all
    wanted = end - start
    while wanted > 0:
        try:
            piece = await response.content.read(CHUNK)
        except Exception:
            piece = _received(response.content)
            if not piece:
                raise
        if not piece:
            return
        if skip:
            cut = min(skip, len(piece))
            piece, skip = piece[cut:], skip - cut
        piece = piece[:wanted]
        wanted -= len(piece)
        if piece:
            into.append(piece)


def _received(content: Any) -> bytes:
    """What a broken aiohttp body had received before it broke: read() raises the error first
    and would drop these bytes, which arrive with the end of the connection."""
    read_nowait = getattr(content, "_read_nowait", None)
    return bytes(read_nowait(-1)) if read_nowait is not None else b""
