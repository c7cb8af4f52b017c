"""A/B statistics from sketches: interval coverage, speedups, the median test, sample-ratio mismatch; and acceptance
rates from feedback counts: Wilson intervals, the two-proportion z-test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from service.experiments.analysis import (
    acceptance,
    compare,
    percentile_interval,
    sample_ratio,
    summarise,
    two_proportions,
    wilson_interval,
)
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


def wilson_reference(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson's interval as published: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = successes / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2))
    return (centre - spread) / (1 + z * z / trials), (centre + spread) / (1 + z * z / trials)


@pytest.mark.parametrize(
    ("successes", "trials", "published"),
    [(0, 10, (0.0, 0.2775)), (10, 10, (0.7225, 1.0)), (50, 100, (0.4038, 0.5962)), (81, 263, (0.2553, 0.3662))],
)
def test_wilson_interval(successes: int, trials: int, published: tuple[float, float]) -> None:
    low, high = wilson_interval(successes, trials)
    assert (low, high) == pytest.approx(published, abs=1e-4)
    assert (low, high) == pytest.approx(wilson_reference(successes, trials), abs=1e-12)
    assert 0.0 <= low <= successes / trials <= high <= 1.0
    wider = wilson_interval(successes, trials, 0.99)
    assert wider[0] <= low and high <= wider[1]
    assert wilson_interval(0, 0) is None


def test_two_proportions_matches_the_chi_square_test_of_the_table() -> None:
    equal = two_proportions((300, 1000), (300, 1000))
    assert equal["p_value"] == pytest.approx(1.0) and equal["z"] == 0.0 and equal["significant"] is False
    result = two_proportions((500, 1000), (600, 1000))
    assert result["name"] == "two-proportion z-test" and result["significant"] is True
    assert result["difference"] == pytest.approx(0.1) and result["z"] > 0
    for control, arm in [((500, 1000), (600, 1000)), ((40, 90), (31, 85)), ((7, 20), (3, 25))]:
        table = [[control[0], control[1] - control[0]], [arm[0], arm[1] - arm[0]]]
        chi2, p_value, _, _ = stats.chi2_contingency(table, correction=False)
        test = two_proportions(control, arm)
        assert test["p_value"] == pytest.approx(p_value, rel=1e-9)
        assert test["z"] ** 2 == pytest.approx(chi2, rel=1e-9)
    assert two_proportions((600, 1000), (500, 1000))["z"] == pytest.approx(-result["z"])


def test_two_proportions_without_numbers() -> None:
    nothing = {"name": "two-proportion z-test", "difference": None, "z": None, "p_value": None, "significant": None}
    assert two_proportions((0, 0), (5, 10)) == nothing
    assert two_proportions((5, 10), (0, 0)) == nothing
    assert two_proportions((0, 10), (0, 20)) == nothing  # pooled proportion 0
    assert two_proportions((10, 10), (20, 20)) == nothing  # pooled proportion 1


def test_acceptance_by_arm_and_type() -> None:
    counts = {
        "accelerated": {"spelling": {"accepted": 60, "dismissed": 40}, "verb": {"dismissed": 10}},
        "autoregressive": {"spelling": {"accepted": 45, "dismissed": 55}},
        "unlisted": {"spelling": {"accepted": 1}},
    }
    result = acceptance(counts, "autoregressive", ["autoregressive", "accelerated", "draft32"])
    assert set(result) == {"arms", "comparisons"}
    assert list(result["arms"]) == ["autoregressive", "accelerated", "draft32"]
    fast = result["arms"]["accelerated"]
    assert (fast["accepted"], fast["dismissed"], fast["rate"]) == (60, 50, 60 / 110)
    assert fast["ci"] == wilson_interval(60, 110)
    assert fast["by_type"] == {
        "spelling": {"accepted": 60, "dismissed": 40, "rate": 0.6, "ci": wilson_interval(60, 100)},
        "verb": {"accepted": 0, "dismissed": 10, "rate": 0.0, "ci": wilson_interval(0, 10)},
    }
    assert result["arms"]["draft32"] == {"accepted": 0, "dismissed": 0, "rate": None, "ci": None, "by_type": {}}
    assert [(c["arm"], c["control"]) for c in result["comparisons"]] == [
        ("accelerated", "autoregressive"),
        ("draft32", "autoregressive"),
    ]
    first, second = result["comparisons"]
    assert {k: v for k, v in first.items() if k not in ("arm", "control")} == two_proportions((45, 100), (60, 110))
    assert second["p_value"] is None and second["significant"] is None
