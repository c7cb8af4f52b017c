"""What a batcher's worker drives: a decoding session that jobs join between decoder passes.

``advance(joining, wake, deliver)`` is called in the worker's own thread: it adds ``joining``
to the session's running jobs and decodes, handing each job that finishes to
``deliver(job, outcome)`` at once (an outcome that is an exception fails only its job). A
session with jobs still running (``active``) is advanced again at once, with whatever the queue
has for its free rows: this is iteration-level batching. ``wake`` is set by the batcher when new
work is queued, so a session may return early to let it join.

``ClosedSession`` is the plain batch: a ``Runner`` decodes the jobs it is given to the end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from service.batching.job import Job

__all__ = ["ClosedSession", "Deliver", "Runner", "Session"]

Runner = Callable[[int, list[Job]], Sequence[Any]]
"""``runner(worker_index, jobs) -> results``: one result per job, in order. A result that is an
exception instance fails only its own job; raising fails the whole batch."""

Deliver = Callable[[Job, Any], None]
"""``deliver(job, outcome)``: a job's result, or the exception that fails it, from any thread."""


class Session(Protocol):
    @property
    def active(self) -> int:
        """Jobs joined and not yet returned."""
        ...

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        """Add ``joining``, decode, and ``deliver`` each job that finishes. Raising fails every job
        the session holds that was not delivered (and leaves it empty)."""
        ...


class ClosedSession:
    """A batch decoded to the end by ``runner`` in one call; nothing joins it meanwhile."""

    active = 0

    def __init__(self, runner: Runner, worker: int) -> None:
        self.runner = runner
        self.worker = worker

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        results = list(self.runner(self.worker, joining))
        if len(results) != len(joining):
            raise ResultCountError(f"runner returned {len(results)} results for {len(joining)} jobs")
        for job, result in zip(joining, results, strict=True):
            deliver(job, result)


class ResultCountError(RuntimeError):
    """A runner returned a different number of results than it was given jobs."""
