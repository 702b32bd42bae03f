"""What appending images to a packed dataset finds there, and what it does about each new image.

Strategy: before anything new is written, one pass over the existing shards collects the
SHA-256 of every stored image and the shards that hold each image/filename (the image bytes are
read and hashed, nothing is decoded; the cost is one read of the dataset). Each new image, as it
would be stored (after any resize or re-encoding), is then judged: the same bytes are already
packed (under any name) -> a duplicate, skipped and counted; its name is taken by different
bytes -> a conflict, settled by `on_conflict`: "error" (the default: every conflict is listed,
then nothing is published), "skip", "rename" (the next free `name-1.ext`, `name-2.ext` ...) or
"replace" (the old record leaves: the shards that hold it are written anew, without it, in the
same publish step as the new shards, which costs a rewrite of those shards).
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from tfrecord_lite._datasets.sharded import (
    ShardedWriter,
    existing_shards,
    prefix_store,
    rewrite_existing,
    shard_suffix,
)
from tfrecord_lite._example.spec import VarLenFeature
from tfrecord_lite._images.records import ENCODED, FILENAME, parse_image_record
from tfrecord_lite._records.example_batches import iter_example_batches
from tfrecord_lite._records.reader import iter_records
from tfrecord_lite._repr import plural
from tfrecord_lite._storage.locations import StorageOptions

ON_CONFLICT = ("error", "skip", "rename", "replace")


class ImageConflictError(ValueError):
    """Images to append have the names of different images already packed (on_conflict="error")."""


def digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


@dataclass
class Packed:
    """The images of the existing shards of a prefix: their digests, and the shards of each name."""

    digests: set[bytes] = field(default_factory=set)
    shards_of: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    image_key: str = ENCODED  # where the shards hold their images

    @classmethod
    def read(
        cls, prefix: str, compression: str | None, storage_options: StorageOptions, image_key: str = ENCODED
    ) -> Packed:
        packed = cls(image_key=image_key)
        spec = {FILENAME: VarLenFeature("string"), image_key: VarLenFeature("string")}
        for _, shard in existing_shards(prefix, shard_suffix(compression), prefix_store(prefix, storage_options)):
            for batch in iter_example_batches(shard, features=spec, storage_options=storage_options):
                for names, images in zip(batch[FILENAME], batch[image_key], strict=True):
                    packed.digests.update(digest(image) for image in images)
                    for name in names:
                        packed.shards_of[name.decode("utf-8", "replace")].add(shard)
        return packed


@dataclass
class Appending:
    """The judgement of each new image against what is packed, and its outcome so far."""

    packed: Packed
    on_conflict: str
    duplicates: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # names left out or refused
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (name, new name)
    replaced: set[str] = field(default_factory=set)
    _taken: set[str] = field(default_factory=set)  # names this run stores

    def __post_init__(self) -> None:
        if self.on_conflict not in ON_CONFLICT:
            raise ValueError(
                f"on_conflict must be one of {', '.join(map(repr, ON_CONFLICT))}, not {self.on_conflict!r}"
            )

    def name_for(self, name: str, data: bytes) -> str | None:
        """The image/filename to store a new image under, or None to leave it out."""
        if digest(data) in self.packed.digests:
            self.duplicates.append(name)
            return None
        if name in self.packed.shards_of and self.on_conflict in ("error", "skip"):
            self.conflicts.append(name)
            return None
        if name in self.packed.shards_of and self.on_conflict == "rename":
            new = self._free(name)
            self.renamed.append((name, new))
            name = new
        elif name in self.packed.shards_of:
            self.replaced.add(name)
        self._taken.add(name)
        return name

    def _free(self, name: str) -> str:
        stem, ext = os.path.splitext(name)
        n = 1
        while f"{stem}-{n}{ext}" in self.packed.shards_of or f"{stem}-{n}{ext}" in self._taken:
            n += 1
        return f"{stem}-{n}{ext}"

    def finish(self, writer: ShardedWriter, prefix: str, storage_options: StorageOptions) -> None:
        """Refuse the conflicts (on_conflict="error"), or have the writer rewrite the shards whose
        replaced images leave; called before the writer publishes."""
        if self.on_conflict == "error" and self.conflicts:
            shown = ", ".join(repr(n) for n in self.conflicts[:5]) + (", ..." if len(self.conflicts) > 5 else "")
            raise ImageConflictError(
                f"{plural(len(self.conflicts), 'image')} to append {'has' if len(self.conflicts) == 1 else 'have'} "
                f"the name of a different image already in {prefix}: {shown}; nothing was packed. "
                "on_conflict='rename' packs them as name-1.ext, 'replace' replaces the old ones (rewriting the "
                "shards that hold them), 'skip' leaves them out (--on-conflict on the command line)"
            )
        shards = {shard for name in self.replaced for shard in self.packed.shards_of[name]}
        for shard in sorted(shards):
            rewrite_existing(writer, shard, lambda shard=shard: self._kept(shard, storage_options))  # type: ignore[misc]

    def _kept(self, shard: str, storage_options: StorageOptions) -> Iterator[bytes]:
        """The records of an old shard but those of the replaced images."""
        with iter_records(shard, storage_options=storage_options) as records:
            for record in records:
                if parse_image_record(record, image_key=self.packed.image_key).filename not in self.replaced:
                    yield record
