"""The dispatch of units to the model's outputs for one arm: the sentence cache, one job per distinct
sentence, the arm's queue, and the batching errors as request errors; and of a rewrite's units to the
``generate`` queue.

Units the model cannot read are their own output and cost nothing. Identical sentences within a
request are decoded once, and so are identical sentences of concurrent requests: a sentence already
being decoded for another request (the same cache key) is not submitted again, the request waits for
that decode instead (counted in ``gecserve_shared_sentences_total``). It joins only a decode at its
own priority or a more urgent one, so an editor's request never waits behind bulk or shadow work. A
waiter depends on nothing but the decode's own result: when the request that submitted it fails,
times out or goes away before the sentence is decoded, each waiter submits the sentence again with
its own deadline and priority (the first to do so leads, the others wait for it).

The language model's review (``service.text.lm_review``), where the model ships one, revises each decoded
sentence's best output before it is cached and answered: off the event loop, in a thread, for the sentences a
request decodes together, but on it for a request's one sentence (a millisecond or two, about what the hand-off
to a thread and back costs; the thread would hold the GIL, and so the loop, as long).

Cache keys hold the model, its version and variant, the arm's decoding (strategy and parameters), the
keep bias and the sentence the model reads (normalised and spelled), so a new model version or another
decoding never reads an old entry.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from service.batching import (
    Batcher,
    BatcherStoppedError,
    DeadlineExceededError,
    EvictedError,
    Job,
    JobFailedError,
    Priority,
    QueueFullError,
    QueueUnavailableError,
)
from service.engine.decoding.params import DecodeParams, DecodeResult
from service.engine.tokenization import TextCodec
from service.experiments.arms import Arm
from service.inference.batches import Outcome
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
from service.pipeline.queues import GENERATE_QUEUE, DecodingQueues
from service.pipeline.types import Timings, UnitOutputs
from service.text.confidence import TokenScores
from service.text.lm_review import LanguageModelReview
from service.text.units import Unit

__all__ = ["SentenceDispatcher"]


@dataclass(frozen=True)
class _Decoded:
    """A sentence's outputs, and the job and outcome that gave them (for timings)."""

    outputs: UnitOutputs
    job: Job
    outcome: Outcome
    review: float = 0.0  # seconds the language model's review of the lead request's decode took


@dataclass(frozen=True)
class _Flight:
    """One sentence being decoded for one request, which others wait for. ``done`` resolves to the
    outputs, or to None when the request that submitted the sentence failed or went away first."""

    priority: Priority
    done: asyncio.Future[_Decoded | None]


