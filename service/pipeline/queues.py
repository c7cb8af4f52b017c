"""The decoding queues: one auto-batching queue per decoding (an arm's queue, or ``generate``), all
running on one pool of engines.

The pool holds ``inference_workers`` engines (ONNX Runtime sessions, which accept concurrent
runs); worker ``i`` of every queue runs on engine ``i``. Queues are made when an arm first needs
one, so an experiment started at run time gets its own. A batch is abandoned between decoder
passes once every job in it is past its deadline, so no engine time is spent on answers nobody
waits for. Once no batch has run for ``IDLE_S`` seconds, the memory decoding used goes back to the
system (``release_memory_when_idle``); never between the batches of a burst, whose next batch
would only fault the same pages in again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.batching import BatchPolicy, DeadlineExceededError, Job, LocalBatcher
from service.engine.allocator import release_free_memory
from service.engine.decoding.types import DecodeParams, DecodeResult
from service.engine.engine import DecodingStoppedError, Engine
from service.experiments.arms import Arm
from service.observability.hooks import MetricsHooks

__all__ = ["GENERATE_QUEUE", "Outcome", "Queues"]

GENERATE_QUEUE = "generate"  # /v1/generate: each job carries its own (strategy, params)
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


def _run_group(engine: Engine, jobs: Sequence[Job], strategy: str, params: DecodeParams) -> list[Any]:
    started = time.monotonic()
    try:
        results = engine.generate([job.tokens for job in jobs], strategy, params, stop=lambda: _all_expired(jobs))
    except DecodingStoppedError as error:
        return [DeadlineExceededError(f"abandoned while decoding: every caller was past its deadline ({error})")] * len(
            jobs
        )
    finished = time.monotonic()
    return [Outcome(r, started, finished, len(jobs)) for r in results]


class Queues:
    """Makes and owns the batchers; ``get(arm)`` is the queue an arm's jobs go to."""

    def __init__(self, engines: Sequence[Engine], policy: BatchPolicy, hooks: MetricsHooks | None) -> None:
        self.engines = list(engines)
        self.policy = policy
        self.hooks = hooks
        self.batchers: dict[str, LocalBatcher] = {}
        self._last_batch = float("-inf")  # time.monotonic() when the latest batch of any queue ended

    def get(self, arm: Arm) -> LocalBatcher:
        """The running queue of ``arm`` (made and started on first use, on the running event loop)."""
        batcher = self.batchers.get(arm.queue)
        if batcher is None:
            strategy, params = arm.strategy, arm.params
            batcher = self._start(arm.queue, lambda engine, jobs: _run_group(engine, jobs, strategy, params))
        return batcher

    def generate(self) -> LocalBatcher:
        """The queue of ``/v1/generate``: each job's payload is its ``(strategy, params)``."""
        return self.batchers.get(GENERATE_QUEUE) or self._start(GENERATE_QUEUE, _run_payload_groups)

    def _start(self, name: str, run: Any) -> LocalBatcher:
        def runner(worker: int, jobs: list[Job]) -> list[Any]:
            try:
                return run(self.engines[worker % len(self.engines)], jobs)
            finally:
                self._last_batch = time.monotonic()

        batcher = LocalBatcher(self.policy, runner, workers=len(self.engines), name=name, hooks=self.hooks)
        batcher.start()
        self.batchers[name] = batcher
        return batcher

    async def stop(self, timeout: float) -> None:
        for batcher in list(self.batchers.values()):
            await batcher.stop(drain=True, timeout=timeout)

    async def release_memory_when_idle(self, idle_s: float = IDLE_S) -> None:
        """Until cancelled: every ``idle_s`` seconds in which no batch has ended and no queue holds or
        runs work, give malloc's free pages back, in a thread; the first time after a batch, shrink
        every engine's memory arenas before (about 20 ms in all after a burst; 0.1 ms for what the
        idle process's other threads free meanwhile)."""
        shrunk = float("-inf")
        while True:
            await asyncio.sleep(idle_s)
            busy = any(b.depth or b.in_flight for b in self.batchers.values())
            if busy or time.monotonic() - self._last_batch < idle_s:
                continue
            shrink, shrunk = self._last_batch > shrunk, time.monotonic()
            await asyncio.to_thread(self._release_memory, shrink)

    def _release_memory(self, shrink_arenas: bool) -> None:
        if shrink_arenas:
            for engine in self.engines:
                engine.release_memory()
        release_free_memory()


def _run_payload_groups(engine: Engine, jobs: Sequence[Job]) -> list[Any]:
    """Jobs with the same decoding settings decode together; bad settings fail their own jobs only."""
    outcomes: list[Any] = [None] * len(jobs)
    groups: dict[Any, list[int]] = {}
    for index, job in enumerate(jobs):
        groups.setdefault(job.payload, []).append(index)
    for (strategy, params), indices in groups.items():
        try:
            decoded = _run_group(engine, [jobs[i] for i in indices], strategy, params)
        except ValueError as error:
            decoded = [error] * len(indices)
        for index, outcome in zip(indices, decoded, strict=True):
            outcomes[index] = outcome
    return outcomes
