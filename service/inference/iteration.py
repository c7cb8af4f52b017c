"""Iteration-level batching: jobs join a running decoder between passes and leave, each as soon as it is done.

``IterationBatch`` decodes a queue's strategy for the strategies listed in ``GECSERVE_CONTINUOUS_BATCHING``: a
job past its deadline leaves unfinished, and if the decoder raises, the jobs it held are decoded again one at a
time as closed batches, so only a job that fails by itself gets the exception. ``PayloadBatch`` is the same for
jobs that carry their own decoding (``/v1/generate``'s, and a worker's): one ``IterationBatch`` per
listed decoding, closed batches for the others.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from service.batching import DeadlineExceededError, Job
from service.batching.running import Deliver
from service.engine.decoding.params import DecodeParams, empty_result
from service.engine.engine import Engine, InputTooLongError
from service.inference.batches import Outcome, decode_batch, decode_by_payload

__all__ = ["IterationBatch", "PayloadBatch"]

log = logging.getLogger(__name__)


class IterationBatch:
    """One decoding thread's iteration-level decoding of a queue's strategy (a ``RunningBatch`` of the batcher).

    ``advance`` joins the new jobs (one encoder run), then runs decoder passes, delivering the jobs
    each pass finishes, until none is left or work is queued (``wake``) while a quarter of ``max_rows``
    (at least one) is free: the scheduler's round trip is paid once for several joins, not per
    pass. If the decoder raises, the jobs it held are decoded again one at a time as closed
    batches, so only a job that fails by itself gets the exception.
    """

    def __init__(
        self, engine: Engine, strategy: str, params: DecodeParams, max_rows: int, ended: Callable[[], None]
    ) -> None:
        self.engine = engine
        self.strategy = strategy
        self.params = params
        self.max_rows = max_rows
        self.join_at = max(1, max_rows // 4)
        self.ended = ended
        self._decoder = engine.decoder(strategy, params)
        self._held: dict[int, tuple[Job, float, int]] = {}  # handle -> job, when it joined, rows then

    @property
    def active(self) -> int:
        return len(self._held)

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        try:
            deliver(self._join(joining))
            try:
                while self._held:
                    deliver(self._drop_expired())
                    if not self._held:
                        break
                    finished = self._decoder.step()
                    deliver(self._finished(finished))
                    if wake.is_set() and self.max_rows - len(self._held) >= self.join_at:
                        break
            except Exception as error:
                deliver(self._recover(error))
        finally:
            self.ended()

    def _join(self, jobs: list[Job]) -> list[tuple[Job, Any]]:
        now = time.monotonic()
        outcomes: list[tuple[Job, Any]] = []
        readable = []
        for job in jobs:
            if not job.tokens:
                outcomes.append((job, Outcome(empty_result(), now, now, 1)))
                continue
            try:
                self.engine.check_length(job.tokens)
            except InputTooLongError as error:
                outcomes.append((job, error))
            else:
                readable.append(job)
        if readable:
            rows = len(self._held) + len(readable)
            try:
                handles = self._decoder.join([job.tokens for job in readable], [job.keep_bias for job in readable])
            except Exception as error:  # the encoder failed on these: each alone, as a closed batch
                log.warning("joining %d jobs failed (%s); decoding them one by one", len(readable), error)
                return outcomes + [
                    (job, out)
                    for job in readable
                    for out in decode_batch(self.engine, [job], self.strategy, self.params)
                ]
            for handle, job in zip(handles, readable, strict=True):
                self._held[handle] = (job, now, rows)
        return outcomes

    def _finished(self, finished: list[tuple[int, Any]]) -> list[tuple[Job, Any]]:
        """The jobs behind a pass's finished handles, each with its outcome; no longer held."""
        now = time.monotonic()
        outcomes = []
        for handle, result in finished:
            job, joined, rows = self._held.pop(handle)
            outcomes.append((job, Outcome(result, joined, now, rows)))
        return outcomes

    def _drop_expired(self) -> list[tuple[Job, Any]]:
        now = time.monotonic()
        expired = [handle for handle, (job, _, _) in self._held.items() if job.expired(now)]
        if not expired:
            return []
        self._decoder.drop(expired)
        error = DeadlineExceededError("abandoned while decoding: its caller was past its deadline")
        return [(self._held.pop(handle)[0], error) for handle in expired]

    def _recover(self, error: Exception) -> list[tuple[Job, Any]]:
        held = [job for job, _, _ in self._held.values()]
        log.warning(
            "a running batch of %d failed (%s: %s); decoding its jobs one by one",
            len(held),
            type(error).__name__,
            error,
        )
        self._held.clear()
        self._decoder = self.engine.decoder(self.strategy, self.params)
        return [(job, out) for job in held for out in decode_batch(self.engine, [job], self.strategy, self.params)]


class PayloadBatch:
    """A queue's running batch for jobs whose ``payload`` is their ``(strategy, params)`` (``/v1/generate``, and
    every job a worker reads): jobs whose strategy is in ``continuous`` join that decoding's
    ``IterationBatch``; the others are decoded in closed batches, those with the same decoding together."""

    def __init__(self, engine: Engine, continuous: frozenset[str], max_rows: int, ended: Callable[[], None]) -> None:
        self.engine = engine
        self.continuous = continuous
        self.max_rows = max_rows
        self.ended = ended
        self.batches: dict[tuple[str, DecodeParams], IterationBatch] = {}

    @property
    def active(self) -> int:
        return sum(batch.active for batch in self.batches.values())

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        try:
            closed: list[Job] = []
            groups: dict[tuple[str, DecodeParams], list[Job]] = {}
            for job in joining:
                if job.payload[0] in self.continuous:
                    groups.setdefault(job.payload, []).append(job)
                else:
                    closed.append(job)
            deliver(list(zip(closed, decode_by_payload(self.engine, closed), strict=True)))
            running = [key for key, batch in self.batches.items() if batch.active and key not in groups]
            for key in [*groups, *running]:
                batch = self.batches.get(key)
                if batch is None:
                    batch = self._start(key, groups[key], deliver)
                    if batch is None:
                        continue
                batch.advance(groups.get(key, []), wake, deliver)
            self.batches = {key: batch for key, batch in self.batches.items() if batch.active}
        finally:
            self.ended()

    def _start(self, key: tuple[str, DecodeParams], jobs: list[Job], deliver: Deliver) -> IterationBatch | None:
        """A new decoding's running batch, or None after failing ``jobs`` when the engine refuses its settings."""
        try:
            batch = IterationBatch(self.engine, *key, self.max_rows, lambda: None)
        except ValueError as error:
            deliver([(job, error) for job in jobs])
            return None
        self.batches[key] = batch
        return batch
