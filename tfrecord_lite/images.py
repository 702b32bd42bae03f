"""Image datasets as TFRecord shards, laid out the way TensorFlow's image
pipelines expect (image/encoded, image/format, image/height, image/width,
image/class/label, image/class/text, image/filename), or read with the keys
other writers use (image_key=, label_key=: "image_raw", "label"); the image is
encoded bytes or raw pixels (format "raw": np.asarray(image).tobytes()).

Strategy: packing stores each file's original encoded bytes (re-encoding only
when a resize or a format is asked for); Pillow is used once per image to read
its size and to prove that it decodes, so a broken file is caught at packing
time, with its path, instead of in the middle of a training run. Class ids live
in a JSON label map beside the shards ("<prefix>.labels.json", {name: id});
appending reuses it, so existing ids never change and new classes get new
ids, skips images whose bytes the dataset already holds and settles a name taken
by a different image as `on_conflict` says. The new
shards and the label map are one publish.Publication: they appear together or
not at all, and the prefix is locked meanwhile (two appends never interleave).
Pillow, simplejpeg (and torch, for ImageTransform) are imported lazily, inside
functions, so `import tfrecord_lite.images` costs nothing extra. The code is the
library's (_images: packing, records, codec, augment, append, label_maps); this
module is its public face, and adds ImageTransform, which hands images to PyTorch
one by one or, as a collate_fn, writes a batch's images straight into its tensor.
The names speak the library's vocabulary (docs/conventions.md): what is read is
`source`, the shards written are `prefix`, a folder written is `destination`; the
functions that read records take the reader options; pack_images writes shards
compressed as its `compression` says, and remove_images, which reads records and
writes others, names what it writes `output_compression`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tfrecord_lite._html.images import sniff_image_format
from tfrecord_lite._images.append import ImageConflictError
from tfrecord_lite._images.augment import random_view
from tfrecord_lite._images.codec import (
    RAW,
    ImageDecodeError,
    array_image,
    decode_image_bytes,
    fast_jpeg,
    image_array,
    open_image,
    padded,
    resized,
)
from tfrecord_lite._images.label_maps import check_label_map, label_map_path, load_label_map, save_label_map
from tfrecord_lite._images.packing import (
    IMAGE_EXTENSIONS,
    PackResult,
    pack_images,
    read_image_list,
    remove_images,
    scan_image_folder,
)
from tfrecord_lite._images.records import (
    ENCODED,
    LABEL,
    ImageRecord,
    decode_image,
    iter_image_records,
    missing_key,
    parse_image_record,
    record_fields,
    record_label,
)
from tfrecord_lite._images.unpacking import unpack_images
from tfrecord_lite._loader.collate import check_same_sizes, collate, to_torch
from tfrecord_lite._loader.transport import batch_tensor, for_transport
from tfrecord_lite._records.threads import ThreadMap

__all__ = [
    "IMAGE_EXTENSIONS",
    "ImageConflictError",
    "ImageDecodeError",
    "ImageRecord",
    "ImageTransform",
    "PackResult",
    "check_label_map",
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
    "sniff_image_format",
    "unpack_images",
]


def __dir__() -> list[str]:  # dir() and IDEs show the API, not the imported modules
    return sorted(__all__)


def _size(name: str, size: tuple[int, int] | None) -> tuple[int, int] | None:
    if size is None:
        return None
    if len(size) != 2 or not all(isinstance(n, int) and n > 0 for n in size):
        raise ValueError(f"{name} must be (height, width), two positive ints, found {size!r}")
    return (int(size[0]), int(size[1]))


class ImageTransform:
    """A `transform=` for tfrecord_lite.torch datasets: record -> (CHW image tensor, label).

    The image (under `image_key`: encoded bytes, or raw pixels) is decoded and converted to
    `mode`; `resize=(height, width)` scales it to that size (Pillow, bilinear), or
    `pad_to=(height, width)` places it unscaled at the top left of an image of that size filled
    with `fill` (an image larger than it is an error); `random_crop=(height, width)` takes a
    window of that size at a random place and `random_flip=True` mirrors it left to right half
    of the time (numpy views, drawn from Python's `random`, which DataLoader seeds per worker);
    then `augment` (e.g. a torchvision transform) is applied to the PIL image if given. A JPEG
    decoded to RGB goes through simplejpeg when it is installed (the same pixels as Pillow's).
    The label is the integer under `label_key` (missing: an error listing the record's keys).
    Without an augment returning a tensor, the result is a uint8 CHW tensor (raw pixels keep
    their dtype), or float32 with `scale=True` (uint8 divided by 255). Picklable, so it works in
    spawned DataLoader workers. `num_threads` > 1 makes `collate` decode a batch's images on that
    many threads (random crops and flips then drawn per image, in the batch's order).

    The image may also be an array already decoded, as a dataset with a RawFeature spec gives it:
    one HWC image becomes a CHW tensor, a batch (B, H, W, C) (a dataset's batch_size=) one
    (B, C, H, W) tensor with the labels as an int64 tensor [B]; `mode` does not apply to arrays
    (their channels are as stored), the other options do, to each image of a batch.
    """

    def __init__(
        self,
        mode: str | None = "RGB",
        *,
        scale: bool = False,
        augment: Callable[[Any], Any] | None = None,
        image_key: str = ENCODED,
        label_key: str = LABEL,
        resize: tuple[int, int] | None = None,
        pad_to: tuple[int, int] | None = None,
        fill: float = 0,
        random_crop: tuple[int, int] | None = None,
        random_flip: bool = False,
        num_threads: int = 1,
    ) -> None:
        if resize is not None and pad_to is not None:
            raise ValueError("give resize= (scale every image to one size) or pad_to= (pad it unscaled), not both")
        self.mode = mode
        self.scale = scale
        self.augment = augment
        self.image_key, self.label_key = image_key, label_key
        self.resize, self.pad_to = _size("resize", resize), _size("pad_to", pad_to)
        self.fill = fill
        self.random_crop, self.random_flip = _size("random_crop", random_crop), bool(random_flip)
        self._threads = ThreadMap(num_threads)
        self.num_threads = self._threads.num_threads

    @property
    def _straight(self) -> bool:
        """Whether a decoded image goes to augment as it is (no resize, no padding, a mode to convert to)."""
        reshaped = self.resize or self.pad_to or self.random_crop or self.random_flip
        return self.augment is not None and self.mode is not None and not reshaped

    def __call__(self, record: bytes | Mapping[str, Any]) -> tuple[Any, Any]:
        fields = record_fields(record)
        if hasattr(fields.get(self.image_key), "shape"):  # an ndarray or tensor already decoded
            return self._from_array(fields)
        rec = parse_image_record(fields, image_key=self.image_key, label_key=self.label_key)
        label = record_label(fields, self.label_key)
        if self._straight and rec.format != RAW:
            return self._augmented(self._straight_image(rec), label)
        pixels = self._pixels(rec)
        if self.augment is not None:
            return self._augmented(array_image(np.ascontiguousarray(pixels), rec.filename or None), label)
        return self._tensor(pixels), label

    def _straight_image(self, rec: ImageRecord) -> Any:
        """The PIL image `augment` gets when nothing comes before it: a JPEG decoded to RGB by
        simplejpeg (the GIL released all through, Pillow's pixels), else Pillow's own image."""
        data = bytes(rec.encoded)
        pixels = fast_jpeg(data) if self.mode == "RGB" else None
        if pixels is not None:
            return array_image(pixels, rec.filename or None)
        decoded = open_image(data, rec.filename or None)
        return decoded if decoded.mode == self.mode else decoded.convert(self.mode)

    def collate(self, batch: Sequence[bytes | Mapping[str, Any]]) -> tuple[Any, Any]:
        """A DataLoader `collate_fn` over a `batch` of undecoded records (a dataset without a
        transform): the batch (images [N, C, H, W], labels int64 [N]) that this transform's items
        would stack to, each image cropped, flipped and transposed straight into the batch tensor,
        which a DataLoader worker allocates in shared memory (as torch's default_collate does). The
        images must come out one size (resize=, pad_to= or random_crop=); with augment= the items
        are made and stacked."""
        records = batch
        if self.augment is not None:
            items = self._threads.map(self, records) if self.num_threads > 1 else [self(r) for r in records]
            stacked: tuple[Any, Any] = collate(items)
            return stacked
        if not records:
            raise ValueError("ImageTransform.collate needs at least one record")
        if self.num_threads > 1:
            return self._threaded_collate(records)
        images: Any = None
        labels = np.empty(len(records), np.int64)
        for i, record in enumerate(records):
            fields = record_fields(record)
            rec = parse_image_record(fields, image_key=self.image_key, label_key=self.label_key)
            labels[i] = record_label(fields, self.label_key)
            pixels = self._pixels(rec)
            if images is None:
                first = pixels.dtype
                images = batch_tensor((len(records), pixels.shape[2], *pixels.shape[:2]), self._dtype(first))
            rows = images.numpy()
            if pixels.shape[:2] != rows.shape[2:] or pixels.shape[2] != rows.shape[1] or pixels.dtype != first:
                _differ(rows[0].shape, first, pixels)
            np.copyto(rows[i], pixels.transpose(2, 0, 1), casting="unsafe")
        collated: tuple[Any, Any] = for_transport((self._scaled(images, first), to_torch(labels)))
        return collated

    def _from_array(self, fields: Mapping[str, Any]) -> tuple[Any, Any]:
        """(CHW tensor, label) from a decoded HWC array; (BCHW tensor, labels) from a BHWC batch."""
        pixels = np.asarray(fields[self.image_key])
        labels = fields.get(self.label_key)
        labels = np.asarray(labels) if hasattr(labels, "shape") else labels
        if pixels.ndim == 3:
            return self._array_item(pixels), record_label(fields, self.label_key)
        if pixels.ndim != 4:
            raise ValueError(
                f"ImageTransform: the array under {self.image_key!r} has shape {list(pixels.shape)}; "
                "expected an image (height, width, channels) or a batch of them (batch, height, width, channels)"
            )
        if not isinstance(labels, np.ndarray) or labels.shape != pixels.shape[:1] or labels.dtype.kind not in "iu":
            raise missing_key(fields, self.label_key, f"integer label per image ({len(pixels)})", "label_key=")
        if self.augment is None and not (self.resize or self.pad_to or self.random_crop or self.random_flip):
            images = batch_tensor((pixels.shape[0], pixels.shape[3], *pixels.shape[1:3]), self._dtype(pixels.dtype))
            np.copyto(images.numpy(), pixels.transpose(0, 3, 1, 2), casting="unsafe")
            images = self._scaled(images, pixels.dtype)
        else:
            images = collate([self._array_item(image) for image in pixels])
        batch: tuple[Any, Any] = for_transport((images, to_torch(labels.astype(np.int64))))
        return batch

    def _array_item(self, pixels: np.ndarray) -> Any:
        """One decoded HWC image as this transform's CHW tensor (resized, padded, cropped, flipped)."""
        if self.resize is not None:
            pixels = resized(pixels, self.resize, None)
        elif self.pad_to is not None:
            pixels = padded(pixels, self.pad_to, self.fill, None)
        pixels = random_view(pixels, self.random_crop, self.random_flip, None)
        if self.augment is not None:
            return self._augmented(array_image(np.ascontiguousarray(pixels), None), 0)[0]
        return self._tensor(pixels)

    def _threaded_collate(self, records: Sequence[bytes | Mapping[str, Any]]) -> tuple[Any, Any]:
        """collate with the images decoded on threads, each copied into the batch tensor by the thread
        that decoded it (the first image decoded sets the batch's size, under a lock)."""
        labels = np.empty(len(records), np.int64)
        batch: dict[str, Any] = {}
        lock = threading.Lock()

        def put(i: int) -> None:
            fields = record_fields(records[i])
            rec = parse_image_record(fields, image_key=self.image_key, label_key=self.label_key)
            labels[i] = record_label(fields, self.label_key)
            pixels = self._pixels(rec)
            with lock:
                if not batch:
                    shape = (len(records), pixels.shape[2], *pixels.shape[:2])
                    batch["images"], batch["dtype"] = batch_tensor(shape, self._dtype(pixels.dtype)), pixels.dtype
            rows, first = batch["images"].numpy(), batch["dtype"]
            if pixels.shape[:2] != rows.shape[2:] or pixels.shape[2] != rows.shape[1] or pixels.dtype != first:
                _differ(rows[0].shape, first, pixels)
            np.copyto(rows[i], pixels.transpose(2, 0, 1), casting="unsafe")

        self._threads.map(put, range(len(records)))
        collated: tuple[Any, Any] = for_transport((self._scaled(batch["images"], batch["dtype"]), to_torch(labels)))
        return collated

    def _pixels(self, rec: ImageRecord) -> np.ndarray:
        """The decoded pixels of a record, resized or padded, then cropped and flipped (a view)."""
        path = rec.filename or None
        pixels = self._decoded(rec)
        if self.resize is not None:
            pixels = resized(pixels, self.resize, path)
        elif self.pad_to is not None:
            pixels = padded(pixels, self.pad_to, self.fill, path)
        return random_view(pixels, self.random_crop, self.random_flip, path)

    def _dtype(self, pixels: np.dtype[Any]) -> Any:
        """The torch dtype of this transform's tensors of pixels of numpy dtype `pixels`: the same, or
        float32 with scale=True."""
        import torch

        return torch.float32 if self.scale else torch.from_numpy(np.empty(0, pixels)).dtype

    def _decoded(self, rec: ImageRecord) -> np.ndarray:
        """The record's pixels in `mode`; a JPEG decoded to RGB without an augment goes to the decoding
        thread's scratch buffer (_tensor, resize and pad_to copy it before the next image)."""
        if self.augment is None and self.mode == "RGB" and rec.format != RAW:
            pixels = fast_jpeg(rec.encoded, scratch=True)
            if pixels is not None:
                return pixels
        return rec.decode(self.mode)

    def _augmented(self, image: Any, label: int) -> tuple[Any, int]:
        """`augment` applied to a PIL image; its result as the CHW tensor (or the tensor it returns)."""
        import torch

        out = self.augment(image)  # type: ignore[misc]
        return (out if isinstance(out, torch.Tensor) else self._tensor(image_array(out, None))), label

    def _tensor(self, pixels: Any) -> Any:
        """HWC pixels (or a view of them) as a CHW tensor in one copy: uint8 as they are, or float32
        scaled with scale=True."""
        import torch

        image = torch.from_numpy(np.empty((pixels.shape[2], *pixels.shape[:2]), pixels.dtype))
        np.copyto(image.numpy(), pixels.transpose(2, 0, 1))  # always a copy (pixels may be scratch); no threads
        return self._scaled(image.to(torch.float32) if self.scale else image, pixels.dtype)

    def _scaled(self, images: Any, dtype: Any) -> Any:
        """float32 tensors of uint8 pixels divided by 255 with scale=True (in place), else as they are."""
        return images.div_(255.0) if self.scale and dtype == np.uint8 else images


def _differ(shape: tuple[int, ...], dtype: np.dtype[Any], pixels: np.ndarray) -> None:
    """Raise the error of images that cannot share a batch: their sizes (or dtypes) differ."""
    check_same_sizes([np.empty(shape, dtype), pixels.transpose(2, 0, 1)])
    raise ValueError(f"cannot stack the images into one batch: their dtypes differ ({dtype}, {pixels.dtype})")
