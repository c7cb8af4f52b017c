"""Units to the model's outputs for one arm: the sentence cache, one job per distinct sentence, the
arm's queue, and the batching errors as request errors.

Units the model cannot read are their own output and cost nothing. Identical sentences within a
request are decoded once. Cache keys hold the model, its version and variant, the arm's decoding
(strategy and parameters) and the sentence the model reads (normalised and spelled), so a new
model version or another decoding never reads an old entry.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from service.batching import (
    Batcher,
    BatcherStoppedError,
    DeadlineExceededError,
    EvictedError,
    Job,
    Priority,
    QueueFullError,
)
from service.batching.stream_gateway import JobFailedError, QueueUnavailableError
from service.engine.tokenization import TextCodec
from service.experiments.arms import Arm
from service.observability.metrics import Metrics
from service.pipeline.cache import SentenceCache
from service.pipeline.errors import (
    InternalError,
    InvalidRequestError,
    NotReadyError,
    OverloadedError,
    PayloadTooLargeError,
    RequestDeadlineError,
)
from service.pipeline.queues import DecodingQueues
from service.pipeline.runners import Outcome
from service.pipeline.types import Timings
from service.pipeline.units import Unit

__all__ = ["UnitDecoder"]


class UnitDecoder:
    def __init__(
        self,
        queues: DecodingQueues,
        cache: SentenceCache,
        codec: TextCodec,
        metrics: Metrics,
        model_key: str,
        max_queue: int,
    ) -> None:
        self.queues = queues
        self.cache = cache
        self.codec = codec
        self.metrics = metrics
        self.model_key = model_key
        self.max_queue = max_queue

    def cache_key(self, arm: Arm, text: str) -> str:
        return f"{self.model_key}\x1f{arm.strategy}\x1f{arm.params!r}\x1f{text}"

    async def decode(
        self, arm: Arm, units: Sequence[Unit], priority: Priority, deadline: float, timings: Timings
    ) -> list[list[str]]:
        """Each unit's outputs, best first (one unless the arm returns an n-best list)."""
        outputs: list[list[str] | None] = [None if unit.decoded_by_model else [unit.text] for unit in units]
        todo = [i for i, out in enumerate(outputs) if out is None]
        started = time.monotonic()
        keys = {i: self.cache_key(arm, units[i].text) for i in todo}
        cached = await self.cache.get_many([keys[i] for i in todo])
        timings_cache = time.monotonic() - started
        misses = []
        for i, value in zip(todo, cached, strict=True):
            if value is None:
                misses.append(i)
            else:
                outputs[i] = json.loads(value)
        first_of: dict[str, int] = {}
        unique = [i for i in misses if first_of.setdefault(units[i].text, i) == i]
        jobs = [Job(tokens=units[i].tokens, arm=arm.queue, priority=priority, deadline=deadline) for i in unique]
        outcomes = await self.submit_to(self.queues.get(arm), arm.name, jobs) if jobs else []
        stored = []
        for i, job, outcome in zip(unique, jobs, outcomes, strict=True):
            result = outcome.result
            texts = [self.codec.decode(h.tokens) for h in result.hypotheses] or [self.codec.decode(result.tokens)]
            outputs[i] = texts
            stored.append((keys[i], json.dumps(texts)))
            self.metrics.observe_decode(arm.queue, result.passes, result.accepted)
            timings.queue = max(timings.queue, outcome.started - job.enqueued_at)
            timings.inference = max(timings.inference, outcome.finished - outcome.started)
        for i in misses:
            if outputs[i] is None:
                outputs[i] = outputs[first_of[units[i].text]]
        if stored:
            await self.cache.set_many(stored)
        timings.cache = timings_cache
        return [out if out is not None else [] for out in outputs]

    def check_admission(self, arm: Arm, priority: Priority, deadline: float) -> None:
        """503 at once, before the request is preprocessed, when the arm's queue already holds more
        work than its deadline allows (``Batcher.check_admission``): under overload the refused
        requests then cost next to nothing."""
        with _request_errors(arm.name):
            self.queues.get(arm).check_admission(priority, deadline)

    async def submit_to(self, batcher: Batcher, label: str, jobs: list[Job]) -> list[Outcome]:
        """Admit the jobs to ``batcher`` together (all or none), wait for their outcomes, and turn
        batching errors into request errors (``label`` names the queue in messages)."""
        if len(jobs) > self.max_queue:
            raise PayloadTooLargeError(f"the request has {len(jobs)} sentences; a queue holds at most {self.max_queue}")
        with _request_errors(label):
            return await batcher.submit_many(jobs)


@contextmanager
def _request_errors(label: str) -> Iterator[None]:
    """Batching errors as request errors (``label`` names the queue in messages)."""
    try:
        yield
    except QueueFullError as error:
        raise OverloadedError(
            f"{label} cannot take this request now ({error}); retry later", retry_after=error.retry_after_header
        ) from error
    except EvictedError as error:
        raise OverloadedError(f"made room for served work: {error}") from error
    except DeadlineExceededError as error:
        raise RequestDeadlineError(f"not decoded in time: {error}") from error
    except BatcherStoppedError as error:
        raise NotReadyError("the service is shutting down") from error
    except QueueUnavailableError as error:
        raise OverloadedError(f"{error}; retry later", retry_after="1") from error
    except JobFailedError as error:
        raise InternalError(f"{label} could not decode a sentence ({error.reason}): {error}") from error
    except ValueError as error:  # decoding settings the engine refuses
        raise InvalidRequestError(str(error)) from error
