"""The pipeline: one object behind both APIs.

validate -> preprocess (parallel workers: split, normalise, tokenize) -> cache lookup ->
route to an arm -> submit each sentence job to the arm's auto-batching queue -> decode ->
edits with offsets -> response, timing every stage into the metrics.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.batching import (
    BatcherStoppedError,
    BatchPolicy,
    DeadlineExceededError,
    Job,
    LocalBatcher,
    Priority,
    QueueFullError,
)
from service.config import Settings
from service.engine.decoding.types import DecodeParams
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest
from service.engine.sessions import SessionSettings
from service.engine.tokenization import TextCodec
from service.experiments.routing import choose_backend
from service.observability.hooks import MetricsHooks
from service.observability.metrics import Metrics
from service.observability.stats import RollingStats
from service.pipeline.arms import Outcome, build_batchers
from service.pipeline.cache import MemoryCache, SentenceCache, cache_key
from service.pipeline.errors import (
    InvalidRequestError,
    NotReadyError,
    OverloadedError,
    PayloadTooLargeError,
    RequestDeadlineError,
)
from service.pipeline.preprocess import Preprocessor
from service.pipeline.types import (
    Correction,
    CorrectRequest,
    CorrectResult,
    EditOut,
    GenerateRequest,
    GenerateResult,
    Timings,
)
from service.pipeline.units import TypedEdit, Unit, assemble
from service.text.offsets import Utf16Index

log = logging.getLogger(__name__)

MAX_ALTERNATIVES = 5
MAX_RETURN_SEQUENCES = 8
WARMUP_TEXT = "This are a warm-up sentence for the model."


@dataclass
class _Decoded:
    texts: list[str]  # best first
    outcome: Outcome | None  # None when it came from the cache


class Pipeline:
    """Owns the model, the preprocessing pool, the cache and one batcher per arm."""

    def __init__(
        self,
        settings: Settings,
        metrics: Metrics | None = None,
        stats: RollingStats | None = None,
        cache: SentenceCache | None = None,
    ) -> None:
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.stats = stats or RollingStats()
        self.cache = cache if cache is not None else MemoryCache(settings.cache_size)
        self.manifest = ModelManifest.load(settings.model_path)
        self.codec = TextCodec(settings.model_path / self.manifest.tokenizer, set())
        self.max_tokens = self.manifest.max_source_content
        self.preprocessor = Preprocessor(
            settings.model_path / self.manifest.tokenizer,
            self.max_tokens,
            settings.preprocess_mode,
            settings.preprocess_workers,
        )
        self.batchers: dict[str, LocalBatcher] = {}
        self.ready = False
        self.variant: str | None = None

    # lifecycle -------------------------------------------------------------------------------

    def _engines(self) -> dict[str, list[Engine]]:
        s = self.settings
        session = SessionSettings(
            provider=s.provider, intra_op_threads=s.ort_threads, spinning=s.ort_spinning, io_binding=s.ort_io_binding
        )
        return {
            backend: [Engine(s.model_path, s.model_variant, session) for _ in range(s.inference_workers)]
            for backend in ("accelerated", "autoregressive")
        }

    async def start(self) -> None:
        """Load the engines, start the batchers, warm every arm up; then ``ready`` turns True."""
        s = self.settings
        engines = await asyncio.to_thread(self._engines)
        self.variant = engines["accelerated"][0].model.variant
        policy = BatchPolicy(
            max_batch_size=s.max_batch_size,
            max_batch_tokens=s.max_batch_tokens,
            max_wait_ms=s.max_wait_ms,
            max_queue=s.max_queue,
        )
        self.batchers = build_batchers(engines, policy, MetricsHooks(self.metrics, self.stats), s.inference_workers)
        for batcher in self.batchers.values():
            batcher.start()
        tokens = self.preprocessor.encode(WARMUP_TEXT)
        await asyncio.gather(
            *(
                b.submit(Job(tokens=tokens, arm=name, payload=("beam", DecodeParams(num_beams=2))))
                for name, b in self.batchers.items()
            )
        )
        self.ready = True
        log.info("pipeline ready", extra={"model": self.manifest.name, "variant": self.variant})

    async def stop(self) -> None:
        """Stop taking work, finish what is queued and running (up to the drain timeout)."""
        self.ready = False
        await asyncio.gather(
            *(b.stop(drain=True, timeout=self.settings.drain_timeout_s) for b in self.batchers.values())
        )
        self.preprocessor.close()

    @property
    def model_info(self) -> tuple[str, str]:
        return self.manifest.name, self.manifest.version

    # correct ---------------------------------------------------------------------------------

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

    async def _submit_all(self, arm: str, jobs: list[Job]) -> list[Outcome]:
        """Admit a request's jobs together (all or none) and wait for their outcomes."""
        batcher = self.batchers[arm]
        if len(jobs) > self.settings.max_queue:
            raise PayloadTooLargeError(
                f"the request has {len(jobs)} sentences; a queue holds at most {self.settings.max_queue}"
            )
        try:
            return await batcher.submit_many(jobs)
        except QueueFullError as error:
            raise OverloadedError(
                f"the {arm} queue is full; retry later", retry_after=error.retry_after_header
            ) from error
        except DeadlineExceededError as error:
            raise RequestDeadlineError(f"not decoded within {self.settings.request_timeout_s:g} s") from error
        except BatcherStoppedError as error:
            raise NotReadyError("the service is shutting down") from error

    async def _decode_units(
        self, arm: str, units: list[Unit], priority: Priority, deadline: float, timings: Timings
    ) -> list[_Decoded]:
        name, version = self.model_info
        started = time.monotonic()
        keys = [cache_key(name, version, arm, unit.normalized.text) for unit in units]
        cached = await self.cache.get_many(keys)
        self.metrics.observe_stage("cache", arm, time.monotonic() - started)
        misses = [i for i, value in enumerate(cached) if value is None]
        self.metrics.cache_hit(len(units) - len(misses))
        self.metrics.cache_miss(len(misses))
        decoded: list[_Decoded | None] = [None if v is None else _Decoded(json.loads(v), None) for v in cached]
        # Identical sentences within the request are decoded once.
        first_of: dict[str, int] = {}
        unique = [i for i in misses if first_of.setdefault(units[i].normalized.text, i) == i]
        jobs = [Job(tokens=units[i].tokens, arm=arm, priority=priority, deadline=deadline) for i in unique]
        outcomes = await self._submit_all(arm, jobs) if jobs else []
        stored = []
        for i, job, outcome in zip(unique, jobs, outcomes, strict=True):
            result = outcome.result
            texts = [self.codec.decode(h.tokens) for h in result.hypotheses] or [self.codec.decode(result.tokens)]
            decoded[i] = _Decoded(texts, outcome)
            stored.append((keys[i], json.dumps(texts)))
            self.metrics.observe_decode(arm, result.passes, result.accepted)
            timings.queue = max(timings.queue, outcome.started - job.enqueued_at)
            timings.inference = max(timings.inference, outcome.finished - outcome.started)
        for i in misses:
            if decoded[i] is None:
                decoded[i] = decoded[first_of[units[i].normalized.text]]
        if stored:
            await self.cache.set_many(stored)
        return [d for d in decoded if d is not None]

    @staticmethod
    def _edit_out(edit: TypedEdit, index: Utf16Index | None) -> EditOut:
        offset, length = (edit.start, edit.end - edit.start) if index is None else index.span(edit.start, edit.end)
        return EditOut(
            edit.id, offset, length, edit.original, edit.replacement, edit.alternatives, edit.sentence, edit.type
        )

    async def correct(self, request: CorrectRequest) -> CorrectResult:
        if not self.ready:
            raise NotReadyError("the model is still loading")
        if not 0 <= request.alternatives <= MAX_ALTERNATIVES:
            raise InvalidRequestError(f"alternatives must be between 0 and {MAX_ALTERNATIVES}")
        if request.offset_unit not in ("codepoint", "utf16"):
            raise InvalidRequestError("offset_unit must be 'codepoint' or 'utf16'")
        self._validate_texts(request.texts)
        try:
            backend = choose_backend(
                request.backend, request.user_id, request.session_id, self.settings.default_backend
            )
        except ValueError as error:
            raise InvalidRequestError(str(error)) from error
        arm = "autoregressive:beam" if request.alternatives else backend
        timings = Timings()
        started = time.monotonic()
        deadline = started + self.settings.request_timeout_s
        plans = await self.preprocessor.plan(request.texts)
        timings.preprocess = time.monotonic() - started
        self.metrics.observe_stage("preprocess", backend, timings.preprocess)

        flat = [unit for units in plans for unit in units]
        decoded = await self._decode_units(arm, flat, self._priority(request.texts), deadline, timings)

        post_started = time.monotonic()
        corrections, position = [], 0
        for text, units in zip(request.texts, plans, strict=True):
            mine = decoded[position : position + len(units)]
            position += len(units)
            alternatives = [d.texts[1 : 1 + request.alternatives] for d in mine] if request.alternatives else None
            corrected, edits = assemble(text, units, [d.texts[0] for d in mine], alternatives)
            index = Utf16Index(text) if request.offset_unit == "utf16" else None
            corrections.append(Correction(corrected, [self._edit_out(e, index) for e in edits]))
        self.metrics.observe_stage("postprocess", backend, time.monotonic() - post_started)
        timings.total = time.monotonic() - started
        name, version = self.model_info
        return CorrectResult(corrections, name, version, backend, timings, sentences=len(flat))

    # generate --------------------------------------------------------------------------------

    def _generate_params(self, request: GenerateRequest) -> tuple[str, DecodeParams]:
        if request.strategy not in ("beam", "sample"):
            raise InvalidRequestError("strategy must be 'beam' or 'sample'")
        if not 1 <= request.num_return_sequences <= MAX_RETURN_SEQUENCES:
            raise InvalidRequestError(f"num_return_sequences must be between 1 and {MAX_RETURN_SEQUENCES}")
        if request.strategy == "beam" and request.num_beams < request.num_return_sequences:
            raise InvalidRequestError("num_beams must be at least num_return_sequences")
        if request.max_new_tokens is not None and not 1 <= request.max_new_tokens <= self.manifest.max_target_positions:
            raise InvalidRequestError(f"max_new_tokens must be between 1 and {self.manifest.max_target_positions}")
        params = DecodeParams(
            max_new_tokens=request.max_new_tokens,
            num_beams=request.num_beams,
            num_return_sequences=request.num_return_sequences,
            temperature=request.temperature,
            top_k=request.top_k,
            top_p=request.top_p,
            seed=request.seed,
        )
        return request.strategy, params

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        if not self.ready:
            raise NotReadyError("the model is still loading")
        strategy, params = self._generate_params(request)
        self._validate_texts([request.text])
        timings = Timings()
        started = time.monotonic()
        (units,) = await self.preprocessor.plan([request.text])
        timings.preprocess = time.monotonic() - started
        jobs = [
            Job(
                tokens=u.tokens,
                arm="generate",
                deadline=started + self.settings.request_timeout_s,
                payload=(strategy, params),
            )
            for u in units
        ]
        outcomes = await self._submit_all("generate", jobs) if jobs else []
        for job, outcome in zip(jobs, outcomes, strict=True):
            timings.queue = max(timings.queue, outcome.started - job.enqueued_at)
            timings.inference = max(timings.inference, outcome.finished - outcome.started)
        sequences: list[tuple[str, float]] = []
        for k in range(request.num_return_sequences):
            texts, score = [], 0.0
            for outcome in outcomes:
                hyps = outcome.result.hypotheses
                hyp = hyps[min(k, len(hyps) - 1)]
                texts.append(self.codec.decode(hyp.tokens))
                score += hyp.score
            sequences.append((assemble(request.text, units, texts)[0], score))
        timings.total = time.monotonic() - started
        name, version = self.model_info
        return GenerateResult(sequences, name, version, timings)

    def health(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "model": self.manifest.name,
            "version": self.manifest.version,
            "variant": self.variant,
            "queues": {n: {"depth": b.depth, "in_flight": b.in_flight} for n, b in self.batchers.items()},
        }
