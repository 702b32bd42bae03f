# Label maps read from the files people have: JSON, a text file of class names (ids by line
# order) or of `id name` lines, a CSV file with an id,name header in either order; ids checked to
# be integers, every error naming the file and the line.
from __future__ import annotations

from pathlib import Path

import pytest

from tfrecord_lite import images
from tfrecord_lite.images import check_label_map

CLASSES = {"cat": 0, "dog": 1, "sea lion": 2}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("map.json", '{"cat": 0, "dog": 1, "sea lion": 2}'),
        ("label_map.txt", "cat\ndog\nsea lion\n\n"),
        ("label_map.txt", "0 cat\n1 dog\n\n2 sea lion\n"),
        ("labels.csv", "id,name\n0,cat\n1,dog\n2,sea lion\n"),
        ("labels.csv", "name,id\ncat,0\ndog,1\n\nsea lion,2\n"),
        ("labels", '\ufeff{"cat": 0, "dog": 1, "sea lion": 2}'),  # no extension, a byte order mark
    ],
)
def test_every_format_gives_the_same_map(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert images.load_label_map(path) == CLASSES


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("m.json", '{"cat": "0"}', r"label map .*m.json: class 'cat' has the id '0' \(str\); .*write 0 rather"),
        ("m.json", '{"cat": -1}', "ids are integers >= 0"),
        ("m.json", '{"cat": 0, "dog": 0}', "classes 'cat' and 'dog' share the id 0"),
        ("m.json", '["cat"]', "maps class names to integer ids, found list"),
        ("m.json", '{"cat": 0,\n "dog" 1}', r"m.json, line 2: not valid JSON"),
        ("m.txt", "cat\n\ndog\n", r"m.txt, line 2: empty line"),
        ("m.txt", "0 cat\ndog\n", r"m.txt, line 2: expected `id name` as on line 1, found 'dog'"),
        ("m.txt", "cat\ncat\n", r"m.txt, line 2: class 'cat' is on line 1 already"),
        ("m.txt", "0 cat\n0 dog\n", r"m.txt, line 2: id 0 is on line 1 already"),
        ("m.txt", "", "the file is empty"),
        ("m.csv", "cat,0\n", r"m.csv, line 1: expected a header `id,name`"),
        ("m.csv", "id,name\n0,cat\nx,dog\n", r"m.csv, line 3: expected id,name with an integer id"),
    ],
)
def test_bad_label_maps_name_the_file_and_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        images.load_label_map(path)


def test_a_mapping_is_checked_the_same_way() -> None:
    assert check_label_map({"cat": 3}) == {"cat": 3}
    with pytest.raises(ValueError, match=r"class 'cat' has the id '0' \(str\)"):
        check_label_map({"cat": "0"})
    with pytest.raises(ValueError, match="has the id True"):
        check_label_map({"cat": True})
