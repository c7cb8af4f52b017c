"""Admission control: how long queued work will take, so that what cannot finish in time is refused at once.

``ServiceRate`` learns what a batch costs from the batches a queue runs: ``seconds = fixed +
per_token x tokens``, a least-squares line through the last ``window`` batches, each weighted by
how recent it is (a batch counts half as much ``half_life`` batches later), so that batches run in
other conditions fade as the queue runs: start-up's warm-up, whose first batches of every queue
share the engines at once and cost several times what they cost later, or a past burst. While
work is waiting, the time between a decoding thread's batches (or a worker's) counts too, since a backlog is served at
that pace. The fixed part matters: a batch of one sentence costs several times more per token than
a full batch (the decoder passes are paid once per batch), so a backlog, served in full batches,
drains faster than single requests suggest. Until batches of different sizes have been seen, the
cost is proportional to tokens. A new request's wait is the work queued ahead of it (same or better
priority), half of what is running, and its own work, in as many batches as the policy will make
of it, divided among what decodes the queue's batches in parallel (its decoding threads, or the live
workers). A request whose wait would take more than its policy's share of the time left
(``BatchPolicy.admit_within``) is refused with 503 at once, rather than admitted to time out with 504 later;
``Retry-After`` is the time the present backlog needs to drain.
A request that finds its queue idle (nothing queued ahead of it, nothing running) is never refused
so: it has the queue's decoding threads (or workers) to itself, and no estimate can serve it sooner than trying.
"""

from __future__ import annotations

import math
import threading
from collections import deque

import numpy as np

__all__ = ["ServiceRate", "retry_after_header"]

RETRY_FLOOR_S = 1.0
RETRY_CAP_S = 60.0


class ServiceRate:
    """Batch cost learnt from finished batches (thread-safe); see the module docstring.

    ``prior_s_per_token`` answers until the first batch is measured. ``half_life``: batches after
    which a batch's weight in the fit has halved (``math.inf``: every batch of the window counts the same).
    """

    def __init__(self, prior_s_per_token: float = 0.0005, window: int = 64, half_life: float = 8.0) -> None:
        if prior_s_per_token <= 0 or window < 2 or half_life <= 0:
            raise ValueError("need prior_s_per_token > 0, window >= 2 and half_life > 0")
        self._batches: deque[tuple[float, float]] = deque(maxlen=window)  # (tokens, seconds), oldest first
        self._weights = 0.5 ** (np.arange(window)[::-1] / half_life)  # of the last n batches: [-n:]; the newest: 1
        self._fixed = 0.0
        self._per_token = prior_s_per_token
        self._lock = threading.Lock()

    @property
    def measured(self) -> bool:
        return bool(self._batches)

    @property
    def fixed_s(self) -> float:
        """Seconds a batch costs whatever its size."""
        return self._fixed

    @property
    def s_per_token(self) -> float:
        """Seconds each source token adds to a batch."""
        return self._per_token

    def record(self, seconds: float, tokens: int) -> None:
        """A batch of ``tokens`` source tokens took ``seconds``."""
        if tokens <= 0 or seconds < 0:
            return
        with self._lock:
            self._batches.append((float(tokens), seconds))
            self._fixed, self._per_token = self._fit()

    def _fit(self) -> tuple[float, float]:
        batches = np.array(self._batches)
        tokens, seconds = batches[:, 0], batches[:, 1]
        weights = self._weights[-len(batches) :]
        proportional = (0.0, float(weights @ seconds / (weights @ tokens)))
        if tokens.max() < 2 * tokens.min():
            return proportional  # batches of one size: the line is not determined
        # the weighted least-squares line, from its normal equations about the weighted means (the line np.polyfit
        # finds, without a general solver's cost after every batch)
        mean_tokens = weights @ tokens / weights.sum()
        mean_seconds = weights @ seconds / weights.sum()
        spread = tokens - mean_tokens
        per_token = (weights * spread) @ (seconds - mean_seconds) / ((weights * spread) @ spread)
        fixed = mean_seconds - per_token * mean_tokens
        if per_token <= 0 or fixed < 0:
            return proportional
        return float(fixed), float(per_token)

    def seconds_for(self, tokens: float, parallel: int, batches: int = 0) -> float:
        """Time ``parallel`` decoding threads (or workers) need for ``tokens`` source tokens of work in
        ``batches`` batches."""
        return (batches * self._fixed + tokens * self._per_token) / max(1, parallel)


def retry_after_header(seconds: float) -> str:
    """Whole seconds for ``Retry-After``, within [1, 60]."""
    return str(int(min(max(math.ceil(seconds), RETRY_FLOOR_S), RETRY_CAP_S)))
