"""Batcher hooks that record into ``Metrics`` and ``RollingStats`` (the batcher's name is the queue label)."""

from __future__ import annotations

from service.observability.metrics import Metrics
from service.observability.stats import RollingStats

__all__ = ["MetricsHooks"]


class MetricsHooks:
    """Implements ``service.batching.BatcherHooks``: pass it as ``LocalBatcher(hooks=...)``."""

    def __init__(self, metrics: Metrics, stats: RollingStats | None = None) -> None:
        self.metrics = metrics
        self.stats = stats

    def on_depth(self, name: str, depth: int, in_flight: int) -> None:
        self.metrics.set_queue(name, depth, in_flight)

    def on_queue_wait(self, name: str, seconds: float) -> None:
        self.metrics.observe_queue_wait(name, seconds)

    def on_batch(self, name: str, size: int, padded_tokens: int) -> None:
        self.metrics.observe_batch(name, size, padded_tokens)
        if self.stats is not None:
            self.stats.record_batch(name, size)

    def on_inference(self, name: str, seconds: float, size: int, cpu_seconds: float) -> None:
        self.metrics.observe_batch_duration(name, seconds, cpu_seconds)

    def on_reject(self, name: str, reason: str) -> None:
        self.metrics.drop_jobs(name, reason)

    def on_error(self, name: str, reason: str) -> None:
        self.metrics.batch_error(name, reason)
