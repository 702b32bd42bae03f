# The writer. Records are collected in memory up to a megabyte and then framed
# together by _framing.frame_many and written with one call, so a small record
# costs no system call and little Python work each. GZIP and ZLIB files are one zlib stream over
# the whole file, as TensorFlow writes them (zlib wrapper with adler32 for ZLIB,
# gzip wrapper for GZIP; default level, memLevel 9 like TF's ZlibOutputBuffer).
from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import IO, Any

from ._append import finish_append, prepare_append
from ._codec import encode_example
from ._files import PathOrFile, StorageOptions, display_name, normalize_compression, open_binary
from ._framing import frame_many
from ._repr import compression, count, describe
from ._validate import as_record

_BUFFER_SIZE = 1 << 20
_WBITS = {"gzip": 31, "zlib": 15}


class TFRecordWriter:
    """Write records to a TFRecord file (a path, a URL, or a binary file object left open on close).

    `compression`: None / "" (plain), "gzip" or "zlib", any case ("GZIP" as in TensorFlow).
    `append=True` adds to an existing uncompressed file after checking that it ends
    on a complete record (`truncate_partial=True` cuts an incomplete last record
    off instead of refusing) and extends its index sidecar. A URL (s3://, gs://, ...) is
    uploaded as it is written and the object appears only at close(); an exception inside
    `with` cancels the upload. `storage_options`: fsspec's options, or an fsspec filesystem.
    """

    def __init__(
        self,
        path_or_file: PathOrFile,
        compression: str | None = None,
        *,
        append: bool = False,
        truncate_partial: bool = False,
        storage_options: StorageOptions = None,
    ) -> None:
        self.compression = normalize_compression(compression)
        self.path = display_name(path_or_file)
        self._file: IO[bytes] | None = None
        if truncate_partial and not append:
            raise ValueError("truncate_partial=True only applies with append=True")
        self._append = prepare_append(path_or_file, truncate_partial, self.compression) if append else None
        self._file, self._owned = open_binary(path_or_file, "ab" if append else "wb", storage_options)
        self._compressor = (
            zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, _WBITS[self.compression], 9)
            if self.compression
            else None
        )
        self._records: list[bytes] = []  # written but not yet framed
        self._pending = 0  # their framed size
        self._drained_records = 0
        self._drained_bytes = 0

    @property
    def records_written(self) -> int:
        """How many records were written so far."""
        return self._drained_records + len(self._records)

    @property
    def bytes_written(self) -> int:
        """The uncompressed size of the record stream so far."""
        return self._drained_bytes + self._pending

    def write(self, record: Any) -> None:
        """Append one serialized record (bytes or any bytes-like object); for a dict of
        feature values use write_example."""
        if type(record) is not bytes or self._file is None:
            if self._file is None:
                raise ValueError("write to a closed TFRecordWriter")
            record = as_record(record)
        self._records.append(record)
        self._pending += len(record) + 16
        if self._pending >= _BUFFER_SIZE:
            self._drain()

    def write_example(self, features: Mapping[str, Any]) -> None:
        """Encode `features` with encode_example and write it as one record."""
        self.write(encode_example(features))

    def _drain(self) -> None:
        data = frame_many(self._records)
        self._drained_records += len(self._records)
        self._drained_bytes += self._pending
        self._records = []
        self._pending = 0
        if self._compressor is not None:
            data = self._compressor.compress(data)
        if data:
            self._file.write(data)  # type: ignore[union-attr]

    def flush(self) -> None:
        """Push everything written so far to the file (a compressed stream is sync-flushed,
        so a reader sees every complete record)."""
        if self._file is None:
            return
        self._drain()
        if self._compressor is not None:
            self._file.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        """Finish the file; closes it only if the writer opened it. Safe to call twice."""
        if self._file is None:
            return
        try:
            self._drain()
            if self._compressor is not None:
                self._file.write(self._compressor.flush(zlib.Z_FINISH))
            self._file.flush()
        finally:
            if self._owned:
                self._file.close()
            self._file = None
        if self._append is not None:
            finish_append(self.path, self._append)  # extend the index sidecar, if there is a fresh one

    @property
    def closed(self) -> bool:
        return self._file is None

    def __repr__(self) -> str:
        where = repr(self.path) if self.path is not None else "<file object>"
        state = "closed" if self.closed else "open"
        written = count(self.records_written, "records written")
        return describe("TFRecordWriter", where, compression(self.compression), written, state)

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None and self._owned and hasattr(self._file, "abort"):
            self.abort()  # an upload: cancelled, so no partial object appears
            return
        self.close()

    def abort(self) -> None:
        """Stop writing and drop the output when it is an upload (no object appears); a local file
        is closed as it is. Safe to call twice, and after close()."""
        file, self._file = self._file, None
        if file is None:
            return
        if self._owned and hasattr(file, "abort"):
            file.abort()
        elif self._owned:
            file.close()

    def __del__(self) -> None:
        file = getattr(self, "_file", None)
        if file is not None and getattr(self, "_owned", False):
            try:
                if hasattr(file, "abort"):  # an upload never closed was not finished: it never appears
                    self.abort()
                else:
                    self.close()
            except Exception:
                pass
