"""The exception hierarchy. Every error the library raises on bad data derives
from TFRecordError, so `except tfr.TFRecordError` catches them all; errors
about values that do not fit a spec are also ValueErrors, as in TensorFlow.
IndexFallbackWarning says that an index sidecar could not be used, and
DataLoaderWarning that a DataLoader is bound by what torch's workers cost.
Messages, paths and URLs are redacted as they are stored (tfrecord_lite._redact),
so no error carries a URL's credentials.
"""

from __future__ import annotations

import os
from typing import Any, Union

from tfrecord_lite._redact import redact, scrub

PathName = Union[str, "os.PathLike[str]", None]


class TFRecordError(Exception):
    """Base class: the data read or written is not what a TFRecord file must hold."""

    def __init__(self, message: str, *, path: PathName = None, offset: int | None = None) -> None:
        self.path = redact(path) if path is not None else None
        self.offset = offset
        self.reason = scrub(message)
        where = []
        if self.path is not None:
            where.append(f"in {self.path!s}")
        if offset is not None:
            where.append(f"at byte offset {offset}")
        super().__init__(self.reason + (" (" + ", ".join(where) + ")" if where else ""))

    def __reduce__(self) -> tuple[Any, ...]:  # keep path/offset when sent between processes
        return (_rebuild, (type(self), self.reason, self.path, self.offset))


def _rebuild(cls: type[TFRecordError], message: str, path: PathName, offset: int | None) -> TFRecordError:
    return cls(message, path=path, offset=offset)


class CorruptRecordError(TFRecordError):
    """A CRC does not match: the record at `offset` is damaged."""


class TruncatedRecordError(TFRecordError):
    """The data ends inside the record that starts at `offset`."""


class RecordTooLargeError(TFRecordError):
    """A record's (CRC-checked) header claims more bytes than the reader's `max_record_bytes` allows:
    refused before any of it is held in memory. Pass a larger `max_record_bytes` to read it."""


class NotTFRecordError(CorruptRecordError):
    """A file is not a TFRecord file at all: no valid record header at its start, and not GZIP /
    ZLIB data holding records. The message says what the file looks like (a PNG image, text ...)."""


class NoInputsError(TFRecordError, FileNotFoundError):
    """A path, folder, glob or prefix given as input names no TFRecord file."""


class DecodeError(TFRecordError, ValueError):
    """A record's payload is not a valid Example / SequenceExample protobuf (for `parse_tensor`: not a
    valid TensorProto of the dtype asked for)."""


class FeatureError(TFRecordError, ValueError):
    """A feature does not fit its spec, or a value cannot be encoded as a Feature."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.detail = message
        super().__init__(f"feature {key!r}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.key, self.detail))


class StaleIndexError(TFRecordError):
    """An index no longer describes its TFRecord file (the file was appended to or rewritten)."""


class IndexFormatError(TFRecordError, ValueError):
    """A file given as an index is not a valid binary sidecar or text index."""


class IndexFallbackWarning(UserWarning):
    """A file's index sidecar exists but cannot be read (another user's 0600 file, a folder in its
    place): the file is opened with an in-memory index instead."""


class DataLoaderWarning(UserWarning):
    """A PyTorch DataLoader whose workers cannot make it faster than none, told once per process with
    the form that is (docs/torch.md, "Choosing num_workers")."""


class RemoteError(OSError):
    """Reading or writing an object in a store failed, also after retries (network, server errors).

    `url` is the object's URL without credentials or query string; `offset` the byte reached."""

    def __init__(self, message: str, *, url: str, offset: int | None = None) -> None:
        self.url = redact(url)
        self.offset = offset
        self.reason = scrub(message)
        where = f"at byte offset {offset} of {self.url}" if offset is not None else f"of {self.url}"
        super().__init__(f"{self.reason} ({where})")

    def __reduce__(self) -> tuple[Any, ...]:  # keep url/offset when sent between processes
        return (_rebuild_remote, (self.reason, self.url, self.offset))


def _rebuild_remote(message: str, url: str, offset: int | None) -> RemoteError:
    return RemoteError(message, url=url, offset=offset)
