"""Re-runs are safe: `unpack-images` into a folder that holds files refuses unless told to
overwrite or skip what exists (a second run used to add a suffixed copy of every image), and an
append renames every sidecar of a renumbered shard (DALI's `.idx`, the `tfrecord` package's
`.tfindex`), not only the index sidecar."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL")
from PIL import Image

from tests._cli import run_cli


def tree(folder: Path) -> dict[str, bytes]:
    return {
        os.path.relpath(os.path.join(d, f), folder): Path(d, f).read_bytes()
        for d, _, files in os.walk(folder)
        for f in files
    }


@pytest.fixture
def packed(tmp_path: Path) -> str:
    for name, seed in (("ant/a.png", 1), ("ant/b.png", 2), ("bee/a.png", 3)):
        pixels = np.random.default_rng(seed).integers(0, 256, size=(4, 6, 3), dtype=np.uint8)
        (tmp_path / "photos" / name).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels, mode="RGB").save(tmp_path / "photos" / name, format="PNG")
    prefix = str(tmp_path / "packed" / "bugs")
    assert run_cli("pack-images", str(tmp_path / "photos"), prefix).returncode == 0
    return prefix + "-*"


def test_unpacking_twice_is_refused_overwritten_or_skipped(packed: str, tmp_path: Path) -> None:
    out = tmp_path / "restored"
    first = run_cli("unpack-images", packed, "-o", str(out), shell=True)
    assert first.returncode == 0, first.stderr
    once = tree(out)
    assert len(once) == 3

    again = run_cli("unpack-images", packed, "-o", str(out), shell=True)
    assert again.returncode == 2
    assert "already holds files" in again.stderr and "--overwrite" in again.stderr and "--skip-existing" in again.stderr
    assert tree(out) == once

    (out / "ant" / "a.png").write_bytes(b"changed")
    overwritten = run_cli("unpack-images", packed, "-o", str(out), "--overwrite", shell=True)
    assert overwritten.returncode == 0, overwritten.stderr
    assert tree(out) == once

    (out / "bee" / "a.png").unlink()
    (out / "ant" / "b.png").write_bytes(b"kept")
    skipped = run_cli("unpack-images", packed, "-o", str(out), "--skip-existing", shell=True)
    assert skipped.returncode == 0 and "wrote 1 image" in skipped.stderr
    assert tree(out) == {**once, os.path.join("ant", "b.png"): b"kept"}

    both = run_cli("unpack-images", packed, "-o", str(out), "--overwrite", "--skip-existing", shell=True)
    assert both.returncode == 2


def test_an_append_renames_every_sidecar_of_a_shard(tmp_path: Path) -> None:
    import tfrecord_lite as tfr
    from tfrecord_lite.compat.tfrecord.tools.tfrecord2idx import create_index

    photos = tmp_path / "photos"
    for i in range(8):
        pixels = np.random.default_rng(i).integers(0, 256, size=(4, 6, 3), dtype=np.uint8)
        (photos / "ant").mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels, mode="RGB").save(photos / "ant" / f"{i}.png", format="PNG")
    prefix = tmp_path / "out" / "bugs"
    assert run_cli("pack-images", str(photos), str(prefix), "--shards", "4").returncode == 0
    shards = sorted(str(p) for p in (tmp_path / "out").glob("bugs-*.tfrecord"))
    assert len(shards) == 4 and all(s.endswith("-of-00004.tfrecord") for s in shards)
    for shard in shards:
        tfr.write_text_index(shard, destination=shard + ".idx")
        create_index(shard, os.path.splitext(shard)[0] + ".tfindex")
    texts = {os.path.basename(s).replace("-of-00004", ""): Path(s + ".idx").read_text() for s in shards}

    (photos / "bee").mkdir()
    Image.fromarray(np.zeros((4, 6, 3), np.uint8), mode="RGB").save(photos / "bee" / "new.png", format="PNG")
    appended = run_cli("pack-images", str(photos), str(prefix), "--append")
    assert appended.returncode == 0, appended.stderr
    left = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert not [name for name in left if "-of-00004" in name], left
    for shard in sorted(str(p) for p in (tmp_path / "out").glob("bugs-*-of-00005.tfrecord"))[:4]:
        assert Path(shard + ".idx").read_text() == texts[os.path.basename(shard).replace("-of-00005", "")]
        assert os.path.exists(os.path.splitext(shard)[0] + ".tfindex")


def test_remove_images_refuses_names_no_record_has(packed: str, tmp_path: Path) -> None:
    out = tmp_path / "filtered" / "bugs"
    typo = run_cli("remove-images", packed, "-o", str(out), "--class", "ant", "--class", "bea", shell=True)
    assert typo.returncode == 1
    assert "no record has the class 'bea'; did you mean 'bee'?" in typo.stderr
    assert not out.parent.exists() or not list(out.parent.iterdir())
    missing = run_cli("remove-images", packed, "-o", str(out), "--filename", "ant/c.png", shell=True)
    assert missing.returncode == 1 and "no record has the image/filename 'ant/c.png'" in missing.stderr
    done = run_cli("remove-images", packed, "-o", str(out), "--class", "bee", shell=True)
    assert done.returncode == 0 and "kept 2 images, removed 1" in done.stderr


def test_statistics_of_a_feature_no_record_has_is_an_error(tmp_path: Path) -> None:
    import tfrecord_lite as tfr

    path = tmp_path / "a.tfrecord"
    with tfr.TFRecordWriter(str(path)) as writer:
        writer.write_example({"label": 1, "image": b"x"})
    typo = run_cli("stats", str(path), "--features", "lable,image")
    assert typo.returncode == 1
    assert "feature 'lable': no record has this feature; did you mean 'label'?" in typo.stderr
    assert run_cli("stats", str(path), "--features", "label,image").returncode == 0


def test_pack_images_stores_under_the_keys_asked_for(tmp_path: Path) -> None:
    import tfrecord_lite as tfr

    photos = tmp_path / "photos"
    for name, seed in (("ant/a.png", 1), ("bee/b.png", 2)):
        pixels = np.random.default_rng(seed).integers(0, 256, size=(4, 6, 3), dtype=np.uint8)
        (photos / name).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels, mode="RGB").save(photos / name, format="PNG")
    prefix = str(tmp_path / "out" / "bugs")
    keys = ("--image-key", "image", "--label-key", "label", "--text-key", "label_name")
    done = run_cli("pack-images", str(photos), prefix, *keys)
    assert done.returncode == 0, done.stderr
    (shard,) = (tmp_path / "out").glob("bugs-*.tfrecord")
    spec = {"image": tfr.FixedLenFeature([], "bytes"), "label": tfr.FixedLenFeature([], "int64")}
    spec["label_name"] = tfr.FixedLenFeature([], "bytes")
    rows = [tfr.decode_example(r, spec) for r in tfr.iter_records(str(shard))]
    assert sorted((row["label_name"], int(row["label"])) for row in rows) == [(b"ant", 0), (b"bee", 1)]
    assert "image/encoded" not in tfr.decode_example(next(iter(tfr.iter_records(str(shard)))))

    (photos / "bee" / "c.png").write_bytes((photos / "bee" / "b.png").read_bytes()[:-1] + b"\x00")
    appended = run_cli("pack-images", str(photos), prefix, "--append", *keys, "--skip-bad")
    assert appended.returncode == 0, appended.stderr
