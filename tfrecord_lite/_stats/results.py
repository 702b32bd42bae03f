"""The result of `statistics`: `DatasetStatistics` and the per-feature objects it holds.

Strategy: frozen dataclasses of plain numbers and tuples, built once at the end of the pass from
the accumulators; each has `to_dict()` giving JSON-ready data (the shape the docs' statistics page
documents and the viewer reads), and the dataset has `to_json()`, a short `__repr__`, and the HTML
(`to_html`, `_repr_html_`) and TFDV (`to_tfdv`, `write_tfdv`) forms, rendered by their own modules,
imported when asked for.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "SCHEMA",
    "Categories",
    "DatasetStatistics",
    "FeatureStatistics",
    "Histogram",
    "ImageStats",
    "NumberStats",
    "TopValue",
    "json_number",
    "show_bytes",
]

SCHEMA = "tfrecord_lite.statistics/1"  # the "format" of to_dict(); bumped when its shape changes
_SHOWN = 64  # characters of a bytes value shown in top values


def json_number(value: float | None) -> float | str | None:
    """A number as JSON holds it: infinities as the strings "inf" / "-inf", NaN as null."""
    if value is None or math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def show_bytes(value: bytes, truncated: bool = False) -> str:
    """A bytes value as text: UTF-8 when it is, else its hex; cut to _SHOWN characters."""
    try:
        text = value.decode("utf-8")
        if not text.isprintable():
            raise UnicodeDecodeError("utf-8", value, 0, 1, "not printable")
    except UnicodeDecodeError:
        text = "0x" + value[: _SHOWN // 2].hex()
        truncated = truncated or len(value) > _SHOWN // 2
    if len(text) > _SHOWN:
        text, truncated = text[:_SHOWN], True
    return text + "…" if truncated else text


@dataclass(frozen=True)
class Histogram:
    """Counts of values in buckets: bucket k holds edges[k] <= v < edges[k + 1] (the last one
    includes its upper edge). Counts are floats when scaled up from a sample."""

    edges: tuple[float, ...]
    counts: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"edges": [json_number(e) for e in self.edges], "counts": list(self.counts)}


@dataclass(frozen=True)
class NumberStats:
    """Statistics of a run of numbers. NaNs are counted apart and left out of everything else;
    infinities count in min / max only. `exact`: quantiles and histogram come from every value
    (else from a uniform sample of `sample_size` of them, see the docs' statistics page)."""

    count: int
    nans: int
    infinities: int
    zeros: int
    min: float | None
    max: float | None
    mean: float | None
    std: float | None
    quantiles: tuple[tuple[float, float], ...]
    histogram: Histogram
    exact: bool
    sample_size: int

    @property
    def median(self) -> float | None:
        return dict(self.quantiles).get(0.5)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in ("count", "nans", "infinities", "zeros")}
        for name in ("min", "max", "mean", "std", "median"):
            out[name] = json_number(getattr(self, name))
        out["quantiles"] = [[q, json_number(v)] for q, v in self.quantiles]
        out.update(histogram=self.histogram.to_dict(), exact=self.exact, sample_size=self.sample_size)
        return out


@dataclass(frozen=True)
class TopValue:
    """A frequent value and how often it occurs (`value`: an int, or bytes cut to a prefix)."""

    value: int | bytes
    count: int
    truncated: bool = False

    @property
    def text(self) -> str:
        return str(self.value) if isinstance(self.value, int) else show_bytes(self.value, self.truncated)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value if isinstance(self.value, int) else self.text, "count": self.count}


@dataclass(frozen=True)
class Categories:
    """How many different values a feature has, and its most frequent ones. `distinct_exact`
    and `top_exact` say whether the numbers are counts or estimates (docs: statistics)."""

    distinct: int
    distinct_exact: bool
    top: tuple[TopValue, ...]
    top_exact: bool
    top_error: int  # each top count may be this much below the true count

    def to_dict(self) -> dict[str, Any]:
        return {
            "distinct": self.distinct,
            "distinct_exact": self.distinct_exact,
            "top": [t.to_dict() for t in self.top],
            "top_exact": self.top_exact,
            "top_error": self.top_error,
        }


