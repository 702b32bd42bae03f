"""Batches from DataLoader workers to the main process without pickling their values one by one,
and without a shared-memory segment per tensor (torch is imported inside the functions).

Strategy: in a worker, `for_transport` marks a batch (a dict, list or tuple of tensors, lists of
bytes and other values) by giving it a subclass of its container type. DataLoader's queues pickle
with multiprocessing's ForkingPickler, for which this module registers a reducer of those
subclasses: the bytes of every numeric tensor and the joined values of every list of bytes are
copied into one buffer, with the layout (dtypes, shapes, offsets) beside it; anything else is
pickled as usual. `pack` does the same at once and returns a Packed, for a batch that reaches the
queue through torch's default_convert (which walks a dict value by value, but passes a Packed on);
lists of flat byte memoryviews (decode_example(copy=False)'s values) are carried like lists of
bytes. The buffer is a slot of a small ring of shared-memory buffers that each worker
keeps: a slot's segment crosses to the main process once (a file descriptor, as torch shares
tensors), then only its number does. Unpickling, in the main process, copies the values out (a
list of bytes, new tensors), so the main process gets the plain container it would get without
workers, and marks the slot free again in its first byte; a worker that finds its next slot still
busy sends a one-off segment instead. The main process keeps the memory of freed large values for
the next batch (see _keep_freed_memory). A tensor of a megabyte or more (a batch of decoded images)
keeps torch's way, a segment of its own that the main process maps without a copy. Sharing a new
segment costs a few hundred microseconds per
tensor, and a list of large bytes values crossing the worker's pipe costs more; a slot reused costs
one copy on each side. Any other pickler (pickle.dumps, copy.copy) sees the plain container of a
marked batch; a Packed is for a worker's queue only.

The exception is a batch of decoded images, written in place: `batch_tensor` hands a worker a tensor
of a megabyte or more that views a free slot of a second ring, of batch buffers (a new segment cost
3-4 ms of first-touch page faults per 4.8 MB batch, and a file descriptor sent each time). Such a
tensor crosses as (token, slot, dtype, shape, strides, offset), with the slot's segment the first
time; the main process maps each slot once and hands out a tensor that views it, without a copy, and
marks the slot free in its first byte when the last view of it is dropped (weakref.finalize on the
numpy array behind torch.from_numpy, which torch keeps alive while any view of its storage lives).
The worker takes a slot only when that byte is 0 and it holds no tensor of the slot itself, else a
one-off segment: memory that a live tensor views is never written again.

A worker's first batch made mostly of large bytes values (raw records handed on undecoded: 90 % of
its bytes in values of 4 KiB and more) carries a DataLoaderWarning's advice, which the main process
warns once: there the main process's copy costs about what reading the records itself would, so
workers cannot gain much (docs/torch.md, "Choosing num_workers").
"""

from __future__ import annotations

import itertools
import os
import threading
import warnings
import weakref
from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np

from tfrecord_lite._errors import DataLoaderWarning

_SLOTS = 4  # batches of one worker in flight: DataLoader's prefetch_factor (2), one being pickled, one spare
_HEADER = 64  # bytes before a slot's data: byte 0 is 1 while the main process has not copied the batch out
_ALIGN = 64
_OWN_SEGMENT = 1 << 20  # tensors this large keep torch's way: their own segment, mapped, not copied
_LARGE_VALUES = 4096  # mean size of a list's bytes values above which each is copied on its own
_KEEP_FREED = 16 << 20  # glibc keeps up to twice this much freed memory, see _keep_freed_memory
_COPY_BOUND = 0.9  # share of a batch's bytes in large bytes values from which workers are bound by the copy


class _Dict(dict):  # type: ignore[type-arg]
    """A batch dict marked for transport."""


class _List(list):  # type: ignore[type-arg]
    """A batch list marked for transport."""


class _Tuple(tuple):  # type: ignore[type-arg]
    """A batch tuple marked for transport."""


