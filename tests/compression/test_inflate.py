"""The inflate / deflate library choice (_compression/inflate.py): every installed library reads GZIP and ZLIB
files (one stream, several members, damaged) exactly as the stdlib does; the writer's default bytes
stay the stdlib's with TensorFlow's settings, and `level=` / `fast=True` files read back everywhere.
TensorFlow's side of both claims is in tests/end_to_end/test_tf_compat.py."""

from __future__ import annotations

import gzip
import importlib.util
import io
import itertools
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr
from tfrecord_lite._compression.inflate import ENV_VAR, LIBRARIES, _find, library, library_name
from tfrecord_lite._compression.inflater import Inflater
from tfrecord_lite._wire.framing import frame_many

RNG = np.random.default_rng(14)
RECORDS = [RNG.integers(0, 40, int(n), dtype=np.uint8).tobytes() for n in RNG.integers(0, 5000, 300)]
INSTALLED = [name for name, module in LIBRARIES.items() if importlib.util.find_spec(module.split(".")[0])]


def stream() -> bytes:
    return frame_many(RECORDS)


def gzip_members(data: bytes, cuts: list[int]) -> bytes:
    edges = [0, *cuts, len(data)]
    return b"".join(zlib.compress(data[a:b], wbits=31) for a, b in itertools.pairwise(edges))


@pytest.fixture(params=INSTALLED)
def forced(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV_VAR, request.param)
    return str(request.param)


def test_the_env_var_picks_the_library(forced: str) -> None:
    assert library_name(library()) == forced


@pytest.mark.parametrize(
    "compress",
    [
        pytest.param(lambda d: zlib.compress(d, wbits=31), id="gzip"),
        pytest.param(lambda d: zlib.compress(d), id="zlib"),
        pytest.param(lambda d: gzip_members(d, [5, len(d) // 2, len(d) // 2 + 1]), id="gzip-members"),
        pytest.param(lambda d: gzip_members(d, [len(d)]) + zlib.compress(b"", wbits=31), id="empty-last-member"),
    ],
)
def test_every_library_reads_compressed_files_like_plain_ones(tmp_path: Path, forced: str, compress) -> None:
    path = tmp_path / "x.tfrecord.z"
    path.write_bytes(compress(stream()))
    assert list(tfr.iter_records(path)) == RECORDS


@pytest.mark.parametrize("kind", ["gzip", "zlib"])
def test_every_library_reads_a_member_whose_end_comes_after_a_full_read(forced: str, kind: str) -> None:
    # a read stops at its size just before a member's end, and the next read meets that end with the
    # next member after it: the stdlib then reports those bytes in both unconsumed_tail and unused_data
    size, count = 1 << 16, 6
    data = b"".join(zlib.compress(bytes(size), wbits=31 if kind == "gzip" else 15) for _ in range(count))
    inflater = Inflater(io.BytesIO(data), kind, b"")
    pieces = []
    while piece := inflater.read(size - 12):
        pieces.append(piece)
    assert b"".join(pieces) == bytes(size * count)


@pytest.mark.parametrize(
    ("damage", "error"),
    [
        (lambda z: z[:-9], tfr.TruncatedRecordError),
        (lambda z: z[:500] + bytes(b ^ 0x55 for b in z[500:600]) + z[600:], tfr.TFRecordError),
    ],
)
def test_every_library_reports_damage_as_a_record_error(tmp_path: Path, forced: str, damage, error) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(damage(zlib.compress(stream(), wbits=31)))
    with pytest.raises(error) as info:
        list(tfr.iter_records(path))
    assert info.value.path == str(path) and info.value.offset is not None


@pytest.mark.parametrize("member", [0, 1])
def test_every_library_refuses_reserved_gzip_flags_as_the_stdlib_does(tmp_path: Path, forced: str, member: int) -> None:
    # RFC 1952: a member header with a reserved FLG bit set must be refused. The stdlib's zlib (and
    # TensorFlow, which inflates with it) does; ISA-L reads past it. Found by fuzzer/fuzz.py --target gzip.
    first = zlib.compress(frame_many(RECORDS[:100]), wbits=31)
    data = bytearray(first + zlib.compress(frame_many(RECORDS[100:]), wbits=31))
    data[len(first) * member + 3] |= 0x80
    path = tmp_path / "flags.tfrecord.gz"
    path.write_bytes(bytes(data))
    with tfr.iter_records(path) as records:
        got = list(itertools.islice(records, 100 * member))
        with pytest.raises(tfr.CorruptRecordError, match="unknown header flags set") as info:
            next(records)
    assert got == RECORDS[: 100 * member]
    assert f"compressed offset {len(first) * member + 3} " in str(info.value)


def test_an_unknown_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "brotli")
    with pytest.raises(ValueError, match="isal, zlib-ng, zlib"):
        library()


@pytest.mark.parametrize(("name", "hint"), [("isal", "tfrlite[fast]"), ("zlib-ng", "pip install zlib-ng")])
def test_a_missing_forced_library_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, name: str, hint: str) -> None:
    if name in INSTALLED:  # make it missing: point its entry at a module that does not exist
        monkeypatch.setitem(LIBRARIES, name, "tfrecord_lite_no_such_module")
    _find.cache_clear()
    monkeypatch.setenv(ENV_VAR, name)
    try:
        with pytest.raises(ImportError, match=re.escape(hint)):
            library()
    finally:
        _find.cache_clear()


def test_without_the_env_var_the_best_installed_library_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert library_name(library()) == INSTALLED[0]


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_default_writes_are_the_stdlib_with_tensorflows_settings(tmp_path: Path, compression: str) -> None:
    # TensorFlow's ZlibOutputBuffer: level 6, memLevel 9; tests/end_to_end/test_tf_compat.py compares with TF itself
    path = tmp_path / "x"
    with tfr.TFRecordWriter(path, compression=compression) as writer:
        for record in RECORDS:
            writer.write(record)
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31 if compression == "gzip" else 15, 9)
    assert path.read_bytes() == deflate.compress(stream()) + deflate.flush()


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
@pytest.mark.parametrize("options", [{"level": 1}, {"level": 9}, {"fast": True}, {"fast": True, "level": 0}])
def test_level_and_fast_files_read_back(tmp_path: Path, compression: str, options: dict) -> None:
    path = tmp_path / "x"
    with tfr.TFRecordWriter(path, compression=compression, **options) as writer:
        for record in RECORDS:
            writer.write(record)
    assert list(tfr.iter_records(path)) == RECORDS
    assert zlib.decompress(path.read_bytes(), wbits=47) == stream()  # any zlib reads it
    default = tmp_path / "default"
    with tfr.TFRecordWriter(default, compression=compression) as writer:
        for record in RECORDS:
            writer.write(record)
    fast_library = library_name(library()) != "zlib"  # else fast=True deflates as the default does
    if options.get("level") is not None or fast_library:
        assert path.read_bytes() != default.read_bytes()  # no longer TensorFlow's bytes (test_tf_compat.py)


