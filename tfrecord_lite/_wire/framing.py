"""Record framing, sans-I/O. A TFRecord file is a run of records, each

    uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

all little-endian. Nothing here does I/O: `frame` builds the bytes of one
record, `scan` finds the complete records in a buffer (a chunk of a stream or
a whole memory map) and says where the first incomplete one starts. Lengths
read from the data are checked against what the buffer holds before anything
is sliced, so a corrupt length never allocates.

For small records the per-record Python work is the cost, so `scan` first walks
the length fields alone (one struct call and one append a record), then checks
what it walked: a few records one by one, many together with numpy (the length
CRCs from tables, crc.masked_length_crcs; the payload CRCs of records under a KiB with one crc32c call
over the buffer, see _payloads_match, of larger ones a call each and the footers
compared at once); a mismatch is then looked up record by record, so the error
names the first bad record exactly as a one-at-a-time walk would. With `final`, damage
that is the zero tail of a stopped write-through writer (_wire/unfinished.py) is a
TruncatedRecordError instead. `frame_many` puts the records 16 bytes apart with one join and
writes the footers and headers between them with numpy (`frame_joined` the same in three pieces, with
one 16-byte store a gap); `frame_parts` leaves long records where they are and gives each one's header
and footer beside it, for one os.writev of them all.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable, Sequence
from typing import Any

from crc32c import crc32c as _crc32c

from tfrecord_lite._errors import CorruptRecordError, PathName, TruncatedRecordError
from tfrecord_lite._repr import plural
from tfrecord_lite._wire.crc import MASK_DELTA, mask_all, masked_crc, masked_length_crcs
from tfrecord_lite._wire.unfinished import reader_of, unfinished_tail

HEADER_SIZE = 12
FOOTER_SIZE = 4
OVERHEAD = HEADER_SIZE + FOOTER_SIZE

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_HEADER = struct.Struct("<QI")


def frame_header(length: int) -> bytes:
    """The 12-byte header of a record whose payload is `length` bytes."""
    size = _U64.pack(length)
    return size + _U32.pack(masked_crc(size))


def frame_footer(data: bytes | bytearray | memoryview) -> bytes:
    """The 4-byte footer (masked CRC of the payload)."""
    return _U32.pack(masked_crc(data))


def frame(data: bytes | bytearray | memoryview) -> bytes:
    """One complete framed record: header, payload, footer."""
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    return b"".join((frame_header(view.nbytes), view, frame_footer(view)))


def header_is_valid(buf: bytes | bytearray | memoryview, pos: int = 0) -> bool:
    """True when buf[pos:pos+12] is a record header whose length CRC matches."""
    if len(buf) - pos < HEADER_SIZE:
        return False
    crc: int = _HEADER.unpack_from(buf, pos)[1]
    return masked_crc(memoryview(buf)[pos : pos + 8]) == crc


def scan(
    buf: bytes | bytearray | memoryview,
    pos: int = 0,
    *,
    verify: bool = True,
    final: bool = False,
    origin: int = 0,
    path: PathName = None,
    max_records: int | None = None,
) -> tuple[list[int], list[int], int]:
    """Find the complete records in ``buf[pos:]``.

    Returns ``(starts, lengths, next_pos)``: the payload of record k is
    ``buf[starts[k] : starts[k] + lengths[k]]`` and ``next_pos`` is where the first
    record not returned begins (the end of the buffer when all were complete).
    The length CRC is always checked; the payload CRC when `verify` is true.
    With `final` (no more data will come) an incomplete tail raises
    TruncatedRecordError. `origin` is the stream offset of ``buf[0]`` and `path`
    the file name, both only for error messages. Errors are raised for the first
    bad record in the buffer.
    """
    mv = memoryview(buf)
    end = mv.nbytes
    heads, p = _walk(mv, pos, end, max_records)
    if p > end:  # the last record runs past the buffer (or its length field is damaged)
        p = heads.pop()
    check = _check_many if len(heads) >= _MANY else _check_few
    starts, lengths, valid, bad = check(mv, heads, p, verify)
    if bad >= 0:  # a damaged payload before any damaged header comes first
        raise CorruptRecordError(_BAD_DATA, path=path, offset=origin + heads[bad])
    if valid < len(heads):
        if final:
            _check_unfinished(mv, heads[valid], end, origin, path)
        raise CorruptRecordError(_BAD_HEADER, path=path, offset=origin + heads[valid])
    if len(heads) != max_records:
        if final and p < end:
            _check_unfinished(mv, p, end, origin, path)
        _check_tail(mv, p, end, final, origin, path)
    return starts, lengths, p


_MANY = 32  # records in a buffer from which numpy checks them together
_SMALL_RECORD = 1024  # average bytes a record below which the payload CRCs are checked in one call
_BAD_HEADER = "corrupted record: the length CRC does not match"
_BAD_DATA = "corrupted record: the data CRC does not match"
Checked = tuple[list[int], list[int], int, int]  # starts, lengths, valid headers, first bad payload (-1: none)


def _walk(mv: memoryview, p: int, end: int, max_records: int | None) -> tuple[list[int], int]:
    """The offsets of the record headers from p on, following the length fields (not yet
    checked), and where the walk stopped: past `end` when the last record does not fit."""
    heads: list[int] = []
    add = heads.append
    size = _U64.unpack_from
    last = end - OVERHEAD  # the last offset where a whole (empty) record fits
    for _ in itertools.repeat(None, (last - p) // OVERHEAD + 1 if max_records is None else max_records):
        if p > last:
            break
        add(p)
        p += size(mv, p)[0] + OVERHEAD  # the loop runs once per record: local names only
    return heads, p


def _check_few(mv: memoryview, heads: list[int], p: int, verify: bool) -> Checked:
    """The records at `heads` (the next one at p): their starts and lengths, how many headers
    are valid before the first damaged one, and the first bad payload among those; one at a time,
    in one loop (the first damaged record is the one reported)."""
    starts: list[int] = []
    lengths: list[int] = []
    header = _HEADER.unpack_from
    footer = _U32.unpack_from
    known = _VALID_HEADERS.get
    crc = _crc32c
    for k, head in enumerate(heads):
        length, want = header(mv, head)
        if known(length) != want and not _header_crc_matches(mv, head, length, want):
            return starts, lengths, k, -1
        start = head + HEADER_SIZE
        stop = start + length
        if verify:
            c = crc(mv[start:stop])
            if (((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF != footer(mv, stop)[0]:
                return starts, lengths, len(heads), k
        starts.append(start)
        lengths.append(length)
    return starts, lengths, len(heads), -1


def _check_many(mv: memoryview, heads: list[int], p: int, verify: bool) -> Checked:
    """_check_few for many records, checked together with numpy: the length CRCs from tables,
    the payload CRCs with one crc32c call over the buffer (_payloads_match)."""
    import numpy as np

    at = np.array(heads, dtype=np.int64)
    lengths = np.empty_like(at)
    np.subtract(at[1:], at[:-1], out=lengths[:-1])
    lengths[-1] = p - heads[-1]
    lengths -= OVERHEAD
    wants = np.ndarray((mv.nbytes - 11,), "<u4", mv, 8, (1,))[at]  # fancy indexing: take() copies the view first
    damaged = np.flatnonzero(masked_length_crcs(lengths) != wants)
    valid = int(damaged[0]) if damaged.size else len(heads)
    starts = (at + HEADER_SIZE).tolist()
    sizes = lengths.tolist()
    bad = -1
    if verify and valid:
        # records of a KiB and more: copying them would cost more than a crc32c call each saves
        small = p - heads[0] < _SMALL_RECORD * len(heads)
        check = _payloads_match if small else _payloads_match_each
        if not check(mv, at[:valid], lengths[:valid]):
            bad = _check_few(mv, heads[:valid], p, verify)[3]  # which one: record by record
    return starts, sizes, valid, bad


def run_is_intact(buf: bytes | bytearray | memoryview, heads: Any, end: int, verify: bool = True) -> bool:
    """Whether the records starting at `heads` (an int64 array of offsets into `buf`, a run of
    records back to back, the last one ending at `end`) are all whole and undamaged: each header
    announces the length the offsets give and holds its CRC, and with `verify` each payload its
    CRC. What scan checks, for offsets known beforehand (an index), with numpy and no Python work
    per record; False says only that something differs (scan then says what, and where)."""
    import numpy as np

    mv = memoryview(buf)
    if not len(heads):
        return True
    lengths = np.diff(np.append(heads, end)) - OVERHEAD
    if int(heads[0]) < 0 or end > mv.nbytes or (lengths < 0).any():
        return False
    announced = np.ndarray((mv.nbytes - 7,), "<u8", mv, 0, (1,))[heads]
    if (announced != lengths.astype(np.uint64)).any():
        return False
    if (masked_length_crcs(lengths) != np.ndarray((mv.nbytes - 11,), "<u4", mv, 8, (1,))[heads]).any():
        return False
    if not verify:
        return True
    small = end - int(heads[0]) < _SMALL_RECORD * len(heads)
    return (_payloads_match if small else _payloads_match_each)(mv, heads, lengths)


def _payloads_match(mv: memoryview, heads: Any, lengths: Any) -> bool:
    """Whether every record at `heads` (a contiguous run, numpy arrays) has the masked CRC of its
    payload in its footer, checked with one crc32c call over a copy of the run.

    For a payload P and its plain CRC C (4 bytes, little-endian), CRC32C(P + C) is a constant,
    so in terms of the CRC without initial value and final XOR, which is linear over XOR:
    rawcrc(P' + C) = RESIDUE' with P' = P whose first 4 bytes are inverted (that is what the
    initial value does). In the copy, each header is zeroed, each footer unmasked to C and
    inverted (subtracting the zero-payload record with footer ~0, whose raw CRC is RESIDUE'
    too), and each record's first 4 bytes are inverted: the raw CRC of the copy is the XOR of
    each record's difference from a good one, shifted by where it lies. It is zero when every
    record is good. One damaged record always makes it nonzero (the shift is invertible modulo
    the polynomial); several could cancel with a chance of 2**-32, one that a damaged record
    has of matching its own CRC too. A mismatch is then found record by record."""
    import numpy as np

    first = int(heads[0])
    run = bytearray(mv[first : int(heads[-1] + lengths[-1]) + OVERHEAD])
    copy = np.frombuffer(run, np.uint8)
    words = np.ndarray((copy.size - 3,), "<u4", copy, 0, (1,))  # a little-endian uint32 at every offset
    at = heads - first
    if int(lengths.min()) >= 4:
        _prepare_joints(copy, at[1:] - 4)
        words[0:HEADER_SIZE:4] = 0  # the first record's header
        words[HEADER_SIZE] = ~words[HEADER_SIZE]  # and its first 4 bytes
        words[-1] = _unmasked_inverted(words[-1:])[0]  # the last footer
    else:  # payloads of under 4 bytes: their first 4 bytes and their footer overlap
        np.ndarray((copy.size - HEADER_SIZE + 1,), f"V{HEADER_SIZE}", copy, 0, (1,))[at] = bytes(HEADER_SIZE)
        footers = at + HEADER_SIZE + lengths
        words[footers] = _unmasked_inverted(words[footers])
        at += HEADER_SIZE
        words[at] = ~words[at]
    words[0] = ~words[0]  # CRC32C of the copy is then rawcrc ^ 0xFFFFFFFF
    return bool(_crc32c(run) == 0xFFFFFFFF)


def _prepare_joints(copy: Any, joints: Any) -> None:
    """_payloads_match's changes where records meet (payloads of 4 bytes or more): at each of
    `joints`, 20 bytes (a footer, the next header, that record's first 4 bytes) taken together
    into a new array, changed there and put back: two gathers instead of six."""
    import numpy as np

    whole = np.ndarray((copy.size - 19,), "V20", copy, 0, (1,))
    words = whole[joints].view("<u4").reshape(-1, 5)
    words[:, 0] = _unmasked_inverted(words[:, 0])
    words[:, 1:4] = 0
    words[:, 4] = ~words[:, 4]
    whole[joints] = words.view("V20").reshape(-1)


def _unmasked_inverted(masked: Any) -> Any:
    """The inverted plain CRCs of footers' masked CRCs (uint32 numpy arrays)."""
    import numpy as np

    plain = masked - np.uint32(MASK_DELTA)
    return ~((plain << np.uint32(15)) | (plain >> np.uint32(17)))


def _payloads_match_each(mv: memoryview, heads: Any, lengths: Any) -> bool:
    """_payloads_match, one crc32c call a record, the footers compared together."""
    import numpy as np

    crc = _crc32c
    starts = (heads + HEADER_SIZE).tolist()
    plain = np.array([crc(mv[s : s + n]) for s, n in zip(starts, lengths.tolist(), strict=True)], np.uint32)
    footers = np.ndarray((mv.nbytes - 3,), "<u4", mv, 0, (1,))[heads + HEADER_SIZE + lengths]
    return bool((mask_all(plain) == footers).all())


def _header_crc_matches(mv: memoryview, p: int, length: int, want: int) -> bool:
    """Whether `want` is the masked CRC of the length field at p (then remembered for this length)."""
    if masked_crc(mv[p : p + 8]) != want:
        return False
    if len(_VALID_HEADERS) < 4096:
        _VALID_HEADERS[length] = want
    return True


# length -> masked CRC of its 8 bytes, for lengths met in valid headers: a header whose
# CRC field equals the cached value is valid without computing its CRC again.
_VALID_HEADERS: dict[int, int] = {}


def _check_unfinished(mv: memoryview, p: int, end: int, origin: int, path: PathName) -> None:
    """Raise TruncatedRecordError when the rest of the buffer, from p, is the tail that a
    write-through writer left when it stopped before it closed (_wire/unfinished.py)."""
    reason = unfinished_tail(reader_of(mv), p, end)
    if reason is not None:
        raise TruncatedRecordError(reason, path=path, offset=origin + p)


def _check_tail(mv: memoryview, p: int, end: int, final: bool, origin: int, path: PathName) -> None:
    """Raise for the incomplete data at p, the buffer's end: a damaged header, or with `final`
    a truncated record; nothing when more data may complete it."""
    if p + HEADER_SIZE <= end:
        length, want = _HEADER.unpack_from(mv, p)
        if not _header_crc_matches(mv, p, length, want):
            raise CorruptRecordError(_BAD_HEADER, path=path, offset=origin + p)
        if final:
            raise TruncatedRecordError(
                f"truncated record: its header announces {plural(length, 'byte')} of data, but only "
                f"{end - p - HEADER_SIZE} of the {length + FOOTER_SIZE} bytes of data and CRC are there",
                path=path,
                offset=origin + p,
            )
    elif final and p < end:
        raise TruncatedRecordError(
            f"truncated record: the data ends {plural(end - p, 'byte')} into a 12-byte record header",
            path=path,
            offset=origin + p,
        )


def frame_many(records: Sequence[bytes]) -> memoryview:
    """The framed records, concatenated (a view of a bytearray): b"".join(map(frame, records)),
    several times faster. One join puts the records 16 bytes apart (one's footer, the next one's
    header go there, with 12 bytes before the first and 4 after the last), and numpy writes those
    fields for all records at once, as unaligned words at their offsets."""
    return framed_records(records)[0]


def frame_joined(records: Sequence[bytes]) -> tuple[bytes, bytearray, bytes]:
    """frame_many of `records` (bytes) in three pieces, to be written one after the other: the first
    header, the records joined 16 bytes apart, each gap holding one record's footer and the next one's
    header, and the last footer. The join builds no tuple around the records, the CRCs and lengths reach
    numpy through one struct.pack each (twice as fast as numpy's own conversion of Python ints), and
    numpy writes each gap's 16 bytes with one store (built as four uint32 columns, then scattered as
    one 16-byte item apiece), in few calls: a writer frames a few hundred records at a time."""
    import numpy as np

    n = len(records)
    if not n:
        return b"", bytearray(), b""
    crcs = np.frombuffer(struct.pack(f"<{n}I", *map(_crc32c, records)), dtype="<u4")
    lengths = np.frombuffer(struct.pack(f"<{n}q", *map(len, records)), dtype="<i8")
    body = _GAP.join(records)
    gaps = np.empty((n + 1, 4), dtype="<u4")  # gap i: footer of record i-1, header of record i
    gaps[1:, 0] = mask_all(crcs)  # the footers
    gaps[:-1, 1:3] = lengths.view("<u4").reshape(n, 2)  # the length's low word, then its high word
    gaps[:-1, 3] = masked_length_crcs(lengths)
    if n > 1:  # gap i (between records i and i+1) starts after i+1 records and i gaps
        starts = np.add.accumulate(lengths[:-1])  # np.cumsum's wrapper costs more than the sum
        starts += _ramp(n - 1)
        slots = np.ndarray((len(body) - OVERHEAD + 1,), "V16", body, 0, (1,))
        slots[starts] = gaps[1:-1].view("V16")[:, 0]
    edges = gaps.view(np.uint8)
    return edges[0, 4:].tobytes(), body, edges[-1, :4].tobytes()


_RAMPS: list[Any] = []


def _ramp(n: int) -> Any:
    """0, 16, 32, ... (n of them, int64), from one array kept and grown as needed."""
    import numpy as np

    if not _RAMPS or len(_RAMPS[0]) < n:
        _RAMPS[:] = [np.arange(0, OVERHEAD * max(n, 4096), OVERHEAD, dtype=np.int64)]
    return _RAMPS[0][:n]


def frame_parts(records: Sequence[bytes]) -> list[bytes]:
    """Each record's header, the record itself and its footer, in order: the parts of one os.writev
    that writes the framed records without copying the payloads together."""
    parts: list[bytes] = []
    add = parts.append
    footer = _U32.pack
    for record in records:
        n = len(record)
        c = _crc32c(record)
        add(HEADERS_BY_LENGTH.get(n) or cached_header(n))
        add(record)
        add(footer((((c >> 15) | (c << 17)) + MASK_DELTA) & 0xFFFFFFFF))
    return parts


def framed_records(records: Sequence[bytes]) -> tuple[memoryview, Any]:
    """(frame_many of `records`, their lengths as an int64 array), as TFRecordWriter.write_framed
    takes them."""
    import numpy as np

    lengths = np.fromiter(map(len, records), dtype=np.int64, count=len(records))
    return _framed(records, lengths), lengths


def _framed(records: Sequence[bytes], lengths: Any) -> memoryview:
    """frame_many of `records`, whose lengths (an int64 array) are known."""
    import numpy as np

    n = len(records)
    if not n:  # a writer's close() with nothing buffered: no tables to build
        return memoryview(bytearray())
    c = np.fromiter(map(_crc32c, records), dtype=np.uint32, count=n)
    out = _GAP.join((b"", *records, b""))
    size = len(out)
    gaps = np.arange(0, OVERHEAD * n + 1, OVERHEAD, dtype=np.int64)  # where each gap of 16 bytes starts
    np.cumsum(lengths, out=gaps[1:], dtype=np.int64)
    gaps[1:] += np.arange(OVERHEAD, OVERHEAD * n + 1, OVERHEAD, dtype=np.int64)
    _store_frames(out, gaps[:-1] + 4, lengths, c)
    return memoryview(out)[4 : size - 12]


_GAP = bytearray(OVERHEAD)  # a bytearray's join is a bytearray, which numpy writes into


def frame_buffer(data: bytes | bytearray | memoryview, ends: Sequence[int]) -> memoryview:
    """The framed records that lie back to back in `data` (record i ends at ends[i]), concatenated:
    frame_many of the slices, with no Python work per record."""
    import numpy as np

    whole = bytes(data) if type(data) is not bytes else data
    if not len(ends):
        return memoryview(b"")
    stops = np.asarray(ends, dtype=np.int64)
    lengths = np.diff(stops, prepend=0)
    if (lengths < 0).any() or int(stops[-1]) > len(whole):
        raise ValueError(f"record ends {ends[0]}..{ends[-1]} do not fit in a buffer of {len(whole)} bytes")
    records = list(map(whole.__getitem__, map(slice, (stops - lengths).tolist(), stops.tolist())))
    return _framed(records, lengths)


def fill_frames(buffer: Any, slot_ends: Any) -> Any:
    """Frame in place the records that lie in `buffer` (a writable uint8 numpy array), each in a
    slot ending at slot_ends[i] that holds HEADER_SIZE free bytes, the record and FOOTER_SIZE free
    bytes (as a batch encoder leaves them, _batches/encode.py's gather, `before` and `after`): every
    header and footer is written there, and no record is copied. Returns the records' lengths
    (an int64 array); the buffer then holds frame_many of the records."""
    import numpy as np

    ends = np.asarray(slot_ends, dtype=np.int64)
    lengths = np.diff(ends, prepend=0) - OVERHEAD
    if not len(ends):
        return lengths
    if (lengths < 0).any() or int(ends[-1]) > buffer.size:
        raise ValueError(f"slots ending at {ends[0]}..{ends[-1]} do not fit in a buffer of {buffer.size} bytes")
    starts = ends - lengths - FOOTER_SIZE
    view = memoryview(buffer)
    pieces = map(view.__getitem__, map(slice, starts.tolist(), (starts + lengths).tolist()))
    crcs = np.fromiter(map(_crc32c, pieces), dtype=np.uint32, count=len(ends))
    _store_frames(buffer, starts - HEADER_SIZE, lengths, crcs)
    return lengths


def _store_frames(buffer: Any, headers: Any, lengths: Any, crcs: Any) -> None:
    """Write into `buffer` (bytearray or uint8 array) the header at each of `headers` and the footer
    after its payload of `lengths` bytes, whose plain CRC32C is `crcs` (numpy arrays)."""
    import numpy as np

    size = len(buffer)
    words = np.ndarray((size - 3,), "<u4", buffer, 0, (1,))  # a little-endian uint32 at every offset
    np.ndarray((size - 7,), "<i8", buffer, 0, (1,))[headers] = lengths
    words[headers + 8] = masked_length_crcs(lengths)
    words[headers + HEADER_SIZE + lengths] = mask_all(crcs)


_STORE_WHOLE = 2048  # a payload up to this long is stored with its header and footer by one struct call
store_u32 = struct.Struct("<I").pack_into
_HEAD_INTO = struct.Struct("<Q4x").pack_into  # a header, its length CRC zero
# length -> (a store of the header with its length CRC zero, a payload that long and its masked CRC,
# called as store(buffer, offset, length, payload, masked CRC); the length CRC), for 4096 lengths at most
STORES: dict[int, tuple[Callable[[Any, int, int, bytes, int], None], int]] = {}


def _store_apart(mm: Any, at: int, n: int, record: bytes, masked_crc: int) -> None:
    """The store of a large record: its header (length CRC zero), payload and footer one by one, never copied
    together (a struct call would zero the whole span before copying into it)."""
    _HEAD_INTO(mm, at, n)
    mm[at + 12 : at + 12 + n] = record
    store_u32(mm, at + 12 + n, masked_crc)


def store_of(length: int) -> tuple[Callable[[Any, int, int, bytes, int], None], int]:
    """How a record of `length` bytes is stored into a writable buffer (a write-through writer's map): the
    store of all of it but its length CRC, and that CRC, to be stored last (_wire/unfinished.py)."""
    store = struct.Struct(f"<Q4x{length}sI").pack_into if length <= _STORE_WHOLE else _store_apart
    fields = store, int.from_bytes(cached_header(length)[8:], "little")
    if len(STORES) < 4096:
        STORES[length] = fields
    return fields


# length -> its header, for the first 4096 lengths met (cached_header fills it; loops look it up first)
HEADERS_BY_LENGTH: dict[int, bytes] = {}


def cached_header(length: int) -> bytes:
    """frame_header(length), remembered for the lengths met most (writers frame many of one length)."""
    header = HEADERS_BY_LENGTH.get(length)
    if header is None:
        header = frame_header(length)
        if len(HEADERS_BY_LENGTH) < 4096:
            HEADERS_BY_LENGTH[length] = header
    return header
