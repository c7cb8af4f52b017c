"""Prometheus metrics of the service, in a registry of their own.

Every stage is a histogram labelled by backend (the arm), so p50/p95/p99 per arm, per stage
and per route come from the same data. Each ``Metrics`` owns a ``CollectorRegistry`` (not the
process-global one), so tests and several services in one process do not collide.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, choose_encoder, generate_latest

__all__ = ["LATENCY_BUCKETS", "STAGES", "Metrics", "log_buckets"]

STAGES = ("preprocess", "cache", "queue_wait", "inference", "postprocess")


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


class Metrics:
    """All ``gecserve_*`` metrics, with one method per observation."""

    content_type = CONTENT_TYPE_PLAIN_0_0_4

    def __init__(self, registry: CollectorRegistry | None = None, namespace: str = "gecserve") -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r, ns = self.registry, namespace
        self.request_seconds = Histogram(
            "request_duration_seconds",
            "End-to-end request latency.",
            ["route", "backend", "status"],
            namespace=ns,
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.stage_seconds = Histogram(
            "stage_duration_seconds",
            "Duration of one pipeline stage (queue_wait per job, inference per batch).",
            ["stage", "backend"],
            namespace=ns,
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.batch_size = Histogram(
            "batch_size",
            "Sentences per decoded batch.",
            ["backend"],
            namespace=ns,
            buckets=BATCH_SIZE_BUCKETS,
            registry=r,
        )
        self.batch_tokens = Histogram(
            "batch_tokens",
            "Padded source tokens per decoded batch (rows x longest).",
            ["backend"],
            namespace=ns,
            buckets=BATCH_TOKEN_BUCKETS,
            registry=r,
        )
        self.decoder_passes = Histogram(
            "decoder_passes_per_sentence",
            "Decoder passes one sentence took part in.",
            ["backend"],
            namespace=ns,
            buckets=PASSES_BUCKETS,
            registry=r,
        )
        self.tokens_per_pass = Histogram(
            "tokens_accepted_per_pass",
            "Tokens gained by one sentence in one decoder pass.",
            ["backend"],
            namespace=ns,
            buckets=ACCEPTED_BUCKETS,
            registry=r,
        )
        self.cache_hits = Counter("cache_hits", "Sentence cache hits.", namespace=ns, registry=r)
        self.cache_misses = Counter("cache_misses", "Sentence cache misses.", namespace=ns, registry=r)
        self.rejections = Counter(
            "rejections",
            "Requests or jobs refused (queue_full, deadline, ...).",
            ["reason", "backend"],
            namespace=ns,
            registry=r,
        )
        self.errors = Counter("errors", "Failures by reason.", ["reason", "backend"], namespace=ns, registry=r)
        self.queue_depth = Gauge("queue_depth", "Jobs queued, not yet decoding.", ["backend"], namespace=ns, registry=r)
        self.in_flight = Gauge("in_flight", "Jobs in batches being decoded.", ["backend"], namespace=ns, registry=r)
        self.requests_in_progress = Gauge(
            "requests_in_progress",
            "Requests being served (admitted, not yet answered).",
            ["route"],
            namespace=ns,
            registry=r,
        )

    # -- observations -----------------------------------------------------------------------

    def in_progress(self, route: str) -> Any:
        """Context manager counting a request in ``requests_in_progress`` while it is served."""
        return self.requests_in_progress.labels(route).track_inprogress()

    def observe_request(self, route: str, backend: str, status: int | str, seconds: float) -> None:
        self.request_seconds.labels(route, backend, str(status)).observe(seconds)

    def observe_stage(self, stage: str, backend: str, seconds: float) -> None:
        self.stage_seconds.labels(stage, backend).observe(seconds)

    def observe_batch(self, backend: str, size: int, padded_tokens: int) -> None:
        self.batch_size.labels(backend).observe(size)
        self.batch_tokens.labels(backend).observe(padded_tokens)

    def observe_decode(self, backend: str, passes: int, accepted: Iterable[int] = ()) -> None:
        """One sentence's decoding: its pass count and the tokens it gained in each pass."""
        self.decoder_passes.labels(backend).observe(passes)
        per_pass = self.tokens_per_pass.labels(backend)
        for tokens in accepted:
            per_pass.observe(tokens)

    def cache_hit(self, count: int = 1) -> None:
        self.cache_hits.inc(count)

    def cache_miss(self, count: int = 1) -> None:
        self.cache_misses.inc(count)

    def reject(self, reason: str, backend: str = "none") -> None:
        self.rejections.labels(reason, backend).inc()

    def error(self, reason: str, backend: str = "none") -> None:
        self.errors.labels(reason, backend).inc()

    def set_queue(self, backend: str, depth: int, in_flight: int) -> None:
        self.queue_depth.labels(backend).set(depth)
        self.in_flight.labels(backend).set(in_flight)

    # -- exposition -------------------------------------------------------------------------

    def render(self) -> bytes:
        """The registry in the Prometheus text format (serve with ``content_type``)."""
        return generate_latest(self.registry)

    def render_for(self, accept: str | None) -> tuple[bytes, str]:
        """(body, content type) negotiated from an ``Accept`` header (OpenMetrics if asked)."""
        if not accept:
            return self.render(), self.content_type
        encoder, content_type = choose_encoder(accept)
        return encoder(self.registry), content_type
