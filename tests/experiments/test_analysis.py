"""A/B statistics from sketches: interval coverage, speedups, the median test, sample-ratio mismatch."""

from __future__ import annotations

import numpy as np
import pytest

from service.experiments.analysis import compare, percentile_interval, sample_ratio, summarise
from service.observability.stats import Totals, new_sketch


def totals_of(latencies: np.ndarray, outcomes: dict[str, int] | None = None) -> Totals:
    sketch = new_sketch()
    for value in latencies:
        sketch.add(float(value))
    return Totals(sketch, outcomes or {"ok": len(latencies)}, len(latencies), 0, {})


@pytest.mark.parametrize("q", [0.5, 0.95, 0.99])
def test_percentile_intervals_cover_the_true_value(q: float) -> None:
    rng = np.random.default_rng(1)
    true = float(np.exp(np.log(0.02) + 0.6 * __import__("scipy").stats.norm.ppf(q)))  # lognormal quantile
    covered = 0
    for _ in range(200):
        sketch = totals_of(rng.lognormal(np.log(0.02), 0.6, 800)).latency
        low, high = percentile_interval(sketch, q)
        covered += low / 1.01 <= true * 1000 <= high * 1.01
    assert covered >= 180  # a 95% interval: at least 90% of 200 runs, with room for chance


def test_speedup_and_median_test() -> None:
    rng = np.random.default_rng(2)
    control = totals_of(rng.lognormal(np.log(0.020), 0.5, 3000))
    fast = totals_of(rng.lognormal(np.log(0.010), 0.5, 3000))
    same = totals_of(rng.lognormal(np.log(0.020), 0.5, 3000))
    result = compare(control, fast)
    for name in ("p50", "p95", "p99"):
        low, high = result["speedup"][name]["ci"]
        assert low <= 2.0 <= high and low <= result["speedup"][name]["value"] <= high
    assert result["median_test"]["significant"] and result["median_test"]["p_value"] < 1e-6
    alike = compare(control, same)
    assert alike["speedup"]["p50"]["ci"][0] <= 1.0 <= alike["speedup"]["p50"]["ci"][1]
    assert alike["median_test"]["p_value"] > 0.001


def test_too_few_samples_give_no_numbers() -> None:
    empty = totals_of(np.array([]))
    result = compare(empty, totals_of(np.array([0.01])))
    assert result["speedup"]["p50"] == {"value": None, "ci": None}
    assert result["median_test"]["p_value"] is None
    summary = summarise(totals_of(np.array([0.01]), {"ok": 1, "deadline": 2}))
    assert summary["errors"] == 2 and summary["latency_ms"]["p50"]["ci"] is None


def test_sample_ratio_mismatch() -> None:
    fair = sample_ratio({"a": 5030, "b": 4970}, {"a": 50, "b": 50})
    assert not fair["mismatch"] and fair["p_value"] > 0.001
    skewed = sample_ratio({"a": 5300, "b": 4700}, {"a": 50, "b": 50})
    assert skewed["mismatch"] and skewed["p_value"] < 0.001
    weighted = sample_ratio({"a": 9000, "b": 1000, "c": 0}, {"a": 90, "b": 10, "c": 0})
    assert not weighted["mismatch"] and weighted["expected_share"]["c"] == 0
    assert sample_ratio({}, {"a": 1, "b": 1})["p_value"] is None
