"""Prometheus metrics: names, labels, buckets, exposition, independent registries."""

from __future__ import annotations

import itertools
import math

from prometheus_client.parser import text_string_to_metric_families

from service.observability.metrics import LATENCY_BUCKETS, REQUEST_STAGES, Metrics, log_buckets


def samples(metrics: Metrics) -> dict[tuple[str, frozenset], float]:
    out = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def value(metrics: Metrics, name: str, **labels: str) -> float:
    return samples(metrics).get((name, frozenset(labels.items())), 0.0)


def test_latency_buckets_resolve_half_a_millisecond_to_ten_seconds() -> None:
    assert 35 <= len(LATENCY_BUCKETS) <= 45
    assert LATENCY_BUCKETS[0] == 0.0005
    assert LATENCY_BUCKETS[-1] == 10.0
    ratios = [b / a for a, b in itertools.pairwise(LATENCY_BUCKETS)]
    assert max(ratios) < 1.35  # fine enough for p50/p95/p99 by interpolation
    assert log_buckets(1, 100, 3) == (1.0, 10.0, 100.0)


def test_every_observation_is_exposed() -> None:
    m = Metrics()
    exp, arm, q = {"experiment": "ab"}, {"arm": "accelerated"}, {"queue": "accelerated"}
    m.observe_request("http", "correct", "ab", "accelerated", "ok", 0.012)
    for stage in REQUEST_STAGES:
        m.observe_stage(stage, "ab", "accelerated", 0.001)
    m.observe_sentences("ab", "accelerated", 3, [0, 2, 1])
    m.assigned("ab", "accelerated", "sticky")
    m.shadow_compared("ab", "accelerated", "autoregressive", 4, 1)
    m.shadow_drop("ab", "overloaded")
    m.observe_queue_wait("accelerated", 0.002)
    m.observe_batch("accelerated", 8, 160)
    m.observe_batch_duration("accelerated", 0.03, 0.02)
    m.observe_decode("accelerated", 3, [10, 1, 4])
    m.drop_jobs("accelerated", "queue_full")
    m.batch_error("accelerated", "runner")
    m.set_queue("accelerated", 5, 2)
    m.cache_lookup("memory", 3, 1)
    m.shed("in_flight")

    got = samples(m)
    assert all(name.startswith("gecserve_") for name, _ in got)
    request = {"api": "http", "route": "correct", **exp, **arm, "outcome": "ok"}
    assert value(m, "gecserve_request_duration_seconds_count", **request) == 1
    assert value(m, "gecserve_request_duration_seconds_bucket", **request, le="0.01053") == 0
    for stage in REQUEST_STAGES:
        assert value(m, "gecserve_stage_duration_seconds_count", stage=stage, **exp, **arm) == 1
    assert value(m, "gecserve_sentences_total", **exp, **arm) == 3
    assert value(m, "gecserve_edits_per_sentence_sum", **exp, **arm) == 3
    assert value(m, "gecserve_edits_per_sentence_count", **exp, **arm) == 3
    assert value(m, "gecserve_assignments_total", **exp, **arm, kind="sticky") == 1
    pair = {**exp, "served": "accelerated", "shadow": "autoregressive"}
    assert value(m, "gecserve_shadow_sentences_total", **pair, result="agree") == 4
    assert value(m, "gecserve_shadow_sentences_total", **pair, result="disagree") == 1
    assert value(m, "gecserve_shadow_dropped_total", **exp, reason="overloaded") == 1
    assert value(m, "gecserve_queue_wait_seconds_count", **q) == 1
    assert value(m, "gecserve_batch_duration_seconds_count", **q) == 1
    assert value(m, "gecserve_decoding_cpu_seconds_total", **q) == 0.02
    assert value(m, "gecserve_batch_size_sum", **q) == 8
    assert value(m, "gecserve_batch_tokens_sum", **q) == 160
    assert value(m, "gecserve_decoder_passes_per_sentence_sum", **q) == 3
    assert value(m, "gecserve_tokens_accepted_per_pass_count", **q) == 3
    assert value(m, "gecserve_tokens_accepted_per_pass_sum", **q) == 15
    assert value(m, "gecserve_jobs_dropped_total", **q, reason="queue_full") == 1
    assert value(m, "gecserve_batch_errors_total", **q, reason="runner") == 1
    assert value(m, "gecserve_queue_depth", **q) == 5
    assert value(m, "gecserve_in_flight", **q) == 2
    assert value(m, "gecserve_cache_lookups_total", level="memory", result="hit") == 3
    assert value(m, "gecserve_cache_lookups_total", level="memory", result="miss") == 1
    assert value(m, "gecserve_requests_shed_total", reason="in_flight") == 1


def test_registries_are_independent() -> None:
    first, second = Metrics(), Metrics()
    first.cache_lookup("memory", 1, 0)
    assert value(first, "gecserve_cache_lookups_total", level="memory", result="hit") == 1
    assert value(second, "gecserve_cache_lookups_total", level="memory", result="hit") == 0


def test_content_types() -> None:
    m = Metrics()
    labels = {"api": "grpc", "route": "correct", "experiment": "none", "arm": "autoregressive", "outcome": "ok"}
    m.observe_request(*labels.values(), 0.5)
    assert m.content_type.startswith("text/plain")
    body, content_type = m.render_for("application/openmetrics-text")
    assert content_type.startswith("application/openmetrics-text")
    assert body.rstrip().endswith(b"# EOF")
    assert m.render_for(None) == (m.render(), m.content_type)
    assert not math.isnan(value(m, "gecserve_request_duration_seconds_sum", **labels))
