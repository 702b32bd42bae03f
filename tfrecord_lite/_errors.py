"""The exception hierarchy. Every error the library raises on bad data derives
from TFRecordError, so `except tfr.TFRecordError` catches them all; errors
about values that do not fit a spec are also ValueErrors, as in TensorFlow.
IndexFallbackWarning says that an index sidecar could not be used, and
DataLoaderWarning that a DataLoader is bound by what torch's workers cost.
Messages, paths and URLs are redacted as they are stored (tfrecord_lite._redact),
so no error carries a URL's credentials. An error about one record that a reader of
files found (a feature that does not fit its spec, a payload that is no Example) is
placed by `place`: its file, the record's number in that file and its byte offset.
"""

from __future__ import annotations

import os
from typing import Any, Union

from tfrecord_lite._redact import redact, scrub

PathName = Union[str, "os.PathLike[str]", None]


class TFRecordError(Exception):
    """Base class: the data read or written is not what a TFRecord file must hold. `path` and
    `offset` say where, when known; `record` is the record's number in that file (from 0), when
    a reader placed the error (see `place`)."""

    record: int | None = None

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

    def __reduce__(self) -> tuple[Any, ...]:  # keep path/offset (and a placed record) between processes
        return (_rebuild, (type(self), self.reason, self.path, self.offset), _placed_state(self))


def _placed_state(err: TFRecordError) -> dict[str, Any] | None:
    """What `place` changed of `err` (None: nothing), for pickling."""
    if err.record is None:
        return None
    return {"record": err.record, "path": err.path, "offset": err.offset, "args": err.args}


def place(err: TFRecordError, *, path: PathName, record: int, offset: int | None) -> TFRecordError:
    """`err` (about one record of a batch) told where that record is: `path`, its number in that file
    and its byte offset (in the uncompressed stream). The message ends with them, in place of any
    note on the record's place in a batch. An error already placed, or naming a file, is left as it is."""
    if err.record is not None or err.path is not None:
        return err
    err.path = redact(path) if path is not None else None
    err.record = record
    err.offset = offset
    where = [f"in {err.path!s}"] if err.path is not None else []
    where.append(f"record {record}")
    if offset is not None:
        where.append(f"at byte offset {offset}")
    err.args = (f"{err.args[0] if err.args else err.reason} ({', '.join(where)})", *err.args[1:])
    notes = getattr(err, "__notes__", None)
    if notes:
        notes[:] = [note for note in notes if "of the batch passed to" not in note]
    return err


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
        return (type(self), (self.key, self.detail), _placed_state(self))


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


class DatasetInfoError(TFRecordError, ValueError):
    """A TensorFlow Datasets folder's dataset_info.json or features.json is not what TFDS writes
    (a wrong type, an impossible shape, an unknown feature connector, a file name outside the folder)."""
