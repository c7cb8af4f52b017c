"""What a batcher's decoding thread drives: a running batch, which jobs join between decoder passes.

``advance(joining, wake, deliver)`` is called in the decoding thread: it adds ``joining`` to the
batch's running jobs and decodes, handing the jobs that finish together (in one decoder pass, or one
closed batch) to ``deliver([(job, outcome), ...])`` at once (an outcome that is an exception fails only its job):
one hand-off to the event loop for them all. A batch with jobs still running (``active``) is
advanced again at once, with whatever the queue has for its free rows: this is iteration-level
batching (``service.inference.iteration``). ``wake`` is set by the batcher when new work is queued, so
a batch may return early to let it join.

``ClosedBatch`` is the plain batch: a ``DecodeJobs`` function decodes the jobs it is given to the end;
``closed_batches`` makes a thread's closed batches of one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from service.batching.job import Job

__all__ = ["ClosedBatch", "DecodeJobs", "Deliver", "ResultCountError", "RunningBatch", "closed_batches"]

DecodeJobs = Callable[[int, list[Job]], Sequence[Any]]
"""``decode(thread_index, jobs) -> results``: one result per job, in order. A result that is an
exception instance fails only its own job; raising fails the whole batch."""

Deliver = Callable[[list[tuple[Job, Any]]], None]
"""``deliver(finished)``: jobs that finished together, each with its result or the exception that fails it, from
any thread; none where a pass finished none."""


class RunningBatch(Protocol):
    @property
    def active(self) -> int:
        """Jobs joined and not yet returned."""
        ...

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        """Add ``joining``, decode, and ``deliver`` the jobs that finish, those of one pass together. Raising fails
        every job the batch holds that was not delivered (and leaves it empty)."""
        ...


class ClosedBatch:
    """A batch decoded to the end by ``decode`` in one call; nothing joins it meanwhile."""

    active = 0

    def __init__(self, decode: DecodeJobs, thread: int) -> None:
        self.decode = decode
        self.thread = thread

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        results = list(self.decode(self.thread, joining))
        if len(results) != len(joining):
            raise ResultCountError(f"decode returned {len(results)} results for {len(joining)} jobs")
        deliver(list(zip(joining, results, strict=True)))


def closed_batches(decode: DecodeJobs) -> Callable[[int], RunningBatch]:
    """Each decoding thread's batches, closed ones decoded by ``decode`` (what ``LocalBatcher`` takes)."""
    return lambda thread: ClosedBatch(decode, thread)


class ResultCountError(RuntimeError):
    """A ``decode`` returned a different number of results than it was given jobs."""
