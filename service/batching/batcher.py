"""The ``Batcher`` interface every transport implements, its errors, and its metrics hooks.

A batcher takes sentence jobs one at a time and hands them, in batches, to decoding threads
(``local.py``), to workers through Redis Streams (``stream_gateway.py``) or to an engine process of this machine
through ZeroMQ (``engine_client.py``); ``submit`` resolves with that job's own result. The three transports share
this interface, the policy in ``policy.py``, and the hooks below.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from service.batching.admission import retry_after_header
from service.batching.job import Job, Priority

__all__ = [
    "Batcher",
    "BatcherHooks",
    "BatcherStoppedError",
    "BatchingError",
    "DeadlineExceededError",
    "EvictedError",
    "NullHooks",
    "QueueFullError",
    "WouldMissDeadlineError",
]


class BatchingError(Exception):
    """Base of the errors a batcher raises to its callers."""


class QueueFullError(BatchingError):
    """The queue cannot take the jobs: answer 503 with ``Retry-After: retry_after_header``.

    ``retry_after`` (seconds) estimates when the work queued now will have drained.
    """

    reason = "queue_full"

    def __init__(self, depth: int, retry_after: float, name: str = "", detail: str = "") -> None:
        self.depth = depth
        self.retry_after = retry_after
        self.name = name
        super().__init__(detail or f"queue {name!r} is full ({depth} jobs queued); retry after {retry_after:.1f} s")

    @property
    def retry_after_header(self) -> str:
        """Whole seconds for the HTTP ``Retry-After`` header, within [1, 60]."""
        return retry_after_header(self.retry_after)


class WouldMissDeadlineError(QueueFullError):
    """The work queued ahead would keep the jobs waiting past their deadline: refused at once."""

    reason = "wait"


class EvictedError(BatchingError):
    """A queued shadow job made room for served work; it never ran."""


class DeadlineExceededError(BatchingError):
    """The job's deadline passed before it started decoding (answer 504); it was never decoded."""


class BatcherStoppedError(BatchingError):
    """The batcher is not running (not started, stopping, or stopped without draining)."""


class QueueUnavailableError(BatchingError):
    """Redis cannot be reached (or was restarted and lost the job): answer 503 and let the caller retry."""


class JobFailedError(BatchingError):
    """A worker could not decode the job: it failed, or it was dead-lettered after too many deliveries."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


class BatcherHooks(Protocol):
    """Observations a batcher reports; ``name`` is the batcher's name (its queue's: the ``queue`` label).

    Hooks are called on the event loop thread, never from a decoding thread, and must be cheap.
    An exception raised by a hook is logged and otherwise ignored.
    """

    def on_depth(self, name: str, depth: int, in_flight: int) -> None:
        """Queued and running job counts changed."""

    def on_queue_wait(self, name: str, seconds: float) -> None:
        """A job left the queue for a batch after waiting ``seconds``."""

    def on_batch(self, name: str, size: int, padded_tokens: int) -> None:
        """A batch of ``size`` rows and ``padded_tokens`` (rows x longest) starts."""

    def on_inference(self, name: str, seconds: float, size: int, cpu_seconds: float) -> None:
        """One call advancing a batch took ``seconds``, and ``cpu_seconds`` of its decoding thread's CPU time
        (whether it succeeded or raised)."""

    def on_reject(self, name: str, reason: str) -> None:
        """A job was refused or dropped: ``queue_full``, ``wait`` (it would miss its deadline),
        ``deadline``, ``stopped``, ``cancelled``, ``evicted`` (a shadow job made room) or
        ``abandoned`` (its running batch stopped decoding it: every caller in its batch was past its deadline)."""

    def on_error(self, name: str, reason: str) -> None:
        """A batch failed: ``runner`` (advancing the running batch raised; the label kept from before
        the name changed) or ``result_count`` (a decode function returned the wrong number of results)."""


class NullHooks:
    """Hooks that observe nothing."""

    def on_depth(self, name: str, depth: int, in_flight: int) -> None:
        pass

    def on_queue_wait(self, name: str, seconds: float) -> None:
        pass

    def on_batch(self, name: str, size: int, padded_tokens: int) -> None:
        pass

    def on_inference(self, name: str, seconds: float, size: int, cpu_seconds: float) -> None:
        pass

    def on_reject(self, name: str, reason: str) -> None:
        pass

    def on_error(self, name: str, reason: str) -> None:
        pass


@runtime_checkable
class Batcher(Protocol):
    """An auto-batching queue: an arm's (``Arm.queue``), or ``generate``'s.

    ``submit`` raises ``QueueFullError`` (bound reached), ``DeadlineExceededError`` (deadline
    passed before decoding started), ``BatcherStoppedError`` (not running), or whatever
    decoding raised for this job's batch.
    """

    name: str

    def start(self) -> None:
        """Start batching (call from within the running event loop)."""

    async def stop(self, drain: bool = True, timeout: float | None = None) -> None:
        """Stop taking jobs. ``drain``: finish queued and running jobs first (for up to ``timeout``
        seconds); otherwise queued jobs fail with ``BatcherStoppedError`` and only running batches finish."""

    async def submit(self, job: Job) -> Any:
        """Queue ``job`` and wait for its own result."""

    async def submit_many(self, jobs: Sequence[Job]) -> list[Any]:
        """Queue all of ``jobs`` or none of them (QueueFullError) and wait for their results."""

    def check_admission(self, priority: Priority, deadline: float) -> None:
        """Raise ``WouldMissDeadlineError`` when the work queued now alone would take more than the
        admitted share of the time left before ``deadline``: a request that ``submit_many`` would
        refuse whatever its size, refused before any work is spent on it."""

    @property
    def depth(self) -> int:
        """Jobs queued, not yet running."""

    @property
    def in_flight(self) -> int:
        """Jobs in batches that are running now."""
