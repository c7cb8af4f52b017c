"""Batches of sentence jobs decoded by an engine: what a queue's worker thread runs, in the gateway's
own process or in ``gecserve worker``.

A closed batch (``decode_batch``) is abandoned between decoder passes once every job in it is past
its deadline, so no engine time is spent on answers nobody waits for. Jobs that carry their own
decoding (``/v1/generate``, and every job a remote worker reads) are grouped by it. A batch the
engine raises on is decoded again one job at a time, so bad settings or a sentence that breaks the
engine fail only their own jobs.

``DecodingSession`` is iteration-level batching for a queue whose strategy is listed in
``GECSERVE_CONTINUOUS_BATCHING``: jobs join its decoder between passes, each leaves as soon as its
sentence is done, and a job past its deadline leaves unfinished. ``PayloadSession`` is the same for
jobs that carry their own decoding: one ``DecodingSession`` per listed decoding, closed batches
for the others.

``IdleRelease``: once no batch has run for ``IDLE_S`` seconds, the memory decoding used goes back to
the system; never between the batches of a burst, whose next batch would only fault the same pages
in again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from service.batching import DeadlineExceededError, Job
from service.batching.session import Deliver
from service.engine.allocator import release_free_memory
from service.engine.decoding.types import DecodeParams, DecodeResult, decoding_from_json, empty_result
from service.engine.engine import DecodingStoppedError, Engine, InputTooLongError

__all__ = [
    "IDLE_S",
    "DecodingSession",
    "IdleRelease",
    "Outcome",
    "PayloadSession",
    "WorkerSession",
    "decode_batch",
    "decode_by_payload",
]

log = logging.getLogger(__name__)

IDLE_S = 2.0  # no batch for this long: decoding is idle and its freed memory goes back


@dataclass
class Outcome:
    """A job's decode result and when its batch ran (for queue and inference timings)."""

    result: DecodeResult
    started: float
    finished: float
    batch_size: int


def _all_expired(jobs: Sequence[Job]) -> bool:
    now = time.monotonic()
    return all(job.expired(now) for job in jobs)


def decode_batch(engine: Engine, jobs: Sequence[Job], strategy: str, params: DecodeParams) -> list[Any]:
    """One ``Outcome`` per job, or ``DeadlineExceededError`` for each when the batch was abandoned.

    When the engine raises on a batch (settings it refuses, or a fault), each job is decoded alone,
    so only the jobs that fail by themselves get the exception and the others their results."""
    started = time.monotonic()
    try:
        results = engine.generate([job.tokens for job in jobs], strategy, params, stop=lambda: _all_expired(jobs))
    except DecodingStoppedError as error:
        abandoned = DeadlineExceededError(f"abandoned while decoding: every caller was past its deadline ({error})")
        return [abandoned] * len(jobs)
    except Exception as error:
        if len(jobs) == 1:
            return [error]
        log.warning(
            "a batch of %d failed (%s: %s); decoding its jobs one by one", len(jobs), type(error).__name__, error
        )
        return [outcome for job in jobs for outcome in decode_batch(engine, [job], strategy, params)]
    finished = time.monotonic()
    return [Outcome(result, started, finished, len(jobs)) for result in results]


def decode_by_payload(engine: Engine, jobs: Sequence[Job]) -> list[Any]:
    """Jobs whose ``payload`` is their ``(strategy, params)``: those with the same decode together."""
    outcomes: list[Any] = [None] * len(jobs)
    groups: dict[Any, list[int]] = {}
    for index, job in enumerate(jobs):
        groups.setdefault(job.payload, []).append(index)
    for (strategy, params), indices in groups.items():
        decoded = decode_batch(engine, [jobs[i] for i in indices], strategy, params)
        for index, outcome in zip(indices, decoded, strict=True):
            outcomes[index] = outcome
    return outcomes


