"""Batching decoded items into tensors for PyTorch (tfrecord_lite.torch re-exports it; torch is
imported inside the functions that use it, so importing this module never imports torch).

Collate turns a list of dict items into one dict of tensors: equal shapes are stacked, ragged
first dimensions padded (with a lengths tensor), kept as lists or made torch.nested (jagged)
tensors, bytes and strings stay lists, Sparse values become one torch.sparse_coo_tensor with
the item's number as its first dimension. A RaggedFeature's nested rows (Ragged) are stacked into one
Ragged of the batch first, then padded in every ragged dimension at once (a lengths tensor per
dimension) or made nested tensors the same way. Items that are not dicts (an ImageTransform's
(image, label) tuples) go to torch's default_collate, after a check that gives tensors of
different sizes a clear error instead of torch's.
The same layout is built two ways: from decoded items (__call__), and from decode_examples'
columns (columns()), which is faster for small records; decode_batch picks one by record size.
In a DataLoader worker a batch is marked for transport.py, which moves its tensors and lists of
bytes to the main process in one reused shared-memory buffer; worker_collate is torch's default_collate
made so (the torch datasets give it to a worker fetcher that would run default_collate).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

from tfrecord_lite._batches.columnar import decode_examples
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._example.decode import decode_example
from tfrecord_lite._example.ragged import Ragged, padded, stack
from tfrecord_lite._example.ragged_spec import RaggedFeature
from tfrecord_lite._example.sparse import Sparse, stack_sparse
from tfrecord_lite._example.spec import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from tfrecord_lite._example.validate import check_choice
from tfrecord_lite._loader.transport import batch_tensor, for_transport, mark
from tfrecord_lite._repr import describe


def to_torch(value: Any) -> Any:
    """numpy numeric arrays / scalars -> tensors sharing their memory (dicts, lists and tuples recursively),
    a Sparse of numbers -> a sparse COO tensor; bytes, strings, object arrays and None stay as they are."""
    import torch

    if isinstance(value, Sparse):
        return sparse_tensor(value)
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value) if value.dtype.kind in "biuf" else value
    if isinstance(value, np.generic):
        return torch.from_numpy(np.asarray(value)) if value.dtype.kind in "biuf" else value
    if isinstance(value, dict):
        return {k: to_torch(v) for k, v in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], (np.ndarray, np.generic)):
        return [to_torch(v) for v in value]
    return value


def sparse_tensor(value: Sparse) -> Any:
    """A Sparse of numbers as a torch.sparse_coo_tensor (its indices checked against its dense shape,
    duplicates kept, not coalesced); a Sparse of bytes stays as it is."""
    import torch

    if isinstance(value.values, list):
        return value
    return torch.sparse_coo_tensor(
        torch.from_numpy(np.ascontiguousarray(value.indices.T)),
        torch.from_numpy(np.asarray(value.values)),
        tuple(value.dense_shape.tolist()),
        check_invariants=True,
    )


def _sparse_column(key: str, values: Sparse | list[Any]) -> Any:
    """One key's batch from a batch Sparse, or from items' Sparse values (one sparse tensor, the
    item's number first); an error names the key."""
    if isinstance(values, list) and not all(isinstance(v, Sparse) for v in values):
        return values
    try:
        return sparse_tensor(stack_sparse(values) if isinstance(values, list) else values)
    except (ValueError, RuntimeError) as err:  # torch's RuntimeError: an index outside the dense shape
        raise ValueError(f"{key!r}: {err}") from None


def _numeric_tensor(value: Any) -> torch.Tensor | None:
    import torch

    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf":
        return torch.from_numpy(np.asarray(value))
    return None


class Collate:
    """Batches dict items: equal-shape numbers are stacked; numbers whose first dimension differs
    (VarLenFeature, RaggedFeature, feature lists) are padded with `pad_value` plus a `<key>_length`
    tensor (varlen="pad", the default), kept as a list of tensors (varlen="list"), or made one
    torch.nested tensor of jagged layout (varlen="nested"); bytes, strings, None and object arrays
    become lists. A RaggedFeature with partitions has more ragged dimensions: padded, each gets a
    lengths tensor, `<key>_length` for the batch's rows, then `<key>_length_1` (shape [batch, rows])
    and so on inwards; "list" nests lists of tensors; "nested" takes one ragged dimension only.
    Keys in `ragged` are always padded with lengths, even when a batch happens to be regular (a
    dataset's `collate_fn` knows them from its spec). Items that are not dicts go to torch's
    default_collate; a single dict (batch_size=None) is converted with to_torch."""

    def __init__(
        self,
        *,
        varlen: str = "pad",
        pad_value: float = 0,
        length_key: str = "{}_length",
        ragged: Iterable[str] = (),
    ) -> None:
        self.varlen = check_choice("varlen", varlen, ("pad", "list", "nested"))
        self.pad_value = pad_value
        self.length_key = length_key
        self.ragged = frozenset(ragged)

    def __repr__(self) -> str:
        ragged = f"ragged={sorted(self.ragged)!r}" if self.ragged else None
        return describe(
            "Collate",
            f"varlen={self.varlen!r}",
            f"pad_value={self.pad_value!r}",
            f"length_key={self.length_key!r}",
            ragged,
        )

    def for_spec(
        self, features: Mapping[str, Any] | None = None, sequence_features: Mapping[str, Any] | None = None
    ) -> Collate:
        """This collation with the ragged keys of a spec: VarLenFeatures and RaggedFeatures of an
        Example and FixedLenSequenceFeatures of a SequenceExample."""
        keys = {k for k, spec in (features or {}).items() if isinstance(spec, (VarLenFeature, RaggedFeature))}
        keys |= {k for k, spec in (sequence_features or {}).items() if isinstance(spec, FixedLenSequenceFeature)}
        return Collate(
            varlen=self.varlen, pad_value=self.pad_value, length_key=self.length_key, ragged=self.ragged | keys
        )

    def __call__(self, batch: Sequence[Any]) -> Any:
        from torch.utils.data import default_collate, get_worker_info

        if isinstance(batch, Mapping):  # one item (DataLoader with batch_size=None)
            return to_torch(dict(batch))
        if not batch or not isinstance(batch[0], Mapping):
            check_same_sizes(batch)
            return default_collate(list(batch)) if get_worker_info() is None else worker_collate(list(batch))
        return self._assemble({key: self._column(key, [item[key] for item in batch]) for key in batch[0]})

    def columns(self, columns: Mapping[str, Any]) -> dict[str, Any]:
        """The batch layout of __call__ from decode_examples' columns (arrays, Ragged, lists of bytes)."""
        import torch

        out: dict[str, tuple[Any, torch.Tensor | None]] = {}
        for key, col in columns.items():
            if isinstance(col, Ragged):
                out[key] = self._ragged(col, key)
            elif isinstance(col, Sparse):
                out[key] = (_sparse_column(key, col), None)
            elif isinstance(col, np.ndarray):
                out[key] = (torch.from_numpy(col) if col.dtype.kind in "biuf" else col.tolist(), None)
            else:
                out[key] = (col, None)
        return self._assemble(out)

    def _assemble(self, columns: Mapping[str, tuple[Any, Any]]) -> dict[str, Any]:
        """The batch dict: each key's value, followed by its lengths (a tensor, or a list of them
        for more ragged dimensions) when it was padded."""
        out: dict[str, Any] = {}
        for key, (value, lengths) in columns.items():
            out[key] = value
            if lengths is None:
                continue
            for depth, tensor in enumerate(lengths if isinstance(lengths, list) else [lengths]):
                name = self.length_key.format(key) + (f"_{depth}" if depth else "")
                if name in columns or name in out:
                    raise ValueError(f"cannot add the lengths of {key!r} as {name!r}: the items already have that key")
                out[name] = tensor
        marked: dict[str, Any] = for_transport(out)
        return marked

    def _ragged(self, col: Ragged, key: str = "") -> tuple[Any, Any]:
        """A batch's Ragged column in this collation's layout (bytes stay nested lists)."""
        import torch

        flat = col.flat_values
        if flat.dtype.kind not in "biuf":
            return col.to_list(), None
        if self.varlen == "list":
            return _tensor_rows(col), None
        if self.varlen == "nested":
            if col.ragged_rank > 1:
                raise ValueError(
                    f"{key!r} has {col.ragged_rank} ragged dimensions; torch.nested tensors (jagged layout) "
                    "have one: use Collate(varlen='pad') or varlen='list'"
                )
            offsets = torch.from_numpy(col.row_splits.astype(np.int64))
            return torch.nested.nested_tensor_from_jagged(torch.from_numpy(flat), offsets), None
        dense, lengths = padded(col, self.pad_value)
        tensors = [torch.from_numpy(length) for length in lengths]
        return torch.from_numpy(dense), tensors[0] if len(tensors) == 1 else tensors

    def _column(self, key: str, values: list[Any]) -> tuple[Any, torch.Tensor | None]:
        """One key's batch, and the lengths tensor when it was padded."""
        import torch

        if values and isinstance(values[0], Sparse):
            return _sparse_column(key, values), None
        if set(map(type, values)) <= _BYTES_TYPES:  # a scalar bytes feature: the values as they are
            return list(values), None
        ragged = key in self.ragged
        if any(isinstance(v, Ragged) for v in values) or (ragged and self.varlen == "nested" and _arrays(values)):
            return self._ragged(stack(values), key)
        if not ragged and all(isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "biuf" for v in values):
            shape = values[0].shape
            if all(v.shape == shape for v in values):
                return torch.from_numpy(np.stack(values)), None
        tensors = [_numeric_tensor(v) for v in values]
        if any(t is None for t in tensors):
            return [v.tolist() if isinstance(v, np.ndarray) else to_torch(v) for v in values], None
        shapes = {tuple(t.shape) for t in tensors}  # type: ignore[union-attr]
        if len(shapes) == 1 and (not ragged or () in shapes):  # numbers cannot be padded: stacked
            return torch.stack(tensors), None  # type: ignore[arg-type]
        ndims = {len(s) for s in shapes}
        if self.varlen == "list" or len(ndims) != 1 or 0 in ndims or len({s[1:] for s in shapes}) != 1:
            return tensors, None
        lengths = [int(t.shape[0]) for t in tensors]  # type: ignore[union-attr]
        trailing = tuple(next(iter(shapes))[1:])
        dtype = tensors[0].dtype  # type: ignore[union-attr]
        for t in tensors[1:]:
            dtype = torch.promote_types(dtype, t.dtype)  # type: ignore[union-attr]
        padded = torch.full((len(tensors), max(lengths)) + trailing, self.pad_value, dtype=dtype)
        for row, (t, n) in enumerate(zip(tensors, lengths, strict=False)):
            padded[row, :n] = t  # type: ignore[assignment]
        return padded, torch.tensor(lengths, dtype=torch.int64)


_BYTES_TYPES = {bytes, memoryview}  # a scalar bytes value, memoryviews with decode_example(copy=False)


def _arrays(values: list[Any]) -> bool:
    """Whether every value is a numeric array of at least one dimension."""
    return all(isinstance(v, np.ndarray) and v.ndim and v.dtype.kind in "biuf" for v in values)


def _tensor_rows(col: Ragged) -> list[Any]:
    """The rows of a Ragged as tensors, nested in lists as deep as its ragged dimensions."""
    import torch

    rows = [col.row(i) for i in range(col.nrows)]
    return [_tensor_rows(r) if isinstance(r, Ragged) else torch.from_numpy(r) for r in rows]


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "scalar"


def check_same_sizes(batch: Sequence[Any]) -> None:
    """Raise a ValueError naming the sizes seen when the arrays or tensors that one position of the
    items holds (each item itself, or each element of tuple items) differ in shape, which
    default_collate cannot stack (in a DataLoader worker it says only "Trying to resize storage
    that is not resizable")."""
    first = batch[0]
    if isinstance(first, (tuple, list)):
        width = min(len(item) if isinstance(item, (tuple, list)) else 0 for item in batch)
        columns = [(f"element {i} of the items", [item[i] for item in batch]) for i in range(width)]
    else:
        columns = [("the items", list(batch))]
    for where, values in columns:
        shapes = [tuple(v.shape) for v in values if hasattr(v, "shape") and hasattr(v, "dtype")]
        if len(shapes) == len(values) and len(set(shapes)) > 1:
            seen = ", ".join(_shape_text(s) for s in dict.fromkeys(shapes))
            raise ValueError(
                f"cannot stack {where} into one batch: their sizes differ ({seen}), as images of different "
                "sizes do; give them one size first, e.g. images.ImageTransform(resize=(h, w)) or "
                "ImageTransform(pad_to=(h, w)), or pack the images with resize="
            )


# Mean record size above which a batch is decoded record by record: the columnar decoder's fixed
# per-batch cost (~1 ms of numpy calls) outweighs per-record parsing for few, large records
# (measured on 64 KiB Examples, batch 32: 10 us per record vs 37 us by columns).
_LARGE_RECORD = 4096


def decode_batch(
    records: list[bytes], features: Mapping[str, Any], collate_fn: Collate, *, copy: bool = True
) -> dict[str, Any]:
    """A batch of Examples decoded by `features` in collate_fn's layout, with the spec's ragged keys
    (before any transform): by columns, or record by record when the records are large (the layout
    is the same either way). `copy=False` leaves large records' bytes values as memoryviews into
    them (decode_example's), for a batch whose next stop is transport.py, which copies them anyway."""
    collate_fn = collate_fn.for_spec(features)
    if sum(map(len, records)) >= _LARGE_RECORD * len(records):
        batch: dict[str, Any] = collate_fn([_decoded(r, k, features, copy) for k, r in enumerate(records)])
        return batch
    return collate_fn.columns(decode_examples(records, features))


def _decoded(record: bytes, k: int, features: Mapping[str, Any], copy: bool) -> dict[str, Any]:
    """decode_example of record `k` of a batch, an error marked as about that record (columnar.placing)."""
    try:
        return decode_example(record, features, copy=copy)
    except TFRecordError as err:
        err.batch_record = k  # type: ignore[attr-defined]  # what the decoder said is of its one record
        raise


def views_cross_whole(features: Mapping[str, Any] | None) -> bool:
    """Whether Examples decoded by `features` with copy=False hold their memoryviews only as whole
    values of a key (every bytes feature a scalar FixedLenFeature), so that a batch of them has lists
    of memoryviews, which transport.py carries as lists of bytes, and no view nested deeper."""
    if features is None:
        return False
    return all(
        getattr(spec, "dtype", "bytes") != "bytes" or (type(spec) is FixedLenFeature and spec.shape == ())
        for spec in features.values()
    )


collate = Collate()  # without a spec: pads only the keys whose shapes differ within a batch


# Batch tensors from this size on are stacked into the ring of batch buffers (no copy in the main process,
# which saved it 0.3 ms of a 1 ms share per batch of 32 seed images, 960 KB); smaller ones are copied.
_RING_FROM = 64 << 10
_worker_maps: dict[bool, dict[Any, Any]] = {}  # torch's default_collate_fn_map with _stack, by ring or not


def worker_collate(batch: list[Any]) -> Any:
    """torch's default_collate as a DataLoader worker runs it, the same values and errors, but with no
    shared-memory segment per tensor: the batch is marked for transport.py, which copies its tensors
    through the worker's reused buffers, and a batch tensor of 64 KiB or more is stacked straight
    into a free buffer of the worker's ring of batch buffers (transport.batch_tensor) when it is a value
    of the marked batch itself (items that are dicts, tuples or lists of tensors, arrays and numbers;
    deeper down, torch's reducer would copy it into a segment of its own, as it does any tensor).
    Scalar bytes memoryviews (decode_example(copy=False)) collate to a list, as bytes do."""
    import torch
    from torch.utils.data._utils.collate import collate, collate_str_fn, default_collate_fn_map

    ring = _flat_item(batch[0]) if batch else False
    if ring not in _worker_maps:
        tensors = _stack if ring else _stack_plain
        _worker_maps[ring] = {**default_collate_fn_map, torch.Tensor: tensors, memoryview: collate_str_fn}
    return mark(collate(batch, collate_fn_map=_worker_maps[ring]))


def _flat_item(item: Any) -> bool:
    """Whether default_collate makes a plain dict or list of `item`'s batch, none of whose values is a
    container: the batches whose large tensors may view the ring (transport.py frees them from there)."""
    if type(item) is dict:
        values = list(item.values())
    elif type(item) in (list, tuple):
        values = list(item)
    else:
        return False
    return not any(isinstance(v, (Mapping, list, tuple, Sparse, Ragged)) for v in values)


def _stack(batch: list[Any], *, collate_fn_map: Any = None) -> Any:
    """collate_tensor_fn's stack of equal-shape tensors: 64 KiB or more into the ring of batch buffers."""
    elem = batch[0]
    if _plain_stack(elem) and sum(x.numel() for x in batch) * elem.element_size() >= _RING_FROM:
        return _stack_into(batch, batch_tensor((len(batch), *elem.shape), elem.dtype, ring_from=_RING_FROM))
    return _stack_plain(batch, collate_fn_map=collate_fn_map)


def _stack_plain(batch: list[Any], *, collate_fn_map: Any = None) -> Any:
    """collate_tensor_fn's stack of equal-shape tensors, into plain memory: transport.py moves it."""
    import torch
    from torch.utils.data._utils.collate import collate_tensor_fn

    elem = batch[0]
    if not _plain_stack(elem):
        return collate_tensor_fn(batch, collate_fn_map=collate_fn_map)  # torch's errors, or its way
    return _stack_into(batch, torch.empty((len(batch), *elem.shape), dtype=elem.dtype))


def _plain_stack(elem: Any) -> bool:
    import torch

    return not elem.is_nested and elem.layout == torch.strided and elem.device.type == "cpu"


def _stack_into(batch: list[Any], out: Any) -> Any:
    import torch

    return torch.stack(batch, 0, out=out)
