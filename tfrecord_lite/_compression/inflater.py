"""The streaming inflater of GZIP / ZLIB files. Inflater turns a compressed byte stream
(concatenated GZIP members, or ZLIB streams, included: they are one stream, as gzip(1) reads
them; anything else after the end of one is damage) into its uncompressed bytes a read at a time, with
the fastest library installed (inflate.py), and never loses output to damage: what
inflates before a bad byte is returned first, and the next read raises the error, which
names the compressed and uncompressed offsets. It reads from where the caller's own
reads stopped (`head`: the bytes it already took to recognise the format) and does no
framing: reading records out of the inflated bytes is the scanner's (_stream/scanner.py).
"""

from __future__ import annotations

import zlib
from typing import IO, Any

from tfrecord_lite._compression.inflate import library
from tfrecord_lite._compression.kinds import CompressionKind, kind_of
from tfrecord_lite._errors import CorruptRecordError, TFRecordError, TruncatedRecordError

_INPUT = 1 << 20  # compressed bytes read from the file at a time
_STEP = 1 << 16  # compressed bytes fed to the decompressor at a time (the most fed again after damage)


class Inflater:
    """Decompresses a GZIP / ZLIB byte stream chunk by chunk, concatenated members included.

    Compressed input is fed a step at a time, each step from a copy of the decompressor
    state, so that damage loses nothing before it: the step that fails is fed again from
    the copy a byte at a time, everything that inflates before the bad byte is returned,
    and the next read raises the error, which names the compressed and uncompressed
    offsets of the damage. The fastest installed library inflates (inflate.py); ISA-L's
    state cannot be copied, so with it a failing step is replayed by the stdlib from the
    start of its member (a file that cannot seek then loses that step's partial output).
    A member whose GZIP header carries a header CRC is inflated by the stdlib
    (kinds.CompressionKind.inflater). What follows a member's end is its decompressor's
    `unused_data` alone: the stdlib copies it into `unconsumed_tail` too when the step before
    stopped at the output limit, and ISA-L's starts with bytes read ahead of the step."""

    def __init__(self, raw: IO[bytes], compression: str, head: bytes) -> None:
        self._raw = raw
        self._kind = kind_of(compression)
        self._name = self._kind.label
        self._lib = library()
        self._input = memoryview(head)  # compressed bytes not yet consumed
        self._at = 0  # compressed offset of self._input[0]
        self._member = 0  # compressed offset where the current member starts
        self._base = _tell(raw, len(head))  # file offset of compressed offset 0 (None: cannot seek)
        self._produced = 0  # uncompressed bytes returned so far
        self._salvaged = b""  # what inflated before the damage, not yet returned
        self._error: TFRecordError | None = None
        self._d = self._decompressor()

    def read(self, size: int) -> bytes:
        """Up to `size` decompressed bytes; b'' at the clean end of the stream. Errors carry
        no record offset: the scanner knows which record they cut and adds it."""
        while True:
            if self._salvaged:
                out, self._salvaged = self._salvaged[:size], self._salvaged[size:]
            elif self._error is not None:
                raise self._error
            else:
                inflated = self._inflate(size)
                if inflated is None:
                    return b""
                out = inflated
            if out:
                self._produced += len(out)
                return out

    def close(self) -> None:
        """Nothing to release: the file is closed by whoever opened it."""

    def _inflate(self, size: int) -> bytes | None:
        """The output of one step of input (possibly empty); None at the clean end."""
        if not self._input:
            self._input = memoryview(self._raw.read(_INPUT))
            if not self._input:
                if self._d.eof:
                    return None
                held = self._held(size)
                if held:
                    return held
                raise TruncatedRecordError(
                    f"the {self._name} stream ends before its end marker (the file is truncated)"
                )
        if self._d.eof:  # a member ended: what follows is the next member
            self._check_next_member()
            self._member = self._at
            self._d = self._decompressor()
        step = self._input[:_STEP]
        saved = self._d.copy() if self._copyable else None
        try:
            self._check_header_flags(step)
            out: bytes = self._d.decompress(step, size)
        except (zlib.error, self._lib.error) as err:
            self._salvage(saved if saved is not None else self._replayed(), step, err)
            return b""
        if self._d.eof:
            self._after_member(len(step), self._d.unused_data)
        else:
            used = len(step) - len(self._d.unconsumed_tail)
            self._input = self._input[used:]
            self._at += used
        return out

    def _held(self, size: int) -> bytes:
        """Output of input the decompressor has taken but not yet given out (ISA-L takes all it is
        fed and holds what is over the output limit); b'' when it holds none."""
        try:
            held: bytes = self._d.decompress(b"", size)
        except (zlib.error, self._lib.error):
            return b""  # the stream is cut: the caller says so
        return held

    def _after_member(self, stepped: int, rest: bytes) -> None:
        """Take up the input at the end of a member that ended in a step of `stepped` bytes: `rest`
        is all that follows its end (ISA-L's holds bytes it had read ahead of the step)."""
        used = stepped - len(rest)
        self._input = self._input[used:] if used >= 0 else memoryview(rest[:-used] + bytes(self._input))
        self._at += used

    def _check_next_member(self) -> None:
        """Raise unless the data after a member's end starts another member (GZIP's magic, a ZLIB
        header): concatenated members are one stream, anything else after the end is damage."""
        while len(self._input) < 2 and (more := self._raw.read(_INPUT)):
            self._input = memoryview(bytes(self._input) + more)
        if not self._kind.starts(bytes(self._input[:2])):
            raise not_a_next_member(self._kind, self._at)

    def _decompressor(self) -> Any:
        """A decompressor for the member starting at the input (the kind's inflater, which
        reads a GZIP header's flags: the 4th byte)."""
        if len(self._input) < 4:
            self._input = memoryview(bytes(self._input) + self._raw.read(_INPUT))
        d = self._kind.inflater(self._input)
        self._copyable = hasattr(d, "copy")
        return d

    def _check_header_flags(self, step: memoryview) -> None:
        """Raise zlib's error for a GZIP member header whose reserved flag bits are set, when `step`
        holds its flag byte: the stdlib (and TensorFlow) refuse such a header, ISA-L reads past it."""
        if self._kind.flags_at is None:
            return
        flags_at = self._member + self._kind.flags_at - self._at  # the flag byte's place in `step`
        if 0 <= flags_at < len(step) and self._kind.reserved_flags(step, flags_at):
            raise zlib.error("Error -3 while decompressing data: unknown header flags set")

    def _replayed(self) -> Any:
        """A stdlib decompressor in the state at the start of the failing step, made by inflating
        its member again from the start; None when the file cannot seek."""
        if self._base is None:
            return None
        d = zlib.decompressobj(self._kind.wbits)
        self._raw.seek(self._base + self._member)
        left = self._at - self._member
        while left:
            data = self._raw.read(min(left, _INPUT))
            if not data:
                return None
            left -= len(data)
            while data:  # output dropped, a chunk at a time
                d.decompress(data, _INPUT)
                data = d.unconsumed_tail
        return d

    def _salvage(self, d: Any, step: memoryview, err: Exception) -> None:
        """Feed `step` again from the state `d` (None: unknown) a byte at a time: keep what
        inflates before the bad byte, and the error that the next read raises."""
        out: list[bytes] = []
        bad = 0
        for bad in range(len(step) if d is not None else 0):
            try:
                out.append(d.decompress(step[bad : bad + 1]))
            except (zlib.error, self._lib.error):
                break
        self._salvaged = b"".join(out)
        where = self._produced + len(self._salvaged)
        self._error = CorruptRecordError(
            f"{self._name} stream damaged at compressed offset {self._at + bad} (uncompressed {where}): {err}"
        )


def not_a_next_member(compressed: CompressionKind, at: int) -> CorruptRecordError:
    """The error for data after the end of a member (stream) that does not start another one."""
    name, unit = compressed.label, compressed.unit
    return CorruptRecordError(
        f"the {name} stream ends at compressed offset {at}, and what follows is not another {name} {unit} "
        "(only those may follow one)"
    )


def _tell(raw: IO[bytes], consumed: int) -> int | None:
    """Where `raw` was before `consumed` bytes were read from it; None when it cannot seek."""
    try:
        return raw.tell() - consumed if raw.seekable() else None
    except (AttributeError, OSError, ValueError):
        return None
