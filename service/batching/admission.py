"""Admission control: how long queued work will take, so that what cannot finish in time is refused at once.

``ServiceRate`` learns the seconds a worker spends per source token from the batches it runs (an
exponentially weighted mean, so it follows the current batch sizes and load); while work is
waiting, the time between a worker's batches counts too, since a backlog is served at that pace. A new request's
wait is the work queued ahead of it (same or better priority), half of what is running, and its
own work, divided among the queue's workers. A request whose wait would take more than its
policy's share of the time left (``BatchPolicy.admit_within``) is refused with 503 at once,
rather than admitted to time out with 504 later; ``Retry-After`` is the time the present
backlog needs to drain.
"""

from __future__ import annotations

import math
import threading

__all__ = ["ServiceRate", "retry_after_header"]

RETRY_FLOOR_S = 1.0
RETRY_CAP_S = 60.0


class ServiceRate:
    """Seconds per source token of work, learnt from finished batches (thread-safe).

    ``prior_s_per_token`` answers until the first batch is measured; ``smoothing`` is the
    weight of each new batch in the running mean.
    """

    def __init__(self, prior_s_per_token: float = 0.0005, smoothing: float = 0.2) -> None:
        if prior_s_per_token <= 0 or not 0 < smoothing <= 1:
            raise ValueError("need prior_s_per_token > 0 and 0 < smoothing <= 1")
        self._s_per_token = prior_s_per_token
        self._smoothing = smoothing
        self._measured = False
        self._lock = threading.Lock()

    @property
    def s_per_token(self) -> float:
        return self._s_per_token

    @property
    def measured(self) -> bool:
        return self._measured

    def record(self, seconds: float, tokens: int) -> None:
        """A batch of ``tokens`` source tokens took ``seconds``."""
        if tokens <= 0 or seconds < 0:
            return
        sample = seconds / tokens
        with self._lock:
            if self._measured:
                self._s_per_token += self._smoothing * (sample - self._s_per_token)
            else:
                self._s_per_token, self._measured = sample, True

    def seconds_for(self, tokens: float, workers: int) -> float:
        """Time ``workers`` need for ``tokens`` source tokens of work."""
        return tokens * self._s_per_token / max(1, workers)


def retry_after_header(seconds: float) -> str:
    """Whole seconds for ``Retry-After``, within [1, 60]."""
    return str(int(min(max(math.ceil(seconds), RETRY_FLOOR_S), RETRY_CAP_S)))
