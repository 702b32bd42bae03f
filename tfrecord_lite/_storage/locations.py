"""Where bytes live, as users name it: a local path, or a URL that fsspec opens (s3://, gs://,
http(s)://, ...; a file:// URL is a local path). Everything that tells the two apart asks
is_url here; what a URL needs before any byte moves is here too: the filesystem it is in
(fsspec, imported only then, with the user's `storage_options`: fsspec's options or a
filesystem object to use). Its name fit for a message is tfrecord_lite._redact's, re-exported.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from tfrecord_lite._redact import redact as redact  # the one redaction, where storage code looks for it
from tfrecord_lite._redact import scrub as scrub
from tfrecord_lite._redact import scrub_loggers

FileSystem = Any  # an fsspec filesystem object (fsspec is an extra, imported only for URLs)
FsspecOptions = Mapping[str, Any] | None  # keyword arguments of fsspec.core.url_to_fs
StorageOptions = FsspecOptions | FileSystem  # what users pass: fsspec's options, or the filesystem to use


def has_scheme(text: str) -> bool:
    """Whether `text` is written as a URL (file:// URLs too; is_url leaves them out)."""
    return "://" in text


def is_url(target: object) -> bool:
    """Whether `target` is a URL that fsspec opens (file:// URLs are local paths)."""
    return isinstance(target, str) and "://" in target and not target.startswith("file://")


def local_path(path: str) -> str:
    """The path a local location names (a file:// URL's path, any other path as it is)."""
    return path.removeprefix("file://")


def scheme(url: str) -> str:
    """The scheme of `url` as it is spelled ('s3', 'gcs', 'https')."""
    return url.partition("://")[0]


def takes_no_uploads(url: str) -> bool:
    """Whether `url` is one of HTTP(S)'s, whose servers are read from only."""
    return scheme(url).lower() in ("http", "https")


def split_options(storage_options: StorageOptions) -> tuple[FsspecOptions, FileSystem]:
    """(fsspec options, fsspec filesystem) from what a caller passed as `storage_options`."""
    if storage_options is None or isinstance(storage_options, Mapping):
        return storage_options, None
    return None, storage_options


def filesystem(url: str, storage_options: FsspecOptions = None, fs: FileSystem = None) -> tuple[FileSystem, str]:
    """(fsspec filesystem, path in it) of `url`; `fs` is used as given when passed."""
    try:
        import fsspec.core
    except ImportError:
        raise ImportError(f"reading {redact(url)!r} needs fsspec: pip install 'tfrlite[remote]'") from None
    scrub_loggers()
    if fs is not None:
        return fs, fs._strip_protocol(url)
    known = fsspec.available_protocols()
    if "://" in url and "::" not in url and scheme(url) not in known:  # chained URLs (a::b://) fsspec parses
        close = difflib.get_close_matches(scheme(url), known, n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c + '://') for c in close)}?" if close else ""
        raise UnknownSchemeError(f"{redact(url)}: no filesystem knows the scheme {scheme(url)!r}{hint}")
    try:
        found, path = fsspec.core.url_to_fs(url, **dict(storage_options or {}))
    except ImportError as err:  # the filesystem's own packages: fsspec's message names them
        extra = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}.get(scheme(url), "remote")
        said = str(err) or f"it needs {err.name or 'a package that is not installed'}"
        raise ImportError(f"reading {redact(url)!r}: {said} (pip install 'tfrlite[{extra}]')") from None
    return found, path


class UnknownSchemeError(ValueError):
    """A URL whose scheme no fsspec filesystem knows (a typo such as s4://): the command line's usage error."""
