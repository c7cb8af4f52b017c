"""Prometheus metrics of the service, in a registry of their own.

Two families of labels. Request metrics carry ``experiment`` (the running experiment's name for
requests it assigned, ``none`` otherwise) and ``arm`` (what served the request), so p50/p95/p99
per arm and per stage come from the same data (``histogram_quantile`` in Prometheus, the
dashboards in ``deploy/grafana/``). Queue metrics carry ``queue``: the auto-batching queue a job
ran in (one per decoding). Each ``Metrics`` owns a ``CollectorRegistry`` (not the process-global
one), so tests and several services in one process do not collide.

Several processes (``gecserve serve --front-ends N``: front ends and engine processes) share their metrics through
prometheus_client's multiprocess mode: with ``PROMETHEUS_MULTIPROC_DIR`` set, every process writes its values
there, and each process's exposition is the merge of all of them (counters and histograms summed, gauges one
series per live process, labelled ``pid``); the count of dropped log lines stays the answering process's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess
from prometheus_client.core import CounterMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, choose_encoder, generate_latest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.registry import Collector

from service.observability.log_writer import dropped_lines

__all__ = ["LATENCY_BUCKETS", "NO_EXPERIMENT", "REQUEST_STAGES", "Metrics", "log_buckets"]

NO_EXPERIMENT = "none"
REQUEST_STAGES = ("preprocess", "cache", "queue", "inference", "review", "postprocess")


def log_buckets(low: float, high: float, count: int) -> tuple[float, ...]:
    """``count`` log-spaced bucket bounds from ``low`` to ``high`` (4 significant digits)."""
    if count < 2 or low <= 0 or high <= low:
        raise ValueError("need count >= 2 and 0 < low < high")
    ratio = (high / low) ** (1.0 / (count - 1))
    return tuple(float(f"{low * ratio**i:.4g}") for i in range(count))


# 40 buckets from 0.5 ms to 10 s: each bound is ~29 % above the previous one.
LATENCY_BUCKETS = log_buckets(0.0005, 10.0, 40)
BATCH_SIZE_BUCKETS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)
BATCH_TOKEN_BUCKETS = tuple(float(2**i) for i in range(3, 17))  # 8 .. 65536
PASSES_BUCKETS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256)
ACCEPTED_BUCKETS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 96, 128, 256)
EDIT_BUCKETS = (0, 1, 2, 3, 4, 6, 8, 12, 16)
# 30 buckets from 0.1 ms to 10 s: an idle loop's timer is late by well under a millisecond.
LOOP_LAG_BUCKETS = log_buckets(0.0001, 10.0, 30)


class Metrics:
    """All ``gecserve_*`` metrics, with one method per observation."""

    content_type = CONTENT_TYPE_PLAIN_0_0_4

    def __init__(self, registry: CollectorRegistry | None = None, namespace: str = "gecserve") -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self._children: dict[tuple[MetricWrapperBase, tuple[str, ...]], Any] = {}
        self._namespace = namespace
        self._add_request_metrics()
        self._add_queue_metrics()
        self._add_stream_metrics()
        self._add_cache_and_access_metrics()
        self._add_loop_metrics()
        self.exposed = self.registry  # what a scrape reads: this registry, or every process's values merged
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            self.exposed = CollectorRegistry()
            multiprocess.MultiProcessCollector(self.exposed)
        self.exposed.register(_LogLinesDropped(f"{namespace}_log_lines_dropped"))

    def _counter(self, name: str, documentation: str, labels: Sequence[str] = ()) -> Counter:
        return Counter(name, documentation, labels, namespace=self._namespace, registry=self.registry)

    def _gauge(self, name: str, documentation: str, labels: Sequence[str] = ()) -> Gauge:
        # several processes: a series per live process (a dead one's leave with it, ``mark_process_dead``)
        return Gauge(
            name, documentation, labels, namespace=self._namespace, registry=self.registry, multiprocess_mode="liveall"
        )

    def _histogram(
        self, name: str, documentation: str, labels: Sequence[str], buckets: Sequence[float] = LATENCY_BUCKETS
    ) -> Histogram:
        return Histogram(
            name, documentation, labels, namespace=self._namespace, buckets=buckets, registry=self.registry
        )

    def _add_request_metrics(self) -> None:
        arm = ("experiment", "arm")
        self.request_seconds = self._histogram(
            "request_duration_seconds",
            "End-to-end request latency, by API, route, experiment, arm and outcome (ok or the error reason).",
            ["api", "route", *arm, "outcome"],
        )
        self.stage_seconds = self._histogram(
            "stage_duration_seconds",
            "Time a successful request spent in one stage (preprocess, cache, queue, inference, review, postprocess).",
            ["stage", *arm],
        )
        self.sentences = self._counter("sentences", "Sentences of successful requests.", arm)
        self.edits = self._histogram("edits_per_sentence", "Edits returned per sentence.", arm, EDIT_BUCKETS)
        self.outputs_dropped = self._counter(
            "outputs_dropped",
            "Model outputs the guard refused (the sentence left as written), by reason: repetition, length, overlap.",
            [*arm, "reason"],
        )
        self.assignments = self._counter(
            "assignments",
            "Requests routed to an arm, by how: sticky (user key), random (no key), override, model (the request named"
            " a model), alternatives, default.",
            [*arm, "kind"],
        )
        self.shadow_sentences = self._counter(
            "shadow_sentences",
            "Sentences a shadow arm also decoded, by whether its output equals the served one.",
            ["experiment", "served", "shadow", "result"],
        )
        self.shadow_dropped = self._counter(
            "shadow_dropped",
            "Shadow requests dropped (the queue was busy, or they were evicted for served work).",
            ["experiment", "reason"],
        )
        self.edit_categories = self._counter(
            "edit_categories",
            "Edits answered, by ERRANT operation (M missing, R replaced, U unnecessary) and category.",
            [*arm, "operation", "category"],
        )
        self.feedback_edits = self._counter(
            "feedback_edits",
            "Edits writers accepted or dismissed (POST /v1/feedback), by the arm, model and edit type that made them;"
            " an id counts once, a changed mind moves it to the other action.",
            ["experiment", "arm", "model", "type", "action"],
        )
        self.feedback_refused = self._counter(
            "feedback_refused",
            "Feedback requests refused because they named edit ids the service does not know (or forgot).",
            ["api"],
        )
        self.requests_in_progress = self._gauge(
            "requests_in_progress", "Requests being served (admitted, not yet answered).", ["route"]
        )
        self.requests_shed = self._counter(
            "requests_shed",
            "Requests refused with 503 at admission, before any preprocessing, by reason: the event loop's lag "
            "(loop_lag), the lag and the requests in flight (in_flight), the work in the request's queue (queue).",
            ["reason"],
        )

    def _add_loop_metrics(self) -> None:
        about = "how late the event loop ran a timer it was asked to run (service.observability.loop_lag)"
        self.loop_lag = self._gauge("event_loop_lag_seconds", f"The latest measure of {about}.")
        self.loop_lags = self._histogram(
            "event_loop_lag_distribution_seconds", f"Every measure of {about}.", [], LOOP_LAG_BUCKETS
        )

    def _add_queue_metrics(self) -> None:
        queue = ("queue",)
        self.queue_wait = self._histogram(
            "queue_wait_seconds", "Time a sentence job waited in its queue before its batch started.", queue
        )
        self.batch_seconds = self._histogram(
            "batch_duration_seconds",
            "Time the engine took for one batch (continuous batching: for one call advancing the running "
            "batch, from jobs joining until some finish or work waits).",
            queue,
        )
        self.decoding_cpu = self._counter(
            "decoding_cpu_seconds",
            "CPU time the decoding threads spent advancing batches: each thread's own CPU time, ONNX Runtime's work "
            "included where it runs in the calling thread (GECSERVE_ORT_THREADS 1). The process's CPU time less this "
            "is the gateway's own.",
            queue,
        )
        self.batch_size = self._histogram(
            "batch_size",
            "Sentences per decoded batch (continuous batching: rows after each join).",
            queue,
            BATCH_SIZE_BUCKETS,
        )
        self.batch_tokens = self._histogram(
            "batch_tokens",
            "Padded source tokens per decoded batch (rows x longest; continuous batching: after each join).",
            queue,
            BATCH_TOKEN_BUCKETS,
        )
        self.decoder_passes = self._histogram(
            "decoder_passes_per_sentence", "Decoder passes one sentence took part in.", queue, PASSES_BUCKETS
        )
        self.tokens_per_pass = self._histogram(
            "tokens_accepted_per_pass", "Tokens gained by one sentence in one decoder pass.", queue, ACCEPTED_BUCKETS
        )
        self.jobs_dropped = self._counter(
            "jobs_dropped",
            "Sentence jobs refused or dropped (queue_full, wait, deadline, stopped, cancelled, evicted, abandoned).",
            [*queue, "reason"],
        )
        self.shared_sentences_total = self._counter(
            "shared_sentences",
            "Sentences a request did not submit because another request was decoding the same sentence (the same "
            "model and decoding) at its priority or a more urgent one: it waited for that decode instead.",
            queue,
        )
        self.review_edits = self._counter(
            "review_edits",
            "Edits the language model's review changed in decoded sentences (before they were cached): the model's "
            "edits it took back (vetoed), and article and preposition edits it added (proposed).",
            [*queue, "action"],
        )
        self.batch_errors = self._counter("batch_errors", "Batches that failed, by reason.", [*queue, "reason"])
        self.queue_depth = self._gauge("queue_depth", "Jobs queued, not yet decoding.", queue)
        self.in_flight = self._gauge("in_flight", "Jobs in batches being decoded.", queue)

    def _add_stream_metrics(self) -> None:
        """The Redis Streams transport's (gateway: the streams; worker: its jobs)."""
        self.stream_lag = self._gauge("stream_lag", "Jobs in a queue's stream not yet read by any worker.", ["queue"])
        self.stream_pending = self._gauge(
            "stream_pending", "Jobs read by a worker and not yet acknowledged.", ["queue"]
        )
        self.workers_live = self._gauge("workers_live", "Engine workers that sent a heartbeat recently.")
        self.worker_jobs = self._counter(
            "worker_jobs",
            "Jobs a worker answered (decoded, deadline, invalid, failed), claimed from a silent worker "
            "(claimed) or dead-lettered (dead_letter).",
            ["queue", "outcome"],
        )

    def _add_cache_and_access_metrics(self) -> None:
        self.cache_lookups = self._counter(
            "cache_lookups", "Sentence cache lookups by level and result (hit or miss).", ["level", "result"]
        )
        self.cache_errors = self._counter(
            "cache_errors",
            "Failed calls to the Redis sentence cache, by operation (get, set); the cache is skipped meanwhile.",
            ["operation"],
        )
        self.rate_limited_requests = self._counter(
            "rate_limited",
            "Requests refused (429) because their API key was over its rate limit, by key name.",
            ["key"],
        )
        self.rate_limit_errors = self._counter(
            "rate_limit_errors",
            "Failed calls to the Redis rate limiter; this replica's own buckets decided those requests.",
        )

    def _child(self, metric: MetricWrapperBase, *values: str) -> Any:
        """``metric.labels(*values)``, looked up once: prometheus_client checks the values and takes a lock on every
        call, and a request makes a dozen observations. (Children are never removed, so none goes stale.)"""
        key = (metric, values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    # -- requests ---------------------------------------------------------------------------

    def in_progress(self, route: str) -> Any:
        """Context manager counting a request in ``requests_in_progress`` while it is served."""
        return self._child(self.requests_in_progress, route).track_inprogress()

    def in_progress_total(self) -> float:
        """Requests being served now, every route together."""
        return sum(sample.value for metric in self.requests_in_progress.collect() for sample in metric.samples)

    def shed(self, reason: str) -> None:
        """A request refused at admission (``requests_shed``'s reasons)."""
        self._child(self.requests_shed, reason).inc()

    def observe_request(self, api: str, route: str, experiment: str, arm: str, outcome: str, seconds: float) -> None:
        self._child(self.request_seconds, api, route, experiment, arm, outcome).observe(seconds)

    def observe_stage(self, stage: str, experiment: str, arm: str, seconds: float) -> None:
        self._child(self.stage_seconds, stage, experiment, arm).observe(seconds)

    def observe_sentences(self, experiment: str, arm: str, sentences: int, edits_per_sentence: Iterable[int]) -> None:
        """A successful request's sentences, and for a correction each one's number of edits."""
        self._child(self.sentences, experiment, arm).inc(sentences)
        histogram = self._child(self.edits, experiment, arm)
        for count in edits_per_sentence:
            histogram.observe(count)

    def output_dropped(self, experiment: str, arm: str, reason: str) -> None:
        self._child(self.outputs_dropped, experiment, arm, reason).inc()

    def assigned(self, experiment: str, arm: str, kind: str) -> None:
        self._child(self.assignments, experiment, arm, kind).inc()

    def shadow_compared(self, experiment: str, served: str, shadow: str, agreed: int, disagreed: int) -> None:
        if agreed:
            self._child(self.shadow_sentences, experiment, served, shadow, "agree").inc(agreed)
        if disagreed:
            self._child(self.shadow_sentences, experiment, served, shadow, "disagree").inc(disagreed)

    def shadow_drop(self, experiment: str, reason: str) -> None:
        self._child(self.shadow_dropped, experiment, reason).inc()

    def edit_category(self, experiment: str, arm: str, code: str, count: int = 1) -> None:
        operation, _, category = code.partition(":")
        self._child(self.edit_categories, experiment, arm, operation, category).inc(count)

    def feedback(self, experiment: str, arm: str, model: str, edit_type: str, action: str) -> None:
        self._child(self.feedback_edits, experiment, arm, model, edit_type, action).inc()

    def unknown_feedback(self, api: str) -> None:
        self._child(self.feedback_refused, api).inc()

    # -- queues -----------------------------------------------------------------------------

    def observe_queue_wait(self, queue: str, seconds: float) -> None:
        self._child(self.queue_wait, queue).observe(seconds)

    def observe_batch(self, queue: str, size: int, padded_tokens: int) -> None:
        self._child(self.batch_size, queue).observe(size)
        self._child(self.batch_tokens, queue).observe(padded_tokens)

    def observe_batch_duration(self, queue: str, seconds: float, cpu_seconds: float) -> None:
        self._child(self.batch_seconds, queue).observe(seconds)
        self._child(self.decoding_cpu, queue).inc(cpu_seconds)

    def observe_decode(self, queue: str, passes: int, accepted: Iterable[int] = ()) -> None:
        """One sentence's decoding: its pass count and the tokens it gained in each pass."""
        self._child(self.decoder_passes, queue).observe(passes)
        per_pass = self._child(self.tokens_per_pass, queue)
        for tokens in accepted:
            per_pass.observe(tokens)

    def drop_jobs(self, queue: str, reason: str, count: int = 1) -> None:
        self._child(self.jobs_dropped, queue, reason).inc(count)

    def shared_sentences(self, queue: str, count: int) -> None:
        self._child(self.shared_sentences_total, queue).inc(count)

    def reviewed(self, queue: str, vetoed: int, proposed: int) -> None:
        if vetoed:
            self._child(self.review_edits, queue, "vetoed").inc(vetoed)
        if proposed:
            self._child(self.review_edits, queue, "proposed").inc(proposed)

    def batch_error(self, queue: str, reason: str) -> None:
        self._child(self.batch_errors, queue, reason).inc()

    def set_queue(self, queue: str, depth: int, in_flight: int) -> None:
        self._child(self.queue_depth, queue).set(depth)
        self._child(self.in_flight, queue).set(in_flight)

    def set_stream(self, queue: str, lag: int, pending: int) -> None:
        self._child(self.stream_lag, queue).set(lag)
        self._child(self.stream_pending, queue).set(pending)

    def worker_job(self, queue: str, outcome: str, count: int = 1) -> None:
        self._child(self.worker_jobs, queue, outcome).inc(count)

    # -- event loop -------------------------------------------------------------------------

    def loop_lagged(self, seconds: float) -> None:
        """One measure of the event loop's lag: the gauge takes it, the histogram counts it."""
        self.loop_lag.set(seconds)
        self.loop_lags.observe(seconds)

    # -- cache ------------------------------------------------------------------------------

    def cache_error(self, operation: str) -> None:
        self._child(self.cache_errors, operation).inc()

    def cache_lookup(self, level: str, hits: int, misses: int) -> None:
        if hits:
            self._child(self.cache_lookups, level, "hit").inc(hits)
        if misses:
            self._child(self.cache_lookups, level, "miss").inc(misses)

    # -- access control ---------------------------------------------------------------------

    def rate_limited(self, key: str) -> None:
        self._child(self.rate_limited_requests, key).inc()

    def rate_limit_error(self) -> None:
        self.rate_limit_errors.inc()

    # -- exposition -------------------------------------------------------------------------

    def render(self) -> bytes:
        """The metrics in the Prometheus text format (serve with ``content_type``)."""
        return generate_latest(self.exposed)

    def render_for(self, accept: str | None) -> tuple[bytes, str]:
        """(body, content type) negotiated from an ``Accept`` header (OpenMetrics if asked)."""
        if not accept:
            return self.render(), self.content_type
        encoder, content_type = choose_encoder(accept)
        return encoder(self.exposed), content_type


class _LogLinesDropped(Collector):
    """The process's count of log lines dropped (``log_writer.dropped_lines``), read at each scrape."""

    def __init__(self, name: str) -> None:
        self.name = name

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(
            self.name,
            "Log lines dropped because the log stream did not keep up (service.observability.log_writer).",
            value=dropped_lines(),
        )
