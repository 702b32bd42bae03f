"""A damaged GZIP / ZLIB stream: every record inflated before the damage comes out first, then
the error names the compressed and uncompressed offsets; verify counts those records as good."""

from __future__ import annotations

import re
import shutil
import zlib
from pathlib import Path

import pytest
from crc32c import crc32c

import tfrecord_lite as tfr
from tests._cli import run_cli
from tests._reading import read_until_error, tf_read_until_error
from tests.conftest import DATA_DIR
from tfrecord_lite._records.verify import verify_file

CORPUS = DATA_DIR / "tfx" / "sequence-eval.tfrecord.gz"
DAMAGE = re.compile(r"(GZIP|ZLIB) stream damaged at compressed offset (\d+) \(uncompressed (\d+)\)")


def inflatable_prefix(data: bytes, wbits: int) -> bytes:
    """What a decompressor fed one byte at a time produces before it reports an error."""
    d = zlib.decompressobj(wbits)
    out = []
    for i in range(len(data)):
        try:
            out.append(d.decompress(data[i : i + 1]))
        except zlib.error:
            break
    return b"".join(out)


def masked_crc(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def complete_records(stream: bytes) -> tuple[list[bytes], bool]:
    """The payloads of the intact records at the start of `stream` (a prefix of a record
    stream), and whether they end where the data does (rather than at a damaged record)."""
    records, pos = [], 0
    while pos + 12 <= len(stream):
        if masked_crc(stream[pos : pos + 8]) != int.from_bytes(stream[pos + 8 : pos + 12], "little"):
            return records, False
        length = int.from_bytes(stream[pos : pos + 8], "little")
        if pos + 16 + length > len(stream):
            break
        payload = stream[pos + 12 : pos + 12 + length]
        if masked_crc(payload) != int.from_bytes(stream[pos + 12 + length : pos + 16 + length], "little"):
            return records, False
        records.append(payload)
        pos += 16 + length
    return records, True


def damaged_copy(source: bytes, target: Path, wbits: int) -> tuple[Path, bytes]:
    """A copy of `source` with one byte flipped from the middle on, at the first place where
    the decompressor itself reports the damage before it has inflated any wrong record (a flip
    can also inflate to garbage that only the records' CRCs notice); and the original."""
    intact, _ = complete_records(zlib.decompress(source, wbits))
    for at in range(len(source) // 2, len(source) - 16):
        data = bytearray(source)
        data[at] ^= 0xFF
        try:
            zlib.decompress(bytes(data), wbits)
        except zlib.error as err:
            if "incorrect data check" in str(err) or "incorrect length check" in str(err):
                continue
            before, clean = complete_records(inflatable_prefix(bytes(data), wbits))
            if before and clean and before == intact[: len(before)]:
                target.write_bytes(bytes(data))
                return target, source
    raise AssertionError("no flip found that breaks the stream")


@pytest.fixture(scope="module", params=["gzip", "zlib"])
def damaged(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[bytes], str]:
    """(damaged file, records of the intact file, compression); made once per module."""
    compression = request.param
    tmp_path = tmp_path_factory.mktemp(compression)
    intact = tmp_path / f"intact.{compression}"
    if compression == "gzip":
        shutil.copy(CORPUS, intact)
    else:
        with tfr.TFRecordWriter(intact, compression="zlib") as writer:
            for record in tfr.iter_records(CORPUS):
                writer.write(record)
    path, _ = damaged_copy(
        intact.read_bytes(), tmp_path / f"damaged.{compression}", 31 if compression == "gzip" else 15
    )
    return path, list(tfr.iter_records(intact)), compression


def test_records_before_the_damage_come_first(damaged: tuple[Path, list[bytes], str]) -> None:
    path, intact, compression = damaged
    wbits = 31 if compression == "gzip" else 15
    expected, _ = complete_records(inflatable_prefix(path.read_bytes(), wbits))
    assert 0 < len(expected) < len(intact)
    got, err = read_until_error(path)
    assert got == expected == intact[: len(expected)]
    assert isinstance(err, tfr.CorruptRecordError) and err.path == str(path)
    match = DAMAGE.search(str(err))
    assert match and match.group(1) == compression.upper(), err
    uncompressed = int(match.group(3))
    assert uncompressed == len(inflatable_prefix(path.read_bytes(), wbits))
    assert err.offset == sum(16 + len(r) for r in expected)  # the record the damage cut
    assert tfr.count_records(path.parent / "intact.*") == len(intact)
    with pytest.raises(tfr.CorruptRecordError, match="stream damaged"):
        tfr.count_records(path)


def test_verify_counts_them_as_good_and_says_where_the_stream_broke(damaged: tuple[Path, list[bytes], str]) -> None:
    path = damaged[0]
    good, _ = read_until_error(path)
    report = verify_file(path)
    assert report.records == len(good) and not report.ok
    assert DAMAGE.search(report.damage[-1].reason) and report.damage[-1].end is None
    proc = run_cli("verify", str(path))
    assert proc.returncode == 1 and f"{len(good)} good records" in proc.stdout and DAMAGE.search(proc.stdout)
    proc = run_cli("head", "-n", str(len(good) + 5), "--raw", str(path))
    assert proc.returncode == 1 and proc.stdout.count(f"{path} #") == len(good), proc.stderr
    assert DAMAGE.search(proc.stderr)


def test_example_batches_before_the_damage(damaged: tuple[Path, list[bytes], str]) -> None:
    path, _, _ = damaged
    good, _ = read_until_error(path)
    spec = {"x": tfr.VarLenFeature("int64")}
    batches = tfr.iter_example_batches(path, features=spec, batch_size=7)
    rows = sum(len(next(batches)["x"].row_lengths()) for _ in range(len(good) // 7))
    rows += len(next(batches)["x"].row_lengths()) if len(good) % 7 else 0
    with pytest.raises(tfr.CorruptRecordError, match="stream damaged"):
        next(batches)
    assert rows == len(good)


@pytest.mark.tf
def test_tensorflow_yields_the_records_before_the_damage_too(damaged: tuple[Path, list[bytes], str]) -> None:
    path, _, compression = damaged
    ours, _ = read_until_error(path)
    theirs, err = tf_read_until_error(path, compression.upper(), limit=len(ours) + 1)
    assert err is not None, "TensorFlow read past the damage"
    # TensorFlow inflates its input in 256 KiB buffers and loses the output of the buffer that
    # fails: what it yields is a prefix of ours (for this 70 KB file, nothing at all)
    assert len(theirs) <= len(ours) and theirs == ours[: len(theirs)]
