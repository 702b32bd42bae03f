"""How a location is shown: the one redaction every message, log line and repr goes through.

A URL may carry secrets in its user info (`https://user:password@host/`) and in its query string
(signed URLs: `X-Amz-Signature=`, `X-Goog-Signature=`, `sig=`, `token=`, access keys). `redact`
shows a location without them: a local path as it is, a URL as scheme, host, port and path. It is
total: it never raises, whatever it is given, since an error raised while composing an error message
would carry the very secret it was meant to hide (a password with an unencoded `/`, `?` or `#`
makes `urllib.parse` raise a ValueError that quotes it). A URL that does not parse cleanly is
scrubbed conservatively instead: everything up to its last `@` and from its first `?` or `#` is
dropped. `scrub` redacts every URL inside a free text (error messages of HTTP libraries quote full
URLs) and masks any secret-looking `key=value` left outside one. `log` is the library's logger,
whose every line is scrubbed; `scrub_loggers` gives the same filter to the loggers of fsspec and
its filesystems (FOREIGN_LOGGERS), whose DEBUG lines quote the URLs they are handed, once the
library hands them one.
"""

from __future__ import annotations

import logging
import os
import re
import urllib.parse

_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
_SECRET_PARAMETER = re.compile(
    r"(?i)\b((?:x-amz|x-goog)-[a-z-]*(?:signature|credential|security-token)|awsaccesskeyid|signature|sig|"
    r"token|access_token|id_token|refresh_token|access_key|secret_key|password|passwd|apikey|api_key)"
    r"=[^&\s'\"<>]*"
)
_HOST = re.compile(r"[A-Za-z0-9.\-_~%\[\]:]*")
MASK = "REDACTED"


def redact(location: object) -> str:
    """`location` fit for a message: a local path as it is; a URL without user info, query or fragment.

    Never raises: what cannot be parsed cleanly is scrubbed conservatively (see the module docstring).
    """
    try:
        text = _text(location)
    except Exception:
        return "<unprintable location>"
    if "://" not in text:
        return text
    try:
        return _parsed(text)
    except Exception:
        return _conservative(text)


def scrub(text: object) -> str:
    """`text` with every URL in it redacted and every secret-looking `key=value` masked. Never raises."""
    try:
        found = text if isinstance(text, str) else str(text)
        return _SECRET_PARAMETER.sub(lambda m: f"{m.group(1)}={MASK}", _URL.sub(lambda m: redact(m.group(0)), found))
    except Exception:
        return "<unprintable message>"


def _text(location: object) -> str:
    if isinstance(location, os.PathLike):
        location = os.fspath(location)
    if isinstance(location, bytes):
        return os.fsdecode(location)
    return location if isinstance(location, str) else str(location)


def _parsed(url: str) -> str:
    """The clean parse of a well-formed URL; raises on anything it does not fully understand."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if not _HOST.fullmatch(host) or "@" in url.partition(parts.netloc)[2]:  # a password's unencoded '/', '?', '#'
        raise ValueError("not a well-formed URL")
    if parts.port is not None:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def _conservative(url: str) -> str:
    """Scheme, then what follows the last '@' up to the first '?' or '#': no user info, no query."""
    head, _, rest = url.partition("://")
    rest = rest.rpartition("@")[2]
    for stop in "?#":
        rest = rest.partition(stop)[0]
    return _SECRET_PARAMETER.sub(lambda m: f"{m.group(1)}={MASK}", f"{head}://{rest}")


class _Scrubbed(logging.Filter):
    """Makes every record of the library's logger carry its message scrubbed."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        record.msg, record.args = scrub(message), None
        return True


log = logging.getLogger("tfrecord_lite")
if not any(isinstance(f, _Scrubbed) for f in log.filters):
    log.addFilter(_Scrubbed())

FOREIGN_LOGGERS = (
    "fsspec",
    "fsspec.http",
    "fsspec.caching",
    "fsspec.asyn",
    "fsspec.generic",
    "fsspec.mapping",
    "s3fs",
    "gcsfs",
    "adlfs",
)


def scrub_loggers(names: tuple[str, ...] = FOREIGN_LOGGERS) -> None:
    """Give each logger of `names` the filter that scrubs the library's own log lines."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Scrubbed) for f in logger.filters):
            logger.addFilter(_Scrubbed())