class DecodingSession:
    """One worker's iteration-level decoding of a queue's strategy (a ``Session`` of the batcher).

    ``advance`` joins the new jobs (one encoder run), then runs decoder passes, delivering each job
    as it finishes, until none is left or work is queued (``wake``) while a quarter of ``max_rows``
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
            for job, outcome in self._join(joining):
                deliver(job, outcome)
            try:
                while self._held:
                    for job, outcome in self._drop_expired():
                        deliver(job, outcome)
                    if not self._held:
                        break
                    finished = self._decoder.step()
                    now = time.monotonic()
                    for handle, result in finished:
                        job, joined, rows = self._held.pop(handle)
                        deliver(job, Outcome(result, joined, now, rows))
                    if wake.is_set() and self.max_rows - len(self._held) >= self.join_at:
                        break
            except Exception as error:
                for job, outcome in self._recover(error):
                    deliver(job, outcome)
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
                handles = self._decoder.join([job.tokens for job in readable])
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
            "a session of %d failed (%s: %s); decoding its jobs one by one", len(held), type(error).__name__, error
        )
        self._held.clear()
        self._decoder = self.engine.decoder(self.strategy, self.params)
        return [(job, out) for job in held for out in decode_batch(self.engine, [job], self.strategy, self.params)]


class PayloadSession:
    """A queue's session for jobs whose ``payload`` is their ``(strategy, params)`` (``/v1/generate``, and
    every job a remote worker reads): jobs whose strategy is in ``continuous`` join that decoding's
    ``DecodingSession``; the others are decoded in closed batches, those with the same decoding together."""

    def __init__(self, engine: Engine, continuous: frozenset[str], max_rows: int, ended: Callable[[], None]) -> None:
        self.engine = engine
        self.continuous = continuous
        self.max_rows = max_rows
        self.ended = ended
        self.sessions: dict[tuple[str, DecodeParams], DecodingSession] = {}

    @property
    def active(self) -> int:
        return sum(session.active for session in self.sessions.values())

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        try:
            closed: list[Job] = []
            groups: dict[tuple[str, DecodeParams], list[Job]] = {}
            for job in joining:
                if job.payload[0] in self.continuous:
                    groups.setdefault(job.payload, []).append(job)
                else:
                    closed.append(job)
            for job, outcome in zip(closed, decode_by_payload(self.engine, closed), strict=True):
                deliver(job, outcome)
            running = [key for key, session in self.sessions.items() if session.active and key not in groups]
            for key in [*groups, *running]:
                session = self.sessions.get(key)
                if session is None:
                    session = self._session(key, groups[key], deliver)
                    if session is None:
                        continue
                session.advance(groups.get(key, []), wake, deliver)
            self.sessions = {key: session for key, session in self.sessions.items() if session.active}
        finally:
            self.ended()

    def _session(self, key: tuple[str, DecodeParams], jobs: list[Job], deliver: Deliver) -> DecodingSession | None:
        """A new decoding's session, or None after failing ``jobs`` when the engine refuses its settings."""
        try:
            session = DecodingSession(self.engine, *key, self.max_rows, lambda: None)
        except ValueError as error:
            for job in jobs:
                deliver(job, error)
            return None
        self.sessions[key] = session
        return session


class IdleRelease:
    """Gives back the memory the ``engines``' batches used once decoding is idle (see the module docstring)."""

    def __init__(self, engines: Sequence[Engine], idle_s: float = IDLE_S) -> None:
        self.engines = list(engines)
        self.idle_s = idle_s
        self._last_batch = float("-inf")  # time.monotonic() when the latest batch ended

    def batch_ended(self) -> None:
        """Called by the runner threads after each batch."""
        self._last_batch = time.monotonic()

    async def run(self, busy: Callable[[], bool]) -> None:
        """Until cancelled: every ``idle_s`` seconds in which no batch has ended and ``busy()`` is False,
        give malloc's free pages back, in a thread; the first time after a batch, shrink every
        engine's memory arenas before (about 20 ms in all after a burst; 0.1 ms for what the idle
        process's other threads free meanwhile)."""
        shrunk = float("-inf")
        while True:
            await asyncio.sleep(self.idle_s)
            if busy() or time.monotonic() - self._last_batch < self.idle_s:
                continue
            shrink, shrunk = self._last_batch > shrunk, time.monotonic()
            await asyncio.to_thread(self._release, shrink)

    def _release(self, shrink_arenas: bool) -> None:
        if shrink_arenas:
            for engine in self.engines:
                engine.release_memory()
        release_free_memory()


def _as_reply(outcome: Any) -> Any:
    if isinstance(outcome, Outcome):
        return {
            "result": outcome.result.to_json(),
            "seconds": outcome.finished - outcome.started,
            "batch_size": outcome.batch_size,
        }
    return outcome


class WorkerSession:
    """A queue's decoding in the worker (a batcher ``Session``): each job's payload (its decoding, as
    sent) is read back, then the jobs are decoded by a ``PayloadSession`` (iteration-level batching
    for the strategies in ``continuous``, as in the gateway's own queues). Replies are JSON-ready."""

    def __init__(self, engine: Engine, idle: IdleRelease, continuous: frozenset[str], max_rows: int) -> None:
        self.decoding = PayloadSession(engine, continuous, max_rows, idle.batch_ended)

    @property
    def active(self) -> int:
        return self.decoding.active

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        def reply(job: Job, outcome: Any) -> None:
            deliver(job, _as_reply(outcome))

        readable = []
        for job in joining:
            try:
                job.payload = decoding_from_json(job.payload)
            except (KeyError, TypeError, ValueError) as error:
                reply(job, ValueError(f"unreadable decoding {job.payload!r}: {error}"))
                continue
            readable.append(job)
        self.decoding.advance(readable, wake, reply)
