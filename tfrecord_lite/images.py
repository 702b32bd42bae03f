"""Image datasets as TFRecord shards, laid out the way TensorFlow's image
pipelines expect (image/encoded, image/format, image/height, image/width,
image/class/label, image/class/text, image/filename).

Strategy: packing stores each file's original encoded bytes (re-encoding only
when a resize or a format is asked for); Pillow is used once per image to read
its size and to prove that it decodes, so a broken file is caught at packing
time, with its path, instead of in the middle of a training run. Class ids live
in a JSON label map beside the shards ("<prefix>.labels.json", {name: id});
appending reuses it, so existing ids never change and new classes get new
ids, and skips images whose image/filename the dataset already holds. The new
shards and the label map are one publish.Publication: they appear together or
not at all, and the prefix is locked meanwhile (two appends never interleave).
Pillow (and torch, for ImageTransform) are imported lazily, inside functions, so
`import tfrecord_lite.images` costs nothing extra. The code is the library's
(_datasets: image_packing, image_records, image_codec, label_maps); this module
is its public face, and adds ImageTransform, which hands images to PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tfrecord_lite._datasets.image_codec import ImageDecodeError, decode_image_bytes, image_array, open_image
from tfrecord_lite._datasets.image_packing import (
    IMAGE_EXTENSIONS,
    PackResult,
    pack_images,
    read_image_list,
    remove_images,
    scan_image_folder,
    unpack_images,
)
from tfrecord_lite._datasets.image_records import ImageRecord, decode_image, iter_image_records, parse_image_record
from tfrecord_lite._datasets.label_maps import label_map_path, load_label_map, save_label_map

__all__ = [
    "IMAGE_EXTENSIONS",
    "ImageDecodeError",
    "ImageRecord",
    "ImageTransform",
    "PackResult",
    "decode_image",
    "decode_image_bytes",
    "iter_image_records",
    "label_map_path",
    "load_label_map",
    "pack_images",
    "parse_image_record",
    "read_image_list",
    "remove_images",
    "save_label_map",
    "scan_image_folder",
    "unpack_images",
]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


class ImageTransform:
    """A `transform=` for tfrecord_lite.torch datasets: record -> (CHW image tensor, label).

    The image is decoded with Pillow and converted to `mode`; `augment` (e.g. a
    torchvision transform) is applied to the PIL image if given. Without an
    augment returning a tensor, the result is a uint8 CHW tensor, or float32 in
    [0, 1] with `scale=True`. Picklable, so it works in spawned DataLoader workers.
    """

    def __init__(
        self, mode: str | None = "RGB", *, scale: bool = False, augment: Callable[[Any], Any] | None = None
    ) -> None:
        self.mode = mode
        self.scale = scale
        self.augment = augment

    def __call__(self, record: bytes | Mapping[str, Any]) -> tuple[Any, int]:
        import torch

        rec = parse_image_record(record)
        if self.augment is None:
            image = torch.from_numpy(rec.decode(self.mode)).permute(2, 0, 1).contiguous()
        else:
            with open_image(rec.encoded, rec.filename or None) as im:
                converted = im.convert(self.mode) if self.mode is not None and im.mode != self.mode else im
                out = self.augment(converted)
            if isinstance(out, torch.Tensor):
                return out, rec.label
            image = torch.from_numpy(image_array(out, None)).permute(2, 0, 1).contiguous()
        if self.scale:
            image = image.to(torch.float32).div_(255.0)
        return image, rec.label
