"""Getting every good record out of a damaged file: one tolerant StreamScanner pass
(the reader's own loop, the same skips as on_error="skip") copies the records it
yields into a temporary file, indexed from the offsets written; both are published
together by a publish.Publication (atomic, the destination locked meanwhile) only
when complete. What the scan stepped over is kept as Damage spans: the report of
what was lost.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from tfrecord_lite._index.record_index import save_offsets
from tfrecord_lite._index.sidecar_file import SIDECAR_SUFFIX
from tfrecord_lite._records.writer import TFRecordWriter
from tfrecord_lite._repr import plural, shown_items
from tfrecord_lite._storage.files import PathOrFile, display_name
from tfrecord_lite._storage.publish import Publication
from tfrecord_lite._stream.damage import Damage
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, StorageOptions
from tfrecord_lite._stream.scanner import DecodedStream, StreamScanner
from tfrecord_lite._wire.framing import OVERHEAD
from tfrecord_lite._wire.sniff import is_another_format, not_a_tfrecord

__all__ = ["SAME", "SalvageReport", "salvage"]

SAME = "same"  # salvage's output_compression: the source's


@dataclass
class SalvageReport:
    """What `salvage` copied and what it lost. Offsets are in the uncompressed record stream
    (= file offsets for a plain file)."""

    source: str | None
    destination: str
    records: int = 0
    damage: list[Damage] = field(default_factory=list)
    stream_size: int = 0  # uncompressed bytes read from the source
    compression: str = ""

    def __repr__(self) -> str:  # many damaged spans shown as the first few and a count
        fields = {k: v for k, v in vars(self).items() if k != "damage"}
        shown = ", ".join(f"{k}={v!r}" for k, v in fields.items())
        return f"SalvageReport({shown}, damage={shown_items(self.damage)})"

    @property
    def ok(self) -> bool:
        """True when nothing was lost."""
        return not self.damage

    @property
    def lost(self) -> list[tuple[int, int]]:
        """(start, end) of every span lost, in stream order; a span to the end of what could
        be read ends at `stream_size`."""
        return [(d.offset, self.stream_size if d.end is None else d.end) for d in self.damage]

    @property
    def bytes_lost(self) -> int:
        """Stream bytes in the lost spans (for a broken GZIP / ZLIB stream, what came after the
        break could not be decompressed and is not counted)."""
        return sum(end - start for start, end in self.lost)

    @property
    def records_skipped(self) -> int:
        """Damaged records skipped: one per lost span (a span after a damaged header may have
        held more than one record, which can no longer be told apart)."""
        return len(self.damage)

    def __str__(self) -> str:
        head = f"{self.source}: {plural(self.records, 'record')} copied to {self.destination}"
        if self.ok:
            return head + ", nothing lost"
        lost = plural(self.records_skipped, "damaged span")
        lines = [f"{head}; {lost} lost ({plural(self.bytes_lost, 'byte')}):"]
        lines += [f"  bytes {start}..{end}: {d.reason}" for (start, end), d in zip(self.lost, self.damage, strict=True)]
        return "\n".join(lines)


def salvage(
    source: PathOrFile,
    *,
    destination: str | os.PathLike[str],
    compression: Compression = "auto",
    output_compression: str | None = SAME,
    index: bool = True,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> SalvageReport:
    """Copy every good record of a damaged TFRecord file into a new file; report what was lost.

    Records are found as `iter_records(..., on_error="skip")` finds them: a record whose payload
    CRC is bad is skipped by its length, after a damaged header the next valid record is
    searched for (also after a good header whose length runs past the end of the file), a
    truncated tail or a broken GZIP / ZLIB stream ends the file. `compression` is the source's,
    as every reader takes it ("auto": recognised from its content); so is `max_record_bytes`: a
    record whose (CRC-checked) header claims more raises RecordTooLargeError before it is held.

    The new file keeps the source's compression (`output_compression="same"`, the
    default); None / "" writes it uncompressed, "gzip" or "zlib" compressed. It appears under
    its name only once complete, with an index sidecar when uncompressed and `index` is true.
    The source is only read; it may be a URL (`storage_options` for fsspec), the destination
    is a local file. A source that is a file of another kind (an image, an archive ...) raises
    NotTFRecordError, as every reader does, and nothing is written.
    """
    target = os.fspath(destination)
    _check_distinct(source, target)
    stream = DecodedStream(source, compression, strict=False, storage_options=storage_options)
    if is_another_format(stream.head):  # an image, an archive ...: nothing to salvage, and no empty copy
        stream.close()
        raise not_a_tfrecord(stream.path, stream.head)
    report = SalvageReport(display_name(source), target, compression=stream.compression)
    written = stream.compression if output_compression == SAME else output_compression

    def count(n: int) -> None:
        report.stream_size += n

    scanner = StreamScanner(stream, on_damage=report.damage.append, on_read=count, max_record_bytes=max_record_bytes)
    lengths: list[int] = []
    try:
        with Publication(target) as publication:
            temp = publication.file(target)
            with TFRecordWriter(temp, compression=written, buffered=True) as writer:
                for view, starts, sizes in scanner.chunks():
                    for s, n in zip(starts, sizes, strict=True):
                        writer.write(view[s : s + n].tobytes())
                    lengths += sizes
            if index and not writer.compression and save_offsets(temp, _offsets(lengths), verified=True):
                publication.move(temp + SIDECAR_SUFFIX, target + SIDECAR_SUFFIX)
            else:  # an old file's sidecar would not describe the new one
                publication.delete(target + SIDECAR_SUFFIX)
    finally:
        stream.close()
    report.records = len(lengths)
    return report


def _offsets(lengths: list[int]) -> np.ndarray:
    """The record offsets (count + 1) of a file of records of these payload lengths."""
    offsets = np.zeros(len(lengths) + 1, np.uint64)
    np.cumsum(np.asarray(lengths, np.uint64) + np.uint64(OVERHEAD), out=offsets[1:])
    return offsets


def _check_distinct(source: PathOrFile, target: str) -> None:
    """Refuse to write over the file being salvaged."""
    name = display_name(source)
    if name is not None and os.path.exists(name) and os.path.exists(target) and os.path.samefile(name, target):
        raise ValueError(f"salvage would overwrite its source {name}: write to another file")
