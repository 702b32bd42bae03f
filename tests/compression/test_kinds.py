"""The registry of compression kinds (_compression/kinds.py): each kind's fields agree with its
format (the stdlib's gzip / zlib modules are the reference), the lookups by name, alias, file
name, first bytes and sidecar code find each kind, no two kinds claim the same spelling, and
what the package knows about a kind is read from the registry (no module outside _compression
spells the kinds' names as a list, their magic bytes or their wbits)."""

from __future__ import annotations

import gzip
import re
import struct
import zlib
from pathlib import Path

import pytest

import tfrecord_lite as tfr
from tfrecord_lite._compression.kinds import (
    COMPRESSED,
    COMPRESSED_NAMES,
    GZIP,
    KINDS,
    PLAIN,
    ZLIB,
    CompressionKind,
    by_sidecar_code,
    choices,
    compression_by_name,
    endings,
    from_alias,
    index_kind,
    inflater_for,
    is_compressed,
    kind_of,
    kind_starting,
    label_of,
    normalize_compression,
    without_suffix,
)
from tfrecord_lite._datasets.sharded import renamed_for, shard_suffix
from tfrecord_lite._wire.sniff import sniff_compression

PACKAGE = Path(tfr.__file__).parent
DATA = bytes(range(256)) * 64
STDLIB = {"gzip": gzip.decompress, "zlib": zlib.decompress}  # the reference reader of each kind


@pytest.mark.parametrize("kind", COMPRESSED, ids=lambda k: k.name)
@pytest.mark.parametrize("level", [0, 1, 6, 9])
def test_deflater_writes_what_the_stdlib_reads(kind: CompressionKind, level: int) -> None:
    deflater = kind.deflater(level)
    stream = deflater.compress(DATA) + deflater.flush()
    assert STDLIB[kind.name](stream) == DATA
    assert kind.starts(stream)
    assert kind_starting(stream) == kind.name


@pytest.mark.parametrize("kind", COMPRESSED, ids=lambda k: k.name)
def test_inflater_reads_what_the_stdlib_writes(kind: CompressionKind) -> None:
    stream = gzip.compress(DATA) if kind is GZIP else zlib.compress(DATA)
    assert kind.starts(stream) and kind_starting(stream) == kind.name
    d = kind.inflater(stream)
    assert d.decompress(stream) == DATA and d.eof
    assert inflater_for(kind.wbits, stream).decompress(stream) == DATA


def test_a_raw_deflate_point_gets_a_raw_inflater() -> None:
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    stream = raw.compress(DATA) + raw.flush()
    assert inflater_for(-15).decompress(stream) == DATA


def test_a_gzip_header_with_a_header_crc_is_inflated_by_the_stdlib() -> None:
    body = gzip.compress(DATA)
    flagged = body[:3] + bytes([body[3] | 0x02]) + body[4:10]
    header = flagged[:10]
    with_crc = header + struct.pack("<H", zlib.crc32(header) & 0xFFFF) + body[10:]
    d = GZIP.inflater(with_crc)
    assert type(d) is type(zlib.decompressobj())
    assert d.decompress(with_crc) == DATA
    assert GZIP.reserved_flags(bytes([0, 0, 0, 0x20]), 3) and not GZIP.reserved_flags(with_crc, 3)
    assert not ZLIB.reserved_flags(bytes([0xFF] * 4), 3)  # ZLIB has no FLG byte


@pytest.mark.parametrize("kind", KINDS.values(), ids=lambda k: k.name or "plain")
def test_a_written_file_is_recognised_as_its_kind(tmp_path: Path, kind: CompressionKind) -> None:
    path = tmp_path / f"a.tfrecord{kind.suffix}"
    with tfr.TFRecordWriter(path, compression=kind.name or None) as writer:
        writer.write(b"record")
    assert sniff_compression(path.read_bytes()[:64]) == kind.name
    assert compression_by_name(str(path)) == kind.name
    assert list(tfr.iter_records(path)) == [b"record"]
    assert index_kind(kind.name) == kind.index


