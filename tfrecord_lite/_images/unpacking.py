"""Image records written back as files: unpack_images turns shards of image records into an
ImageFolder tree, destination/<class>/<file name>, through ImageFolderWriter (which other
sources of images, TFDS folders, write through too).

Strategy: the stored bytes are written unchanged, into a file named for the format they start
like (raw pixels become a PNG file); every part of a name is sanitised into one path component,
so nothing lands outside the destination. A destination that already holds files is refused
unless the caller says to overwrite or skip what exists: the names a run gives are the same on
every run (suffixes count only this run's clashes), so a re-run overwrites or skips exactly the
files an earlier run wrote.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from tfrecord_lite._html.images import sniff_image_format
from tfrecord_lite._images.codec import EXTENSIONS, RAW, pixel_file
from tfrecord_lite._images.packing import IMAGE_EXTENSIONS
from tfrecord_lite._images.records import ENCODED, LABEL, ImageRecord, PathLike, iter_image_records
from tfrecord_lite._storage.files import make_output_folder
from tfrecord_lite._storage.sources import Sources
from tfrecord_lite._stream.options import MAX_RECORD_BYTES, Compression, OnError, StorageOptions

_NAME_BYTES = 200  # of a file or folder name written: under every file system's 255, room for '-123'


def _safe_part(name: str, fallback: str) -> str:
    """One path component from untrusted text: no separators, no '.'/'..', no control characters,
    at most _NAME_BYTES bytes (cut before its extension)."""
    cleaned = re.sub(r"[\x00-\x1f\x7f/\\:]", "_", name).strip()
    if cleaned in ("", ".", ".."):
        return fallback
    if len(cleaned.encode()) <= _NAME_BYTES:
        return cleaned
    stem, suffix = os.path.splitext(cleaned)
    suffix = suffix if len(suffix.encode()) <= 16 else ""
    room = _NAME_BYTES - len(suffix.encode())
    return stem.encode()[:room].decode(errors="ignore") + suffix


def _extension(fmt: str) -> str:
    """A file extension for an image format named in a record: letters and digits only, else .img."""
    return "." + fmt if re.fullmatch(r"[A-Za-z0-9]{1,10}", fmt) else ".img"


def _file_contents(rec: ImageRecord) -> tuple[bytes, str]:
    """(bytes to write, extension) for one image: the stored bytes named for the format they start
    like (the record's image/format, else .img, when they start like none), raw pixels as a PNG."""
    if rec.format == RAW:
        return pixel_file(rec.decode(mode=None))
    sniffed = sniff_image_format(rec.encoded) or rec.format
    return rec.encoded, EXTENSIONS.get(sniffed, (_extension(sniffed),))[0]


def _file_name(filename: str, ext: str, fallback: str) -> str:
    """The last part of image/filename, made safe, with `ext` where its extension names another format."""
    base = _safe_part(filename.replace("\\", "/").rsplit("/", 1)[-1], fallback)
    stem, suffix = os.path.splitext(base)
    same = next((exts for exts in EXTENSIONS.values() if ext in exts), (ext,))
    if suffix.lower() in same:
        return base
    return (stem if suffix.lower() in IMAGE_EXTENSIONS or suffix.lower() == ".img" else base) + ext


def unpack_images(
    source: Sources,
    *,
    destination: PathLike,
    compression: Compression = "auto",
    verify: bool = True,
    on_error: OnError = "raise",
    max_skipped: int | None = None,
    storage_options: StorageOptions = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
    image_key: str = ENCODED,
    label_key: str = LABEL,
    overwrite: bool = False,
    skip_existing: bool = False,
) -> int:
    """Write every image of `source` back to `destination/<class>/<file name>` (an ImageFolder tree);
    returns the count written. `source` is read as iter_image_records reads it (URLs too, and the reader
    options); `destination` is a local folder. The image is read from `image_key`, the class id from
    `label_key` (the class name is image/class/text).

    The stored bytes are written unchanged, named for the format they start like (PNG bytes in a
    record named x.jpg become x.png); raw pixels are written as a PNG file (uint8, 1 to 4 channels)
    or a .npy file. Names come from image/class/text (else the label) and image/filename,
    sanitised so nothing lands outside `destination`; clashes get '-1', '-2', ... suffixes. Records
    without a name become <class>/<n>.<format>.

    A `destination` that already holds files is refused (FileExistsError), so that a second run does
    not add a copy of every image: `overwrite=True` replaces the files a run would write (the same
    names, so a re-run gives the same tree), `skip_existing=True` leaves those that exist and writes
    the rest (an interrupted run finished).
    """
    writer = ImageFolderWriter(destination, overwrite=overwrite, skip_existing=skip_existing)
    records: Iterable[ImageRecord] = iter_image_records(
        source,
        compression=compression,
        verify=verify,
        on_error=on_error,
        max_skipped=max_skipped,
        storage_options=storage_options,
        max_record_bytes=max_record_bytes,
        image_key=image_key,
        label_key=label_key,
    )
    if progress is not None:
        records = progress(records, 0)
    for rec in records:
        data, ext = _file_contents(rec)
        writer.write(rec.text or (str(rec.label) if rec.label >= 0 else ""), data, ext, rec.filename)
    return writer.count


class ImageFolderWriter:
    """Image files written into `destination/<class>/<file name>` (an ImageFolder tree); `count`
    says how many were written.

    Class and file names are untrusted text, made one safe path component each; a missing class is
    `unlabelled`, a missing file name `<n><ext>`. A `destination` that already holds files is refused
    (FileExistsError) unless `overwrite` (replace the files of the same names) or `skip_existing`
    (keep them); clashes within a run get '-1', '-2', ... suffixes."""

    def __init__(self, destination: PathLike, *, overwrite: bool = False, skip_existing: bool = False) -> None:
        if overwrite and skip_existing:
            raise ValueError("overwrite and skip_existing exclude each other: choose one")
        self.destination = os.fspath(destination)
        if not (overwrite or skip_existing) and _holds_files(self.destination):
            raise FileExistsError(
                f"{self.destination} already holds files: writing into it again would add a copy of every image; "
                "pass overwrite=True to replace the files a run writes or skip_existing=True to keep them "
                "(on the command line --overwrite / --skip-existing), or choose an empty folder"
            )
        os.makedirs(self.destination, exist_ok=True)
        self.overwrite = overwrite
        self.skip_existing = skip_existing
        self.count = 0
        self._seen = 0
        self._written: set[str] = set()  # the files of this run: a second image of a name gets a suffix

    def write(self, class_name: str, data: bytes, ext: str, filename: str = "") -> str | None:
        """Write one image's bytes as `<class_name>/<filename>` (with `ext` where the name lacks
        the right extension); the path written, or None when skip_existing kept a file there."""
        cls = _safe_part(class_name, "unlabelled")
        base = _file_name(filename, ext, f"{self._seen:08d}{ext}")
        self._seen += 1
        folder = os.path.join(self.destination, cls)
        make_output_folder(self.destination, folder)
        target = _unpacked_name(folder, base, self._written, clash=not (self.overwrite or self.skip_existing))
        self._written.add(target)
        if self.skip_existing and os.path.lexists(target):
            return None
        if self.overwrite and os.path.lexists(target):
            os.unlink(target)  # replaced, never written through (a link stays out of it)
        with open(target, "xb") as f:
            f.write(data)
        self.count += 1
        return target


def _holds_files(folder: str) -> bool:
    """Whether `folder` (or a folder in it) holds anything but folders; it stops at the first."""
    return any(files for _, _, files in os.walk(folder))


def _unpacked_name(folder: str, base: str, written: set[str], clash: bool) -> str:
    """Where an image named `base` goes in `folder`: `base`, else the first of base-1, base-2, ...
    not written by this run (`written`) and, when `clash`, not on disk either."""
    stem, suffix = os.path.splitext(base)
    target, n = os.path.join(folder, base), 0
    while target in written or (clash and os.path.lexists(target)):
        n += 1
        target = os.path.join(folder, f"{stem}-{n}{suffix}")
    return target
