"""Batching decoded items into tensors for PyTorch (tfrecord_lite.torch re-exports it; torch is
imported inside the functions that use it, so importing this module never imports torch).

Collate turns a list of dict items into one dict of tensors: equal shapes are stacked, ragged
first dimensions padded (with a lengths tensor) or kept as lists, bytes and strings stay lists,
Sparse values become one torch.sparse_coo_tensor with the item's number as its first dimension.
The same layout is built two ways: from decoded items (__call__), and from decode_examples'
columns (columns()), which is faster for small records; decode_batch picks one by record size.
In a DataLoader worker a batch's tensors are made views of one storage, so the batch crosses to
the main process in one shared-memory segment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

from tfrecord_lite._example.columnar import Ragged, decode_examples
from tfrecord_lite._example.decode import decode_example
from tfrecord_lite._example.sparse import Sparse, stack_sparse
from tfrecord_lite._example.spec import FixedLenSequenceFeature, VarLenFeature
from tfrecord_lite._example.validate import check_choice
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
    (VarLenFeature, feature lists) are padded with `pad_value` plus a `<key>_length` tensor, or kept
    as a list of tensors with varlen="list"; bytes, strings, None and object arrays become lists.
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
        self.varlen = check_choice("varlen", varlen, ("pad", "list"))
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
        """This collation with the ragged keys of a spec: VarLenFeatures of an Example and
        FixedLenSequenceFeatures of a SequenceExample."""
        keys = {k for k, spec in (features or {}).items() if isinstance(spec, VarLenFeature)}
        keys |= {k for k, spec in (sequence_features or {}).items() if isinstance(spec, FixedLenSequenceFeature)}
        return Collate(
            varlen=self.varlen, pad_value=self.pad_value, length_key=self.length_key, ragged=self.ragged | keys
        )

    def __call__(self, batch: Sequence[Any]) -> Any:
        from torch.utils.data import default_collate

        if isinstance(batch, Mapping):  # one item (DataLoader with batch_size=None)
            return to_torch(dict(batch))
        if not batch or not isinstance(batch[0], Mapping):
            return default_collate(list(batch))
        return self._assemble({key: self._column(key, [item[key] for item in batch]) for key in batch[0]})

    def columns(self, columns: Mapping[str, Any]) -> dict[str, Any]:
        """The batch layout of __call__ from decode_examples' columns (arrays, Ragged, lists of bytes)."""
        import torch

        out: dict[str, tuple[Any, torch.Tensor | None]] = {}
        for key, col in columns.items():
            if isinstance(col, Ragged):
                out[key] = self._ragged(col)
            elif isinstance(col, Sparse):
                out[key] = (_sparse_column(key, col), None)
            elif isinstance(col, np.ndarray):
                out[key] = (torch.from_numpy(col) if col.dtype.kind in "biuf" else col.tolist(), None)
            else:
                out[key] = (col, None)
        return self._assemble(out)

    def _assemble(self, columns: Mapping[str, tuple[Any, torch.Tensor | None]]) -> dict[str, Any]:
        """The batch dict: each key's value, followed by its lengths when it was padded."""
        from torch.utils.data import get_worker_info

        out: dict[str, Any] = {}
        for key, (value, lengths) in columns.items():
            out[key] = value
            if lengths is not None:
                name = self.length_key.format(key)
                if name in columns or name in out:
                    raise ValueError(f"cannot add the lengths of {key!r} as {name!r}: the items already have that key")
                out[name] = lengths
        if get_worker_info() is not None:
            _one_storage(out)
        return out

    def _ragged(self, col: Ragged) -> tuple[Any, torch.Tensor | None]:
        import torch

        lengths = col.row_lengths()
        if self.varlen == "list":
            return [torch.from_numpy(v) for v in np.split(col.values, col.row_splits[1:-1])], None
        width = int(lengths.max()) if len(lengths) else 0
        padded = np.full((len(lengths), width), self.pad_value, dtype=col.values.dtype)
        padded[np.arange(width) < lengths[:, None]] = col.values
        return torch.from_numpy(padded), torch.from_numpy(lengths.astype(np.int64))

    def _column(self, key: str, values: list[Any]) -> tuple[Any, torch.Tensor | None]:
        """One key's batch, and the lengths tensor when it was padded."""
        import torch

        if values and isinstance(values[0], Sparse):
            return _sparse_column(key, values), None
        ragged = key in self.ragged
        if not ragged and all(isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "biuf" for v in values):
            shape = values[0].shape
            if all(v.shape == shape for v in values):
                return torch.from_numpy(np.stack(values)), None
        tensors = [_numeric_tensor(v) for v in values]
        if any(t is None for t in tensors):
            return [v.tolist() if isinstance(v, np.ndarray) else to_torch(v) for v in values], None
        shapes = {tuple(t.shape) for t in tensors}  # type: ignore[union-attr]
        if len(shapes) == 1 and not ragged:
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


# Mean record size above which a batch is decoded record by record: the columnar decoder's fixed
# per-batch cost (~1 ms of numpy calls) outweighs per-record parsing for few, large records
# (measured on 64 KiB Examples, batch 32: 10 us per record vs 37 us by columns).
_LARGE_RECORD = 4096


def decode_batch(records: list[bytes], features: Mapping[str, Any], collate_fn: Collate) -> dict[str, Any]:
    """A batch of Examples decoded by `features` in collate_fn's layout: by columns, or record by
    record when the records are large (the layout is the same either way)."""
    if sum(map(len, records)) >= _LARGE_RECORD * len(records):
        batch: dict[str, Any] = collate_fn([decode_example(r, features) for r in records])
        return batch
    return collate_fn.columns(decode_examples(records, features))


def _one_storage(batch: dict[str, Any]) -> None:
    """Make the batch's tensors views of one storage. A DataLoader worker ships every storage to the
    main process through its own shared-memory segment, and that costs more than copying a batch's
    numbers once more (measured: ~250 us per extra tensor, per batch)."""
    import torch

    keys = [k for k, v in batch.items() if isinstance(v, torch.Tensor) and v.layout == torch.strided]
    if len(keys) < 2:
        return
    offsets = []
    total = 0
    for key in keys:
        total = -(-total // 8) * 8  # aligned for every dtype
        offsets.append(total)
        total += batch[key].numel() * batch[key].element_size()
    storage = torch.empty(total, dtype=torch.uint8)
    for key, offset in zip(keys, offsets, strict=False):
        tensor = batch[key]
        view = storage[offset : offset + tensor.numel() * tensor.element_size()].view(tensor.dtype)
        batch[key] = view.view(tensor.shape).copy_(tensor)


collate = Collate()  # without a spec: pads only the keys whose shapes differ within a batch
