"""Rolling statistics: sketch quantiles within their accuracy, windows that slide, throughput."""

from __future__ import annotations

import json
import math
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.observability.stats import RollingStats


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def within_accuracy(reported_ms: float, samples_s: list[float], q: float, alpha: float) -> bool:
    """The sketch answers the sample at rank q * (n - 1) within relative accuracy alpha."""
    ordered = sorted(samples_s)
    rank = q * (len(ordered) - 1)
    low, high = ordered[math.floor(rank)] * 1000, ordered[math.ceil(rank)] * 1000
    return low * (1 - alpha) - 1e-9 <= reported_ms <= high * (1 + alpha) + 1e-9


@pytest.mark.parametrize("distribution", ["uniform", "lognormal", "bimodal"])
def test_quantiles_match_known_distributions(distribution: str) -> None:
    rng = random.Random(3)
    draw = {
        "uniform": lambda: rng.uniform(0.001, 0.5),
        "lognormal": lambda: rng.lognormvariate(math.log(0.02), 1.0),
        "bimodal": lambda: rng.choice([rng.gauss(0.01, 0.001), rng.gauss(0.8, 0.05)]),
    }[distribution]
    clock = Clock()
    stats = RollingStats(clock=clock, relative_accuracy=0.01)
    latencies = [abs(draw()) for _ in range(5000)]
    for i, latency in enumerate(latencies):
        clock.t = 1000.0 + i * 0.01  # spread over 50 s: several buckets merged on read
        stats.record_request("aggressive", latency)
    window = stats.window("aggressive", 60)
    assert window["requests"] == 5000
    for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
        assert within_accuracy(window["latency_ms"][name], latencies, q, 0.01), name
    assert window["latency_ms"]["mean"] == pytest.approx(sum(latencies) / len(latencies) * 1000)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(1e-4, 20.0, allow_nan=False), min_size=1, max_size=300), st.sampled_from([0.01, 0.02]))
def test_quantiles_within_relative_accuracy(latencies: list[float], alpha: float) -> None:
    clock = Clock()
    stats = RollingStats(clock=clock, relative_accuracy=alpha)
    for i, latency in enumerate(latencies):
        clock.t = 1000.0 + i * 50.0 / len(latencies)  # spread over several buckets
        stats.record_request("b", latency)
    window = stats.window("b", 60)
    for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
        assert within_accuracy(window["latency_ms"][name], latencies, q, alpha)


def test_old_buckets_fall_out_of_the_window() -> None:
    clock = Clock(0.0)
    stats = RollingStats(clock=clock)
    for _ in range(10):
        stats.record_request("greedy", 1.0)  # slow, at t = 0
    clock.t = 100.0
    for _ in range(10):
        stats.record_request("greedy", 0.01)  # fast, at t = 100
    one, five = stats.window("greedy", 60), stats.window("greedy", 300)
    assert one["requests"] == 10 and one["latency_ms"]["p99"] == pytest.approx(10, rel=0.01)
    assert five["requests"] == 20 and five["latency_ms"]["p99"] == pytest.approx(1000, rel=0.01)
    clock.t = 159.9
    assert stats.window("greedy", 60)["requests"] == 10
    clock.t = 160.0  # the t = 100 bucket is now 6 buckets old
    assert stats.window("greedy", 60)["requests"] == 0
    assert stats.window("greedy", 60)["latency_ms"]["p50"] is None
    clock.t = 299.0
    assert stats.window("greedy", 300)["requests"] == 20
    clock.t = 300.0  # the t = 0 slot is reused by a new bucket
    stats.record_request("greedy", 0.5)
    five = stats.window("greedy", 300)
    assert five["requests"] == 11
    assert five["latency_ms"]["p99"] == pytest.approx(10, rel=0.01)  # the 1 s requests are gone
    assert five["latency_ms"]["mean"] == pytest.approx((10 * 10 + 500) / 11)


def test_throughput_and_batch_size() -> None:
    clock = Clock(0.0)
    stats = RollingStats(clock=clock)
    for i in range(120):
        clock.t = i * 0.5  # 2 requests/s for a minute, 3 sentences each
        stats.record_request("a", 0.02, sentences=3)
    for size in (4, 8, 12):
        stats.record_batch("a", size)
    clock.t = 60.0
    one = stats.window("a", 60)
    assert one["requests"] == 100  # the bucket t in [0, 10) has left the 1-minute window
    assert one["requests_per_s"] == pytest.approx(2.0)
    assert one["sentences_per_s"] == pytest.approx(6.0)
    assert one["mean_batch_size"] == pytest.approx(8.0)
    five = stats.window("a", 300)
    assert five["requests"] == 120
    assert five["requests_per_s"] == pytest.approx(2.0)  # over the 60 s since start, not 300


