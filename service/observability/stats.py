"""Live rolling statistics: latency percentiles, outcomes, throughput and batch sizes, per series.

A series is one arm (``/v1/stats``) or one arm of the running experiment (``/v1/experiments``).
Wall-clock time is cut into buckets of ``bucket_s`` seconds kept in a ring as long as the largest
window; each bucket holds a DDSketch of the latencies of successful requests (a mergeable quantile
sketch with a relative-accuracy guarantee) and counters: requests by outcome, sentences, edits.
A window is read by merging the sketches of its buckets, so a 1-minute p99 and a 5-minute p99
come from the same data. Each series also keeps a *total* since it began, with per-stage sketches.

Replicas merge: ``export()`` gives a JSON-ready dict (sketches as base64 protobuf), and
``absorb(export)`` adds another replica's numbers into this one, bucket by bucket (bucket
indexes come from wall-clock time, so they line up across processes). The clock is injectable
so tests move time without sleeping.
"""

from __future__ import annotations

import base64
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ddsketch import DDSketch
from ddsketch.ddsketch import BaseDDSketch
from ddsketch.pb.ddsketch_pb2 import DDSketch as DDSketchMessage
from ddsketch.pb.proto import DDSketchProto

__all__ = ["QUANTILES", "RollingStats", "Totals", "new_sketch", "sketch_quantiles"]

QUANTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))
OK = "ok"


def new_sketch(relative_accuracy: float = 0.01) -> BaseDDSketch:
    """An empty latency sketch (quantiles within ``relative_accuracy``; dense bins, the same kind a
    replica's serialised sketch decodes to, so the two merge)."""
    return DDSketch(relative_accuracy=relative_accuracy)


def _encode(sketch: BaseDDSketch) -> dict[str, Any]:
    """The sketch's protobuf (bins) and its sum, which the protobuf does not carry (the mean needs it)."""
    return {
        "bins": base64.b64encode(DDSketchProto.to_proto(sketch).SerializeToString()).decode("ascii"),
        "sum": sketch.sum,
    }


def _decode(data: Mapping[str, Any]) -> BaseDDSketch:
    sketch = DDSketchProto.from_proto(DDSketchMessage.FromString(base64.b64decode(data["bins"])))
    sketch._sum = float(data["sum"])  # ddsketch's protobuf leaves the sum out; restore it
    return sketch


def sketch_quantiles(sketch: BaseDDSketch) -> dict[str, float | None]:
    """p50/p95/p99 and the mean of a latency sketch in seconds, as milliseconds (None when empty)."""
    out: dict[str, float | None] = {}
    for name, q in QUANTILES:
        out[name] = sketch.get_quantile_value(q) * 1000.0 if sketch.count else None
    out["mean"] = sketch.avg * 1000.0 if sketch.count else None
    return out


@dataclass
class _Bucket:
    index: int  # floor(time / bucket_s) of the interval it holds (-1 for a series total)
    latency: BaseDDSketch  # successful requests, seconds
    outcomes: dict[str, int] = field(default_factory=dict)
    sentences: int = 0
    edits: int = 0
    batches: int = 0
    batch_rows: int = 0
    stages: dict[str, BaseDDSketch] = field(default_factory=dict)  # only in totals

    @property
    def requests(self) -> int:
        return sum(self.outcomes.values())

    def merge(self, other: _Bucket) -> None:
        self.latency.merge(other.latency)
        for outcome, count in other.outcomes.items():
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + count
        self.sentences += other.sentences
        self.edits += other.edits
        self.batches += other.batches
        self.batch_rows += other.batch_rows
        for stage, sketch in other.stages.items():
            if stage in self.stages:
                self.stages[stage].merge(sketch)
            else:
                self.stages[stage] = sketch

    def export(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "latency": _encode(self.latency),
            "outcomes": dict(self.outcomes),
            "sentences": self.sentences,
            "edits": self.edits,
            "batches": self.batches,
            "batch_rows": self.batch_rows,
            "stages": {stage: _encode(sketch) for stage, sketch in self.stages.items()},
        }

    @classmethod
    def load(cls, data: Mapping[str, Any]) -> _Bucket:
        return cls(
            index=int(data["index"]),
            latency=_decode(data["latency"]),
            outcomes={str(k): int(v) for k, v in data["outcomes"].items()},
            sentences=int(data["sentences"]),
            edits=int(data["edits"]),
            batches=int(data["batches"]),
            batch_rows=int(data["batch_rows"]),
            stages={stage: _decode(encoded) for stage, encoded in data["stages"].items()},
        )


