"""A sentence job: the unit the gateway submits to a batcher and a worker decodes.

A job is plain data (no future, no lock) so that any transport can carry it: the local
batcher keeps each job's future on the side, and a Redis Streams transport serialises the
fields it needs. Jobs compare by identity, so two jobs with the same tokens stay distinct.
"""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

__all__ = ["Job", "Priority", "deadline_in"]

_sequence = itertools.count()


class Priority(IntEnum):
    """Lower values are served first."""

    INTERACTIVE = 0  # a person is waiting (an editor as they type)
    BULK = 1  # batch jobs, document re-checks: throughput over latency
    SHADOW = 2  # an experiment's comparison run after the response: only on idle capacity, dropped first


def _new_id() -> str:
    return uuid.uuid4().hex


def deadline_in(seconds: float | None, now: float | None = None) -> float | None:
    """The ``time.monotonic()`` deadline ``seconds`` from now (None: no deadline)."""
    if seconds is None:
        return None
    return (time.monotonic() if now is None else now) + seconds


@dataclass(eq=False)
class Job:
    """One sentence to decode.

    ``tokens``: the source token ids. ``deadline``: ``time.monotonic()`` seconds after which the job must not start
    decoding (None: no deadline). ``keep_bias``: how strongly the decoding keeps the source
    (``service.engine.decoding.alignment``; 0 for none). ``payload``: whatever the running batch needs
    besides the tokens (decode parameters, strategy name); the batcher never reads it.
    ``enqueued_at`` is set by the batcher when the job is submitted; ``seq`` breaks ties
    between jobs enqueued at the same instant (creation order).
    """

    tokens: list[int]
    priority: Priority = Priority.INTERACTIVE
    deadline: float | None = None
    keep_bias: float = 0.0
    payload: Any = None
    id: str = field(default_factory=_new_id)
    enqueued_at: float = field(default_factory=time.monotonic)
    seq: int = field(default_factory=lambda: next(_sequence))

    @property
    def length(self) -> int:
        """Number of source tokens (what the token budget counts)."""
        return len(self.tokens)

    def expired(self, now: float) -> bool:
        """True when the deadline has passed (a job at exactly its deadline is expired)."""
        return self.deadline is not None and self.deadline <= now

    @property
    def age_key(self) -> tuple[float, int]:
        """Sort key: oldest first."""
        return (self.enqueued_at, self.seq)
