"""The decoding queues: one auto-batching queue per decoding (an arm's queue, or ``generate``).

``DecodingQueues`` is what the pipeline submits to; it has three transports. ``LocalQueues`` (the
default) decodes in this process: a pool of ``inference_workers`` engines (ONNX Runtime sessions,
which accept concurrent runs), decoding thread ``i`` of every queue running on engine ``i``, each batch
telling ``idle_release`` it ended (``service.wiring`` gives the memory back once decoding is idle). A
decoding whose strategy is in ``continuous`` (an arm's, or a ``generate`` job's own) decodes with
iteration-level batching (``service.inference.iteration``: sentences join and leave the batch between
decoder passes); the others in closed batches. ``StreamQueues``
(``service.pipeline.stream_queues``, ``gecserve serve --queue URL``) sends the jobs to workers
(``gecserve worker``) through Redis Streams, and ``EngineQueues`` (``service.pipeline.engine_queues``) to the
engine process of ``--front-ends``; both carry each job's decoding with it (``ForwardedQueues``). Queues are made
when an arm first needs one, so an experiment started at run time gets its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

from service.batching import Batcher, BatcherHooks, BatchPolicy, Job, LocalBatcher, RunningBatch, closed_batches
from service.engine.allocator import IdleRelease
from service.engine.decoding.params import decoding_to_json
from service.engine.engine import STRATEGIES, Engine
from service.experiments.arms import Arm
from service.inference.batches import decode_batch
from service.inference.iteration import IterationBatch, PayloadBatch

__all__ = ["GENERATE_QUEUE", "DecodingQueues", "ForwardedQueues", "LocalQueues"]

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


class ForwardedQueues:
    """What the queues whose jobs another process decodes share: an arm's queue sends the arm's decoding with each
    job, ``generate``'s each job's own; ``_start`` makes a queue's batcher on first use."""

    batchers: dict[str, Batcher]

    def get(self, arm: Arm) -> Batcher:
        decoding = decoding_to_json(arm.strategy, arm.params)
        return self.batchers.get(arm.queue) or self._start(arm.queue, lambda job: decoding)

    def generate(self) -> Batcher:
        return self.batchers.get(GENERATE_QUEUE) or self._start(
            GENERATE_QUEUE, lambda job: decoding_to_json(*job.payload)
        )

    def _start(self, name: str, decoding: Callable[[Job], dict[str, Any]]) -> Batcher:
        raise NotImplementedError


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

    def get(self, arm: Arm) -> Batcher:
        batcher = self.batchers.get(arm.queue)
        if batcher is None:
            strategy, params = arm.strategy, arm.params
            policy = replace(self.policy, max_batch_size=arm.max_batch_size or self.policy.max_batch_size)
            batches: Callable[[int], RunningBatch]
            if strategy in self.continuous:

                def batches(thread: int) -> RunningBatch:
                    ended = self.idle_release.batch_ended
                    return IterationBatch(self._engine(thread), strategy, params, policy.max_batch_size, ended)

            else:
                batches = self._closed(lambda engine, jobs: decode_batch(engine, jobs, strategy, params))
            batcher = self._start(arm.queue, batches, policy)
        return batcher

    def generate(self) -> Batcher:
        batcher = self.batchers.get(GENERATE_QUEUE)
        if batcher is None:

            def batches(thread: int) -> RunningBatch:
                ended = self.idle_release.batch_ended
                return PayloadBatch(self._engine(thread), self.continuous, self.policy.max_batch_size, ended)

            batcher = self._start(GENERATE_QUEUE, batches, self.policy)
        return batcher

    def _engine(self, thread: int) -> Engine:
        return self.engines[thread % len(self.engines)]

    def _closed(self, run: Callable[[Engine, list[Job]], list[Any]]) -> Callable[[int], RunningBatch]:
        """Closed batches, each decoded to the end by ``run`` on the decoding thread's engine."""

        def decode(thread: int, jobs: list[Job]) -> list[Any]:
            try:
                return run(self._engine(thread), jobs)
            finally:
                self.idle_release.batch_ended()

        return closed_batches(decode)

    def _start(self, name: str, batches: Callable[[int], RunningBatch], policy: BatchPolicy) -> LocalBatcher:
        batcher = LocalBatcher(policy, batches, threads=len(self.engines), name=name, hooks=self.hooks)
        batcher.start()
        self.batchers[name] = batcher
        return batcher

    @property
    def busy(self) -> bool:
        """Some queue holds or decodes work."""
        return any(b.depth or b.in_flight for b in self.batchers.values())

    async def start(self) -> None:
        """Nothing to start: each queue starts when it is first asked for."""

    async def stop(self, timeout: float) -> None:
        for batcher in list(self.batchers.values()):
            await batcher.stop(drain=True, timeout=timeout)

    @property
    def ready(self) -> bool:
        return True

    def health(self) -> dict[str, Any]:
        return {"transport": "local", "engines": len(self.engines)}
