"""What the batchers whose jobs another process batches share: ``stream_gateway.StreamBatcher`` (workers through
Redis Streams) and ``engine_client.EngineBatcher`` (an engine process through ZeroMQ).

Each counts this process's jobs sent and not yet answered, drains them on ``stop``, sends one job as a request of
one, and refuses before sending what cannot be sent: anything once stopped, a request with a job past its deadline.
What the other process raised comes back as a reason (``reason_of``) and is raised here as the same error
(``error_of``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from service.batching.batcher import (
    BatcherHooks,
    BatcherStoppedError,
    DeadlineExceededError,
    EvictedError,
    JobFailedError,
    NullHooks,
    QueueFullError,
    WouldMissDeadlineError,
)
from service.batching.job import Job

__all__ = ["ForwardingBatcher", "error_of", "reason_of"]

DRAIN_POLL_S = 0.05


def reason_of(error: Exception) -> str:
    """The reason an answer carries for ``error``, raised where the jobs were decoded (``error_of`` reads it)."""
    if isinstance(error, QueueFullError):
        return error.reason
    if isinstance(error, DeadlineExceededError):
        return "deadline"
    if isinstance(error, BatcherStoppedError):
        return "stopped"
    if isinstance(error, EvictedError):
        return "evicted"
    if isinstance(error, ValueError):  # decoding settings the engine refuses
        return "invalid"
    return "failed"


def error_of(reason: str, message: str, name: str = "", depth: int = 0, retry_after: float = 0.0) -> BaseException:
    """The error an answer's ``reason`` stands for, with its ``message`` (a refusal: the queue ``name``, its
    ``depth`` and ``retry_after``)."""
    if reason == QueueFullError.reason:
        return QueueFullError(depth, retry_after, name, message)
    if reason == WouldMissDeadlineError.reason:
        return WouldMissDeadlineError(depth, retry_after, name, message)
    if reason == "deadline":
        return DeadlineExceededError(message)
    if reason == "stopped":
        return BatcherStoppedError(message)
    if reason == "evicted":
        return EvictedError(message)
    if reason == "invalid":
        return ValueError(message)
    return JobFailedError(reason, message)


class ForwardingBatcher:
    """The shared part (see the module docstring); a subclass sends in ``submit_many``."""

    def __init__(self, name: str, hooks: BatcherHooks | None) -> None:
        self.name = name
        self._hooks: BatcherHooks = hooks if hooks is not None else NullHooks()
        self._in_flight = 0
        self._running = False

    @property
    def in_flight(self) -> int:
        """This process's jobs sent and not yet answered."""
        return self._in_flight

    def start(self) -> None:
        self._running = True

    async def stop(self, drain: bool = True, timeout: float | None = None) -> None:
        self._running = False
        until = time.monotonic() + (timeout or 0.0)
        while drain and self._in_flight and time.monotonic() < until:
            await asyncio.sleep(DRAIN_POLL_S)

    async def submit(self, job: Job) -> Any:
        (result,) = await self.submit_many([job])
        return result

    async def submit_many(self, jobs: Sequence[Job]) -> list[Any]:
        raise NotImplementedError

    def _check_sendable(self, jobs: Sequence[Job], now: float) -> None:
        """``BatcherStoppedError`` once stopped; ``DeadlineExceededError`` when a job's deadline has passed."""
        if not self._running:
            self._hooks.on_reject(self.name, "stopped")
            raise BatcherStoppedError(f"queue {self.name!r} is not running")
        if any(job.expired(now) for job in jobs):
            self._hooks.on_reject(self.name, "deadline")
            raise DeadlineExceededError("a job expired before it was queued")
