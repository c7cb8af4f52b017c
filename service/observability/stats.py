"""Live rolling statistics for ``GET /v1/stats``: latency percentiles, throughput, batch size.

Per backend, time is cut into buckets of ``bucket_s`` seconds kept in a ring long enough for
the largest window; each bucket holds a DDSketch of request latencies (a mergeable quantile
sketch with a relative-accuracy guarantee) and counters. A window is read by merging the
sketches of its buckets, so a 1-minute p99 and a 5-minute p99 come from the same data. The
clock is injectable so tests move time without sleeping.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ddsketch import LogCollapsingLowestDenseDDSketch

__all__ = ["RollingStats"]

QUANTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


@dataclass
class _Bucket:
    index: int  # floor(time / bucket_s) of the interval this bucket holds
    sketch: LogCollapsingLowestDenseDDSketch
    requests: int = 0
    sentences: int = 0
    batches: int = 0
    batch_rows: int = 0


@dataclass
class _Series:
    ring: list[_Bucket | None] = field(default_factory=list)


class RollingStats:
    """Sliding-window latency quantiles and throughput per backend (thread-safe).

    ``windows``: window lengths in seconds (multiples of ``bucket_s``). ``relative_accuracy``:
    the sketch's guarantee: a reported quantile is within that fraction of a true sample at
    that rank.
    """

    def __init__(
        self,
        windows: Sequence[float] = (60.0, 300.0),
        bucket_s: float = 10.0,
        relative_accuracy: float = 0.01,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if bucket_s <= 0 or not windows or min(windows) < bucket_s:
            raise ValueError("need bucket_s > 0 and every window at least one bucket long")
        self.bucket_s = bucket_s
        self.windows = tuple(sorted(windows))
        self.relative_accuracy = relative_accuracy
        self._clock = clock
        self._started = clock()
        self._slots = math.ceil(max(self.windows) / bucket_s)
        self._series: dict[str, _Series] = {}
        self._lock = threading.Lock()

    # -- recording --------------------------------------------------------------------------

    def record_request(self, backend: str, latency_s: float, sentences: int = 1) -> None:
        """One finished request of ``sentences`` sentences that took ``latency_s`` seconds."""
        with self._lock:
            bucket = self._bucket(backend, self._clock())
            bucket.sketch.add(max(0.0, latency_s))
            bucket.requests += 1
            bucket.sentences += sentences

    def record_batch(self, backend: str, size: int) -> None:
        """One decoded batch of ``size`` sentences."""
        with self._lock:
            bucket = self._bucket(backend, self._clock())
            bucket.batches += 1
            bucket.batch_rows += size

    # -- reading ----------------------------------------------------------------------------

    def backends(self) -> list[str]:
        with self._lock:
            return sorted(self._series)

    def window(self, backend: str, seconds: float) -> dict[str, Any]:
        """Statistics of one backend over the last ``seconds`` (latencies in milliseconds)."""
        with self._lock:
            return self._window(backend, seconds, self._clock())

    def snapshot(self) -> dict[str, Any]:
        """Every backend and window, JSON-ready."""
        with self._lock:
            now = self._clock()
            return {
                "bucket_seconds": self.bucket_s,
                "relative_accuracy": self.relative_accuracy,
                "windows": [_window_name(w) for w in self.windows],
                "backends": {
                    backend: {_window_name(w): self._window(backend, w, now) for w in self.windows}
                    for backend in sorted(self._series)
                },
            }

    # -- internals (lock held) --------------------------------------------------------------

    def _new_sketch(self) -> LogCollapsingLowestDenseDDSketch:
        return LogCollapsingLowestDenseDDSketch(relative_accuracy=self.relative_accuracy, bin_limit=2048)

    def _bucket(self, backend: str, now: float) -> _Bucket:
        series = self._series.get(backend)
        if series is None:
            series = self._series[backend] = _Series(ring=[None] * self._slots)
        index = math.floor(now / self.bucket_s)
        slot = index % self._slots
        bucket = series.ring[slot]
        if bucket is None or bucket.index != index:
            bucket = series.ring[slot] = _Bucket(index=index, sketch=self._new_sketch())
        return bucket

    def _window(self, backend: str, seconds: float, now: float) -> dict[str, Any]:
        current = math.floor(now / self.bucket_s)
        count = max(1, min(self._slots, math.ceil(seconds / self.bucket_s)))
        first = current - count + 1
        merged = self._new_sketch()
        requests = sentences = batches = rows = 0
        series = self._series.get(backend)
        for bucket in series.ring if series is not None else ():
            if bucket is None or not first <= bucket.index <= current:
                continue
            merged.merge(bucket.sketch)
            requests += bucket.requests
            sentences += bucket.sentences
            batches += bucket.batches
            rows += bucket.batch_rows
        span = max(now - max(first * self.bucket_s, self._started), 1.0)  # rates over < 1 s are noise
        latency: dict[str, float | None] = {}
        for name, q in QUANTILES:
            value = merged.get_quantile_value(q) if merged.count else None
            latency[name] = None if value is None else value * 1000.0
        latency["mean"] = merged.avg * 1000.0 if merged.count else None
        return {
            "requests": requests,
            "sentences": sentences,
            "latency_ms": latency,
            "requests_per_s": requests / span,
            "sentences_per_s": sentences / span,
            "batches": batches,
            "mean_batch_size": rows / batches if batches else None,
            "span_s": span,
        }


def _window_name(seconds: float) -> str:
    if seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{seconds:g}s"