@dataclass
class _Series:
    total: _Bucket
    ring: dict[int, _Bucket] = field(default_factory=dict)  # bucket index -> bucket, pruned to the ring


@dataclass(frozen=True)
class Totals:
    """A series since it began: what an experiment's analysis reads."""

    latency: BaseDDSketch
    outcomes: dict[str, int]
    sentences: int
    edits: int
    stages: dict[str, BaseDDSketch]

    @property
    def requests(self) -> int:
        return sum(self.outcomes.values())


class RollingStats:
    """Sliding-window and running-total statistics per series (thread-safe).

    ``windows``: window lengths in seconds (multiples of ``bucket_s``). ``relative_accuracy``:
    the sketch's guarantee: a reported quantile is within that fraction of a true sample at
    that rank.
    """

    def __init__(
        self,
        windows: Sequence[float] = (60.0, 300.0),
        bucket_s: float = 10.0,
        relative_accuracy: float = 0.01,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if bucket_s <= 0 or not windows or min(windows) < bucket_s:
            raise ValueError("need bucket_s > 0 and every window at least one bucket long")
        self.bucket_s = bucket_s
        self.windows = tuple(sorted(windows))
        self.relative_accuracy = relative_accuracy
        self._clock = clock
        self._slots = math.ceil(max(self.windows) / bucket_s)
        self._series: dict[str, _Series] = {}
        self._lock = threading.Lock()

    # -- recording --------------------------------------------------------------------------

    def record_request(
        self,
        series: str,
        latency_s: float,
        outcome: str = OK,
        sentences: int = 0,
        edits: int = 0,
        stages: Mapping[str, float] | None = None,
    ) -> None:
        """One finished request. Only successful (``ok``) requests enter the latency sketches;
        every request counts under its outcome."""
        with self._lock:
            entry = self._entry(series)
            for bucket in (self._bucket(entry, self._clock()), entry.total):
                bucket.outcomes[outcome] = bucket.outcomes.get(outcome, 0) + 1
                bucket.sentences += sentences
                bucket.edits += edits
                if outcome == OK:
                    bucket.latency.add(max(0.0, latency_s))
            if outcome == OK:
                for stage, seconds in (stages or {}).items():
                    sketch = entry.total.stages.get(stage)
                    if sketch is None:
                        sketch = entry.total.stages[stage] = new_sketch(self.relative_accuracy)
                    sketch.add(max(0.0, seconds))

    def record_batch(self, series: str, size: int) -> None:
        """One decoded batch of ``size`` sentences."""
        with self._lock:
            entry = self._entry(series)
            for bucket in (self._bucket(entry, self._clock()), entry.total):
                bucket.batches += 1
                bucket.batch_rows += size

    def reset(self) -> None:
        """Forget every series (a new experiment starts from nothing)."""
        with self._lock:
            self._series.clear()

    # -- reading ----------------------------------------------------------------------------

    def series(self) -> list[str]:
        with self._lock:
            return sorted(self._series)

    def window(self, series: str | Iterable[str], seconds: float) -> dict[str, Any]:
        """Statistics of one series (or several merged) over the last ``seconds``; latencies in ms."""
        names = [series] if isinstance(series, str) else list(series)
        with self._lock:
            return self._window(names, seconds, self._clock())

    def totals(self, series: str) -> Totals:
        """A series since it began (empty when it never recorded anything)."""
        with self._lock:
            entry = self._series.get(series)
            total = entry.total if entry is not None else self._empty(-1)
            merged = self._empty(-1)
            merged.merge(total)
            return Totals(merged.latency, dict(merged.outcomes), merged.sentences, merged.edits, dict(merged.stages))

    def timeline(self, series: str) -> list[dict[str, Any]]:
        """Per bucket of the ring, oldest first: start time, requests/s, p50/p95/p99 (ms)."""
        with self._lock:
            entry = self._series.get(series)
            current = math.floor(self._clock() / self.bucket_s)
            points = []
            for index in range(current - self._slots + 1, current + 1):
                bucket = entry.ring.get(index) if entry is not None else None
                if bucket is None:
                    continue
                points.append(
                    {
                        "t": index * self.bucket_s,
                        "requests": bucket.requests,
                        "requests_per_s": bucket.requests / self.bucket_s,
                        **sketch_quantiles(bucket.latency),
                    }
                )
            return points

    def snapshot(self, groups: Mapping[str, Iterable[str]] | None = None) -> dict[str, Any]:
        """Every series (or each group of series, merged) and window, JSON-ready."""
        with self._lock:
            now = self._clock()
            chosen = groups if groups is not None else {name: [name] for name in sorted(self._series)}
            return {
                "bucket_seconds": self.bucket_s,
                "relative_accuracy": self.relative_accuracy,
                "windows": [_window_name(w) for w in self.windows],
                "series": {
                    name: {_window_name(w): self._window(list(members), w, now) for w in self.windows}
                    for name, members in chosen.items()
                },
            }

    # -- replicas ---------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        """This process's numbers, JSON-ready, for ``absorb`` in another process."""
        with self._lock:
            self._prune_all(self._clock())
            return {
                "bucket_s": self.bucket_s,
                "series": {
                    name: {"total": entry.total.export(), "ring": [b.export() for b in entry.ring.values()]}
                    for name, entry in self._series.items()
                },
            }

    def absorb(self, exported: Mapping[str, Any]) -> None:
        """Add another replica's ``export()`` into these numbers."""
        if float(exported["bucket_s"]) != self.bucket_s:
            raise ValueError(f"bucket size {exported['bucket_s']} differs from {self.bucket_s}")
        with self._lock:
            for name, data in exported["series"].items():
                entry = self._entry(name)
                entry.total.merge(_Bucket.load(data["total"]))
                for raw in data["ring"]:
                    other = _Bucket.load(raw)
                    mine = entry.ring.get(other.index)
                    if mine is None:
                        entry.ring[other.index] = other
                    else:
                        mine.merge(other)
            self._prune_all(self._clock())

    # -- internals (lock held) --------------------------------------------------------------

    def _empty(self, index: int) -> _Bucket:
        return _Bucket(index=index, latency=new_sketch(self.relative_accuracy))

    def _entry(self, series: str) -> _Series:
        entry = self._series.get(series)
        if entry is None:
            entry = self._series[series] = _Series(total=self._empty(-1))
        return entry

    def _bucket(self, entry: _Series, now: float) -> _Bucket:
        index = math.floor(now / self.bucket_s)
        bucket = entry.ring.get(index)
        if bucket is None:
            bucket = entry.ring[index] = self._empty(index)
            self._prune(entry, index)
        return bucket

    def _prune(self, entry: _Series, current: int) -> None:
        for index in [i for i in entry.ring if i <= current - self._slots]:
            del entry.ring[index]

    def _prune_all(self, now: float) -> None:
        current = math.floor(now / self.bucket_s)
        for entry in self._series.values():
            self._prune(entry, current)

    def _window(self, names: list[str], seconds: float, now: float) -> dict[str, Any]:
        current = math.floor(now / self.bucket_s)
        count = max(1, min(self._slots, math.ceil(seconds / self.bucket_s)))
        first = current - count + 1
        merged = self._empty(current)
        oldest = None
        for name in names:
            entry = self._series.get(name)
            for index, bucket in entry.ring.items() if entry is not None else ():
                if first <= index <= current:
                    merged.merge(bucket)
                    oldest = index if oldest is None else min(oldest, index)
        # Rates over the part of the window that has data; under a second they are noise.
        span = max(now - (oldest if oldest is not None else current) * self.bucket_s, 1.0)
        return {
            "requests": merged.requests,
            "outcomes": dict(sorted(merged.outcomes.items())),
            "sentences": merged.sentences,
            "latency_ms": sketch_quantiles(merged.latency),
            "requests_per_s": merged.requests / span,
            "sentences_per_s": merged.sentences / span,
            "batches": merged.batches,
            "mean_batch_size": merged.batch_rows / merged.batches if merged.batches else None,
            "span_s": span,
        }


def _window_name(seconds: float) -> str:
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{seconds:g}s"
