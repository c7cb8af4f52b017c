"""The pipeline: one object behind every API, and the one entry point of every request.

``correct`` and ``generate`` are what HTTP and gRPC call. Each runs its request under the
request's deadline and records it once, here: Prometheus (by API, route, experiment, arm and
outcome), the live numbers of ``/v1/stats``, and the experiment's own numbers.

Every request first passes admission by the gateway's load (503 at once when the event loop's lag and the requests
in flight say it cannot be answered in time: ``service.pipeline.load_admission``). A correction: validate -> route
to an arm (``service.experiments.router``; the experiment's bookkeeping samples its shadow and counts its
assignment) and to the model it runs on (the arm's, else the request's, else the default; ``service.repository``),
held until the answer is ready -> admission (503 at once when the arm's queue cannot serve it in time) -> preprocess
(a pool of threads or processes: protected spans, sentences, languages, normalise, spell unless the request turns it
off, tokenize) -> the sentence cache and the sentences already in flight -> the arm's auto-batching queue -> the
guard, the rule stage's edits joined to the model's, and edits with offsets and their confidence, those under the
request's threshold (its level's or ``min_confidence``) held back -> with a dialect named (``language``), its
spelling variants (``service.text.variants``) -> none that changes a word of the writer's dictionary. A rewrite
(``/v1/generate``) takes the same path to its own queue, without the cache. When the experiment samples the request
for a shadow comparison, its sentences also go through the shadow arm after the answer is ready, at the lowest
priority. Each answer's edit ids are remembered with where they came from (request, experiment, arm, model, edit
type), so that writers' feedback on them (``feedback``) counts for the arm that made them.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from redis.exceptions import RedisError

from service.batching import Priority
from service.config import Settings
from service.engine.decoding.params import DecodeParams
from service.engine.engine import keep_bias_for, takes_keep_bias
from service.engine.manifest import ModelManifest
from service.experiments.arms import Arm, UnknownArmError
from service.experiments.feedback import EditOrigin, FeedbackLedger, UnknownEditsError
from service.experiments.parts import ExperimentParts
from service.experiments.router import Route
from service.observability.logging import log_request
from service.observability.metrics import NO_EXPERIMENT, Metrics
from service.observability.request_id import current_request_id
from service.observability.stats import OK, RollingStats
from service.pipeline.dictionary import WordStore
from service.pipeline.errors import (
    CANCELLED,
    InternalError,
    InvalidRequestError,
    NotReadyError,
    OverloadedError,
    PayloadTooLargeError,
    RequestDeadlineError,
    RequestError,
    UnknownArmRequestError,
    UnknownEditsRequestError,
    UnknownLanguageRequestError,
    UnknownModelRequestError,
    status_of,
)
from service.pipeline.load_admission import QUEUE, LoadAdmission
from service.pipeline.queues import GENERATE_QUEUE
from service.pipeline.served import ServedModel
from service.pipeline.shadow import ShadowComparer
from service.pipeline.types import (
    Correction,
    CorrectRequest,
    CorrectResult,
    EditOut,
    FeedbackReport,
    FeedbackRequest,
    GenerateRequest,
    GenerateResult,
    Timings,
)
from service.repository.repository import ModelRepository, UnknownModelError
from service.text.dialects import Dialect, UnknownDialectError, dialect_of
from service.text.edits import Edit, apply_edits
from service.text.offsets import Utf16Index
from service.text.policy import threshold_of
from service.text.units import Assembled, TypedEdit, assemble
from service.text.variants import suggest_variants

log = logging.getLogger(__name__)

NO_ARM = "none"  # requests refused before they were routed
_PUNCTUATION = ".,;:!?()[]{}\"'“”‘’«»"  # stripped around a word before it is looked up in a dictionary
REMEMBER_BACKOFF_S = 5.0  # after the feedback store failed, answers skip it this long

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
    categories: Counter[str] = field(default_factory=Counter)  # the edits' ERRANT codes (corrections only)

    @property
    def experiment(self) -> str:
        return self.routed.experiment if self.routed is not None and self.routed.experiment else NO_EXPERIMENT


def writer_edit_id(edit_id: str, writer: str | None) -> str:
    """An edit's id in an answer: stable while its sentence is unchanged, and, for a request that names its writer
    (``client.user_id``, else ``session_id``), that writer's own, so that feedback on it counts for the arm that
    served that writer even when another writer got the same edit of the same sentence from another arm."""
    if writer is None:
        return edit_id
    key = f"{writer}\x00{edit_id}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(key, digest_size=6).hexdigest()


def keep_own_words(paragraph: str, assembled: Assembled, words: frozenset[str]) -> Assembled:
    """``assembled`` without the edits that change a word of the writer's dictionary (``words``), and the corrected
    text those left give: a writer's own word is never changed, by the spelling stage, the model nor the dialect
    stage."""
    if not words:
        return assembled
    kept = [edit for edit in assembled.edits if not words.intersection(_words_of(edit.original))]
    if len(kept) == len(assembled.edits):
        return assembled
    text = apply_edits(paragraph, [Edit(e.start, e.end, e.original, e.replacement) for e in kept])
    return Assembled(text, kept, assembled.dropped, assembled.held)


def _words_of(text: str) -> set[str]:
    """The words of ``text`` as a dictionary holds them: each blank-separated piece, and it without the punctuation
    around it."""
    pieces = text.split()
    return {*pieces, *(piece.strip(_PUNCTUATION) for piece in pieces)}


class Pipeline:
    """Serves requests: routes them, preprocesses their paragraphs, has their sentences decoded and assembles the
    answers, recording each once. ``service.wiring`` builds its parts; it is ready (``ready``) once every model
    the settings name is loaded and warmed up. ``startup`` is the default model's manifest, read before it loads
    (the limits of the request schemas are made from it)."""

    def __init__(
        self,
        settings: Settings,
        metrics: Metrics,
        stats: RollingStats,
        models: ModelRepository[ServedModel],
        experiments: ExperimentParts,
        shadow: ShadowComparer,
        feedback: FeedbackLedger,
        startup: ModelManifest,
        words: WordStore,
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        self.stats = stats
        self.models = models
        self.experiments = experiments
        self.shadow = shadow
        self.feedback_ledger = feedback
        self.startup = startup
        self.words = words
        self.admission = LoadAdmission(
            settings.admit_within if settings.admit_by_load else 0.0, settings.loop_lag_smoothing_s
        )
        self.ready = False
        self.draining = False  # shutting down: readiness is off (``serving``), requests are still taken while ready
        self._remember_down_until = 0.0  # the feedback store failed: answers skip it until then

    @property
    def accepting(self) -> bool:
        """Ready, and something can decode the default model: an engine here, or a live worker."""
        default = self.models.default
        return self.ready and default is not None and default.queues.ready

    @property
    def serving(self) -> bool:
        """What readiness reports: accepting, and not shutting down."""
        return self.accepting and not self.draining

    @property
    def model_info(self) -> tuple[str, str]:
        """The default model's name and version."""
        default = self.models.default
        return (default.name, default.version) if default is not None else (self.startup.name, self.startup.version)

    @property
    def max_new_tokens(self) -> int:
        """The longest generation the default model allows at start-up (its positions, less the decoder prefix)."""
        return self.startup.max_target_positions - len(self.startup.decoder_prefix_ids)

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

    def loop_lagged(self, seconds: float) -> None:
        """One measure of the event loop's lag, on the loop's thread: the metrics and admission by load take it."""
        self.metrics.loop_lagged(seconds)
        self.admission.tick(seconds)

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
                self._admit(started + seconds, started)
                with self.admission.serving():
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

    def _admit(self, deadline: float, now: float) -> None:
        """503 at once, before anything is spent on the request, when the gateway's load says it cannot be answered
        by ``deadline`` (``service.pipeline.load_admission``)."""
        refusal = self.admission.admit(deadline, now)
        if refusal is not None:
            self.metrics.shed(refusal.reason)
            raise OverloadedError(refusal.message, retry_after=refusal.retry_after)

    def _admit_to_queue(self, model: ServedModel, arm: Arm | None, priority: Priority, deadline: float) -> None:
        """503 at once, before preprocessing, when the request's queue holds more work than its deadline allows
        (``SentenceDispatcher.check_admission``; ``arm`` None: the ``generate`` queue)."""
        try:
            model.dispatcher.check_admission(arm, priority, deadline)
        except OverloadedError:
            self.metrics.shed(QUEUE)
            raise

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
            for code, count in record.categories.items():
                self.metrics.edit_category(experiment, arm, code, count)
            for stage, value in stages.items():
                self.metrics.observe_stage(stage, experiment, arm, value)
        if record.routed is not None:
            self.experiments.tally.record(
                record.routed, seconds, outcome, sentences, edits, stages, record.categories if ok else None
            )

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
            routed = self.experiments.router.route(
                request.arm,
                request.user_id,
                request.session_id,
                alternatives=request.alternatives > 0,
                model=request.model,
            )
        except UnknownArmError as error:
            raise UnknownArmRequestError(str(error)) from error
        routed = self.experiments.shadow.sample(routed)
        self.experiments.tally.assigned(routed)
        if request.model and routed.arm.model and routed.arm.model != request.model:
            raise InvalidRequestError(
                f"model {request.model!r} and arm {routed.arm.name!r}, which runs on {routed.arm.model!r}, disagree"
            )
        record.routed, record.arm = routed, routed.arm.name
        self.metrics.assigned(routed.experiment or NO_EXPERIMENT, routed.arm.name, routed.kind)
        return routed

    def model(self, arm: Arm | None, requested: str | None) -> ServedModel:
        """The model a request is served by: ``arm``'s, else the one the request names, else the default."""
        name = arm.model if arm is not None and arm.model else requested
        try:
            return self.models.get(name)
        except UnknownModelError as error:
            if name is not None and name == requested:
                raise UnknownModelRequestError(str(error)) from error
            raise NotReadyError(f"arm {arm.name if arm else ''!r}: {error}", retry_after="5") from error

    async def _correct(self, request: CorrectRequest, record: _Record, deadline: float) -> CorrectResult:
        if not self.accepting:
            raise NotReadyError(self._not_ready_reason())
        if request.offset_unit not in ("codepoint", "utf16"):
            raise InvalidRequestError("offset_unit must be 'codepoint' or 'utf16'")
        self._validate_texts(request.texts)
        try:
            dialect = dialect_of(request.language)
        except UnknownDialectError as error:
            raise UnknownLanguageRequestError(str(error)) from error
        routed = self._route(request, record)
        with self.model(routed.arm, request.model).serving() as model:
            return await self._correct_with(model, request, routed, record, deadline, dialect)

    async def _correct_with(
        self,
        model: ServedModel,
        request: CorrectRequest,
        routed: Route,
        record: _Record,
        deadline: float,
        dialect: Dialect | None,
    ) -> CorrectResult:
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
        keep_bias = self.keep_bias(model, routed.arm, request.level, request.keep_bias)
        priority = self._priority(request.texts)
        self._admit_to_queue(model, routed.arm, priority, deadline)
        timings = record.timings
        started = time.monotonic()
        plans = await model.preprocessor.plan(request.texts, request.spelling)
        timings.preprocess = time.monotonic() - started
        flat = [unit for units in plans for unit in units]
        decoded = await model.dispatcher.decode(routed.arm, keep_bias, flat, priority, deadline, timings)

        post_started = time.monotonic()
        corrections, position, origins = [], 0, {}
        origin = self._origin(routed, model)
        writer = request.user_id or request.session_id
        own_words = await self._own_words(request.user_id)
        threshold = threshold_of(request.level, request.min_confidence)
        scoring = model.scoring_at(threshold)
        for text, units in zip(request.texts, plans, strict=True):
            mine = decoded[position : position + len(units)]
            position += len(units)
            alternatives = [out.texts[1:] for out in mine] if request.alternatives else None
            corrected = [out.texts[0] for out in mine]
            assembled = assemble(text, units, corrected, alternatives, [out.scores for out in mine], scoring)
            assembled = suggest_variants(text, units, assembled, dialect, threshold)
            assembled = keep_own_words(text, assembled, own_words)
            for reason in assembled.dropped:
                self.metrics.output_dropped(record.experiment, record.arm, reason)
            index = Utf16Index(text) if request.offset_unit == "utf16" else None
            edits = [self._edit_out(e, index, request.alternatives, writer) for e in assembled.edits]
            corrections.append(Correction(assembled.text, edits))
            per_sentence = {unit.sentence: 0 for unit in units}
            for edit in edits:
                per_sentence[edit.sentence] += 1
                record.categories[edit.category] += 1
                origins[edit.id] = replace(origin, type=edit.type)
            record.edits_per_sentence += per_sentence.values()
            record.sentences += len(per_sentence)
        if origins:
            await self._remember(origins)
        timings.postprocess = time.monotonic() - post_started
        timings.total = time.monotonic() - started
        if routed.shadow is not None:
            shadow_model = self.model(routed.shadow, model.name)
            shadow_bias = self.keep_bias(shadow_model, routed.shadow, request.level, request.keep_bias)
            served = [out.texts[0] for out in decoded]
            self.shadow.schedule(routed, shadow_model, shadow_bias, request.texts, flat, served, model)
        return CorrectResult(
            corrections, model.name, model.version, routed.arm.name, routed.arm.backend, routed.experiment, timings
        )

    async def _own_words(self, user: str | None) -> frozenset[str]:
        """The words of ``user``'s dictionary (none without a user, or while the store is unreachable: the answer
        comes first)."""
        if not user:
            return frozenset()
        try:
            return await self.words.all_words(user)
        except RedisError as error:
            log.warning(
                "dictionary store unreachable: answered without the writer's words", extra={"error": str(error)}
            )
            return frozenset()

    async def _remember(self, origins: dict[str, EditOrigin]) -> None:
        """Remember where an answer's edits come from, for feedback; a store that fails costs the feedback on
        them, never the answer: after a failure it is left alone for ``REMEMBER_BACKOFF_S`` (a frozen Redis would
        otherwise hold every answer for its timeout)."""
        if time.monotonic() < self._remember_down_until:
            return
        try:
            await self.feedback_ledger.remember(origins)
        except RedisError as error:
            if self._remember_down_until == 0.0:
                log.warning("feedback store unreachable: edits take no feedback", extra={"error": str(error)})
            self._remember_down_until = time.monotonic() + REMEMBER_BACKOFF_S
            return
        if self._remember_down_until:
            log.info("feedback store reachable again")
        self._remember_down_until = 0.0

    @staticmethod
    def _origin(routed: Route, model: ServedModel) -> EditOrigin:
        """Where a request's edits come from (each edit adds its type)."""
        return EditOrigin(
            request_id=current_request_id.get() or "",
            experiment=routed.experiment or "",
            run=routed.run if routed.experiment else "",
            arm=routed.arm.name,
            model=model.name,
            version=model.version,
            type="",
        )

    @staticmethod
    def keep_bias(model: ServedModel, arm: Arm, level: str, requested: float | None) -> float:
        """The keep bias ``arm`` decodes a request with on ``model``: the request's own, else the arm's, else the
        model's for the request's ``level``; 0 for an arm whose decoding takes none (``keep_bias_for``)."""
        return keep_bias_for(model.manifest, arm.strategy, level, requested, arm.keep_bias)

    # -- feedback ---------------------------------------------------------------------------

    async def feedback(self, request: FeedbackRequest, api: str = "http") -> FeedbackReport:
        """What a writer did with suggestions (``edit_ids`` of earlier answers): counted for the arm, model and
        edit type that made each; all or nothing (404 naming the ids the service does not know)."""
        try:
            result = await self.feedback_ledger.record(request.edit_ids, request.action)
        except RedisError as error:
            raise NotReadyError(f"the shared feedback store is unreachable: {error}", retry_after="5") from error
        except UnknownEditsError as error:
            self.metrics.unknown_feedback(api)
            ids = ", ".join(error.edit_ids)
            raise UnknownEditsRequestError(
                f"unknown or expired edit ids: {ids}; nothing was counted (ids are remembered for "
                f"{self.settings.feedback_ttl_s:g} s)"
            ) from error
        for counted in result.counted:
            origin = counted.origin
            experiment = origin.experiment or NO_EXPERIMENT
            self.metrics.feedback(experiment, origin.arm, origin.model, origin.type, counted.action)
        return FeedbackReport(counted=len(result.counted), repeated=len(result.repeated))

    @staticmethod
    def _edit_out(edit: TypedEdit, index: Utf16Index | None, alternatives: int, writer: str | None) -> EditOut:
        offset, length = (edit.start, edit.end - edit.start) if index is None else index.span(edit.start, edit.end)
        return EditOut(
            id=writer_edit_id(edit.id, writer),
            offset=offset,
            length=length,
            original=edit.original,
            replacement=edit.replacement,
            alternatives=edit.alternatives[:alternatives],
            sentence=edit.sentence,
            type=edit.type,
            category=edit.category,
            message=edit.message,
            confidence=edit.confidence,
        )

    # -- generate ---------------------------------------------------------------------------

    async def _generate(self, request: GenerateRequest, record: _Record, deadline: float) -> GenerateResult:
        if not self.accepting:
            raise NotReadyError(self._not_ready_reason())
        record.arm = GENERATE_QUEUE
        self._validate_texts([request.text])
        with self.model(None, request.model).serving() as model:
            return await self._generate_with(model, request, record, deadline)

    async def _generate_with(
        self, model: ServedModel, request: GenerateRequest, record: _Record, deadline: float
    ) -> GenerateResult:
        self._admit_to_queue(model, None, Priority.INTERACTIVE, deadline)
        params = DecodeParams(
            max_new_tokens=request.max_new_tokens,
            num_beams=request.num_beams,
            num_beam_groups=request.num_beam_groups,
            diversity_penalty=request.diversity_penalty,
            num_return_sequences=request.num_return_sequences,
            temperature=request.temperature,
            top_k=request.top_k,
            top_p=request.top_p,
            seed=request.seed,
        )
        timings = record.timings
        started = time.monotonic()
        (units,) = await model.preprocessor.plan([request.text])
        timings.preprocess = time.monotonic() - started
        hypotheses = await model.dispatcher.generate(units, (request.strategy, params), deadline, timings)
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
        return GenerateResult(sequences, model.name, model.version, timings)

    def _not_ready_reason(self) -> str:
        if self.draining:
            return "the service is shutting down"
        if not self.ready:
            return "the model is still loading"
        return "no engine worker is available (none has sent a heartbeat lately)"

    def health(self) -> dict[str, Any]:
        """Readiness, the default model, and each model's queues."""
        default = self.models.default
        name, version = self.model_info
        return {
            "ready": self.serving,
            "model": name,
            "version": version,
            "variant": default.variant if default is not None else None,
            "decoding": default.queues.health() if default is not None else None,
            "queues": {n: {"depth": b.depth, "in_flight": b.in_flight} for n, b in self._batchers(default).items()},
            "models": {
                model.name: {n: {"depth": b.depth, "in_flight": b.in_flight} for n, b in self._batchers(model).items()}
                for model in self.models.models.values()
            },
        }

    @staticmethod
    def _batchers(model: ServedModel | None) -> dict[str, Any]:
        return model.queues.batchers if model is not None else {}
