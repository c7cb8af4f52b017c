"""The decoding queues: one auto-batching queue per decoding (an arm's queue, or ``generate``).

``DecodingQueues`` is what the pipeline submits to; it has two transports. ``LocalQueues`` (the
default) decodes in this process: a pool of ``inference_workers`` engines (ONNX Runtime sessions,
which accept concurrent runs), worker ``i`` of every queue running on engine ``i``, and the memory
decoding used going back to the system once it is idle. A decoding whose strategy is in
``continuous`` (an arm's, or a ``generate`` job's own) decodes with iteration-level batching
(sentences join and leave the batch between decoder passes); the others in closed batches. ``StreamQueues``
(``service.pipeline.stream_queues``, ``gecserve serve --queue URL``) sends the jobs to engine
workers through Redis Streams. Queues are made when an arm first needs one, so an experiment
started at run time gets its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from service.batching import Batcher, BatcherHooks, BatchPolicy, Job, LocalBatcher
from service.batching.session import ClosedSession, Session
from service.engine.engine import STRATEGIES, Engine
from service.experiments.arms import Arm
from service.pipeline.runners import DecodingSession, IdleRelease, PayloadSession, decode_batch

__all__ = ["GENERATE_QUEUE", "DecodingQueues", "LocalQueues"]

GENERATE_QUEUE = "generate"  # /v1/generate: each job carries its own (strategy, params)


class DecodingQueues(Protocol):
    """The queues of one pipeline, whatever carries their jobs to an engine."""

    batchers: dict[str, Batcher]

    def get(self, arm: Arm) -> Batcher:
        """The running queue of ``arm`` (made and started on first use, on the running event loop)."""

    def generate(self) -> Batcher:
        """The queue of ``/v1/generate``: each job's payload is its ``(strategy, params)``."""

    async def start(self) -> None: ...

    async def stop(self, timeout: float) -> None:
        """Finish what is queued and running, up to ``timeout`` seconds."""

    @property
    def ready(self) -> bool:
        """Whether submitted jobs can be decoded now (an engine is loaded, or a worker is live)."""

    def health(self) -> dict[str, Any]: ...


class LocalQueues:
    """Queues decoded by this process's engines (see the module docstring)."""

    def __init__(
        self,
        engines: Sequence[Engine],
        policy: BatchPolicy,
        hooks: BatcherHooks | None,
        continuous: frozenset[str] = frozenset(STRATEGIES),
    ) -> None:
        self.engines = list(engines)
        self.policy = policy
        self.continuous = continuous
        self.hooks = hooks
        self.batchers: dict[str, Batcher] = {}
        self.idle_release = IdleRelease(self.engines)
        self._release_task: asyncio.Task[None] | None = None

    def get(self, arm: Arm) -> Batcher:
        batcher = self.batchers.get(arm.queue)
        if batcher is None:
            strategy, params = arm.strategy, arm.params
            policy = replace(self.policy, max_batch_size=arm.max_batch_size or self.policy.max_batch_size)
            if strategy in self.continuous:

                def sessions(worker: int) -> Session:
                    ended = self.idle_release.batch_ended
                    return DecodingSession(self._engine(worker), strategy, params, policy.max_batch_size, ended)

            else:
                sessions = self._closed(lambda engine, jobs: decode_batch(engine, jobs, strategy, params))
            batcher = self._start(arm.queue, sessions, policy)
        return batcher

    def generate(self) -> Batcher:
        batcher = self.batchers.get(GENERATE_QUEUE)
        if batcher is None:

            def sessions(worker: int) -> Session:
                ended = self.idle_release.batch_ended
                return PayloadSession(self._engine(worker), self.continuous, self.policy.max_batch_size, ended)

            batcher = self._start(GENERATE_QUEUE, sessions, self.policy)
        return batcher

    def _engine(self, worker: int) -> Engine:
        return self.engines[worker % len(self.engines)]

    def _closed(self, run: Callable[[Engine, list[Job]], list[Any]]) -> Callable[[int], Session]:
        """Sessions that decode each batch to the end with ``run`` on the worker's engine."""

        def runner(worker: int, jobs: list[Job]) -> list[Any]:
            try:
                return run(self._engine(worker), jobs)
            finally:
                self.idle_release.batch_ended()

        return lambda worker: ClosedSession(runner, worker)

    def _start(self, name: str, sessions: Callable[[int], Session], policy: BatchPolicy) -> LocalBatcher:
        batcher = LocalBatcher(policy, None, workers=len(self.engines), name=name, hooks=self.hooks, sessions=sessions)
        batcher.start()
        self.batchers[name] = batcher
        return batcher

    async def start(self) -> None:
        busy = lambda: any(b.depth or b.in_flight for b in self.batchers.values())  # noqa: E731
        self._release_task = asyncio.create_task(self.idle_release.run(busy), name="release-memory")

    async def stop(self, timeout: float) -> None:
        if self._release_task is not None:
            self._release_task.cancel()
            await asyncio.gather(self._release_task, return_exceptions=True)
        for batcher in list(self.batchers.values()):
            await batcher.stop(drain=True, timeout=timeout)

    @property
    def ready(self) -> bool:
        return True

    def health(self) -> dict[str, Any]:
        return {"transport": "local", "engines": len(self.engines)}
