"""What a reader does with a damaged record: the `on_error` / `max_skipped` knobs of
every reader, in one place. A DamagePolicy is made from them once per pass over the
data and handed down to the StreamScanner of each file read (its on_damage hook),
so iter_records, the batch decoder, the torch datasets, ShardedRecords and the
Arrow readers skip, report and count damage the same way. The scanner finds and
steps over the damage; the policy only says whether that is allowed, tells the
user (a logging warning or their callable) and stops after too many skips. A
Damage is what the scanner reports: one damaged span, and the error it makes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from tfrecord_lite._errors import CorruptRecordError, PathName, TFRecordError
from tfrecord_lite._redact import log as logger

OnError = str | Callable[[TFRecordError], object]


@dataclass(frozen=True)
class Damage:
    """A damaged span of a record stream, found by a tolerant scan (StreamScanner with on_damage).

    `offset`: where it starts in the uncompressed stream (the file offset of a plain file);
    `end`: where intact records resume, None when nothing after it can be read;
    `reason`: what is wrong, in words; `kind`: the error it raises when not skipped."""

    offset: int
    end: int | None
    reason: str
    kind: type[TFRecordError] = field(default=CorruptRecordError, compare=False, repr=False)

    @property
    def skipped(self) -> int | None:
        """How many stream bytes the span covers; None when it runs to the end of the stream."""
        return None if self.end is None else self.end - self.offset

    def error(self, path: PathName) -> TFRecordError:
        """The error naming this span in `path`, with what skipping it loses."""
        lost = "the rest of the stream" if self.end is None else f"{self.skipped} bytes, to offset {self.end}"
        return self.kind(f"{self.reason}; skipped {lost}", path=path, offset=self.offset)


class DamagePolicy:
    """What readers do with damaged records, and the count of skips so far (for one pass).

    `on_error`: "raise" (the first damage raises, after the good records before it),
    "skip" (each damaged span is skipped and logged as a warning on the
    "tfrecord_lite" logger, naming the file, offset and bytes skipped) or a callable
    given the error (a CorruptRecordError / TruncatedRecordError) instead of the
    warning; it may raise to stop. `max_skipped`: with more skips than this in the
    pass, the next one is raised.
    """

    def __init__(self, on_error: OnError = "raise", max_skipped: int | None = None) -> None:
        if not callable(on_error) and on_error not in ("raise", "skip"):
            raise ValueError(f"on_error must be 'raise', 'skip' or a callable, not {on_error!r}")
        if max_skipped is not None and (type(max_skipped) is not int or max_skipped < 0):
            raise ValueError(f"max_skipped must be None or an int >= 0, not {max_skipped!r}")
        if max_skipped is not None and on_error == "raise":
            raise ValueError("max_skipped applies only with on_error='skip' or a callable")
        self.on_error = on_error
        self.max_skipped = max_skipped
        self.skipped = 0

    @property
    def raises(self) -> bool:
        """Whether damage is raised (on_error='raise')."""
        return self.on_error == "raise"

    def handler(self, path: PathName) -> Callable[[Damage], None] | None:
        """The on_damage hook of a StreamScanner reading `path`; None when damage is raised."""
        return None if self.raises else functools.partial(self.report, path)

    def report(self, path: PathName, damage: Damage) -> None:
        """Count one skipped span of `path`; tell the user, or raise past max_skipped."""
        self.skip(damage.error(path))

    def skip(self, err: TFRecordError) -> None:
        """Count one skipped record or span that `err` names; tell the user, or raise past max_skipped.
        Readers that decode by a spec skip a record that does not fit it this way too."""
        self.skipped += 1
        if self.max_skipped is not None and self.skipped > self.max_skipped:
            raise type(err)(
                f"more than max_skipped={self.max_skipped} damaged spans; this one: {err.reason}",
                path=err.path,
                offset=err.offset,
            )
        if callable(self.on_error):
            self.on_error(err)
        else:
            logger.warning("skipped %s: %s", "damaged data" if err.record is None else "a record", err)

    def __repr__(self) -> str:
        return f"DamagePolicy(on_error={self.on_error!r}, max_skipped={self.max_skipped!r}, skipped={self.skipped})"


def as_policy(on_error: OnError | DamagePolicy, max_skipped: int | None = None) -> DamagePolicy:
    """The DamagePolicy of a reader's `on_error` / `max_skipped`; a DamagePolicy given as `on_error` is
    used as it is, so that one command's `max_skipped` counts over every reader it opens."""
    if isinstance(on_error, DamagePolicy):
        return on_error
    return DamagePolicy(on_error, max_skipped)