def test_snapshot_is_json_ready() -> None:
    clock = Clock()
    stats = RollingStats(clock=clock)
    stats.record_request("greedy", 0.05)
    stats.record_request("aggressive", 0.02)
    stats.record_batch("aggressive", 3)
    snap = json.loads(json.dumps(stats.snapshot()))
    assert snap["windows"] == ["1m", "5m"]
    assert set(snap["series"]) == {"greedy", "aggressive"}
    assert snap["series"]["greedy"]["1m"]["mean_batch_size"] is None
    assert snap["series"]["aggressive"]["5m"]["mean_batch_size"] == 3
    assert stats.series() == ["aggressive", "greedy"]
    merged = stats.snapshot({"all": ["greedy", "aggressive"]})["series"]["all"]["1m"]
    assert merged["requests"] == 2 and merged["batches"] == 1


def test_concurrent_recording() -> None:
    stats = RollingStats()

    def feed() -> None:
        for _ in range(2000):
            stats.record_request("x", 0.01, sentences=2)
            stats.record_batch("x", 2)

    threads = [threading.Thread(target=feed) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    window = stats.window("x", 60)
    assert window["requests"] == 8000
    assert window["sentences"] == 16000
    assert window["batches"] == 8000


def test_rejects_windows_shorter_than_a_bucket() -> None:
    with pytest.raises(ValueError):
        RollingStats(windows=(5.0,), bucket_s=10.0)


def test_every_outcome_is_counted_and_only_successes_are_timed() -> None:
    clock = Clock()
    stats = RollingStats(clock=clock)
    stats.record_request("a", 0.01, sentences=2, edits=1)
    stats.record_request("a", 5.0, outcome="deadline")
    stats.record_request("a", 0.0, outcome="overloaded")
    window = stats.window("a", 60)
    assert window["requests"] == 3
    assert window["outcomes"] == {"deadline": 1, "ok": 1, "overloaded": 1}
    assert window["latency_ms"]["p99"] == pytest.approx(10, rel=0.01)  # the 5 s deadline is not a latency
    totals = stats.totals("a")
    assert (totals.requests, totals.sentences, totals.edits) == (3, 2, 1)


def test_totals_outlive_the_window_and_keep_stages() -> None:
    clock = Clock(0.0)
    stats = RollingStats(clock=clock)
    stats.record_request("a", 0.02, stages={"queue": 0.001, "inference": 0.015})
    clock.t = 10_000.0
    stats.record_request("a", 0.04, stages={"queue": 0.003, "inference": 0.030})
    assert stats.window("a", 300)["requests"] == 1
    totals = stats.totals("a")
    assert totals.latency.count == 2
    assert totals.stages["inference"].get_quantile_value(1.0) == pytest.approx(0.030, rel=0.01)
    assert totals.stages["queue"].count == 2
    assert stats.totals("never").requests == 0


def close(a: object, b: object) -> bool:
    """Equal, floats to 1e-9 (a decoded sketch's bin boundaries differ in the last bits)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9)
    return a == b


def test_replicas_merge_to_the_numbers_of_one() -> None:
    """Two replicas' exports absorbed into a third give what one process recording everything gives."""
    clock = Clock(2000.0)
    rng = random.Random(5)
    one, first, second = (RollingStats(clock=clock) for _ in range(3))
    for i in range(400):
        clock.t = 2000.0 + i * 0.5
        latency = rng.lognormvariate(math.log(0.02), 0.8)
        outcome = "ok" if i % 10 else "deadline"
        one.record_request("a", latency, outcome, sentences=2, stages={"inference": latency / 2})
        (first if i % 3 else second).record_request(
            "a", latency, outcome, sentences=2, stages={"inference": latency / 2}
        )
    merged = RollingStats(clock=clock)
    for replica in (first, second):
        merged.absorb(json.loads(json.dumps(replica.export())))
    for seconds in (60, 300):
        assert close(merged.window("a", seconds), one.window("a", seconds))
    assert merged.totals("a").outcomes == one.totals("a").outcomes
    assert merged.totals("a").latency.get_quantile_value(0.99) == pytest.approx(
        one.totals("a").latency.get_quantile_value(0.99), rel=1e-9
    )
    assert all(close(a, b) for a, b in zip(merged.timeline("a"), one.timeline("a"), strict=True))
    assert [p["requests"] for p in merged.timeline("a")] == [20] * 20  # 200 s in 10 s buckets


def test_absorb_refuses_other_bucket_sizes() -> None:
    with pytest.raises(ValueError, match="bucket"):
        RollingStats(bucket_s=10.0).absorb(RollingStats(bucket_s=5.0).export())
