"""Admission by the gateway's own load: the event loop's lag and the requests in flight, checked before anything else.

The queues' admission (``service.batching.admission``) estimates the engine's work ahead of a request. The gateway
can be the bottleneck first: on a small machine, or with an engine as fast as a GPU's, the event loop that parses,
preprocesses and answers every request runs out of time before the engine does, requests wait for the loop rather
than in a queue, and that estimate sees nothing. So a request is also refused, with 503 ``overloaded`` and
``Retry-After``, when the gateway's own wait says it cannot be answered within ``admit_within`` of the time left
before its deadline (``shed_reason``)::

    wait = lag + (in flight + 1) x seconds per answer

- ``lag``: the event loop's lag (``service.observability.loop_lag``), smoothed exponentially in time
  (``smoothing_s``, the time a change takes to count for 63%): the wait of any work made ready now.
- in flight: requests admitted and not yet answered; the loop runs them in turn, so a new request is answered after
  their share of its time as well as its own.
- seconds per answer: CPU time spent while requests were in flight, over the requests that left (answered or
  refused), each one's weight halving ``half_life`` requests later; the loop thread's own CPU (one thread runs the
  loop) or the process's over the cores it may use, whichever is more: both are the least wall time an answer takes
  at the present pace, whatever the load. A refusal costs less than an answer, so counting it makes the figure
  lower, never higher: counted against the answers alone, the CPU refusals take would make each refusal refuse
  more (in a burst, more refusals, a dearer answer, fewer admitted). Until a first request has left it is 0 (only
  the lag counts).

The lag alone past the share is reason ``loop_lag``, the lag and the requests in flight together ``in_flight``. A
request that finds none in flight is never refused so (it waits for nothing but the loop), and ``admit_within`` 0
turns the refusal off. ``Retry-After`` is the time the requests in flight need. ``tick`` takes each measure of the
lag and reads the CPU clocks: it is called on the event loop's thread (the loop-lag task), as are ``admit`` and
``serving``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from service.batching.admission import retry_after_header

__all__ = ["IN_FLIGHT", "LOOP_LAG", "QUEUE", "SHED_REASONS", "Clocks", "LoadAdmission", "Refusal", "shed_reason"]

# Why a request is refused at admission (``gecserve_requests_shed_total{reason}``):
LOOP_LAG = "loop_lag"  # the loop's lag alone is more than the share of the time left
IN_FLIGHT = "in_flight"  # the lag and the requests in flight together are
QUEUE = "queue"  # the request's queue holds more work than that (``Batcher.check_admission``)
SHED_REASONS = (LOOP_LAG, IN_FLIGHT, QUEUE)
HALF_LIFE_REQUESTS = 64.0  # requests after which a request's CPU counts half in the seconds per answer


def shed_reason(
    lag_s: float, in_flight: int, s_per_answer: float, time_left_s: float, admit_within: float
) -> str | None:
    """Why a request arriving now is refused (``LOOP_LAG`` or ``IN_FLIGHT``), or None to admit it: see the module
    docstring. ``in_flight``: requests admitted and not yet answered, this one not counted."""
    if admit_within <= 0 or in_flight <= 0:
        return None
    share = max(0.0, time_left_s) * admit_within
    if lag_s > share:
        return LOOP_LAG
    if lag_s + (in_flight + 1) * s_per_answer > share:
        return IN_FLIGHT
    return None


@dataclass(frozen=True)
class Clocks:
    """Where ``LoadAdmission`` reads the time: wall (monotonic), the calling thread's CPU and the process's CPU."""

    wall: Callable[[], float] = time.monotonic
    thread_cpu: Callable[[], float] = time.thread_time
    process_cpu: Callable[[], float] = time.process_time


@dataclass(frozen=True)
class Refusal:
    """A refused request: the reason (``LOOP_LAG`` or ``IN_FLIGHT``), a message, and ``Retry-After``."""

    reason: str
    message: str
    retry_after: str


class LoadAdmission:
    """The gateway's lag, requests in flight and seconds per answer, and the admission they decide (see the module
    docstring). ``cores``: the cores the process may use (default: its CPU affinity's)."""

    def __init__(
        self,
        admit_within: float,
        smoothing_s: float,
        cores: int | None = None,
        clocks: Clocks | None = None,
        half_life: float = HALF_LIFE_REQUESTS,
    ) -> None:
        if not 0 <= admit_within <= 1 or smoothing_s <= 0 or half_life <= 0:
            raise ValueError("need 0 <= admit_within <= 1, smoothing_s > 0 and half_life > 0")
        self.admit_within = admit_within
        self.smoothing_s = smoothing_s
        self.cores = cores or len(os.sched_getaffinity(0))
        self.half_life = half_life
        self.clocks = clocks or Clocks()
        self.in_flight = 0
        self.lag_s = 0.0  # smoothed
        self._busy = False  # a request was in flight since the last tick
        self._left = 0  # requests answered or refused since the last tick
        self._last = (self.clocks.wall(), self.clocks.thread_cpu(), self.clocks.process_cpu())
        self._requests = self._loop_cpu = self._process_cpu = 0.0  # decayed sums over the requests that left

    @property
    def s_per_answer(self) -> float:
        """The least wall time an answer takes at the present pace (0 before a first request has left)."""
        if self._requests <= 0:
            return 0.0
        return max(self._loop_cpu, self._process_cpu / self.cores) / self._requests

    def tick(self, lag_s: float) -> None:
        """One measure of the event loop's lag (on the loop's thread): smooth it in, and count the CPU spent since
        the last tick when a request was in flight meanwhile."""
        now = (self.clocks.wall(), self.clocks.thread_cpu(), self.clocks.process_cpu())
        (wall, loop_cpu, process_cpu), (last_wall, last_loop, last_process) = now, self._last
        self._last = now
        self.lag_s += (lag_s - self.lag_s) * -math.expm1(-max(0.0, wall - last_wall) / self.smoothing_s)
        if self._busy:
            decay = 0.5 ** (self._left / self.half_life)
            self._requests = self._requests * decay + self._left
            self._loop_cpu = self._loop_cpu * decay + (loop_cpu - last_loop)
            self._process_cpu = self._process_cpu * decay + (process_cpu - last_process)
        self._left = 0
        self._busy = self.in_flight > 0

    def wait_s(self, requests: int) -> float:
        """The gateway's wait for ``requests`` requests at the present lag and pace."""
        return self.lag_s + requests * self.s_per_answer

    def admit(self, deadline: float, now: float) -> Refusal | None:
        """None to admit a request due by ``deadline`` (``clocks.wall`` time) now (then serve it in ``serving``), or
        why it is refused (``shed_reason``; the refusal counts as a request that left)."""
        left = deadline - now
        reason = shed_reason(self.lag_s, self.in_flight, self.s_per_answer, left, self.admit_within)
        if reason is None:
            return None
        self._left += 1
        wait = self.wait_s(self.in_flight + 1)
        message = (
            f"the service is too busy to answer in time: about {wait:.2f} s (event loop lag {self.lag_s:.3f} s, "
            f"{self.in_flight} requests in flight) against {left * self.admit_within:.2f} s allowed; retry later"
        )
        return Refusal(reason, message, retry_after_header(self.wait_s(self.in_flight)))

    @contextmanager
    def serving(self) -> Iterator[None]:
        """An admitted request, in flight while the block runs, answered when it ends."""
        self.in_flight += 1
        self._busy = True
        try:
            yield
        finally:
            self.in_flight -= 1
            self._left += 1
