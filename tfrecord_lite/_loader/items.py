"""What a dataset yields for one serialized record, without torch: the record decoded as an
Example, a SequenceExample, an ExampleListWithContext or a user's protobuf message (messages.py),
or kept raw, turned into tensors when asked, then passed to the user's transform; and the
collation that batches such items with the spec's ragged keys.

Strategy: everything that can be checked is checked once, when the dataset is made (the record
type against the specs, the specs themselves, the output, the transform), so that decoding a
record is a few attribute reads and one decoder call. A SequenceExample's context features and
feature lists share one dict (a key in both is an error); without a spec, a feature list of
equal-length numeric steps becomes one [steps, n] array. Tensors come from collate.to_torch,
which imports torch only when it is called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tfrecord_lite._example.decode import decode_example, decode_sequence_example
from tfrecord_lite._example.validate import check_callable, check_choice, feature_specs
from tfrecord_lite._loader.collate import Collate, collate, to_torch, views_cross_whole
from tfrecord_lite._loader.messages import MessageDecoder, decode_elwc_item, is_message_class
from tfrecord_lite._repr import shown_keys

RECORD_TYPES = ("example", "sequence_example", "elwc", "raw")

# The types of the decoding parameters that tfrecord_lite.torch's datasets share, written once here:
Spec = Mapping[str, Any] | None  # features= (an Example's), context_features=, sequence_features=
Transform = Callable[[Any], Any] | None  # applied to each decoded item (or batch)
RecordType = str | type[Any] | None  # one of RECORD_TYPES, or a protobuf message class; None: from the specs given
Output = str  # "numpy" or "torch"
CollateFn = Collate | None  # the dataset's collate_fn (None: the default Collate)


def _steps_array(steps: Any) -> Any:
    """A feature list decoded without a spec ([1-D array per step]) as one [steps, n] array when every
    step has the same number of numeric values; otherwise unchanged."""
    regular = isinstance(steps, list) and steps and all(isinstance(s, np.ndarray) for s in steps)
    if regular and len({s.shape for s in steps}) == 1 and steps[0].dtype.kind in "iuf":
        return np.stack(steps)
    return steps


class ItemDecoder:
    """Turns one serialized record into a dataset item: decode, optional tensors, then the user transform."""

    def __init__(
        self,
        record_type: RecordType,
        features: Spec,
        context_features: Spec,
        sequence_features: Spec,
        output: Output,
        transform: Transform,
    ) -> None:
        if record_type is None:
            record_type = "sequence_example" if (context_features or sequence_features) else "example"
        self.message = MessageDecoder(record_type) if is_message_class(record_type) else None
        if self.message is not None:
            if features is not None or context_features is not None or sequence_features is not None:
                raise ValueError(f"record_type={self.message!r}: a message's records take no feature spec")
            self.record_type = "message"
        else:
            self.record_type = check_choice("record_type", record_type, RECORD_TYPES)
        if features is not None and self.record_type not in ("example", "elwc"):
            raise ValueError("features= is the spec of an Example; for SequenceExamples use context_features=")
        if sequence_features is not None and self.record_type == "elwc":
            raise ValueError("record_type='elwc' takes features= (each example's) and context_features=")
        self.features = feature_specs(features)
        self.context_features = feature_specs(context_features, "context_features")
        self.sequence_features = feature_specs(sequence_features, "sequence_features")
        self.output = check_choice("output", output, ("numpy", "torch"))
        check_callable("transform", transform, "applied to each decoded item")
        self.transform = transform
        # whether items may hold bytes values as memoryviews (copy=False) when only a Collate sees them
        self.can_view = self.record_type == "example" and transform is None and views_cross_whole(self.features)

    def spec_parts(self) -> list[str | None]:
        """The repr parts of a dataset's decoding: record type, spec keys, output, transform."""
        specs = {"features": self.features, "context_features": self.context_features}
        specs["sequence_features"] = self.sequence_features
        shown = self.message if self.message is not None else repr(self.record_type)
        parts: list[str | None] = [f"record_type={shown}"]
        parts += [f"{name}={shown_keys(spec)}" for name, spec in specs.items() if spec is not None]
        parts.append(f"output={self.output!r}" if self.output != "numpy" else None)
        parts.append(f"transform={getattr(self.transform, '__name__', self.transform)!r}" if self.transform else None)
        return parts

    def __call__(self, data: bytes, copy: bool = True) -> Any:
        """The item of one record; `copy=False` (when can_view) keeps bytes values as memoryviews."""
        item: Any
        if self.record_type == "example":
            item = decode_example(data, self.features, copy=copy)
        elif self.record_type == "sequence_example":
            context, lists = decode_sequence_example(data, self.context_features, self.sequence_features)
            clash = context.keys() & lists.keys()
            if clash:
                raise ValueError(f"keys {sorted(clash)} are both context features and feature lists")
            item = dict(context)
            if self.sequence_features is None:  # with a spec the layout is the spec's
                lists = {k: _steps_array(v) for k, v in lists.items()}
            item.update(lists)
        elif self.message is not None:
            item = self.message(data)
        elif self.record_type == "elwc":
            item = decode_elwc_item(data, self.features, self.context_features)
        else:
            item = data
        if self.output == "torch":
            item = to_torch(item)
        return self.transform(item) if self.transform is not None else item


def collate_for(collate_fn: Any, decode: ItemDecoder) -> Collate:
    """A dataset's collate_fn: the given Collate (or the default) with the spec's ragged keys. With a
    transform the items are the transform's, which the spec no longer describes (a VarLen value made
    one length, or a number): their keys are padded only when their shapes differ, else stacked."""
    if collate_fn is not None and not isinstance(collate_fn, Collate):
        raise TypeError(
            f"collate_fn must be a tfrecord_lite.torch.Collate, found {type(collate_fn).__name__}: "
            "pass your own function to DataLoader(collate_fn=...) instead"
        )
    if decode.transform is not None or decode.record_type in ("elwc", "message"):  # items the spec does not shape
        return (collate_fn or collate).for_spec()
    return (collate_fn or collate).for_spec(decode.features, decode.sequence_features)
