"""The image functions that read records take the reader options and mean by them what every reader means
(docs/conventions.md): over real packed shards, GZIP and ZLIB ones recognised or declared, a record with
a flipped payload byte raising, trusted, or skipped (max_skipped bounding the skips), and a record
longer than max_record_bytes refused; the shards pack_images writes are compressed as its compression
says, those remove_images writes as its output_compression says."""

from __future__ import annotations

import inspect
import logging
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL")
from PIL import Image

import tfrecord_lite as tfr
from tfrecord_lite import images
from tfrecord_lite._storage.files import sniff_file
from tfrecord_lite._stream.options import READ_OPTIONS

NAMES = ["cat/0.png", "cat/1.png", "dog/2.png", "dog/3.png"]
DAMAGED = 1  # the record whose payload byte is flipped (in an uncompressed shard)


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    """An ImageFolder tree of four small PNGs, two classes."""
    root = tmp_path / "photos"
    for i, name in enumerate(NAMES):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        pixels = np.random.default_rng(i).integers(0, 256, size=(6, 5, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(root / name)
    return root


def pack(photos: Path, prefix: Path, compression: str | None = None) -> list[str]:
    """The shard (one) of the photos packed in name order."""
    result = images.pack_images(photos, prefix=prefix, num_shards=1, shuffle=False, compression=compression)
    return result.paths


def flip_payload_byte(path: str, record: int) -> None:
    """Flip one byte in the middle of an uncompressed record's payload: its CRC no longer matches."""
    with tfr.TFRecordFile(path, index=False) as f:
        start, length = f.offset(record), len(f[record])
    at = start + 12 + length // 2
    data = bytearray(Path(path).read_bytes())
    data[at] ^= 0xFF
    Path(path).write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["iter_image_records", "unpack_images", "remove_images"])
def test_the_record_readers_take_every_reader_option(name: str) -> None:
    params = inspect.signature(getattr(images, name)).parameters
    for option, (annotation, default) in READ_OPTIONS.items():
        assert (str(params[option].annotation), params[option].default) == (annotation, default)
        assert params[option].kind is inspect.Parameter.KEYWORD_ONLY


def test_pack_images_reads_no_records_and_says_what_it_writes(photos: Path, tmp_path: Path) -> None:
    params = inspect.signature(images.pack_images).parameters
    assert set(params) & set(READ_OPTIONS) == {"compression", "storage_options"}
    assert params["compression"].default is None and params["on_bad_image"].default == "raise"
    for kind in ("gzip", "zlib"):
        (shard,) = pack(photos, tmp_path / kind / "pets", kind.upper())
        assert sniff_file(shard) == kind and shard.endswith(".tfrecord." + {"gzip": "gz", "zlib": "zlib"}[kind])


@pytest.mark.parametrize("kind", ["gzip", "zlib"])
def test_compressed_shards_read_recognised_or_declared(photos: Path, tmp_path: Path, kind: str) -> None:
    shards = pack(photos, tmp_path / "out" / "pets", kind)
    for compression in ("auto", kind, kind.upper()):
        assert [r.filename for r in images.iter_image_records(shards, compression=compression)] == NAMES
    with pytest.raises(ValueError, match=f"is {kind.upper()}-compressed, but compression=None was given"):
        list(images.iter_image_records(shards, compression=None))
    restored = tmp_path / "restored"
    assert images.unpack_images(shards, destination=restored, compression=kind) == 4
    assert sorted(str(p.relative_to(restored)) for p in restored.rglob("*.png")) == NAMES


def test_a_damaged_record_raises_is_trusted_or_skipped(
    photos: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (shard,) = pack(photos, tmp_path / "out" / "pets")
    flip_payload_byte(shard, DAMAGED)
    with pytest.raises(tfr.CorruptRecordError, match=r"pets-00000-of-00001\.tfrecord"):
        list(images.iter_image_records(shard))
    trusted = list(images.iter_image_records(shard, verify=False))
    assert [r.filename for r in trusted] == NAMES  # the flipped byte is inside the image bytes
    with caplog.at_level(logging.WARNING):
        kept = [r.filename for r in images.iter_image_records(shard, on_error="skip")]
    assert kept == NAMES[:DAMAGED] + NAMES[DAMAGED + 1 :]
    assert "pets-00000-of-00001.tfrecord" in caplog.text
    twin = str(tmp_path / "twin.tfrecord")
    Path(twin).write_bytes(Path(shard).read_bytes())
    assert len(list(images.iter_image_records([shard, twin], on_error="skip", max_skipped=2))) == 6
    with pytest.raises(tfr.TFRecordError, match="max_skipped=1"):
        list(images.iter_image_records([shard, twin], on_error="skip", max_skipped=1))  # counted over both
    told: list[Exception] = []
    assert len(list(images.iter_image_records(shard, on_error=told.append))) == 3 and len(told) == 1


def test_unpack_and_remove_skip_a_damaged_record_when_asked(photos: Path, tmp_path: Path) -> None:
    (shard,) = pack(photos, tmp_path / "out" / "pets")
    flip_payload_byte(shard, DAMAGED)
    with pytest.raises(tfr.CorruptRecordError):
        images.unpack_images(shard, destination=tmp_path / "strict")
    assert images.unpack_images(shard, destination=tmp_path / "lenient", on_error="skip") == 3
    with pytest.raises(tfr.CorruptRecordError):
        images.remove_images(shard, prefix=tmp_path / "strict" / "pets", filenames={"dog/3.png"})
    kept = images.remove_images(
        shard, prefix=tmp_path / "v2" / "pets", filenames={"dog/3.png"}, on_error="skip", output_compression="gzip"
    )
    assert (kept.written, kept.removed) == (2, 1) and kept.label_map == {"cat": 0, "dog": 1}
    (copy,) = kept.paths
    assert copy.endswith(".tfrecord.gz") and sniff_file(copy) == "gzip"
    assert [r.filename for r in images.iter_image_records(copy)] == ["cat/0.png", "dog/2.png"]


def test_remove_images_reads_the_compression_it_is_given(photos: Path, tmp_path: Path) -> None:
    shards = pack(photos, tmp_path / "out" / "pets", "zlib")
    with pytest.raises(ValueError, match="is ZLIB-compressed, but compression='gzip' was given"):
        images.remove_images(shards, prefix=tmp_path / "none" / "pets", compression="gzip")
    kept = images.remove_images(shards, prefix=tmp_path / "v2" / "pets", compression="zlib", filenames={"cat/0.png"})
    assert kept.written == 3 and sniff_file(kept.paths[0]) == ""  # written uncompressed by default


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_a_record_longer_than_max_record_bytes_is_refused(
    photos: Path, tmp_path: Path, compression: str | None
) -> None:
    shards = pack(photos, tmp_path / "out" / "pets", compression)
    longest = max(len(r) for r in tfr.iter_records(shards))
    with pytest.raises(tfr.RecordTooLargeError, match=f"more than max_record_bytes={longest - 1}"):
        list(images.iter_image_records(shards, max_record_bytes=longest - 1))
    with pytest.raises(tfr.RecordTooLargeError):
        images.unpack_images(shards, destination=tmp_path / "restored", max_record_bytes=longest - 1)
    with pytest.raises(tfr.RecordTooLargeError):
        images.remove_images(shards, prefix=tmp_path / "v2" / "pets", max_record_bytes=longest - 1)
    assert len(list(images.iter_image_records(shards, max_record_bytes=longest))) == 4


def test_a_record_without_an_image_names_its_file_and_number(tmp_path: Path) -> None:
    first, second = str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")
    for path, labels in ((first, [1]), (second, [2, 3])):
        with tfr.TFRecordWriter(path) as writer:
            for label in labels:
                writer.write_example({"image/encoded": b"\x89PNG", "image/class/label": label})
    with tfr.TFRecordWriter(second, append=True) as writer:
        writer.write_example({"label": 4})
    with pytest.raises(tfr.FeatureError, match=rf"record 2 of {second}"):
        list(images.iter_image_records([first, second]))
