# pack-images over an input tree with links leading out of it: a class folder and an image that
# are links to files elsewhere on the machine were packed; they are now left out with a warning,
# unless follow_symlinks (--follow-symlinks) asks for them. Links inside the tree still count.
from __future__ import annotations

import logging

import pytest

import tfrecord_lite as tfr
from tfrecord_lite.images import pack_images, scan_image_folder

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b55"
    "0000000a49444154789c63600000000200015e2b7c5d0000000049454e44ae426082"
)


@pytest.fixture
def tree(tmp_path):
    outside = tmp_path / "outside"
    (outside / "secret").mkdir(parents=True)
    (outside / "secret" / "s.png").write_bytes(PNG)
    (outside / "x.png").write_bytes(PNG)
    root = tmp_path / "photos"
    (root / "cat").mkdir(parents=True)
    (root / "cat" / "a.png").write_bytes(PNG)
    (root / "cat" / "out.png").symlink_to(outside / "x.png")  # an image out of the tree
    (root / "cat" / "in.png").symlink_to(root / "cat" / "a.png")  # inside: kept
    (root / "dog").symlink_to(outside / "secret")  # a class folder out of the tree
    return root


def test_links_out_of_the_tree_are_left_out_with_a_warning(tree, caplog):
    with caplog.at_level(logging.WARNING, logger="tfrecord_lite"):
        found = scan_image_folder(tree)
    assert sorted((p.rsplit("/", 1)[1], c) for p, c in found) == [("a.png", "cat"), ("in.png", "cat")]
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "out.png" in warned and "dog" in warned


def test_follow_symlinks_packs_them(tree, tmp_path):
    result = pack_images(tree, prefix=tmp_path / "out" / "p", follow_symlinks=True, shuffle=False)
    assert result.written == 4
    result = pack_images(tree, prefix=tmp_path / "out2" / "p", shuffle=False)
    assert result.written == 2
    assert tfr.count_records(str(tmp_path / "out2" / "p-*")) == 2
