"""Recent throughput of a queue, and the Retry-After it suggests when the queue is full."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

__all__ = ["ThroughputMeter", "suggest_retry_after"]


class ThroughputMeter:
    """Completed jobs per second over the last ``horizon_s`` seconds (thread-safe)."""

    def __init__(self, horizon_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.horizon_s = horizon_s
        self._clock = clock
        self._since = clock()
        self._events: deque[tuple[float, int]] = deque()
        self._total = 0
        self._lock = threading.Lock()

    def record(self, count: int = 1) -> None:
        now = self._clock()
        with self._lock:
            self._events.append((now, count))
            self._total += count
            self._prune(now)

    def rate(self) -> float:
        """Jobs per second; 0.0 when nothing completed within the horizon."""
        now = self._clock()
        with self._lock:
            self._prune(now)
            if not self._events:
                return 0.0
            span = max(min(self.horizon_s, now - self._since), 1e-3)
            return self._total / span

    def _prune(self, now: float) -> None:
        while self._events and self._events[0][0] < now - self.horizon_s:
            _, count = self._events.popleft()
            self._total -= count


def suggest_retry_after(
    backlog: int, jobs_per_s: float, floor_s: float = 1.0, cap_s: float = 60.0, unknown_s: float = 2.0
) -> float:
    """Seconds until ``backlog`` jobs drain at ``jobs_per_s``, within [floor_s, cap_s].

    ``unknown_s`` is the answer when no throughput has been measured yet.
    """
    if jobs_per_s <= 0:
        return min(max(unknown_s, floor_s), cap_s)
    return min(max(backlog / jobs_per_s, floor_s), cap_s)
