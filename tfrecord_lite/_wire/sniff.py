"""Recognising what a file holds from its first bytes. A TFRecord file starts with a
record header whose length CRC matches (or is empty), or is GZIP / ZLIB data whose
first inflated bytes are such a header. Anything else gets the one "not a TFRecord
file" error of the package, which says in words what the file looks like instead
(a PNG image, JSON text, an index sidecar ...), wherever it is detected: the
streaming reader, random access, indexing, verify and the input resolver.
"""

from __future__ import annotations

import zlib

from tfrecord_lite._compression.kinds import is_compressed, kind_of, kind_starting
from tfrecord_lite._errors import NotTFRecordError, PathName
from tfrecord_lite._wire.framing import HEADER_SIZE, header_is_valid

SNIFF_SIZE = 4096  # bytes read to recognise a file
_MAGICS = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"BM", "a BMP image"),
    (b"RIFF", "a RIFF file (WebP, WAV, AVI)"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"%PDF", "a PDF document"),
    (b"PAR1", "a Parquet file"),
    (b"ARROW1", "an Arrow IPC file"),
    (b"TFRLIDX\0", "a tfrecord_lite index sidecar (.tfrlidx)"),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x89HDF", "an HDF5 file"),
    (b"BZh", "bzip2 data"),
    (b"\xfd7zXZ", "XZ data"),
    (b"\x28\xb5\x2f\xfd", "Zstandard data"),
)


def sniff_compression(head: bytes) -> str:
    """'' | 'gzip' | 'zlib' | 'unknown' from the first bytes of a file (at least 12 when there are).
    A file of fewer than 12 bytes that is not compressed is a plain file whose first record is
    truncated (the reader says so), not an unknown kind."""
    if not head or header_is_valid(head):
        return ""
    compressed = kind_starting(head)  # the kind whose magic / header starts it (_compression/kinds.py)
    if compressed is not None:
        return compressed
    return "" if len(head) < HEADER_SIZE else "unknown"  # shorter: a truncated first record


def inflates(head: bytes, compression: str) -> bool:
    """Whether the first bytes of a file start a GZIP / ZLIB stream: they inflate to something
    before any error (a stream damaged later is still a stream)."""
    inflater = zlib.decompressobj(kind_of(compression).wbits)
    for at in range(0, len(head), 16):
        try:
            if inflater.decompress(head[at : at + 16], 1) or inflater.eof:
                return True
        except zlib.error:
            return False
    return True


def inflated_head(head: bytes, compression: str) -> bytes | None:
    """The first (up to 12) bytes `head` inflates to; None when it is not valid GZIP / ZLIB data."""
    try:
        return zlib.decompressobj(kind_of(compression).wbits).decompress(head, HEADER_SIZE)
    except zlib.error:
        return None


def holds_records(head: bytes) -> bool:
    """Whether a file starting with `head` (SNIFF_SIZE bytes, or all of a shorter file) is a
    TFRecord file: plain, or GZIP / ZLIB data that inflates to a record header."""
    kind = sniff_compression(head)
    if kind in ("", "unknown"):
        return not head or header_is_valid(head)  # an empty file is a TFRecord file of no records
    inner = inflated_head(head, kind)
    return inner is not None and (header_is_valid(inner) or (not inner and len(head) < SNIFF_SIZE))


def looks_like(head: bytes) -> str:
    """What a file that starts with `head` looks like, in words ('a PNG image', 'JSON text' ...)."""
    for magic, what in _MAGICS:
        if head.startswith(magic):
            return what
    kind = sniff_compression(head)
    if is_compressed(kind):
        inner, label = inflated_head(head, kind), kind_of(kind).label
        return f"{label} data that does not hold TFRecords" if inner else f"damaged {label} data"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.start < len(head) - 3:  # not just a character cut at the end of `head`
            return "binary data of an unknown kind (or a TFRecord file whose first record header is damaged)"
        text = head[: err.start].decode("utf-8")
    words = text.split()
    if words and len(words) % 2 == 0 and all(w.isdigit() for w in words[:-1]):
        return "a text index ('offset length' lines, as DALI writes)"
    if text.lstrip().startswith(("{", "[")):
        return "JSON text"
    return "text"


def is_another_format(head: bytes) -> bool:
    """Whether a file starting with `head` is not a TFRecord file at all but a file of a known other
    format (an image, an archive ...), not one whose first record header is damaged."""
    return sniff_compression(head) == "unknown" and any(head.startswith(magic) for magic, _ in _MAGICS)


def not_a_tfrecord(path: PathName, head: bytes) -> NotTFRecordError:
    """The error for a file that starts with `head` and holds no records."""
    return NotTFRecordError(
        f"not a TFRecord file: it looks like {looks_like(head)} (a TFRecord file starts with a "
        "record header, or is GZIP / ZLIB data that does)",
        path=path,
        offset=0,
    )


def read_head(path: str) -> bytes:
    """The first SNIFF_SIZE bytes of a local file."""
    with open(path, "rb") as fh:
        return fh.read(SNIFF_SIZE)
