"""Records shown as their type (by `show` and the viewer): a TensorBoard Event, TF Ranking's
ExampleListWithContext, or a user's own protobuf message, each shown as the features of a record.

Strategy: the record is told apart before the Example decoder sees it. With a message class the
record is that message, decoded by the protobuf runtime (decode_message) and shown field by field,
a nested message or a list as its JSON text. Else an Event (tried first: one starts with its wall
time, field 1 a double, which no Example has) shows as its step, its wall time in UTC, and each
value under "tag (kind)", the run's plugin memory saying what a tf.summary tensor is; an
ExampleListWithContext (recognised by its strict sniff) as its context's features under
"context/" and each example's under "example N/". Anything else goes to record_view.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import numpy as np

from tfrecord_lite._datasets.messages import decode_elwc, decode_message, is_elwc
from tfrecord_lite._errors import TFRecordError
from tfrecord_lite._events.wire import Plugins, decode_event, event_fields
from tfrecord_lite._html.records import RecordView
from tfrecord_lite._records.views import record_view


def typed_view(
    label: str,
    record: bytes,
    *,
    message: type[Any] | None = None,
    plugins: Callable[[], Plugins] | None = None,
    href: str | None = None,
) -> RecordView:
    """`record` decoded for showing as its type: `message` (a protobuf message class), an Event
    (`plugins()`: its run's plugin memory; given, a record that is no Event is its error), an
    ExampleListWithContext, else an Example or a SequenceExample; a record that does not decode
    is its error."""
    try:
        if message is not None:
            return RecordView(label, message_fields(decode_message(record, message=message)), href=href)
        if record[:1] == b"\x09":
            memory = plugins() if plugins is not None else None
            shown = event_fields(record, memory)
            if shown is not None:
                return RecordView(label, _with_time(shown), href=href)
            if memory is not None:  # in a log: an event that does not decode is shown as its error
                decode_event(record, dict(memory))
        if is_elwc(record):
            return RecordView(label, elwc_fields(record), href=href)
    except (TFRecordError, ValueError) as err:
        return RecordView(label, {}, error=f"{type(err).__name__}: {err}", href=href)
    return record_view(label, record, href=href)


def _with_time(shown: dict[str, Any]) -> dict[str, Any]:
    """An event's fields with its wall time also written as a UTC date after it."""
    out: dict[str, Any] = {}
    for key, value in shown.items():
        out[key] = value
        if key == "wall_time":
            try:
                when = datetime.fromtimestamp(float(value[0]), tz=timezone.utc)
                out["time (UTC)"] = [when.strftime("%Y-%m-%d %H:%M:%S.%f").encode()]
            except (OverflowError, OSError, ValueError):
                pass
    return out


def elwc_fields(record: bytes) -> dict[str, Any]:
    """An ExampleListWithContext as one record's features: "context/KEY", then "example N/KEY"."""
    context, examples = decode_elwc(record)
    fields = {f"context/{key}": value for key, value in context.items()}
    for i, example in enumerate(examples):
        fields.update({f"example {i}/{key}": value for key, value in example.items()})
    return fields


def message_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A message (as json_format's dict) as one record's features: text as text, numbers as a
    number array, anything else (a nested message, a list of them) as its JSON text."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, str):
            out[key] = [value.encode()]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = np.array([value])
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        ):
            out[key] = np.array(value)
        else:
            out[key] = [json.dumps(value, ensure_ascii=False).encode()]
    return out
