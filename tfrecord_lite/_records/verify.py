"""Checking every CRC of a file and listing all of its damage, not only the first:
a tolerant StreamScanner pass (the reader's own scanning loop) that counts the
good records and collects each damaged span with its offset and its record number (the
good records the scanner had yielded before it: where a reader stops or skips), so
`tfrecord-lite verify` and the demo can say where a file is broken and what is still readable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tfrecord_lite._repr import shown_items
from tfrecord_lite._storage.files import PathOrFile, display_name
from tfrecord_lite._stream.damage import Damage
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, StorageOptions
from tfrecord_lite._stream.scanner import DecodedStream, StreamScanner
from tfrecord_lite._wire.sniff import holds_records, not_a_tfrecord


@dataclass
class VerifyReport:
    """The outcome of checking every CRC of one file: good records and the damaged spans.

    Offsets are in the uncompressed record stream (= file offsets for plain files); `record_numbers`
    holds, for each damaged span, how many good records come before it in the file (the number
    of the record a reader fails at, counting from 0)."""

    path: str | None
    records: int = 0
    damage: list[Damage] = field(default_factory=list)
    compression: str = ""
    record_numbers: list[int] = field(default_factory=list)

    def __repr__(self) -> str:  # many damaged spans shown as the first few and a count
        fields = {k: v for k, v in vars(self).items() if k != "damage"}
        shown = ", ".join(f"{k}={v!r}" for k, v in fields.items())
        return f"VerifyReport({shown}, damage={shown_items(self.damage)})"

    @property
    def ok(self) -> bool:
        return not self.damage

    @property
    def bad(self) -> list[tuple[int, str]]:
        """(offset, problem) of every damaged span, in file order."""
        return [(d.offset, d.reason) for d in self.damage]

    @property
    def bad_records(self) -> list[tuple[int, int, str]]:
        """(record number, offset, problem) of every damaged span, in file order."""
        return [(n, d.offset, d.reason) for n, d in zip(self.record_numbers, self.damage, strict=True)]


def verify_file(
    source: PathOrFile,
    *,
    compression: Compression = "auto",
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
    on_progress: Callable[[int], None] | None = None,
) -> VerifyReport:
    """Check every record's CRCs in one file and list the offsets and record numbers of all bad records.

    After a bad payload CRC the record's (CRC-checked) length skips it; after a bad
    length CRC, or a length that runs past the end of the file, the scan moves on to the next
    valid record header. A damaged compressed
    stream or a truncated tail ends the scan and is reported too. `on_progress` is told
    how many (uncompressed) bytes each read brought. `compression` and `storage_options` (fsspec's,
    for a URL) are iter_records'; `max_record_bytes` is taken as every reader takes it, but the check
    holds no record in memory, so a longer record is streamed through, its CRCs checked on the way.
    """
    stream = DecodedStream(source, compression, strict=False, storage_options=storage_options)
    report = VerifyReport(display_name(source), compression=stream.compression)

    def found(damage: Damage) -> None:
        report.damage.append(damage)
        report.record_numbers.append(scanner.records)

    scanner = StreamScanner(
        stream, on_damage=found, on_read=on_progress, payloads=False, max_record_bytes=max_record_bytes
    )
    try:
        for _ in scanner.chunks():
            pass
    finally:
        stream.close()
    report.records = scanner.records
    if not report.records and report.damage and not holds_records(stream.head):
        report.damage = [Damage(0, None, not_a_tfrecord(None, stream.head).reason)]
        report.record_numbers = [0]
    return report
