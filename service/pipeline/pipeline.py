"""The pipeline: one object behind every API, and the one entry point of every request.

``correct`` and ``generate`` are what HTTP and gRPC call. Each runs its request under the
request's deadline and records it once, here: Prometheus (by API, route, experiment, arm and
outcome), the live numbers of ``/v1/stats``, and the experiment's own numbers.

A correction: validate -> route to an arm (``service.experiments``) -> admission (503 at once when the
arm's queue cannot serve it in time) -> preprocess (parallel workers: protected spans, sentences,
languages, normalise, spell unless the request turns it off, tokenize) -> the sentence cache and the
sentences already in flight -> the arm's auto-batching queue -> the guard, and edits with offsets. A
rewrite (``/v1/generate``) takes the same path to its own queue, without the cache. When the
experiment samples the request for a shadow comparison, its sentences also go through the shadow arm
after the answer is ready, at the lowest priority.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from service.batching import Priority
from service.config import Settings
from service.engine.decoding.types import DecodeParams
from service.engine.engine import takes_keep_bias
from service.engine.manifest import KEEP_BIAS_LEVELS, ModelManifest
from service.experiments.arms import Arm, UnknownArmError
from service.experiments.manager import ExperimentManager, Route
from service.observability.logging import log_request
from service.observability.metrics import NO_EXPERIMENT, Metrics
from service.observability.stats import OK, RollingStats
from service.pipeline.dispatch import SentenceDispatcher
from service.pipeline.errors import (
    CANCELLED,
    InternalError,
    InvalidRequestError,
    NotReadyError,
    PayloadTooLargeError,
    RequestDeadlineError,
    RequestError,
    UnknownArmRequestError,
    status_of,
)
from service.pipeline.preprocess import Preprocessor
from service.pipeline.queues import GENERATE_QUEUE, DecodingQueues
from service.pipeline.shadow import ShadowComparer
from service.pipeline.types import (
    Correction,
    CorrectRequest,
    CorrectResult,
    EditOut,
    GenerateRequest,
    GenerateResult,
    Timings,
)
from service.text.offsets import Utf16Index
from service.text.units import TypedEdit, assemble

log = logging.getLogger(__name__)

NO_ARM = "none"  # requests refused before they were routed

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class _Record:
    """What one request did, filled in as it goes and recorded once at the end."""

    api: str
    route: str
    arm: str = NO_ARM
    routed: Route | None = None
    timings: Timings = field(default_factory=Timings)
    sentences: int = 0
    edits_per_sentence: list[int] = field(default_factory=list)  # corrections only

    @property
    def experiment(self) -> str:
        return self.routed.experiment if self.routed is not None and self.routed.experiment else NO_EXPERIMENT


class Pipeline:
    """Serves requests: routes them, preprocesses their paragraphs, has their sentences decoded and assembles the
    answers, recording each once. ``service.wiring`` builds its parts and hands it those that decode
    (``serve_with``) once they are ready."""

    def __init__(
        self,
        settings: Settings,
        metrics: Metrics,
        stats: RollingStats,
        manifest: ModelManifest,
        preprocessor: Preprocessor,
        experiments: ExperimentManager,
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        self.stats = stats
        self.manifest = manifest
        self.preprocessor = preprocessor
        self.experiments = experiments
        self.queues: DecodingQueues | None = None
        self.dispatcher: SentenceDispatcher | None = None
        self.shadow: ShadowComparer | None = None
        self.ready = False
        self.draining = False  # shutting down: readiness is off (``serving``), requests are still taken while ready
        self.variant: str | None = None

    def serve_with(
        self, queues: DecodingQueues, dispatcher: SentenceDispatcher, shadow: ShadowComparer, variant: str
    ) -> None:
        """The parts that decode, started and warmed up: from now on the pipeline is ready."""
        self.queues, self.dispatcher, self.shadow, self.variant = queues, dispatcher, shadow, variant
        self.ready = True

    @property
    def accepting(self) -> bool:
        """Ready, and something can decode: an engine here, or a live worker."""
        return self.ready and self.queues is not None and self.queues.ready

    @property
    def serving(self) -> bool:
        """What readiness reports: accepting, and not shutting down."""
        return self.accepting and not self.draining

    @property
    def model_info(self) -> tuple[str, str]:
        return self.manifest.name, self.manifest.version

    @property
    def max_new_tokens(self) -> int:
        """The longest generation the model allows (its positions, less the decoder prefix)."""
        return self.manifest.max_target_positions - len(self.manifest.decoder_prefix_ids)

    # -- the entry point --------------------------------------------------------------------

    async def correct(
        self, request: CorrectRequest, api: str = "http", timeout: float | None = None, route: str = "correct"
    ) -> CorrectResult:
        """Corrections of ``request``'s paragraphs: what both APIs call. ``route`` labels the request's
        metrics (``lt_check`` for LanguageTool's ``/v2/check``, which is served the same way)."""
        return await self._serve(api, route, timeout, self._correct, request)

    async def generate(
        self, request: GenerateRequest, api: str = "http", timeout: float | None = None
    ) -> GenerateResult:
        """Rewrites of ``request.text``: what both APIs call."""
        return await self._serve(api, "generate", timeout, self._generate, request)

    def refused(self, api: str, route: str, reason: str) -> None:
        """A request the API refused before it reached the pipeline (fields that do not validate)."""
        self._account(_Record(api, route), 0.0, reason)

    async def _serve(
        self,
        api: str,
        route: str,
        timeout: float | None,
        work: Callable[[R, _Record, float], Awaitable[T]],
        request: R,
    ) -> T:
        seconds = self.settings.request_timeout_s if timeout is None else min(timeout, self.settings.request_timeout_s)
        record = _Record(api, route)
        started = time.monotonic()
        outcome = CANCELLED  # what is left when the caller went away (the task was cancelled)
        try:
            with self.metrics.in_progress(route):
                async with asyncio.timeout(seconds):
                    result = await work(request, record, started + seconds)
            outcome = OK
            return result
        except TimeoutError as error:
            outcome = RequestDeadlineError.reason
            raise RequestDeadlineError(f"not answered within {seconds:g} s") from error
        except RequestError as error:
            outcome = error.reason
            raise
        except Exception as error:
            outcome = InternalError.reason
            log.exception("request failed", extra={"api": api, "route": route, "arm": record.arm})
            raise InternalError(f"the {route} request failed inside the service: {type(error).__name__}") from error
        finally:
            self._account(record, time.monotonic() - started, outcome)

    def _account(self, record: _Record, seconds: float, outcome: str) -> None:
        experiment, arm = record.experiment, record.arm
        self.metrics.observe_request(record.api, record.route, experiment, arm, outcome, seconds)
        ok = outcome == OK
        sentences = record.sentences if ok else 0
        log_request(record.api, record.route, outcome, status_of(outcome), arm, experiment, seconds, sentences)
        edits = sum(record.edits_per_sentence) if ok else 0
        stages = record.timings.stages()
        self.stats.record_request(arm, seconds, outcome, sentences, edits)
        if ok:
            self.metrics.observe_sentences(experiment, arm, sentences, record.edits_per_sentence)
            for stage, value in stages.items():
                self.metrics.observe_stage(stage, experiment, arm, value)
        if record.routed is not None:
            self.experiments.record(record.routed, seconds, outcome, sentences, edits, stages)

    # -- correct ----------------------------------------------------------------------------

    def _validate_texts(self, texts: Sequence[str]) -> None:
        s = self.settings
        if len(texts) > s.max_texts:
            raise PayloadTooLargeError(f"{len(texts)} texts in one request; the limit is {s.max_texts}")
        for index, text in enumerate(texts):
            if len(text) > s.max_text_chars:
                raise PayloadTooLargeError(f"text {index} has {len(text)} characters; the limit is {s.max_text_chars}")

    def _priority(self, texts: Sequence[str]) -> Priority:
        small = len(texts) == 1 and len(texts[0]) <= self.settings.interactive_max_chars
        return Priority.INTERACTIVE if small else Priority.BULK

    def _route(self, request: CorrectRequest, record: _Record) -> Route:
        try:
            routed = self.experiments.route(
                request.arm, request.user_id, request.session_id, alternatives=request.alternatives > 0
            )
        except UnknownArmError as error:
            raise UnknownArmRequestError(str(error)) from error
        record.routed, record.arm = routed, routed.arm.name
        self.metrics.assigned(routed.experiment or NO_EXPERIMENT, routed.arm.name, routed.kind)
        return routed

    async def _correct(self, request: CorrectRequest, record: _Record, deadline: float) -> CorrectResult:
        if not self.accepting or self.dispatcher is None or self.shadow is None:
            raise NotReadyError(self._not_ready_reason())
        if request.offset_unit not in ("codepoint", "utf16"):
            raise InvalidRequestError("offset_unit must be 'codepoint' or 'utf16'")
        self._validate_texts(request.texts)
        routed = self._route(request, record)
        if request.alternatives and routed.arm.params.num_return_sequences < 2:
            raise InvalidRequestError(
                f"options.alternatives needs an arm that returns an n-best list, such as 'beam'; arm "
                f"{routed.arm.name!r} returns one correction (leave the arm unset to be served by 'beam')"
            )
        if request.keep_bias is not None and not takes_keep_bias(routed.arm.strategy):
            raise InvalidRequestError(
                f"options.keep_bias needs greedy or aggressive decoding; arm {routed.arm.name!r} decodes with "
                f"{routed.arm.strategy}"
            )
        keep_bias = self.keep_bias(routed.arm, request.level, request.keep_bias)
        priority = self._priority(request.texts)
        self.dispatcher.check_admission(routed.arm, priority, deadline)
        timings = record.timings
        started = time.monotonic()
        plans = await self.preprocessor.plan(request.texts, request.spelling)
        timings.preprocess = time.monotonic() - started
        flat = [unit for units in plans for unit in units]
        decoded = await self.dispatcher.decode(routed.arm, keep_bias, flat, priority, deadline, timings)

        post_started = time.monotonic()
        corrections, position = [], 0
        for text, units in zip(request.texts, plans, strict=True):
            mine = decoded[position : position + len(units)]
            position += len(units)
            alternatives = [texts[1:] for texts in mine] if request.alternatives else None
            assembled = assemble(text, units, [texts[0] for texts in mine], alternatives)
            for reason in assembled.dropped:
                self.metrics.output_dropped(record.experiment, record.arm, reason)
            index = Utf16Index(text) if request.offset_unit == "utf16" else None
            edits = [self._edit_out(e, index, request.alternatives) for e in assembled.edits]
            corrections.append(Correction(assembled.text, edits))
            per_sentence = {unit.sentence: 0 for unit in units}
            for edit in assembled.edits:
                per_sentence[edit.sentence] += 1
            record.edits_per_sentence += per_sentence.values()
            record.sentences += len(per_sentence)
        timings.postprocess = time.monotonic() - post_started
        timings.total = time.monotonic() - started
        if routed.shadow is not None:
            shadow_bias = self.keep_bias(routed.shadow, request.level, request.keep_bias)
            self.shadow.schedule(routed, shadow_bias, flat, [texts[0] for texts in decoded])
        name, version = self.model_info
        return CorrectResult(
            corrections, name, version, routed.arm.name, routed.arm.backend, routed.experiment, timings
        )

    def keep_bias(self, arm: Arm, level: str, requested: float | None) -> float:
        """The keep bias ``arm`` decodes a request with: the request's own, else the arm's, else the model's for the
        request's ``level``; 0 for an arm whose decoding takes none."""
        if not takes_keep_bias(arm.strategy):
            return 0.0
        if requested is not None:
            return requested
        if arm.keep_bias is not None:
            return arm.keep_bias
        return self.manifest.keep_bias.get(level, KEEP_BIAS_LEVELS[level])

    @staticmethod
    def _edit_out(edit: TypedEdit, index: Utf16Index | None, alternatives: int) -> EditOut:
        offset, length = (edit.start, edit.end - edit.start) if index is None else index.span(edit.start, edit.end)
        return EditOut(
            id=edit.id,
            offset=offset,
            length=length,
            original=edit.original,
            replacement=edit.replacement,
            alternatives=edit.alternatives[:alternatives],
            sentence=edit.sentence,
            type=edit.type,
        )

    # -- generate ---------------------------------------------------------------------------

    async def _generate(self, request: GenerateRequest, record: _Record, deadline: float) -> GenerateResult:
        if not self.accepting or self.dispatcher is None:
            raise NotReadyError(self._not_ready_reason())
        record.arm = GENERATE_QUEUE
        self._validate_texts([request.text])
        self.dispatcher.check_admission(None, Priority.INTERACTIVE, deadline)
        params = DecodeParams(
            max_new_tokens=request.max_new_tokens,
            num_beams=request.num_beams,
            num_return_sequences=request.num_return_sequences,
            temperature=request.temperature,
            top_k=request.top_k,
            top_p=request.top_p,
            seed=request.seed,
        )
        timings = record.timings
        started = time.monotonic()
        (units,) = await self.preprocessor.plan([request.text])
        timings.preprocess = time.monotonic() - started
        hypotheses = await self.dispatcher.generate(units, (request.strategy, params), deadline, timings)
        post_started = time.monotonic()
        sequences: list[tuple[str, float]] = []
        for k in range(request.num_return_sequences):
            texts, score = [], 0.0
            for unit, found in zip(units, hypotheses, strict=True):
                if found is None:
                    texts.append(unit.normalized.text)
                    continue
                text, hypothesis_score = found[min(k, len(found) - 1)]
                texts.append(text)
                score += hypothesis_score
            sequences.append((assemble(request.text, units, texts).text, score))
        record.sentences = len({unit.sentence for unit in units})
        timings.postprocess = time.monotonic() - post_started
        timings.total = time.monotonic() - started
        name, version = self.model_info
        return GenerateResult(sequences, name, version, timings)

    def _not_ready_reason(self) -> str:
        if self.draining:
            return "the service is shutting down"
        if not self.ready:
            return "the model is still loading"
        return "no engine worker is available (none has sent a heartbeat lately)"

    def health(self) -> dict[str, Any]:
        batchers = self.queues.batchers if self.queues is not None else {}
        return {
            "ready": self.serving,
            "model": self.manifest.name,
            "version": self.manifest.version,
            "variant": self.variant,
            "decoding": self.queues.health() if self.queues is not None else None,
            "queues": {n: {"depth": b.depth, "in_flight": b.in_flight} for n, b in batchers.items()},
        }