def test_the_zlib_header_rules() -> None:
    assert ZLIB.starts(b"\x78\x9c") and ZLIB.starts(b"\x78\x01") and ZLIB.starts(b"\x08\x1d")
    assert not ZLIB.starts(b"\x88\x98")  # a window over 32 KiB (CINFO 8): not a ZLIB header
    assert not ZLIB.starts(b"\x78\x9d")  # the check bits do not make a multiple of 31
    assert not ZLIB.starts(b"\x78") and not GZIP.starts(b"\x1f") and not PLAIN.starts(b"\x1f\x8b")


def test_names_spellings_and_endings() -> None:
    for spelling, name in [(None, ""), ("", ""), ("GZIP", "gzip"), ("gzip", "gzip"), ("ZLIB", "zlib")]:
        assert normalize_compression(spelling) == name
    assert normalize_compression("Auto", allow_auto=True) == "auto"
    with pytest.raises(ValueError, match=r"unknown compression 'auto'"):
        normalize_compression("auto")
    with pytest.raises(ValueError, match=r"unknown compression 'bz2': use one of None, '', 'gzip', 'zlib'"):
        normalize_compression("bz2")
    with pytest.raises(ValueError, match="unknown compression kind 'GZIP'"):
        kind_of("GZIP")  # kind_of takes normalized names only
    assert [from_alias(a) for a in ("gz", "GZIP", "deflate", "default", "none", "uncompressed", "lz4")] == [
        "gzip",
        "gzip",
        "zlib",
        "zlib",
        "",
        "",
        None,
    ]
    for kind in KINDS.values():
        for suffix in kind.suffixes:
            for name in (f"x.tfrecord{suffix}", f"X.TFRECORD{suffix.upper()}"):
                assert compression_by_name(name) == kind.name
                assert without_suffix(name) == name[: -len(suffix)]
        assert shard_suffix(kind.name) == ".tfrecord" + kind.suffix
        assert renamed_for("d/a.tfrecord.gz", kind.name) == "a.tfrecord" + kind.suffix
    assert compression_by_name("x.tfrecord") == "" and compression_by_name("x.gzipped") == ""
    assert choices(auto=True) == "auto, none, gzip or zlib" and choices(sep="|") == "none|gzip|zlib"
    assert endings() == ".gz / .gzip -> GZIP, .zlib / .zz -> ZLIB"
    assert [label_of(n) for n in ("", "gzip", "zlib", "unknown")] == ["none", "GZIP", "ZLIB", "UNKNOWN"]


def test_no_two_kinds_claim_one_spelling() -> None:
    spellings = [s for k in KINDS.values() for s in (k.name, *k.aliases)]
    assert len(spellings) == len(set(spellings))
    suffixes = [s for k in KINDS.values() for s in k.suffixes]
    assert len(suffixes) == len(set(suffixes)) and all(s == s.lower() for s in suffixes)
    codes = [k.sidecar_code for k in COMPRESSED]
    assert len(codes) == len(set(codes)) and 0 not in codes
    assert all(by_sidecar_code(k.sidecar_code) is k for k in COMPRESSED) and by_sidecar_code(0) is None
    assert len({k.wbits for k in COMPRESSED}) == len(COMPRESSED)
    assert [k.name for k in COMPRESSED] == list(COMPRESSED_NAMES) == ["gzip", "zlib"]
    assert not PLAIN.compressed and index_kind("") == index_kind("unknown") == "offsets"
    assert all(is_compressed(n) for n in COMPRESSED_NAMES) and not is_compressed("") and not is_compressed("unknown")


# what only the registry may spell: the kinds listed by name, the GZIP magic, a kind's wbits table
_KNOWN_ONLY_THERE = [
    re.compile(r"""\(\s*["']gzip["'],\s*["']zlib["']\s*\)"""),
    re.compile(r"""\\x1f\\x8b"""),
    re.compile(r"""\bWBITS\b"""),
    re.compile(r"""COMPRESSION_SUFFIX"""),
]


def test_only_the_registry_knows_the_kinds() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "_compression":
            continue
        text = path.read_text()
        found += [f"{path.relative_to(PACKAGE)}: {p.pattern}" for p in _KNOWN_ONLY_THERE if p.search(text)]
    assert found == []