def test_a_bad_level_names_the_library(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="level=42"):
        tfr.TFRecordWriter(tmp_path / "x", compression="gzip", level=42)


def test_level_on_an_uncompressed_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="compressed files"):
        tfr.TFRecordWriter(tmp_path / "x", level=3)


def gzip_with_header_crc(data: bytes, extra: int = 65535, name: int = 10000) -> bytes:
    """One GZIP member whose header carries a header CRC (FHCRC) and is over 64 KiB long (a full
    extra field and a long file name), as RFC 1952 allows."""
    head = b"\x1f\x8b\x08" + bytes([0x02 | 0x04 | 0x08]) + b"\0\0\0\0\0\xff"
    head += struct.pack("<H", extra) + b"e" * extra + b"n" * name + b"\0"
    head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = deflate.compress(data) + deflate.flush()
    return head + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def test_every_library_reads_a_long_gzip_header_with_a_header_crc(tmp_path: Path, forced: str) -> None:
    # ISA-L refused such a header when a 64 KiB step of input cut it; the stdlib reads it
    first = gzip_with_header_crc(frame_many(RECORDS[:100]))
    data = first + gzip_with_header_crc(frame_many(RECORDS[100:]), extra=70, name=100_000)
    assert gzip.decompress(data) == frame_many(RECORDS)
    path = tmp_path / "long-header.tfrecord.gz"
    path.write_bytes(data)
    assert list(tfr.iter_records(path)) == RECORDS
    with tfr.TFRecordFile(path) as f:  # random access, from the seek points of its new sidecar
        assert f[150] == RECORDS[150] and f[0] == RECORDS[0] and len(f) == len(RECORDS)
    assert list(tfr.iter_records(path)) == RECORDS  # now with a sidecar: inflated from its points
