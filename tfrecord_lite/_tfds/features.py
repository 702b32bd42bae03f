"""TensorFlow Datasets' feature connectors, read from a folder's features.json into a tree of
plain objects (no TensorFlow): what each connector stores in an Example and what it hands back.

Strategy: features.json is TFDS's FeaturesDict proto written as JSON: every node names its class
(`pythonClassName`, e.g. `tensorflow_datasets.core.features.image_feature.Image`) and holds one
content field (`tensor`, `image`, `classLabel`, `sequence`, `featuresDict`, ...). `parse_features`
walks it depth first, bounded in depth and node count, and builds one frozen object per node; every
value is checked for its type before use (shapes are lists of integers in a bounded range, dtypes
are names from one table) and any mismatch or unknown connector raises DatasetInfoError naming its
"/"-joined key path. Nothing is allocated from a shape here: shapes only describe what a decoder
checks record values against (_tfds/decode.py).

The tree is small: `Tensor` (with its kinds Scalar, Text, ClassLabel, BBoxFeature, Audio, which
store a tensor and hand one back), `Image`, `Video` (a sequence of encoded frames), `Sequence`,
`Dataset` (a Sequence whose elements are handed back one dict per step, as RLDS episodes are) and
`FeaturesDict`; a LabeledImage is read as the Image it stores, a Translation as a FeaturesDict of
Text per language, a TranslationVariableLanguages as a Sequence of (language, translation) Texts.
`str()` of a node is the readable tree TFDS prints. The legacy form of TFDS before
4.5 (`{"type": CLASS, "content": ARGUMENTS}`) is converted to the proto form first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tfrecord_lite._errors import DatasetInfoError

MAX_DEPTH = 32  # nested FeaturesDict / Sequence levels
MAX_NODES = 100_000  # connectors in one features.json
MAX_RANK = 32  # dimensions of one tensor
MAX_DIM = (1 << 31) - 1  # one dimension
MAX_ELEMENTS = 1 << 40  # elements a fully known shape may claim

# TFDS's dtype names -> numpy's; "string" values are bytes.
DTYPES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "bfloat16": "float32", "float32": "float32", "float64": "float64",
    "string": "object", "str": "object", "object": "object",
}  # fmt: skip

Shape = tuple["int | None", ...]


@dataclass(frozen=True)
class Feature:
    """One connector of the tree; `key` is its "/"-joined path from the root ("" for the root)."""

    key: str

    @property
    def kind(self) -> str:
        return type(self).__name__

    def children(self) -> Iterator[Feature]:
        return iter(())

    def lines(self, indent: str) -> list[str]:
        return [self.describe()]

    def describe(self) -> str:
        return f"{self.kind}()"

    def __str__(self) -> str:
        return "\n".join(self.lines(""))


@dataclass(frozen=True)
class Tensor(Feature):
    """A tensor stored as it is: `dtype` (numpy's name, "object" for bytes), `shape` (None where it
    varies), `encoding` "none" (values in the Example's lists), "bytes" or "zlib" (raw bytes);
    `optional`: a record may leave it out (TFDS then hands back the dtype's lowest value, b"", False)."""

    shape: Shape = ()
    dtype: str = "float32"
    encoding: str = "none"
    optional: bool = False

    def describe(self) -> str:
        dtype = "string" if self.dtype == "object" else self.dtype
        if self.kind == "Tensor" and not self.shape and self.encoding == "none":
            return dtype
        return f"{self.kind}(shape={_shape_text(self.shape)}, dtype={dtype})"


@dataclass(frozen=True)
class Scalar(Tensor):
    """A scalar tensor."""


@dataclass(frozen=True)
class Text(Tensor):
    """Text: bytes (UTF-8), as TFDS hands it back."""

    dtype: str = "object"


@dataclass(frozen=True)
class ClassLabel(Tensor):
    """A class number (int64), with `num_classes` and the class `names` when features.json holds
    them (else they are in `<key>.labels.txt` beside it, read by DatasetInfo.class_names)."""

    dtype: str = "int64"
    num_classes: int | None = None
    names: tuple[str, ...] | None = None

    def describe(self) -> str:
        return f"ClassLabel(shape=(), dtype=int64, num_classes={self.num_classes})"


@dataclass(frozen=True)
class BBoxFeature(Tensor):
    """A bounding box: 4 float32 in `bbox_format` (TFDS's default: relative ymin, xmin, ymax, xmax)."""

    shape: Shape = (4,)
    bbox_format: str | None = "REL_YXYX"


@dataclass(frozen=True)
class Audio(Tensor):
    """An audio waveform stored as a tensor; `sample_rate` and `file_format` as TFDS records them.
    A lazily encoded one (`lazy_decode`) stores the audio file's bytes instead."""

    sample_rate: int | None = None
    file_format: str | None = None
    lazy_decode: bool = False


@dataclass(frozen=True)
class Image(Feature):
    """An encoded image (PNG or JPEG bytes), decoded to an HWC array of `dtype`."""

    shape: Shape = (None, None, 3)
    dtype: str = "uint8"
    encoding_format: str | None = None

    def describe(self) -> str:
        return f"Image(shape={_shape_text(self.shape)}, dtype={self.dtype})"


@dataclass(frozen=True)
class Video(Feature):
    """A sequence of encoded frames (`encoding_format`), decoded to a (frames, H, W, C) array."""

    shape: Shape = (None, None, None, 3)
    dtype: str = "uint8"
    encoding_format: str | None = "png"

    @property
    def frame(self) -> Image:
        return Image(self.key, self.shape[1:], self.dtype, self.encoding_format)

    def describe(self) -> str:
        return f"Video({self.frame.describe()})"


@dataclass(frozen=True)
class Sequence(Feature):
    """A sequence of `feature`: of `length` elements, or any number (None)."""

    feature: Feature = field(default_factory=lambda: Tensor(""))
    length: int | None = None

    def children(self) -> Iterator[Feature]:
        yield self.feature

    def lines(self, indent: str) -> list[str]:
        inner = self.feature.lines(indent)
        return (
            [f"{self.kind}({inner[0]}", *inner[1:-1], inner[-1] + ")"]
            if len(inner) > 1
            else [f"{self.kind}({inner[0]})"]
        )


@dataclass(frozen=True)
class Dataset(Sequence):
    """A nested dataset (RLDS `steps`): stored as a Sequence, handed back as a list of step dicts."""


@dataclass(frozen=True)
class FeaturesDict(Feature):
    """Named features, in features.json's order."""

    features: Mapping[str, Feature] = field(default_factory=dict)

    def children(self) -> Iterator[Feature]:
        yield from self.features.values()

    def lines(self, indent: str) -> list[str]:
        out = ["FeaturesDict({"]
        for name, feature in self.features.items():
            inner = feature.lines(indent + "    ")
            out.append(f"{indent}    {name!r}: {inner[0]}")
            out.extend(inner[1:])
            out[-1] += ","
        out.append(f"{indent}}})")
        return out

    def __getitem__(self, name: str) -> Feature:
        return self.features[name]


def _shape_text(shape: Shape) -> str:
    dims = ", ".join("None" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def walk(feature: Feature) -> Iterator[Feature]:
    """Every node of the tree, depth first."""
    yield feature
    for child in feature.children():
        yield from walk(child)


def find(root: Feature, key: str) -> Feature:
    """The node at `key` ("/"-joined), looking through Sequence and Dataset levels."""
    node = root
    for part in [p for p in key.split("/") if p]:
        while isinstance(node, Sequence):
            node = node.feature
        if not isinstance(node, FeaturesDict) or part not in node.features:
            raise KeyError(f"no feature {key!r} (the features: {sorted(_leaf_keys(root))})")
        node = node.features[part]
    while isinstance(node, Sequence) and not isinstance(node, Dataset):
        node = node.feature
    return node


def _leaf_keys(root: Feature) -> list[str]:
    return [f.key for f in walk(root) if not isinstance(f, (FeaturesDict, Sequence))]


# --- parsing features.json -------------------------------------------------------------------


class _Walk:
    """The state of one parse: the file's name (for errors) and the nodes counted so far."""

    def __init__(self, where: str) -> None:
        self.where, self.nodes = where, 0

    def fail(self, key: str, message: str) -> DatasetInfoError:
        at = f"feature {key!r}" if key else "the root feature"
        return DatasetInfoError(f"{self.where}: {at}: {message}")


def parse_features(document: object, where: str = "features.json") -> Feature:
    """The feature tree of a features.json document (already JSON-decoded); DatasetInfoError naming
    the key path of the first node that is not what TFDS writes."""
    return _node(document, "", 0, _Walk(where))


def _node(node: object, key: str, depth: int, w: _Walk) -> Feature:
    w.nodes += 1
    if w.nodes > MAX_NODES:
        raise w.fail(key, f"more than {MAX_NODES} feature connectors")
    if depth > MAX_DEPTH:
        raise w.fail(key, f"nested more than {MAX_DEPTH} levels deep")
    if not isinstance(node, dict):
        raise w.fail(key, f"expected a JSON object, found {type(node).__name__}")
    if "type" in node and "pythonClassName" not in node:
        node = _from_legacy(node, key, w)
    class_name = node.get("pythonClassName")
    if not isinstance(class_name, str):
        raise w.fail(key, f"no pythonClassName string (found {class_name!r})")
    short = class_name.rsplit(".", 1)[-1]
    build = _BUILDERS.get(short)
    if build is None:
        raise w.fail(
            key,
            f"unknown feature connector {class_name!r}: this reader knows {', '.join(sorted(_BUILDERS))}",
        )
    return build(node, key, depth, w)


def _content(node: dict[str, Any], name: str, key: str, w: _Walk, default: object = None) -> dict[str, Any]:
    value = node.get(name, default)
    if not isinstance(value, dict):
        raise w.fail(key, f"expected a {name!r} object, found {type(value).__name__}")
    return value


def _int(value: object, what: str, key: str, w: _Walk, low: int = 0, high: int = MAX_DIM) -> int:
    """A JSON integer (protobuf's JSON writes int64 as a string) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise w.fail(key, f"{what} must be an integer, found {type(value).__name__} {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise w.fail(key, f"{what} must be an integer, found {value!r}") from None
    if not low <= number <= high:
        raise w.fail(key, f"{what} {number} is out of range [{low}, {high}]")
    return number


def _shape(content: dict[str, Any], key: str, w: _Walk) -> Shape:
    shape = content.get("shape", {})
    if not isinstance(shape, dict):
        raise w.fail(key, f"shape must be an object with 'dimensions', found {type(shape).__name__}")
    dims = shape.get("dimensions", [])
    if not isinstance(dims, list):
        raise w.fail(key, f"shape dimensions must be a list, found {type(dims).__name__}")
    if len(dims) > MAX_RANK:
        raise w.fail(key, f"a shape of {len(dims)} dimensions (at most {MAX_RANK})")
    out: list[int | None] = []
    for d in dims:
        n = _int(d, "a shape dimension", key, w, low=-1)
        out.append(None if n == -1 else n)
    known = 1
    for d in out:
        known *= d or 1
    if known > MAX_ELEMENTS:
        raise w.fail(key, f"shape {_shape_text(tuple(out))} claims {known} elements (at most {MAX_ELEMENTS})")
    return tuple(out)


def _dtype(content: dict[str, Any], key: str, w: _Walk, default: str = "float32") -> str:
    name = content.get("dtype", default)
    if not isinstance(name, str) or name not in DTYPES:
        raise w.fail(key, f"unknown dtype {name!r} (known: {', '.join(DTYPES)})")
    return DTYPES[name]


def _text(content: dict[str, Any], name: str, key: str, w: _Walk) -> str | None:
    value = content.get(name)
    if value is not None and not isinstance(value, str):
        raise w.fail(key, f"{name} must be a string, found {type(value).__name__}")
    return value or None


def _tensor_fields(node: dict[str, Any], key: str, w: _Walk, name: str = "tensor") -> dict[str, Any]:
    content = _content(node, name, key, w)
    encoding = (_text(content, "encoding", key, w) or "none").lower()
    if encoding not in ("none", "bytes", "zlib"):
        raise w.fail(key, f"unknown tensor encoding {encoding!r} (known: none, bytes, zlib)")
    optional = content.get("optional", False)
    if not isinstance(optional, bool):
        raise w.fail(key, f"optional must be true or false, found {optional!r}")
    return {
        "shape": _shape(content, key, w),
        "dtype": _dtype(content, key, w),
        "encoding": encoding,
        "optional": optional,
    }


def _build_tensor(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    return Tensor(key, **_tensor_fields(node, key, w))


def _build_scalar(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    return Scalar(key, **_tensor_fields(node, key, w))


def _build_text(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    content = node.get("text", {})
    if not isinstance(content, dict):
        raise w.fail(key, f"expected a 'text' object, found {type(content).__name__}")
    if content.get("encoder") or content.get("encoderConfig"):
        raise w.fail(key, "Text with an encoder (a tokenizer of TFDS's) is not supported")
    return Text(key)


def _build_class_label(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    content = _content(node, "classLabel", key, w, {})
    num = content.get("numClasses")
    num_classes = None if num is None else _int(num, "numClasses", key, w)
    names = content.get("names")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise w.fail(key, "classLabel names must be a list of strings")
        if num_classes is not None and len(names) != num_classes:
            raise w.fail(key, f"{len(names)} class names for numClasses {num_classes}")
        names = tuple(names)
    return ClassLabel(key, shape=(), num_classes=num_classes, names=names)


def _build_bbox(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    content = _content(node, "boundingBox", key, w, {})
    shape = _shape(content, key, w) or (4,)
    if shape != (4,):
        raise w.fail(key, f"a bounding box has shape (4,), found {_shape_text(shape)}")
    return BBoxFeature(
        key, shape=shape, dtype=_dtype(content, key, w), bbox_format=_text(content, "bboxFormat", key, w)
    )


def _build_audio(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    content = _content(node, "audio", key, w)
    rate = content.get("sampleRate")
    return Audio(
        key,
        shape=_shape(content, key, w),
        dtype=_dtype(content, key, w, "int64"),
        encoding=(_text(content, "encoding", key, w) or "none").lower(),
        sample_rate=None if rate is None else _int(rate, "sampleRate", key, w),
        file_format=_text(content, "fileFormat", key, w),
        lazy_decode=bool(content.get("lazyDecode", False)),
    )


def _image_fields(content: dict[str, Any], key: str, w: _Walk, rank: int) -> dict[str, Any]:
    shape = _shape(content, key, w)
    if len(shape) != rank:
        raise w.fail(key, f"expected a shape of {rank} dimensions, found {_shape_text(shape)}")
    dtype = _dtype(content, key, w, "uint8")
    if dtype not in ("uint8", "uint16", "float32"):
        raise w.fail(key, f"images are uint8, uint16 or float32, found {dtype}")
    fmt = _text(content, "encodingFormat", key, w)
    if fmt is not None and fmt not in ("png", "jpeg"):
        raise w.fail(key, f"unknown image encoding_format {fmt!r} (known: png, jpeg)")
    return {"shape": shape, "dtype": dtype, "encoding_format": fmt}


def _build_image(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    return Image(key, **_image_fields(_content(node, "image", key, w), key, w, 3))


def _build_translation(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    """Translation: a Text per language; with variable languages, a sequence of (language, translation)."""
    content = _content(node, "translation", key, w)
    languages = content.get("languages", [])
    if not isinstance(languages, list) or not all(isinstance(x, str) and x and "/" not in x for x in languages):
        raise w.fail(key, "translation languages must be a list of language codes")
    if len(languages) > MAX_NODES:
        raise w.fail(key, f"more than {MAX_NODES} languages")
    if content.get("variableLanguagesPerExample"):
        pair = {name: Text(f"{key}/{name}") for name in ("language", "translation")}
        return Sequence(key, feature=FeaturesDict(key, features=pair), length=None)
    return FeaturesDict(key, features={lang: Text(f"{key}/{lang}") for lang in sorted(languages)})


def _build_video(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    return Video(key, **_image_fields(_content(node, "video", key, w), key, w, 4))


def _build_sequence(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    content = _content(node, "sequence", key, w)
    length = content.get("length", "-1")
    n = _int(length, "sequence length", key, w, low=-1)
    inner = _node(content.get("feature"), key, depth + 1, w)
    cls = Dataset if node["pythonClassName"].endswith(".Dataset") else Sequence
    return cls(key, feature=inner, length=None if n == -1 else n)


def _build_dict(node: dict[str, Any], key: str, depth: int, w: _Walk) -> Feature:
    content = _content(node, "featuresDict", key, w)
    features = content.get("features", {})
    if not isinstance(features, dict):
        raise w.fail(key, f"featuresDict features must be an object, found {type(features).__name__}")
    out: dict[str, Feature] = {}
    for name, child in features.items():
        if not name or "/" in name:
            raise w.fail(key, f"a feature name must be non-empty and hold no '/': {name!r}")
        out[name] = _node(child, f"{key}/{name}" if key else name, depth + 1, w)
    return FeaturesDict(key, features=out)


# TFDS before 4.5 wrote each node as {"type": CLASS, "content": {...}} (content: the constructor's
# arguments, or a proto as JSON with "proto_cls"): converted here to the proto form parsed above.
_LEGACY_FIELDS = {
    "Tensor": "tensor", "Scalar": "tensor", "Image": "image", "Video": "video", "Audio": "audio",
    "BBoxFeature": "boundingBox", "ClassLabel": "classLabel", "Text": "text",
}  # fmt: skip


def _from_legacy(node: dict[str, Any], key: str, w: _Walk) -> dict[str, Any]:
    class_name, content = node["type"], node.get("content")
    if not isinstance(class_name, str):
        raise w.fail(key, f"'type' must be a class name, found {type(class_name).__name__}")
    short = class_name.rsplit(".", 1)[-1]
    if isinstance(content, str) and node.get("proto_cls"):
        try:
            content = json.loads(content)
        except ValueError:
            raise w.fail(key, "its 'content' is not JSON") from None
    if not isinstance(content, dict):
        raise w.fail(key, f"'content' must be an object, found {type(content).__name__}")
    out: dict[str, Any] = {"pythonClassName": class_name}
    if node.get("proto_cls"):  # the content is already the proto's JSON
        field_name = "featuresDict" if short == "FeaturesDict" else _LEGACY_FIELDS.get(short, "sequence")
        out[field_name] = content
    elif short == "FeaturesDict":
        out["featuresDict"] = {"features": content}
    elif short in ("Sequence", "Dataset"):
        length = content.get("length")
        out["sequence"] = {"feature": content.get("feature"), "length": -1 if length is None else length}
    elif short in _LEGACY_FIELDS:
        out[_LEGACY_FIELDS[short]] = _legacy_fields(content, key, w)
    return out


def _legacy_fields(content: dict[str, Any], key: str, w: _Walk) -> dict[str, Any]:
    """A legacy connector's arguments under their proto JSON names."""
    if content.get("use_encoder"):
        raise w.fail(key, "Text with an encoder (a tokenizer of TFDS's) is not supported")
    names = {"encoding_format": "encodingFormat", "sample_rate": "sampleRate", "file_format": "fileFormat",
             "lazy_decode": "lazyDecode", "num_classes": "numClasses", "bbox_format": "bboxFormat"}  # fmt: skip
    out = {names.get(k, k): v for k, v in content.items()}
    if "shape" in out:
        dims = out["shape"]
        if not isinstance(dims, list):
            raise w.fail(key, f"shape must be a list, found {type(dims).__name__}")
        out["shape"] = {"dimensions": [-1 if d is None else d for d in dims]}
    return out


_BUILDERS = {
    "Tensor": _build_tensor,
    "Scalar": _build_scalar,
    "Text": _build_text,
    "ClassLabel": _build_class_label,
    "BBoxFeature": _build_bbox,
    "Audio": _build_audio,
    "Image": _build_image,
    "Video": _build_video,
    "LabeledImage": _build_image,
    "Translation": _build_translation,
    "TranslationVariableLanguages": _build_translation,
    "Sequence": _build_sequence,
    "Dataset": _build_sequence,
    "FeaturesDict": _build_dict,
}
