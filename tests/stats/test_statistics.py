# tfr.statistics against numbers computed here, independently: every record decoded one by one with
# tfr.decode_example / decode_sequence_example, reduced with plain numpy. Real files: plain, GZIP, a
# folder of shards; missing features, NaNs, infinities, empty lists, real JPEG / PNG images (Pillow).
from __future__ import annotations

import io
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import tfrecord_lite as tfr


def _examples(n: int, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        x = rng.standard_normal(int(rng.integers(0, 4))).astype(np.float32)
        if i % 11 == 0 and len(x):
            x[0] = np.nan
        if i % 97 == 0 and len(x):
            x[-1] = np.inf
        features = {
            "label": int(rng.integers(0, 6)),
            "x": x,
            "ids": rng.integers(-5, 5, int(rng.integers(0, 3))).astype(np.int64),
            "name": [b"cat", b"dog", b"bird", "ünï".encode()][i % 4],
        }
        if i % 5 == 0:
            del features["label"]
        if i % 3 == 0:
            features["tags"] = [b"t%d" % (i % 7)] * (i % 3 + 1)
        out.append(tfr.encode_example(features))
    return out


def _write(path, records, compression=None):
    with tfr.TFRecordWriter(str(path), compression=compression) as writer:
        for record in records:
            writer.write(record)
    return str(path)


def _columns(records: list[bytes]) -> dict[str, dict]:
    """Per feature: the records that have it, value counts, and all values, from decode_example."""
    out: dict[str, dict] = {}
    for record in records:
        for key, value in tfr.decode_example(record).items():
            entry = out.setdefault(key, {"present": 0, "counts": [], "values": []})
            flat = list(value) if isinstance(value, list) else np.asarray(value).ravel().tolist()
            entry["present"] += 1
            entry["counts"].append(len(flat))
            entry["values"] += flat
    return out


def _check_numbers(stats, values):
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    assert stats.count == len(values)
    assert stats.nans == int(np.isnan(values).sum())
    assert stats.infinities == int(np.isinf(values).sum())
    assert stats.zeros == int((values == 0).sum())
    numbers = values[~np.isnan(values)]
    assert stats.min == numbers.min() and stats.max == numbers.max()
    assert stats.mean == pytest.approx(finite.mean(), rel=1e-9, abs=1e-12)
    assert stats.std == pytest.approx(finite.std(), rel=1e-9, abs=1e-12)
    assert stats.exact
    for q, v in stats.quantiles:
        assert v == pytest.approx(np.quantile(finite, q))
    assert sum(stats.histogram.counts) == len(finite)


def _check_dataset(stats, records):
    expected = _columns(records)
    assert stats.records == len(records)
    assert stats.bytes == sum(map(len, records))
    assert sorted(f.name for f in stats) == sorted(expected)
    for feature in stats:
        want = expected[feature.name]
        assert feature.present == want["present"]
        assert feature.missing == len(records) - want["present"]
        assert feature.value_counts.min == min(want["counts"])
        assert feature.value_counts.max == max(want["counts"])
        assert feature.value_counts.mean == pytest.approx(np.mean(want["counts"]))
        if feature.kind == "bytes":
            counts = Counter(want["values"])
            assert feature.categories.distinct == len(counts) and feature.categories.distinct_exact
            assert {(t.value, t.count) for t in feature.categories.top} == set(counts.most_common(20))
            lengths = [len(v) for v in want["values"]]
            assert (feature.lengths.min, feature.lengths.max) == (min(lengths), max(lengths))
        elif feature.kind in ("int64", "float"):
            _check_numbers(feature.numbers, want["values"])
    return expected


def test_examples_match_numpy_over_decoded_records(tmp_path):
    records = _examples(3000)
    stats = tfr.statistics(_write(tmp_path / "a.tfrecord", records), batch_size=700)
    _check_dataset(stats, records)
    assert stats.kind == "example" and stats.complete and stats.compression == ("",)
    label = stats["label"]
    assert label.kind == "int64"
    want = Counter(_columns(records)["label"]["values"])
    assert {(t.value, t.count) for t in label.categories.top} == set(want.items())
    assert stats["x"].numbers.nans > 0 and stats["x"].numbers.infinities > 0
    assert stats["x"].value_counts.min == 0  # empty lists count as present with no values


def test_gzip_folder_of_shards_and_max_records(tmp_path):
    folder = tmp_path / "shards"
    folder.mkdir()
    records = _examples(2500, seed=1)
    for k in range(3):
        _write(folder / f"part-{k}.tfrecord.gz", records[k * 1000 : (k + 1) * 1000], "gzip")
    stats = tfr.statistics(str(folder))
    _check_dataset(stats, records)
    assert len(stats.files) == 3 and set(stats.compression) == {"gzip"}
    first = tfr.statistics(str(folder), max_records=1234, batch_size=500)
    assert first.records == 1234 and not first.complete
    _check_dataset(first, records[:1234])
    assert tfr.statistics(str(folder), max_records=2500).complete


def test_features_selects_keys(tmp_path):
    path = _write(tmp_path / "a.tfrecord", _examples(200))
    stats = tfr.statistics(path, features=["label", "name"])
    assert [f.name for f in stats] == ["label", "name"]
    with pytest.raises(tfr.FeatureError, match="'lable': no record has this feature; did you mean 'label'"):
        tfr.statistics(path, features=["lable", "name"])
    with pytest.raises(TypeError, match="collection of feature names"):
        tfr.statistics(path, features="label")


def _image(fmt: str, width: int, height: int, seed: int) -> bytes:
    image = pytest.importorskip("PIL.Image")
    pixels = np.random.default_rng(seed).integers(0, 255, (height, width, 3), dtype=np.uint8)
    out = io.BytesIO()
    image.fromarray(pixels).save(out, format=fmt)
    return out.getvalue()


def test_images_formats_and_sizes_from_headers(tmp_path):
    sizes = [(8 + k % 5, 6 + k % 3) for k in range(24)]
    records = []
    for k, (w, h) in enumerate(sizes):
        fmt = ("JPEG", "PNG", "GIF", "WEBP", "BMP")[k % 5] if k < 20 else "JPEG"
        records.append(tfr.encode_example({"image/encoded": _image(fmt, w, h, k), "class": b"c%d" % (k % 3)}))
    records.append(tfr.encode_example({"image/encoded": b"not an image at all", "class": b"c0"}))
    stats = tfr.statistics(_write(tmp_path / "img.tfrecord", records))
    image = stats["image/encoded"].image
    assert image is not None and image.images == len(sizes) and image.not_images == 1
    assert image.formats == {"jpeg": 8, "png": 4, "gif": 4, "webp": 4, "bmp": 4}
    image_module = pytest.importorskip("PIL.Image")
    decoded = [image_module.open(io.BytesIO(tfr.decode_example(r)["image/encoded"][0])).size for r in records[:-1]]
    assert decoded == sizes  # Pillow agrees with the sizes written
    assert (image.width.min, image.width.max) == (min(w for w, _ in sizes), max(w for w, _ in sizes))
    assert {(w, h, c) for w, h, c in image.sizes} == {(w, h, c) for (w, h), c in Counter(sizes).items()}
    assert stats["class"].image is None


def _sequences(n: int) -> list[bytes]:
    rng = np.random.default_rng(5)
    out = []
    for i in range(n):
        steps = int(rng.integers(0, 5))
        lists = {
            "emb": [rng.standard_normal(2).astype(np.float32) for _ in range(steps)],
            "tok": [rng.integers(0, 9, int(rng.integers(0, 3))).astype(np.int64) for _ in range(steps)],
        }
        if i % 4 == 0:
            del lists["tok"]
        out.append(tfr.encode_sequence_example({"user": i % 13, "name": b"u%d" % (i % 5)}, lists))
    return out


def test_sequence_examples_per_step_values_and_lengths(tmp_path):
    records = _sequences(400)
    stats = tfr.statistics(_write(tmp_path / "seq.tfrecord.gz", records, "gzip"), batch_size=128)
    assert stats.kind == "sequence_example"
    decoded = [tfr.decode_sequence_example(r) for r in records]
    for key in ("emb", "tok"):
        feature = stats[key]
        assert feature.section == "feature_lists"
        have = [lists[key] for _, lists in decoded if key in lists]
        assert feature.present == len(have)
        lengths = [len(steps) for steps in have]
        assert (feature.sequence_lengths.min, feature.sequence_lengths.max) == (min(lengths), max(lengths))
        assert feature.sequence_lengths.mean == pytest.approx(np.mean(lengths))
        steps = [np.asarray(step).ravel() for steps in have for step in steps]
        assert feature.value_counts.count == len(steps)
        assert feature.value_counts.max == max(len(s) for s in steps)
        _check_numbers(feature.numbers, np.concatenate(steps))
    user = stats["user"]
    assert user.section == "context" and user.present == len(records)
    _check_numbers(user.numbers, [int(ctx["user"][0]) for ctx, _ in decoded])


def test_dict_and_json_round_trip(tmp_path):
    import json

    stats = tfr.statistics(_write(tmp_path / "a.tfrecord", _examples(300)))
    data = json.loads(stats.to_json())
    assert data == json.loads(json.dumps(stats.to_dict()))
    assert data["format"] == "tfrecord_lite.statistics/1" and data["records"] == 300
    x = next(f for f in data["features"] if f["name"] == "x")
    assert x["numbers"]["max"] == "inf" and x["numbers"]["nans"] > 0
    assert len(repr(stats)) < 200 and "300 records" in repr(stats)


def test_damaged_file_raises_or_skips(tmp_path):
    path = _write(tmp_path / "a.tfrecord", _examples(100))
    data = bytearray(Path(path).read_bytes())
    data[len(data) // 2] ^= 0xFF
    Path(path).write_bytes(bytes(data))
    with pytest.raises(tfr.CorruptRecordError):
        tfr.statistics(path)
    stats = tfr.statistics(path, on_error="skip")
    assert stats.skipped == 1 and 90 <= stats.records < 100


def test_empty_and_kind_change(tmp_path):
    empty = tfr.statistics(_write(tmp_path / "e.tfrecord", []))
    assert empty.records == 0 and empty.kind == "empty" and not empty.features
    assert "<svg" not in empty.to_html() and empty.to_html().startswith('<div class="tfrls">')
    mixed = [tfr.encode_example({"a": 1})] * 3 + [tfr.encode_example({"a": b"x"})] * 3
    with pytest.raises(tfr.FeatureError, match="'a'"):
        tfr.statistics(_write(tmp_path / "m.tfrecord", mixed), batch_size=3)


def test_sampled_quantiles_stay_close(tmp_path):
    values = np.random.default_rng(3).standard_normal(200_000).astype(np.float32)
    records = [tfr.encode_example({"v": values[i : i + 100]}) for i in range(0, len(values), 100)]
    stats = tfr.statistics(_write(tmp_path / "big.tfrecord", records))
    v = stats["v"].numbers
    assert not v.exact and v.sample_size == 1 << 15 and v.count == len(values)
    assert v.mean == pytest.approx(float(values.astype(np.float64).mean()), abs=1e-9)
    for q, got in v.quantiles:
        rank = float(np.mean(values <= got))
        assert abs(rank - q) < 0.01 or q in (0.0, 1.0), (q, got, rank)
    assert math.isclose(sum(v.histogram.counts), len(values))


def test_url_input(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    records = _examples(200, seed=7)
    with fsspec.open("memory://stats-test/a.tfrecord.gz", "wb") as out:
        out.write(Path(_write(tmp_path / "a.tfrecord.gz", records, "gzip")).read_bytes())
    stats = tfr.statistics("memory://stats-test/a.tfrecord.gz")
    _check_dataset(stats, records)
    assert stats.files == ("memory://stats-test/a.tfrecord.gz",) and stats.compression == ("gzip",)


def test_progress_bar_counts_records(tmp_path, capsys):
    pytest.importorskip("tqdm")
    path = _write(tmp_path / "a.tfrecord", _examples(300))
    assert tfr.statistics(path, progress=True).records == 300
    assert "statistics:" in capsys.readouterr().err  # the bar was drawn (and cleared: leave=False)
