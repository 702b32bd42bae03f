"""Random crops and horizontal flips of decoded images (HWC arrays), the augmentation that image
training pipelines apply to every image, done on numpy views so that the only copy is the one that
makes the CHW tensor.

Strategy: a crop is a slice and a flip a negative stride, so neither moves a pixel; ImageTransform
then copies the view once into a contiguous CHW array. Random numbers come from Python's `random`
module, which torch's DataLoader seeds in every worker from its own seed (so workers differ, and
torch.manual_seed makes a run repeatable); the draws are, in this order, the crop's top row and
left column (random.randint, inclusive bounds) and then, with random_flip, one random.random()
below 0.5 for a flip. On threads (num_threads > 1) the draws come from the item's own generator
(_records/threads.py's item_random, seeded by the item's place in the input), so they do not
depend on which thread decodes which image.
"""

from __future__ import annotations

import numpy as np

from tfrecord_lite._images.codec import ImageDecodeError
from tfrecord_lite._records.threads import item_random


def random_view(pixels: np.ndarray, crop: tuple[int, int] | None, flip: bool, path: str | None = None) -> np.ndarray:
    """A view of the HWC `pixels`: a random (height, width) `crop` of it (an image smaller than the
    crop is an error naming `path`), flipped left to right half of the time when `flip`."""
    random = item_random()
    if crop is not None:
        height, width = pixels.shape[:2]
        if height < crop[0] or width < crop[1]:
            raise ImageDecodeError(
                f"an image of {height}x{width} pixels is smaller than random_crop={crop} (height, width): "
                "crop a smaller size, or resize= / pad_to= the images first",
                path=path,
            )
        top = random.randint(0, height - crop[0])
        left = random.randint(0, width - crop[1])
        pixels = pixels[top : top + crop[0], left : left + crop[1]]
    if flip and random.random() < 0.5:
        pixels = pixels[:, ::-1]
    return pixels
