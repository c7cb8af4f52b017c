"""Prometheus metrics: names, labels, buckets, exposition, independent registries."""

from __future__ import annotations

import itertools
import math

from prometheus_client.parser import text_string_to_metric_families

from service.observability.metrics import LATENCY_BUCKETS, STAGES, Metrics, log_buckets


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
    m.observe_request("/v1/correct", "aggressive", 200, 0.012)
    for stage in STAGES:
        m.observe_stage(stage, "aggressive", 0.001)
    m.observe_batch("aggressive", 8, 160)
    m.observe_decode("aggressive", 3, [10, 1, 4])
    m.cache_hit()
    m.cache_hit(2)
    m.cache_miss()
    m.reject("queue_full", "aggressive")
    m.error("runner", "aggressive")
    m.set_queue("aggressive", 5, 2)

    got = samples(m)
    assert all(name.startswith("gecserve_") for name, _ in got)
    a = "aggressive"
    request_count = value(m, "gecserve_request_duration_seconds_count", route="/v1/correct", backend=a, status="200")
    assert request_count == 1
    assert (
        value(m, "gecserve_request_duration_seconds_bucket", route="/v1/correct", backend=a, status="200", le="0.01053")
        == 0
    )
    for stage in STAGES:
        assert value(m, "gecserve_stage_duration_seconds_count", stage=stage, backend=a) == 1
    assert value(m, "gecserve_batch_size_sum", backend=a) == 8
    assert value(m, "gecserve_batch_tokens_sum", backend=a) == 160
    assert value(m, "gecserve_decoder_passes_per_sentence_sum", backend=a) == 3
    assert value(m, "gecserve_tokens_accepted_per_pass_count", backend=a) == 3
    assert value(m, "gecserve_tokens_accepted_per_pass_sum", backend=a) == 15
    assert value(m, "gecserve_cache_hits_total") == 3
    assert value(m, "gecserve_cache_misses_total") == 1
    assert value(m, "gecserve_rejections_total", reason="queue_full", backend=a) == 1
    assert value(m, "gecserve_errors_total", reason="runner", backend=a) == 1
    assert value(m, "gecserve_queue_depth", backend=a) == 5
    assert value(m, "gecserve_in_flight", backend=a) == 2


def test_registries_are_independent() -> None:
    first, second = Metrics(), Metrics()
    first.cache_hit()
    assert value(first, "gecserve_cache_hits_total") == 1
    assert value(second, "gecserve_cache_hits_total") == 0


def test_content_types() -> None:
    m = Metrics()
    m.observe_request("/v1/correct", "greedy", 200, 0.5)
    assert m.content_type.startswith("text/plain")
    body, content_type = m.render_for("application/openmetrics-text")
    assert content_type.startswith("application/openmetrics-text")
    assert body.rstrip().endswith(b"# EOF")
    assert m.render_for(None) == (m.render(), m.content_type)
    assert not math.isnan(
        value(m, "gecserve_request_duration_seconds_sum", route="/v1/correct", backend="greedy", status="200")
    )