class SentenceDispatcher:
    """Has the sentences of requests decoded: cached, shared with a decode in flight, or submitted to a queue."""

    def __init__(
        self,
        queues: DecodingQueues,
        cache: SentenceCache,
        codec: TextCodec,
        metrics: Metrics,
        model_key: str,
        max_queue: int,
        review: LanguageModelReview | None = None,
    ) -> None:
        self.queues = queues
        self.cache = cache
        self.codec = codec
        self.metrics = metrics
        self.model_key = model_key
        self.max_queue = max_queue
        self.review = review
        self._flights: dict[str, _Flight] = {}  # by cache key: the sentences being decoded now

    def cache_key(self, arm: Arm, keep_bias: float, text: str) -> str:
        return f"{self.model_key}\x1f{arm.strategy}\x1f{arm.params!r}\x1f{keep_bias!r}\x1f{text}"

    async def decode(
        self, arm: Arm, keep_bias: float, units: Sequence[Unit], priority: Priority, deadline: float, timings: Timings
    ) -> list[UnitOutputs]:
        """Each unit's outputs, best first (one unless the arm returns an n-best list), decoded with ``keep_bias``."""
        outputs: list[UnitOutputs | None] = [
            None if unit.decoded_by_model else UnitOutputs([unit.text]) for unit in units
        ]
        todo = [i for i, out in enumerate(outputs) if out is None]
        started = time.monotonic()
        keys = {i: self.cache_key(arm, keep_bias, units[i].text) for i in todo}
        cached = await self.cache.get_many([keys[i] for i in todo])
        timings.cache = time.monotonic() - started
        misses: dict[str, list[int]] = {}  # the tokens of each distinct sentence to decode, by key
        for i, value in zip(todo, cached, strict=True):
            if value is None:
                misses.setdefault(keys[i], units[i].tokens)
            else:
                outputs[i] = UnitOutputs.from_json(json.loads(value))
        decoded = await self._decode_misses(arm, keep_bias, misses, priority, deadline, timings) if misses else {}
        for i in todo:
            if outputs[i] is None:
                outputs[i] = decoded[keys[i]]
        return [out if out is not None else UnitOutputs([]) for out in outputs]

    async def _decode_misses(
        self,
        arm: Arm,
        keep_bias: float,
        misses: dict[str, list[int]],
        priority: Priority,
        deadline: float,
        timings: Timings,
    ) -> dict[str, UnitOutputs]:
        """The outputs of each sentence of ``misses`` (tokens by key): waited for where another request is
        decoding it at this priority or a more urgent one, else submitted (and waited for by others), and
        submitted again where the request that was decoding it gave it up."""
        loop = asyncio.get_running_loop()
        decoded: dict[str, UnitOutputs] = {}
        remaining = dict(misses)
        while remaining:
            joined: dict[str, _Flight] = {}
            led: dict[str, _Flight] = {}
            for key in remaining:  # no await in between: a request arriving later waits for these flights
                flight = self._flights.get(key)
                if flight is not None and flight.priority <= priority:
                    joined[key] = flight
                else:
                    led[key] = self._flights[key] = _Flight(priority, loop.create_future())
            if joined:
                self.metrics.shared_sentences(arm.queue, len(joined))
            joined_at = time.monotonic()
            lead = self._lead(arm, keep_bias, {key: remaining[key] for key in led}, led, priority, deadline, timings)
            theirs: list[_Decoded | None] = []
            if joined:
                waits = asyncio.gather(*(asyncio.shield(flight.done) for flight in joined.values()))
                mine, theirs = await asyncio.gather(lead, waits)
            else:  # most requests: their own sentences only, led in this task (no task of their own)
                mine = await lead
            decoded.update(mine)
            for key, result in zip(joined, theirs, strict=True):
                if result is not None:
                    decoded[key] = result.outputs
                    _add_timings(timings, result.job, result.outcome, joined_at)
                    timings.review = max(timings.review, result.review)
            remaining = {key: tokens for key, tokens in remaining.items() if key not in decoded}
            if remaining and time.monotonic() >= deadline:
                raise RequestDeadlineError("not decoded in time: the request decoding its sentence gave it up")
        return decoded

    async def _lead(
        self,
        arm: Arm,
        keep_bias: float,
        tokens: dict[str, list[int]],
        flights: dict[str, _Flight],
        priority: Priority,
        deadline: float,
        timings: Timings,
    ) -> dict[str, UnitOutputs]:
        """Decode the sentences of ``tokens`` (by key) as this request's jobs, resolve their ``flights`` for
        the requests waiting for them, and cache the outputs."""
        if not tokens:
            return {}
        try:
            jobs = [Job(tokens=t, priority=priority, deadline=deadline, keep_bias=keep_bias) for t in tokens.values()]
            outcomes = await self._submit(self.queues.get(arm), arm.name, jobs)
            outputs = [self._outputs(outcome.result) for outcome in outcomes]
            reviewed = 0.0
            if self.review is not None:
                review_started = time.monotonic()
                if len(jobs) == 1:  # one sentence: reviewed here (see the module docstring)
                    outputs = self._reviewed(arm.queue, jobs, outputs)
                else:
                    outputs = await asyncio.to_thread(self._reviewed, arm.queue, jobs, outputs)
                reviewed = time.monotonic() - review_started
                timings.review = max(timings.review, reviewed)
            decoded, stored = {}, []
            for (key, flight), job, outcome, output in zip(flights.items(), jobs, outcomes, outputs, strict=True):
                result = outcome.result
                done = _Decoded(output, job, outcome, reviewed)
                flight.done.set_result(done)
                decoded[key] = output
                stored.append((key, json.dumps(output.to_json())))
                self.metrics.observe_decode(arm.queue, result.passes, result.accepted)
                _add_timings(timings, job, outcome, job.enqueued_at)
            await self.cache.set_many(stored)  # meanwhile, requests for these sentences still find the flights
            return decoded
        finally:
            for key, flight in flights.items():
                if not flight.done.done():
                    flight.done.set_result(None)  # given up: each waiter submits the sentence itself
                if self._flights.get(key) is flight:
                    del self._flights[key]

    def _outputs(self, result: DecodeResult) -> UnitOutputs:
        """A decode's outputs as text, best first, and the best one's tokens' log-probabilities where the decoding
        recorded them."""
        if not result.logprobs:
            texts = [self.codec.decode(h.tokens) for h in result.hypotheses] or [self.codec.decode(result.tokens)]
            return UnitOutputs(texts)
        text, ends = self.codec.decode_with_ends(result.tokens)  # greedy, aggressive: one output
        return UnitOutputs([text], TokenScores(text, ends, tuple(result.logprobs)))

    def _reviewed(self, queue: str, jobs: Sequence[Job], outputs: list[UnitOutputs]) -> list[UnitOutputs]:
        """Each sentence's outputs with the best one reviewed against what the model read (counted by queue)."""
        assert self.review is not None
        reviewed = []
        for job, output in zip(jobs, outputs, strict=True):
            result = self.review.review(self.codec.decode(job.tokens), output.texts[0])
            self.metrics.reviewed(queue, result.vetoed, result.proposed)
            reviewed.append(UnitOutputs([result.text, *output.texts[1:]], output.scores))
        return reviewed

    async def generate(
        self, units: Sequence[Unit], payload: tuple[str, DecodeParams], deadline: float, timings: Timings
    ) -> list[list[tuple[str, float]] | None]:
        """Each unit's hypotheses (text and score), best first, decoded by ``payload``'s strategy and settings
        in the ``generate`` queue; None for a unit the model does not read. No cache: a rewrite is asked for
        once (and sampling draws anew without a seed)."""
        readable = [unit for unit in units if unit.decoded_by_model]
        jobs = [Job(tokens=u.tokens, deadline=deadline, payload=payload) for u in readable]
        outcomes = await self._submit(self.queues.generate(), GENERATE_QUEUE, jobs) if jobs else []
        decoded = iter(zip(jobs, outcomes, strict=True))
        hypotheses: list[list[tuple[str, float]] | None] = []
        for unit in units:
            if not unit.decoded_by_model:
                hypotheses.append(None)
                continue
            job, outcome = next(decoded)
            _add_timings(timings, job, outcome, job.enqueued_at)
            hypotheses.append([(self.codec.decode(h.tokens), h.score) for h in outcome.result.hypotheses])
        return hypotheses

    def check_admission(self, arm: Arm | None, priority: Priority, deadline: float) -> None:
        """503 at once, before the request is preprocessed, when the queue of ``arm`` (None: ``generate``'s)
        already holds more work than its deadline allows (``Batcher.check_admission``): under overload the
        refused requests then cost next to nothing."""
        batcher = self.queues.generate() if arm is None else self.queues.get(arm)
        with _request_errors(GENERATE_QUEUE if arm is None else arm.name):
            batcher.check_admission(priority, deadline)

    async def _submit(self, batcher: Batcher, label: str, jobs: list[Job]) -> list[Outcome]:
        """Admit the jobs to ``batcher`` together (all or none), wait for their outcomes, and turn
        batching errors into request errors (``label`` names the arm, or ``generate``, in messages)."""
        if len(jobs) > self.max_queue:
            raise PayloadTooLargeError(f"the request has {len(jobs)} sentences; a queue holds at most {self.max_queue}")
        with _request_errors(label):
            return await batcher.submit_many(jobs)


@contextmanager
def _request_errors(label: str) -> Iterator[None]:
    """Batching errors as request errors (``label`` names the arm, or ``generate``, in messages)."""
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


def _add_timings(timings: Timings, job: Job, outcome: Outcome, since: float) -> None:
    """The queue and inference time of one sentence's decode, from ``since`` on (when its job was queued, or
    when the request began waiting for another's); a request's timings are those of its slowest sentence."""
    started = max(job.enqueued_at, since)
    timings.queue = max(timings.queue, outcome.started - started)
    timings.inference = max(timings.inference, outcome.finished - max(outcome.started, since))
