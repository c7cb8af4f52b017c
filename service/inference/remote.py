"""The running batch of ``gecserve worker`` and of ``gecserve engine``: jobs a gateway or a front end sent, each
with its decoding as JSON, decoded by a ``PayloadBatch`` (iteration-level batching for the listed strategies, as in
the gateway's own queues), and answers ready to be written back as JSON."""

from __future__ import annotations

import threading
from typing import Any

from service.batching import Job
from service.batching.running import Deliver
from service.engine.allocator import IdleRelease
from service.engine.decoding.params import DecodeResult, decoding_from_json
from service.engine.engine import Engine
from service.inference.batches import Outcome
from service.inference.iteration import PayloadBatch

__all__ = ["RemoteBatch", "outcome_of_reply"]


def _as_reply(outcome: Any) -> Any:
    if isinstance(outcome, Outcome):
        return {
            "result": outcome.result.to_json(),
            "seconds": outcome.finished - outcome.started,
            "batch_size": outcome.batch_size,
        }
    return outcome


def outcome_of_reply(result: dict[str, Any], seconds: float, batch_size: int, received: float) -> Outcome:
    """A reply's fields (made here by ``_as_reply``) read back where it was ``received``, as the ``Outcome`` it was."""
    return Outcome(DecodeResult.from_json(result), received - seconds, received, batch_size)


class RemoteBatch:
    """A queue's decoding in the worker (a batcher's ``RunningBatch``): each job's payload (its decoding, as
    sent) is read back, then the jobs are decoded by a ``PayloadBatch`` (iteration-level batching
    for the strategies in ``continuous``, as in the gateway's own queues). Replies are JSON-ready."""

    def __init__(self, engine: Engine, idle: IdleRelease, continuous: frozenset[str], max_rows: int) -> None:
        self.decoding = PayloadBatch(engine, continuous, max_rows, idle.batch_ended)

    @property
    def active(self) -> int:
        return self.decoding.active

    def advance(self, joining: list[Job], wake: threading.Event, deliver: Deliver) -> None:
        def reply(finished: list[tuple[Job, Any]]) -> None:
            deliver([(job, _as_reply(outcome)) for job, outcome in finished])

        readable = []
        for job in joining:
            try:
                job.payload = decoding_from_json(job.payload)
            except (KeyError, TypeError, ValueError) as error:
                reply([(job, ValueError(f"unreadable decoding {job.payload!r}: {error}"))])
                continue
            readable.append(job)
        self.decoding.advance(readable, wake, reply)
