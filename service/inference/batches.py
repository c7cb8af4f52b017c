"""Closed batches of sentence jobs decoded by an engine, and the ``Outcome`` of each job.

A closed batch (``decode_batch``) is abandoned between decoder passes once every job in it is past
its deadline, so no engine time is spent on answers nobody waits for. Jobs that carry their own
decoding (``/v1/generate``, and every job a worker reads) are grouped by it
(``decode_by_payload``). A batch the engine raises on is decoded again one job at a time, so bad
settings or a sentence that breaks the engine fail only their own jobs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.batching import DeadlineExceededError, Job
from service.engine.decoding.params import DecodeParams, DecodeResult
from service.engine.engine import DecodingStoppedError, Engine

__all__ = ["Outcome", "decode_batch", "decode_by_payload"]

log = logging.getLogger(__name__)


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


def decode_batch(engine: Engine, jobs: Sequence[Job], strategy: str, params: DecodeParams) -> list[Any]:
    """One ``Outcome`` per job, or ``DeadlineExceededError`` for each when the batch was abandoned.

    When the engine raises on a batch (settings it refuses, or a fault), each job is decoded alone,
    so only the jobs that fail by themselves get the exception and the others their results."""
    started = time.monotonic()
    try:
        results = engine.generate(
            [job.tokens for job in jobs],
            strategy,
            params,
            stop=lambda: _all_expired(jobs),
            keep_biases=[job.keep_bias for job in jobs],
        )
    except DecodingStoppedError as error:
        abandoned = DeadlineExceededError(f"abandoned while decoding: every caller was past its deadline ({error})")
        return [abandoned] * len(jobs)
    except Exception as error:
        if len(jobs) == 1:
            return [error]
        log.warning(
            "a batch of %d failed (%s: %s); decoding its jobs one by one", len(jobs), type(error).__name__, error
        )
        return [outcome for job in jobs for outcome in decode_batch(engine, [job], strategy, params)]
    finished = time.monotonic()
    return [Outcome(result, started, finished, len(jobs)) for result in results]


def decode_by_payload(engine: Engine, jobs: Sequence[Job]) -> list[Any]:
    """Jobs whose ``payload`` is their ``(strategy, params)``: those with the same decode together."""
    outcomes: list[Any] = [None] * len(jobs)
    groups: dict[Any, list[int]] = {}
    for index, job in enumerate(jobs):
        groups.setdefault(job.payload, []).append(index)
    for (strategy, params), indices in groups.items():
        decoded = decode_batch(engine, [jobs[i] for i in indices], strategy, params)
        for index, outcome in zip(indices, decoded, strict=True):
            outcomes[index] = outcome
    return outcomes