_MARKED: dict[type, type] = {dict: _Dict, list: _List, tuple: _Tuple}
_PLAIN: dict[type, type] = {_Dict: dict, _List: list, _Tuple: tuple}


def for_transport(batch: Any) -> Any:
    """`batch` marked for the ring transport when called in a DataLoader worker (a dict, list or tuple;
    anything else, and anything in the main process, is returned as it is)."""
    from torch.utils.data import get_worker_info

    return batch if get_worker_info() is None else mark(batch)


def mark(batch: Any) -> Any:
    """`batch` marked for the ring transport wherever it is (a dict, list or tuple; else as it is)."""
    kind = _MARKED.get(type(batch))
    if kind is None:
        return batch
    return kind(batch.items()) if kind is _Dict else kind(batch)


# --------------------------------------------------------------------------- worker side


class _Ring:
    """The shared-memory slots of one worker process, used in turn."""

    def __init__(self) -> None:
        self.token = f"{os.getpid()}-{os.urandom(6).hex()}"  # names this ring in the main process
        self.slots: list[Any] = [None] * _SLOTS  # uint8 tensors in shared memory
        self.sent = [False] * _SLOTS  # whether the main process has the slot's segment
        self.turn = 0
        self.advised = False  # whether a batch carried DataLoaderWarning's advice

    def take(self, size: int) -> tuple[int, Any, bool]:
        """(slot number or -1 for a one-off segment, its tensor, whether its segment must be sent)."""
        slot = self.turn
        self.turn = (slot + 1) % _SLOTS
        tensor = self.slots[slot]
        if tensor is not None and tensor.numpy()[0]:  # still being copied out: a one-off segment
            return -1, _shared(_HEADER + size), True
        if tensor is None or tensor.numel() < _HEADER + size:
            capacity = max(_HEADER + size, 2 * (tensor.numel() if tensor is not None else 0))
            tensor = self.slots[slot] = _shared(capacity)
            self.sent[slot] = False
        first, self.sent[slot] = not self.sent[slot], True
        return slot, tensor, first


_ring: _Ring | None = None


def _shared(size: int) -> Any:
    """A new uint8 tensor of `size` bytes in shared memory."""
    import torch

    tensor = torch.empty(size, dtype=torch.uint8)
    return tensor.share_memory_()  # type: ignore[no-untyped-call]


def _worker_ring() -> _Ring:
    global _ring
    if _ring is None or not _ours(_ring):  # a forked child makes its own
        _ring = _Ring()
    return _ring


def _ours(ring: _Ring | _BatchRing) -> bool:
    """Whether `ring` was made by this process (a forked worker inherits its parent's)."""
    return ring.token.startswith(f"{os.getpid()}-")


def _plain_tensor(value: Any) -> bool:
    """Whether `value` is a dense CPU tensor that needs no autograd: one whose memory can cross as bytes."""
    import torch

    if not isinstance(value, torch.Tensor) or value.layout != torch.strided or value.is_nested:
        return False
    return value.device.type == "cpu" and not value.requires_grad


def _tensor_array(value: Any) -> np.ndarray | None:
    """A dense CPU tensor's values as a flat numpy array (None for other values and dtypes numpy lacks)."""
    if not _plain_tensor(value):
        return None
    try:
        array: np.ndarray = value.contiguous().numpy().reshape(-1)
    except (TypeError, RuntimeError):  # bfloat16 and others numpy has no dtype for
        return None
    return array


def _is_bytes_list(value: Any) -> bool:
    """A non-empty list of bytes, or of flat byte memoryviews (decode_example(copy=False)'s values),
    which arrive as bytes."""
    if type(value) is not list or not value:
        return False
    kinds = set(map(type, value))
    return kinds == {bytes} or (kinds <= {bytes, memoryview} and all(map(_is_byte_view, value)))


def _is_byte_view(value: Any) -> bool:
    return type(value) is bytes or (value.ndim == 1 and value.itemsize == 1 and value.c_contiguous)