@dataclass(frozen=True)
class ImageStats:
    """The values of a bytes feature that are images: formats, sizes from their headers."""

    images: int
    not_images: int
    formats: dict[str, int]
    width: NumberStats
    height: NumberStats
    sizes: tuple[tuple[int, int, int], ...]  # (width, height, count), most frequent first

    def to_dict(self) -> dict[str, Any]:
        return {
            "images": self.images,
            "not_images": self.not_images,
            "formats": dict(self.formats),
            "width": self.width.to_dict(),
            "height": self.height.to_dict(),
            "sizes": [{"width": w, "height": h, "count": c} for w, h, c in self.sizes],
        }


@dataclass(frozen=True)
class FeatureStatistics:
    """One feature: where it is ("features", "context" or "feature_lists"), its kind
    ("int64", "float", "bytes" or None when it never has values), the records that have it,
    its value counts per record (per step, for a feature list), its values' statistics, and
    for a feature list the number of steps per record (`sequence_lengths`)."""

    name: str
    section: str
    kind: str | None
    present: int
    missing: int
    value_counts: NumberStats
    numbers: NumberStats | None = None  # int64 and float values
    categories: Categories | None = None  # int64 and bytes values
    lengths: NumberStats | None = None  # bytes values' lengths
    image: ImageStats | None = None
    sequence_lengths: NumberStats | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "section": self.section, "kind": self.kind}
        out.update(present=self.present, missing=self.missing, value_counts=self.value_counts.to_dict())
        for name in ("numbers", "categories", "lengths", "image", "sequence_lengths"):
            value = getattr(self, name)
            out[name] = None if value is None else value.to_dict()
        return out


@dataclass(frozen=True)
class DatasetStatistics:
    """What `statistics` found in a dataset: the files read, the records and their bytes, and
    a `FeatureStatistics` per feature (`stats["label"]`, or iterate `stats.features`)."""

    files: tuple[str, ...]
    compression: tuple[str | None, ...]  # per file: "" (none), "GZIP", "ZLIB"; None if unknown
    records: int
    bytes: int  # the records' serialized bytes (not counting framing or compression)
    kind: str  # "example", "sequence_example" or "empty"
    complete: bool  # False when max_records stopped the pass early
    skipped: int  # damaged spans skipped (on_error="skip")
    features: tuple[FeatureStatistics, ...] = field(default=())
    untracked_features: int = 0  # features past the cap (MAX_FEATURES), counted but not summarised

    def __getitem__(self, name: str) -> FeatureStatistics:
        for feature in self.features:
            if feature.name == name:
                return feature
        raise KeyError(f"no feature {name!r} (features: {[f.name for f in self.features]})")

    def __iter__(self) -> Iterator[FeatureStatistics]:
        return iter(self.features)

    def __len__(self) -> int:
        return len(self.features)

    def __repr__(self) -> str:
        files = f"{len(self.files)} file" + ("" if len(self.files) == 1 else "s")
        partial = "" if self.complete else ", first records only"
        if self.untracked_features:
            partial += f", {self.untracked_features} more features not tracked"
        return (
            f"DatasetStatistics({self.records} records, {files}, {len(self.features)} features, "
            f"kind={self.kind}{partial})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data; its shape is documented on the docs' statistics page."""
        return {
            "format": SCHEMA,
            "files": list(self.files),
            "compression": list(self.compression),
            "records": self.records,
            "bytes": self.bytes,
            "kind": self.kind,
            "complete": self.complete,
            "skipped": self.skipped,
            "features": [f.to_dict() for f in self.features],
            "untracked_features": self.untracked_features,
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_html(self) -> str:
        """One self-contained HTML fragment (inline CSS and SVG, no scripts), to embed as it is."""
        from tfrecord_lite._stats.html import render

        return render(self)

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_tfdv(self) -> Any:
        """The statistics as TFDV's `DatasetFeatureStatisticsList` (needs tensorflow-metadata)."""
        from tfrecord_lite._stats.tfdv import to_tfdv

        return to_tfdv(self)

    def write_tfdv(self, path: str) -> None:
        """Write to_tfdv() as TFDV writes statistics: one TFRecord holding the serialized proto,
        which `tfdv.load_statistics(path)` reads."""
        from tfrecord_lite._stats.tfdv import write_tfdv

        write_tfdv(self, path)
