"""A TensorBoard log as a table: `to_pandas` and `to_arrow`, long (one row per value) or wide.

Strategy: the rows of read_events, gathered column by column into plain lists by read_columns
(scalars straight from the lean scan, no object per row), handed to pandas or pyarrow at once
(both imported here, at the call: `import tfrecord_lite` imports neither; a missing one is named
with its extra). Wall times become UTC datetimes. The long table has the columns run, step,
wall_time, tag, kind, value; `pivot=True` makes it wide per run: one row per (run, step), one
column per tag, the step's latest wall time beside them. In Arrow a column holds one type, so the
values of one kind get that kind's type (scalar float64, text string, image and audio binary,
histograms and tensors nested lists, hparams JSON text) and a table mixing kinds is refused,
naming them.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import numpy as np

COLUMNS = ("run", "step", "wall_time", "tag", "kind", "value")
NEEDS = {
    "pandas": "tfrecord_lite.events.to_pandas (and to_arrow, pivot=True) needs pandas: pip install 'tfrlite[pandas]'",
    "pyarrow": "tfrecord_lite.events.to_arrow needs pyarrow: pip install 'tfrlite[arrow]'",
}


def _imported(module: str) -> Any:
    """pandas or pyarrow, or an ImportError that names the extra bringing it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{NEEDS[module]} ({exc})") from exc


def pandas_frame(cols: dict[str, list[Any]], pivot: bool) -> Any:
    """The six columns of read_columns as a DataFrame, long or wide."""
    pd = _imported("pandas")

    values = cols["value"]
    frame = pd.DataFrame(
        {
            "run": pd.Series(cols["run"], dtype=object),
            "step": np.asarray(cols["step"], dtype=np.int64),
            "wall_time": pd.to_datetime(_nanoseconds(cols["wall_time"]), unit="ns", utc=True),
            "tag": pd.Series(cols["tag"], dtype=object),
            "kind": pd.Series(cols["kind"], dtype=object),
            "value": _pandas_values(values, cols["kind"]),
        }
    )
    return _wide(frame) if pivot else frame


def _nanoseconds(wall_times: list[float]) -> np.ndarray:
    """Wall times in whole nanoseconds: one datetime resolution on every pandas version."""
    nanoseconds: np.ndarray = (np.asarray(wall_times, dtype=np.float64) * 1e9).round().astype(np.int64)
    return nanoseconds


def _pandas_values(values: list[Any], kinds: list[str]) -> Any:
    pd = _imported("pandas")

    if values and all(kind == "scalar" for kind in kinds):
        return np.asarray(values, dtype=np.float64)
    series = pd.Series(dtype=object, index=range(len(values)))
    series[:] = values if values else []
    return series


def _wide(frame: Any) -> Any:
    """One row per (run, step), a column per tag, and the step's latest wall time."""
    if not len(frame):
        return frame.drop(columns=["tag", "kind", "value"])
    table = frame.groupby(["run", "step", "tag"], sort=True)["value"].last().unstack("tag")
    table.columns.name = None
    times = frame.groupby(["run", "step"])["wall_time"].max()
    table.insert(0, "wall_time", times)
    return table.reset_index()


def arrow_table(cols: dict[str, list[Any]], pivot: bool) -> Any:
    """The six columns of read_columns as an Arrow table, long or wide."""
    pa = _imported("pyarrow")

    if pivot:
        return pa.Table.from_pandas(pandas_frame(cols, pivot=True), preserve_index=False)
    kinds = sorted(set(cols["kind"]))
    if len(kinds) > 1:
        raise ValueError(
            f"to_arrow: the values are of kinds {', '.join(kinds)}, which one Arrow column cannot hold: "
            "pass kinds= one of them (to_pandas holds them all)"
        )
    kind = kinds[0] if kinds else "scalar"
    times = np.asarray(cols["wall_time"], dtype=np.float64)
    return pa.table(
        {
            "run": pa.array(cols["run"], pa.string()),
            "step": pa.array(cols["step"], pa.int64()),
            "wall_time": pa.array((times * 1e6).round().astype(np.int64), pa.timestamp("us", tz="UTC")),
            "tag": pa.array(cols["tag"], pa.string()),
            "kind": pa.array(cols["kind"], pa.string()),
            "value": _arrow_values(cols["value"], kind),
        }
    )


def _arrow_values(values: list[Any], kind: str) -> Any:
    import pyarrow as pa

    if kind == "scalar":
        return pa.array(np.asarray(values, dtype=np.float64), pa.float64())
    if kind in ("image", "audio"):
        return pa.array(values, pa.binary())
    if kind == "hparams":
        return pa.array([json.dumps(v, default=_json_default) for v in values], pa.string())
    if kind == "text" and all(isinstance(v, str) for v in values):
        return pa.array(values, pa.string())
    return pa.array([_listed(v) for v in values])


def _listed(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return [_listed(v) for v in value.tolist()] if value.ndim else _listed(value.item())
        return value.tolist()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"{type(value).__name__} is not JSON")