def _layout(values: list[Any]) -> tuple[list[tuple[Any, ...]], list[tuple[int, np.ndarray]], int]:
    """(layout entry per value, (start, bytes) of what to copy into the slot, total size):
    ("t", numpy dtype, shape, start, n) for a tensor, ("b", offsets, start) for a list of bytes, ("v", value)
    for anything else."""
    entries: list[tuple[Any, ...]] = []
    copies: list[tuple[int, np.ndarray]] = []
    size = 0
    for value in values:
        ring_entry = _ring_entry(value)
        if ring_entry is not None:  # a view of the ring of batch buffers: its slot number, no copy
            entries.append(ring_entry)
            continue
        array = _tensor_array(value)
        if array is not None and array.nbytes >= _OWN_SEGMENT:
            entries.append(("v", value))  # a segment of its own, as torch shares tensors: no copy
            continue
        if array is not None:
            raw = array.view(np.uint8)
            entries.append(("t", array.dtype.str, tuple(value.shape), size, raw.nbytes))
        elif _is_bytes_list(value):
            offsets = np.zeros(len(value) + 1, np.int64)
            np.cumsum([len(v) for v in value], out=offsets[1:])
            entries.append(("b", offsets.tobytes(), size))
            total = int(offsets[-1])
            if total >= _LARGE_VALUES * len(value):  # large values: each copied into the slot, not joined first
                copies.extend(
                    (size + int(at), np.frombuffer(v, np.uint8)) for at, v in zip(offsets, value, strict=False)
                )
                size += -(-total // _ALIGN) * _ALIGN
                continue
            raw = np.frombuffer(b"".join(value), np.uint8)
        else:
            entries.append(("v", value))
            continue
        copies.append((size, raw))
        size += -(-raw.nbytes // _ALIGN) * _ALIGN
    return entries, copies, size


class Packed:
    """A batch already copied into a slot of this worker's ring (by `pack`): what it pickles to is
    the slot's number and the batch's layout, which the main process unpacks into the plain batch."""

    __slots__ = ("_args",)

    def __init__(self, args: tuple[Any, ...]) -> None:
        self._args = args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return _unpack, self._args


def pack(batch: Any) -> Any:
    """`batch` (a dict, list or tuple, marked or not) copied into a slot of this process's ring now,
    as a Packed to put on a DataLoader queue; anything else is returned as it is. For a worker whose
    batch goes to the queue untouched: torch's default_convert returns a Packed as it is, where it
    walks a dict element by element, and the feeder thread has nothing left to copy."""
    plain = _PLAIN.get(type(batch), type(batch))
    if plain not in _MARKED:
        return batch
    return Packed(_packed(batch, plain))


def _reduce(batch: Any) -> tuple[Any, tuple[Any, ...]]:
    """The ForkingPickler reduction of a marked batch: its values packed into a slot of the ring."""
    return _unpack, _packed(batch, _PLAIN[type(batch)])


def _packed(batch: Any, plain: type) -> tuple[Any, ...]:
    """`_unpack`'s arguments for `batch`, whose values are copied into a slot of the ring."""
    keys = list(batch) if plain is dict else None
    entries, copies, size = _layout(list(batch.values()) if plain is dict else list(batch))
    ring = _worker_ring()
    slot, tensor, send = ring.take(size)
    data = tensor.numpy()
    for start, raw in copies:
        data[_HEADER + start : _HEADER + start + raw.nbytes] = raw
    data[0] = 1
    advice = None if ring.advised or not _in_worker() else _copy_bound(entries, size)
    ring.advised = ring.advised or advice is not None
    return plain.__name__, keys, entries, ring.token, slot, tensor if send else None, advice


def _in_worker() -> bool:
    from torch.utils.data import get_worker_info

    return get_worker_info() is not None


def _copy_bound(entries: list[tuple[Any, ...]], size: int) -> str | None:
    """DataLoaderWarning's advice for a batch made mostly of large bytes values (raw records handed on
    undecoded), whose copy out in the main process costs about what reading them there would; else None."""
    lists = [np.frombuffer(e[1], np.int64) for e in entries if e[0] == "b"]
    large = [o for o in lists if o[-1] >= _LARGE_VALUES * (len(o) - 1)]
    carried = sum(int(o[-1]) for o in large)
    if not large or carried < _COPY_BOUND * size:
        return None
    mean = carried // sum(len(o) - 1 for o in large)
    return (
        f"DataLoader workers hand on batches of large bytes values ({mean / 1024:.0f} KiB each), undecoded: "
        "each crosses to the main process by a copy on each side, and the main process's copy costs about "
        "what reading the record there costs, so workers gain little or nothing over num_workers=0. They "
        "pay off when the records are decoded in them (a transform=, images.ImageTransform); see "
        "docs/torch.md, 'Choosing num_workers' (warnings.filterwarnings('ignore', "
        "category=tfrecord_lite.DataLoaderWarning) silences this)"
    )


for _kind in _PLAIN:
    ForkingPickler.register(_kind, _reduce)


# --------------------------------------------------------------------------- main-process side

_received: dict[str, dict[int, Any]] = {}  # ring token -> slot -> the slot's tensor, in this process


def _slot(token: str, slot: int, tensor: Any) -> Any:
    """The tensor of a ring slot: the one sent with the batch (kept for the next batches of the slot)."""
    if slot < 0:
        return tensor
    if tensor is not None:
        if token not in _received:
            _forget_dead_workers()
        _received.setdefault(token, {})[slot] = tensor
        return tensor
    return _received[token][slot]


def _forget_dead_workers() -> None:
    """Drop the slots of rings (and of rings of batch buffers) whose worker process has exited."""
    for token in [*_received, *_batch_slots]:
        try:
            os.kill(int(token.split("-")[0]), 0)
        except ProcessLookupError:
            _received.pop(token, None)
            _batch_slots.pop(token, None)
        except (PermissionError, ValueError):
            pass


def _unpack(
    container: str,
    keys: list[Any] | None,
    entries: list[tuple[Any, ...]],
    token: str,
    slot: int,
    tensor: Any,
    advice: str | None = None,
) -> Any:
    """The batch, copied out of its slot into new tensors and bytes; the slot is then free again. The
    worker's `advice` (its first copy-bound batch) is warned once per process."""
    import torch

    if advice is not None:
        _advise(advice)

    data = _slot(token, slot, tensor).numpy()
    view = memoryview(data)
    values: list[Any] = []
    for entry in entries:
        if entry[0] == "v":
            values.append(entry[1])
        elif entry[0] == "r":
            values.append(_ring_tensor(entry))
        elif entry[0] == "t":  # copied by numpy: a quarter of the time of torch.empty and a copy
            _, dtype, shape, start, n = entry
            values.append(
                torch.from_numpy(data[_HEADER + start : _HEADER + start + n].view(dtype).reshape(shape).copy())
            )
        else:
            values.append(_bytes_list(view, np.frombuffer(entry[1], np.int64), _HEADER + entry[2]))
    del view
    data[0] = 0
    if container == "dict":
        return dict(zip(keys, values, strict=True))  # type: ignore[arg-type]
    return list(values) if container == "list" else tuple(values)


_advised = False


def _advise(advice: str) -> None:
    """A DataLoaderWarning, once in this process."""
    global _advised
    if not _advised:
        _advised = True
        warnings.warn(advice, DataLoaderWarning, stacklevel=2)


def _bytes_list(view: memoryview, offsets: np.ndarray, start: int) -> list[bytes]:
    """The bytes values at `offsets` (from `start`) of a slot: large ones copied out one by one, small
    ones sliced from one copy of them all (a slice of bytes is cheaper than one of a memoryview)."""
    bounds = offsets.tolist()
    if bounds[-1] >= _LARGE_VALUES * (len(bounds) - 1):
        _keep_freed_memory()
        return [bytes(view[start + a : start + b]) for a, b in itertools.pairwise(bounds)]
    joined = bytes(view[start : start + bounds[-1]])
    return [joined[a:b] for a, b in itertools.pairwise(bounds)]


_kept = False


def _keep_freed_memory() -> None:
    """Once per process: let glibc's malloc keep the memory of freed large values for the next batch.
    A batch's large bytes values (64 KiB images) come from malloc's heap; freeing a batch gives the
    top of the heap back to the system, so that the next batch faults every page in again (as much
    CPU as the copy itself). Freeing one block allocated by mmap raises glibc's dynamic thresholds:
    below that size allocations come from the heap, which it trims only beyond twice that size.
    Other allocators, or thresholds set by the user (MALLOC_TRIM_THRESHOLD_ ...), are left as they are."""
    global _kept
    if not _kept:
        _kept = True
        bytes(_KEEP_FREED)  # allocated (calloc: by mmap, no page touched) and freed at once


def is_marked(batch: Any) -> bool:
    """Whether `batch` is marked for the ring transport."""
    return type(batch) in _PLAIN


# --------------------------------------------------------------------------- large tensors: a ring of batch buffers

_BATCH_SLOTS = 4  # a worker's batches alive at once: prefetch_factor (2), one being made, one in the user's loop body


class _BatchRing:
    """A worker's shared-memory buffers for large batch tensors (`batch_tensor`), used in turn. A slot is
    free when the worker no longer holds the array its tensor was made from and its busy byte is 0
    (set when the tensor is sent, cleared by the main process when its last view there is dropped)."""

    def __init__(self) -> None:
        self.token = f"{os.getpid()}-{os.urandom(6).hex()}"
        self.slots: list[Any] = [None] * _BATCH_SLOTS  # uint8 tensors in shared memory
        self.sent = [False] * _BATCH_SLOTS
        self.held: list[Any] = [None] * _BATCH_SLOTS  # weak references to the arrays handed out
        self.starts: dict[int, int] = {}  # address of a slot's data -> slot
        self.turn = 0

    def take(self, size: int, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray | None:
        """An array of `shape` viewing the first free slot from the next one on (the worker holds it from now
        on), else None: a batch kept in the main process holds its slot, not every _BATCH_SLOTS-th batch."""
        slot = next((s for s in self._order() if self._free(s)), None)
        if slot is None:
            return None
        self.turn = (slot + 1) % _BATCH_SLOTS
        tensor = self.slots[slot]
        if tensor is None or tensor.numel() < _HEADER + size:
            tensor = self.slots[slot] = _shared(_HEADER + size)
            self.sent[slot] = False
            self.starts = {_data_address(t): s for s, t in enumerate(self.slots) if t is not None}
        array: np.ndarray = tensor.numpy()[_HEADER : _HEADER + size].view(dtype).reshape(shape)
        self.held[slot] = weakref.ref(array)  # torch.from_numpy keeps this very array alive
        return array

    def _order(self) -> list[int]:
        return [(self.turn + i) % _BATCH_SLOTS for i in range(_BATCH_SLOTS)]

    def _free(self, slot: int) -> bool:
        tensor = self.slots[slot]
        return tensor is None or (self.held[slot]() is None and not tensor.numpy()[0])


_batch_ring: _BatchRing | None = None


def _data_address(slot: Any) -> int:
    return int(slot.data_ptr()) + _HEADER


def batch_tensor(shape: tuple[int, ...], dtype: Any, *, ring_from: int = _OWN_SEGMENT) -> Any:
    """An uninitialised tensor for a batch. In a DataLoader worker, a tensor of `ring_from` bytes or more
    (a megabyte) views a free slot of the worker's ring of batch buffers, which crosses to the main process
    inside a marked batch as its slot number (the main process views the slot, no copy, no new segment);
    when every slot is still in use (batches kept), or for smaller tensors, it is a new segment of shared
    memory. Outside a worker, a plain tensor."""
    import torch
    from torch.utils.data import get_worker_info

    if get_worker_info() is None:
        return torch.empty(shape, dtype=dtype)
    empty = torch.empty(0, dtype=dtype)
    size = int(np.prod(shape)) * empty.element_size()
    dtype_ = _numpy_dtype(empty)
    array = _worker_batch_ring().take(size, dtype_, shape) if size >= ring_from and dtype_ is not None else None
    if array is None:
        storage = torch.UntypedStorage._new_shared(size)  # type: ignore[no-untyped-call]
        return empty.set_(storage).view(shape)
    return torch.from_numpy(array)


def _numpy_dtype(empty: Any) -> np.dtype[Any] | None:
    try:
        return empty.numpy().dtype  # type: ignore[no-any-return]
    except TypeError:  # bfloat16 and others numpy has no dtype for
        return None


def _worker_batch_ring() -> _BatchRing:
    global _batch_ring
    if _batch_ring is None or not _ours(_batch_ring):
        _batch_ring = _BatchRing()
    return _batch_ring


def _ring_entry(value: Any) -> tuple[Any, ...] | None:
    """The layout entry of a tensor that views a slot of this worker's ring of batch buffers, whose busy
    byte is set now: ("r", ring token, slot, the slot's tensor the first time, numpy dtype, shape, stride,
    storage offset, bytes of the slot in use); None for any other value."""
    import torch

    ring = _batch_ring
    if ring is None or not _plain_tensor(value):
        return None
    storage = value.untyped_storage()
    slot = ring.starts.get(int(storage.data_ptr()))
    if slot is None:
        return None
    dtype = _numpy_dtype(torch.empty(0, dtype=value.dtype))
    if dtype is None:
        return None
    tensor = ring.slots[slot]
    tensor.numpy()[0] = 1
    send, ring.sent[slot] = not ring.sent[slot], True
    shape, stride = tuple(value.shape), value.stride()
    return (
        "r",
        ring.token,
        slot,
        tensor if send else None,
        dtype.str,
        shape,
        stride,
        value.storage_offset(),
        storage.nbytes(),
    )


_batch_slots: dict[str, dict[int, np.ndarray]] = {}  # ring token -> slot -> the slot's bytes, in this process
_batch_views: dict[tuple[str, int], int] = {}  # (ring token, slot) -> arrays alive that view it
_views_lock = threading.RLock()  # views are dropped in any thread (pin_memory's), or by the collector


def _ring_tensor(entry: tuple[Any, ...]) -> Any:
    """The tensor of a ring entry: a view of its slot, freed (busy byte 0) when its last view is dropped."""
    import torch

    _, token, slot, tensor, dtype, shape, stride, offset, nbytes = entry
    if tensor is not None:
        if token not in _batch_slots:
            _forget_dead_workers()
        _batch_slots.setdefault(token, {})[slot] = tensor.numpy()
    data = _batch_slots[token][slot]
    array = data[_HEADER : _HEADER + nbytes].view(dtype)
    with _views_lock:
        _batch_views[token, slot] = _batch_views.get((token, slot), 0) + 1
    weakref.finalize(array, _release, token, slot, data)  # torch.from_numpy keeps this very array alive
    return torch.from_numpy(array).as_strided(shape, stride, offset)


def _release(token: str, slot: int, data: np.ndarray) -> None:
    """One view of a slot is gone; the slot is free again once none is left."""
    with _views_lock:
        left = _batch_views.pop((token, slot)) - 1
        if left:
            _batch_views[token, slot] = left
        else:
            data[0] = 0


def is_ring_tensor(value: Any) -> bool:
    """Whether `value` is a tensor that views a slot of a ring of batch buffers (in this process)."""
    import torch

    if not isinstance(value, torch.Tensor):
        return False
    address = int(value.untyped_storage().data_ptr())
    ring = _batch_ring
    if ring is not None and _ours(ring) and address in ring.starts:
        return True
    return any(address == int(d[_HEADER:].ctypes.data) for slots in _batch_slots.values() for d in slots.values())
