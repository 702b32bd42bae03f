"""The compression kinds of TFRecord files, each described once: the registry every
other module reads what it knows about a kind from. A kind has its name (the library's
spelling, TensorFlow's in upper case), the bytes that start its stream (how a file's
kind is recognised from its content, and how a next member is told from damage), its
inflater and deflater (zlib-API objects from the fastest installed library, inflate.py),
the `wbits` of that API, how random access indexes a file of it (record offsets for a
plain file, seek points into the compressed stream for GZIP / ZLIB) and the code of the
kind in a seek-point sidecar, the file-name endings that ask for it (the first is the
one writers give), the other names that mean it (Spark / Hadoop codec names), and the
word for one stream of it in error messages.

Adding a codec is adding a `CompressionKind` to KINDS here (and its tests): the readers,
writers, sniffing, shard names, the CLI's choices and the seek-point index read it from
here. The plain kind ("") is a kind too, so code that maps every kind (file endings,
index kinds) needs no special case. What a file is read as, given a compression and its
first bytes, is decided here once too (read_as), with the one error of a named compression
the content contradicts (compression_mismatch).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from tfrecord_lite._compression.inflate import decompressor

IndexKind = Literal["offsets", "seek_points"]  # how random access indexes a file of a kind
FHCRC = 0x02  # the FLG bit of a GZIP header that says a CRC16 of the header follows it
RESERVED_FLAGS = 0xE0  # bits 5-7 of a GZIP header's FLG byte (RFC 1952: a decoder must refuse them)


def _starts_gzip(head: bytes) -> bool:
    """A GZIP member starts with its magic (RFC 1952)."""
    return head[:2] == b"\x1f\x8b"


def _starts_zlib(head: bytes) -> bool:
    """A ZLIB stream starts with a header of CM 8 (deflate), a window of at most 32 KiB
    (CINFO <= 7) and a check that makes the two bytes a multiple of 31 (RFC 1950)."""
    return len(head) >= 2 and head[0] & 0x0F == 8 and head[0] >> 4 <= 7 and (head[0] << 8 | head[1]) % 31 == 0


def _starts_plain(head: bytes) -> bool:
    """A plain file is recognised by its first record header (_wire/sniff.py), not by a magic."""
    return False


@dataclass(frozen=True)
class CompressionKind:
    """One compression kind of TFRecord files (see the module docstring for each field's use)."""

    name: str  # "" | "gzip" | "zlib": the library's spelling
    label: str  # "none" | "GZIP" | "ZLIB": how messages and listings show it
    suffixes: tuple[str, ...]  # file-name endings that ask for it, lower case; the first is the one written
    aliases: tuple[str, ...]  # other names of it (Spark / Hadoop codec names), lower case
    wbits: int  # the zlib API's `wbits` for its stream (0: not compressed)
    index: IndexKind  # how random access indexes a file of it
    sidecar_code: int  # its number in a seek-point sidecar's header (0: none)
    unit: str  # what one stream of it is called: "member" (GZIP), "stream" (ZLIB)
    starts: Callable[[bytes], bool]  # whether bytes start a stream of it (its magic / header)
    flags_at: int | None = None  # where its header's FLG byte is (GZIP: 3); None: no such byte

    @property
    def compressed(self) -> bool:
        return self.wbits != 0

    @property
    def suffix(self) -> str:
        """The file-name ending writers give a file of this kind ('' for a plain file)."""
        return self.suffixes[0] if self.suffixes else ""

    def inflater(self, head: bytes | memoryview = b"", zdict: Any = None) -> Any:
        """A zlib-API decompressor (inflate.library()'s) for a stream of this kind that starts
        with `head`. A GZIP member whose header carries a header CRC (FHCRC in its FLG byte) gets
        the stdlib's instead: ISA-L misreads such a header when its input is cut inside it (a
        header over 64 KiB, of long extra fields or names, fed a step at a time)."""
        at = self.flags_at
        stdlib = at is not None and len(head) > at and bool(head[at] & FHCRC)
        return decompressor(self.wbits, zdict, stdlib=stdlib)

    def reserved_flags(self, header: bytes | memoryview, at: int) -> bool:
        """Whether `header[at]`, the FLG byte of a member of this kind, sets bits RFC 1952
        reserves (the stdlib and TensorFlow refuse such a header; ISA-L reads past it)."""
        return self.flags_at is not None and bool(header[at] & RESERVED_FLAGS)

    def deflater(self, level: int, lib: ModuleType | None = None) -> Any:
        """A zlib-API compressor writing a stream of this kind at `level` with memLevel 9, as
        TensorFlow's ZlibOutputBuffer; `lib` is the stdlib zlib unless given (inflate.library())."""
        lib = zlib if lib is None else lib
        return lib.compressobj(level, lib.DEFLATED, self.wbits, 9)


PLAIN = CompressionKind(
    name="",
    label="none",
    suffixes=(),
    aliases=("none", "uncompressed"),
    wbits=0,
    index="offsets",
    sidecar_code=0,
    unit="file",
    starts=_starts_plain,
)
GZIP = CompressionKind(
    name="gzip",
    label="GZIP",
    suffixes=(".gz", ".gzip"),
    aliases=("gz",),
    wbits=31,  # a 32 KiB window in a GZIP wrapper (16 + 15)
    index="seek_points",
    sidecar_code=1,
    unit="member",
    starts=_starts_gzip,
    flags_at=3,
)
ZLIB = CompressionKind(
    name="zlib",
    label="ZLIB",
    suffixes=(".zlib", ".zz"),
    aliases=("deflate", "default"),  # Hadoop's DefaultCodec and DeflateCodec write ZLIB streams
    wbits=15,  # a 32 KiB window in a ZLIB wrapper
    index="seek_points",
    sidecar_code=2,
    unit="stream",
    starts=_starts_zlib,
)

KINDS: dict[str, CompressionKind] = {k.name: k for k in (PLAIN, GZIP, ZLIB)}
COMPRESSED: tuple[CompressionKind, ...] = tuple(k for k in KINDS.values() if k.compressed)
COMPRESSED_NAMES: tuple[str, ...] = tuple(k.name for k in COMPRESSED)
NAMES: tuple[str, ...] = tuple(KINDS)  # the spellings normalize() returns ("" is none)
# the file-name endings of compressed files, as a regex group: "(\.gz|\.gzip|\.zlib|\.zz)"
SUFFIX_PATTERN = "(" + "|".join(re.escape(s) for k in COMPRESSED for s in k.suffixes) + ")"
_BY_SUFFIX = re.compile(SUFFIX_PATTERN + "$", re.IGNORECASE)


def kind_of(name: str) -> CompressionKind:
    """The kind of a normalized name ('' | 'gzip' | 'zlib'); ValueError for another."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown compression kind {name!r}: one of {', '.join(map(repr, NAMES))}") from None


def label_of(name: str) -> str:
    """How messages show a kind ('GZIP'), or a sniffed name that is none ('unknown') in upper case."""
    found = KINDS.get(name)
    return found.label if found is not None else name.upper()


def is_compressed(name: str) -> bool:
    """Whether a normalized name (or a sniffed kind: 'unknown' too) is a compressed kind."""
    return name in COMPRESSED_NAMES


def index_kind(name: str) -> IndexKind:
    """How random access indexes a file of the kind `name` (a sniffed one: 'unknown' is read as
    plain, whose reader then says what the file is): "offsets" or "seek_points"."""
    found = KINDS.get(name)
    return found.index if found is not None else PLAIN.index


def normalize_compression(compression: str | None, *, allow_auto: bool = False) -> str:
    """'' | 'gzip' | 'zlib' (| 'auto'), from TF-style spellings such as None, 'GZIP'."""
    allowed = NAMES + (("auto",) if allow_auto else ())
    if compression is None:
        return ""
    if isinstance(compression, str) and compression.lower() in allowed:
        return compression.lower()
    shown = ", ".join(repr(c) for c in (None,) + allowed)
    raise ValueError(f"unknown compression {compression!r}: use one of {shown} (case-insensitive)")


def from_alias(name: str) -> str | None:
    """The kind a name or alias means ('gz' -> 'gzip', 'deflate' -> 'zlib', 'none' -> '');
    None when it means none of them. Case-insensitive."""
    name = name.lower()
    for k in KINDS.values():
        if name == k.name or name in k.aliases:
            return k.name
    return None


def compression_by_name(path: str) -> str:
    """The compression a file's name asks for: .gz / .gzip -> gzip, .zz / .zlib -> zlib, else none ('')."""
    ending = _BY_SUFFIX.search(path)
    if ending is None:
        return ""
    found = ending.group().lower()
    return next(k.name for k in COMPRESSED if found in k.suffixes)


def without_suffix(name: str) -> str:
    """`name` without its compression ending (if any)."""
    return _BY_SUFFIX.sub("", name)


def kind_starting(head: bytes) -> str | None:
    """The compressed kind whose stream `head` starts (by its magic / header), else None."""
    return next((k.name for k in COMPRESSED if k.starts(head)), None)


def inflater_for(wbits: int, head: bytes | memoryview = b"", zdict: Any = None) -> Any:
    """A decompressor for a stream of `wbits`: a kind's (its inflater), or raw deflate (a
    negative `wbits`: a seek point inside a stream) from inflate.library()."""
    found = next((k for k in COMPRESSED if k.wbits == wbits), None)
    return found.inflater(head, zdict) if found is not None else decompressor(wbits, zdict)


def by_sidecar_code(code: int) -> CompressionKind | None:
    """The kind a seek-point sidecar's header names by its number; None for an unknown number."""
    return next((k for k in COMPRESSED if k.sidecar_code == code), None)


def endings() -> str:
    """The file-name endings that ask for each kind, for messages: '.gz / .gzip -> GZIP, .zlib / .zz -> ZLIB'."""
    return ", ".join(f"{' / '.join(k.suffixes)} -> {k.label}" for k in COMPRESSED)


def choices(*, auto: bool = False, sep: str | None = None) -> str:
    """The names a user may give, for messages: 'auto, none, gzip or zlib' (joined by `sep`
    when given: 'none|gzip|zlib')."""
    names = (["auto"] if auto else []) + [k.name or "none" for k in KINDS.values()]
    return sep.join(names) if sep is not None else ", ".join(names[:-1]) + " or " + names[-1]


def compression_mismatch(name: str, given: str | None, found: str) -> ValueError:
    """The error of a file read as `given` whose first bytes say `found` ('', 'gzip', 'zlib', 'unknown')."""
    given = given or None  # '' and None both say uncompressed: shown as None
    if found == "unknown":
        return ValueError(f"{name} is neither a TFRecord file nor GZIP / ZLIB, but compression={given!r} was given")
    shown = f"{label_of(found)}-compressed" if found else "uncompressed"
    return ValueError(f"{name} is {shown}, but compression={given!r} was given: compression='auto' recognises it")


def read_as(compression: str | None, found: str, name: str) -> str:
    """The compression a file is read as ('', 'gzip' or 'zlib'): with "auto", `found` (what its first
    bytes say: '', 'gzip', 'zlib', or 'unknown', read as uncompressed); else the one given, after
    checking that the file does not start as another (ValueError naming the file, both kinds)."""
    wanted = normalize_compression(compression, allow_auto=True)
    if wanted == "auto":
        return found if is_compressed(found) else ""
    if found != wanted and (wanted or found != "unknown"):
        raise compression_mismatch(name, compression, found)
    return wanted
