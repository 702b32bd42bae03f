# The body of one ranged GET, chunk by chunk as it arrives, so that a read broken
# mid-body can ask again for exactly the bytes it still lacks (_remote.RemoteObject).
# fsspec only returns a range whole (cat_file), and s3fs even retries a broken body from
# its start, so the two stores the issue names get a chunked GET of their own, on the
# filesystem's own client and event loop:
#
#   - S3 (s3fs): botocore's get_object with a Range, its streaming Body read in chunks;
#   - HTTP(S) (fsspec's HTTPFileSystem): aiohttp's session.get with a Range header;
#   - GCS (gcsfs): the object's media link, GET on gcsfs's aiohttp session with its
#     credentials' headers and a Range header, the body read as for HTTP(S).
#
# Any other store (memory, ...) reads the range whole through cat_file: it resumes at
# the start of the request instead. A range starting at or past the end of
# the object yields nothing (S3, GCS and HTTP answer 416 there).
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

CHUNK = 256 << 10  # bytes asked of a body at a time


def chunks(fs: Any, path: str, start: int, end: int) -> Iterator[bytes]:
    """The bytes start..end of the object at `path` (fewer at its end), in pieces as they arrive."""
    if end <= start:
        return
    protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
    if {"s3", "s3a"} & protocols and hasattr(fs, "_call_s3"):
        yield from _s3_chunks(fs, path, start, end)
    elif {"http", "https"} & protocols and hasattr(fs, "set_session"):
        yield from _http_chunks(fs, path, start, end)
    elif {"gs", "gcs"} & protocols and hasattr(fs, "_get_headers"):
        yield from _gcs_chunks(fs, path, start, end)
    else:
        data = fs.cat_file(path, start=start, end=end)
        if data:
            yield data


def _s3_chunks(fs: Any, path: str, start: int, end: int) -> Iterator[bytes]:
    from fsspec.asyn import sync

    bucket, key, version = fs.split_path(path)
    kw = dict(fs.req_kw, Range=f"bytes={start}-{end - 1}")
    if version:
        kw["VersionId"] = version
    try:
        response = sync(fs.loop, fs._call_s3, "get_object", Bucket=bucket, Key=key, **kw)
    except OSError as err:
        if "InvalidRange" in str(err) or "416" in str(err):
            return
        raise
    body = response["Body"]
    try:
        while piece := sync(fs.loop, body.read, CHUNK):
            yield piece
    finally:
        body.close()


def _http_chunks(fs: Any, path: str, start: int, end: int) -> Iterator[bytes]:
    from fsspec.asyn import sync

    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", None) or {}, Range=f"bytes={start}-{end - 1}")
    session = sync(fs.loop, fs.set_session)
    response = sync(fs.loop, session.get, fs.encode_url(path), headers=headers, **kw)
    try:
        if response.status == 416:
            return
        fs._raise_not_found_for_status(response, path)
        yield from _body(fs.loop, response, start, end)
    finally:
        response.release()


def _gcs_chunks(fs: Any, path: str, start: int, end: int) -> Iterator[bytes]:
    from fsspec.asyn import sync
    from gcsfs.retry import validate_response

    sync(fs.loop, fs._set_session)
    headers = fs._get_headers({"Range": f"bytes={start}-{end - 1}"})
    get = fs.session.get
    response = sync(fs.loop, get, fs.url(path), params=fs._get_params({}), headers=headers, timeout=fs.requests_timeout)
    try:
        if response.status == 416:
            return
        if response.status >= 400:
            validate_response(response.status, sync(fs.loop, response.read), path)
        yield from _body(fs.loop, response, start, end)
    finally:
        response.release()


def _body(loop: Any, response: Any, start: int, end: int) -> Iterator[bytes]:
    """The bytes start..end of an aiohttp response to a ranged GET, as they arrive."""
    from fsspec.asyn import sync

    skip = start if response.status == 200 else 0  # a server that ignores Range sends it all
    wanted = end - start
    while wanted > 0:
        try:
            piece = sync(loop, response.content.read, CHUNK)
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
            yield piece


def _received(content: Any) -> bytes:
    """What a broken aiohttp body had received before it broke: read() raises the error first
    and would drop these bytes, which arrive with the end of the connection."""
    read_nowait = getattr(content, "_read_nowait", None)
    return bytes(read_nowait(-1)) if read_nowait is not None else b""
