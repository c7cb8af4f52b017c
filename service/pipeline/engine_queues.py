"""Decoding queues whose engine is an engine process of this machine (``gecserve serve --front-ends N``), reached
over ZeroMQ (``service.batching.engine_client``).

Each queue is an ``EngineBatcher`` of one ``EngineConnection`` to the model's engine process; the engine batches
every front end's jobs for a queue together. Ready while the engine is connected: a front end whose engine died
refuses work at once with 503 until its restart is back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.batching import Batcher, Job
from service.batching.engine_client import EngineBatcher, EngineConnection
from service.inference.batches import Outcome
from service.inference.remote import outcome_of_reply
from service.observability.hooks import MetricsHooks
from service.observability.metrics import Metrics
from service.pipeline.queues import ForwardedQueues

__all__ = ["EngineQueues"]


def _outcome(reply: dict[str, Any], received: float) -> Outcome:
    return outcome_of_reply(reply["result"], reply["seconds"], reply["batch_size"], received)


class EngineQueues(ForwardedQueues):
    """See the module docstring."""

    def __init__(self, endpoint: str, admit_within: float, metrics: Metrics) -> None:
        self.connection = EngineConnection(endpoint)
        self.admit_within = admit_within
        self.hooks = MetricsHooks(metrics)
        self.batchers: dict[str, Batcher] = {}

    def _start(self, name: str, decoding: Callable[[Job], dict[str, Any]]) -> EngineBatcher:
        batcher = EngineBatcher(self.connection, name, self.admit_within, decoding, _outcome, self.hooks)
        batcher.start()
        self.batchers[name] = batcher
        return batcher

    async def start(self) -> None:
        """Connect, and wait until the engine answers (it loads while the front ends start)."""
        await self.connection.start()
        await self.connection.ping()

    async def stop(self, timeout: float) -> None:
        for batcher in list(self.batchers.values()):
            await batcher.stop(drain=True, timeout=timeout)
        await self.connection.stop()

    @property
    def ready(self) -> bool:
        return self.connection.connected

    def health(self) -> dict[str, Any]:
        return {"transport": "engine process", "endpoint": self.connection.endpoint}
