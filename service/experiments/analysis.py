"""The statistics of an A/B comparison, from mergeable latency sketches (scipy does the statistics).

* **Percentile with a 95% interval**: the distribution-free order-statistic interval. For the
  q-quantile of n samples, the ranks ``l, u`` that bracket it with 95% probability come from the
  binomial distribution (``scipy.stats.binom.interval``); the interval is the sketch's values at
  those ranks (each within the sketch's relative accuracy).
* **Speedup of an arm over the control** at a percentile: ``control / arm`` (2.0 means the arm
  takes half the time), with a conservative interval from the two arms' 97.5% intervals
  (Bonferroni: both hold together with at least 95% probability).
* **Is the latency difference significant**: Mood's median test, the chi-square test
  (``scipy.stats.chi2_contingency``) of how many of each arm's requests fall above the pooled
  median; it needs only ranks, which a sketch keeps.
* **Sample-ratio mismatch**: the chi-square goodness-of-fit test (``scipy.stats.chisquare``) of
  the assigned request counts against the weights; p < 0.001 flags a broken assignment.
* **Acceptance rate of the suggestions** (from the feedback ledger's counts: accepted / (accepted +
  dismissed)), per arm and per edit type, with the 95% Wilson score interval, which keeps its coverage
  near 0 and 1 and with few answers, where the normal approximation does not.
* **Is an arm's acceptance rate different from the control's**: the pooled two-proportion z-test,
  two-sided (the same p as the chi-square test of the 2x2 table without continuity correction).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ddsketch.ddsketch import BaseDDSketch
from scipy import stats

from service.observability.stats import QUANTILES, Totals, new_sketch

__all__ = [
    "SRM_ALPHA",
    "acceptance",
    "compare",
    "percentile_interval",
    "sample_ratio",
    "summarise",
    "two_proportions",
    "wilson_interval",
]

CONFIDENCE = 0.95
SIGNIFICANCE = 0.05
SRM_ALPHA = 0.001
MIN_SAMPLES = 2


def percentile_interval(sketch: BaseDDSketch, q: float, confidence: float = CONFIDENCE) -> list[float] | None:
    """The ``confidence`` interval of the ``q``-quantile in milliseconds (None with too few samples)."""
    n = int(sketch.count)
    if n < MIN_SAMPLES:
        return None
    low_rank, high_rank = stats.binom.interval(confidence, n, q)
    low_q, high_q = max(0.0, (low_rank - 1) / (n - 1)), min(1.0, high_rank / (n - 1))
    return [sketch.get_quantile_value(low_q) * 1000.0, sketch.get_quantile_value(high_q) * 1000.0]


def _percentiles(sketch: BaseDDSketch) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, q in QUANTILES:
        value = sketch.get_quantile_value(q) * 1000.0 if sketch.count else None
        out[name] = {"value": value, "ci": percentile_interval(sketch, q)}
    out["mean"] = sketch.avg * 1000.0 if sketch.count else None
    return out


def summarise(totals: Totals) -> dict[str, Any]:
    """One arm: counts by outcome, percentiles with intervals end to end, stage percentiles."""
    ok = totals.outcomes.get("ok", 0)
    return {
        "requests": totals.requests,
        "outcomes": dict(sorted(totals.outcomes.items())),
        "errors": totals.requests - ok,
        "sentences": totals.sentences,
        "edits_per_sentence": totals.edits / totals.sentences if totals.sentences else None,
        "latency_ms": _percentiles(totals.latency),
        "stages_ms": {stage: _percentiles(sketch) for stage, sketch in sorted(totals.stages.items())},
    }


def _rank_below(sketch: BaseDDSketch, value: float) -> float:
    """How many samples of ``sketch`` are at most ``value`` (bisection on its quantile function)."""
    if not sketch.count or value < sketch.get_quantile_value(0.0):
        return 0.0
    low, high = 0.0, 1.0
    for _ in range(40):
        middle = (low + high) / 2
        if sketch.get_quantile_value(middle) <= value:
            low = middle
        else:
            high = middle
    return low * (sketch.count - 1) + 1


def compare(control: Totals, arm: Totals) -> dict[str, Any]:
    """``arm`` against ``control``: speedups with intervals and Mood's median test."""
    speedups: dict[str, Any] = {}
    for name, q in QUANTILES:
        a, b = control.latency, arm.latency
        if a.count < MIN_SAMPLES or b.count < MIN_SAMPLES:
            speedups[name] = {"value": None, "ci": None}
            continue
        value = a.get_quantile_value(q) / b.get_quantile_value(q)
        ca = percentile_interval(a, q, 1 - (1 - CONFIDENCE) / 2)
        cb = percentile_interval(b, q, 1 - (1 - CONFIDENCE) / 2)
        interval = [ca[0] / cb[1], ca[1] / cb[0]] if ca and cb and cb[0] > 0 else None
        speedups[name] = {"value": value, "ci": interval}
    return {"speedup": speedups, "median_test": _median_test(control.latency, arm.latency)}


def _median_test(a: BaseDDSketch, b: BaseDDSketch) -> dict[str, Any]:
    test: dict[str, Any] = {"name": "Mood's median test", "p_value": None, "significant": None}
    if a.count < MIN_SAMPLES or b.count < MIN_SAMPLES:
        return test
    pooled = new_sketch()
    pooled.merge(a)
    pooled.merge(b)
    median = pooled.get_quantile_value(0.5)
    table = []
    for sketch in (a, b):
        below = _rank_below(sketch, median)
        table.append([below, sketch.count - below])
    if min(sum(column) for column in zip(*table, strict=True)) <= 0:
        return test  # every sample on one side of the median: nothing to test
    chi2, p_value, _, _ = stats.chi2_contingency(table)
    test.update(statistic=float(chi2), p_value=float(p_value), significant=bool(p_value < SIGNIFICANCE))
    return test


def sample_ratio(observed: Mapping[str, int], weights: Mapping[str, float]) -> dict[str, Any]:
    """Chi-square of assigned counts against the weights (arms of weight 0 left out)."""
    arms = [arm for arm, weight in weights.items() if weight > 0]
    counts = [observed.get(arm, 0) for arm in arms]
    total = sum(counts)
    result: dict[str, Any] = {
        "observed": {arm: observed.get(arm, 0) for arm in weights},
        "expected_share": {arm: weight / sum(weights.values()) for arm, weight in weights.items()},
        "chi2": None,
        "p_value": None,
        "mismatch": False,
        "alpha": SRM_ALPHA,
    }
    if len(arms) < 2 or total == 0:
        return result
    share = sum(weights[arm] for arm in arms)
    expected = [total * weights[arm] / share for arm in arms]
    chi2, p_value = stats.chisquare(counts, expected)
    result.update(chi2=float(chi2), p_value=float(p_value), mismatch=bool(p_value < SRM_ALPHA))
    return result


def wilson_interval(successes: int, trials: int, confidence: float = CONFIDENCE) -> list[float] | None:
    """The Wilson score interval of a proportion, ``successes`` out of ``trials`` (None without trials)."""
    if trials <= 0:
        return None
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes <= 0 else max(0.0, centre - half)  # exactly 0 and 1 at the ends, where rounding
    high = 1.0 if successes >= trials else min(1.0, centre + half)  # would miss them by an ulp
    return [low, high]


def two_proportions(control: tuple[int, int], arm: tuple[int, int]) -> dict[str, Any]:
    """The pooled two-proportion z-test, two-sided, of ``arm`` against ``control``, each (successes, trials);
    no numbers when either has no trials, or when every answer is the same on both sides."""
    test: dict[str, Any] = {
        "name": "two-proportion z-test",
        "difference": None,
        "z": None,
        "p_value": None,
        "significant": None,
    }
    (x0, n0), (x1, n1) = control, arm
    if n0 <= 0 or n1 <= 0:
        return test
    pooled = (x0 + x1) / (n0 + n1)
    if pooled <= 0 or pooled >= 1:
        return test
    difference = x1 / n1 - x0 / n0
    z = difference / math.sqrt(pooled * (1 - pooled) * (1 / n0 + 1 / n1))
    p_value = float(2 * stats.norm.sf(abs(z)))
    test.update(difference=difference, z=float(z), p_value=p_value, significant=bool(p_value < SIGNIFICANCE))
    return test


def _rate(accepted: int, dismissed: int) -> dict[str, Any]:
    trials = accepted + dismissed
    return {
        "accepted": accepted,
        "dismissed": dismissed,
        "rate": accepted / trials if trials else None,
        "ci": wilson_interval(accepted, trials),
    }


def _feedback(types: Mapping[str, Mapping[str, int]]) -> tuple[int, int]:
    """(accepted, accepted + dismissed) over every edit type of an arm."""
    accepted = sum(actions.get("accepted", 0) for actions in types.values())
    dismissed = sum(actions.get("dismissed", 0) for actions in types.values())
    return accepted, accepted + dismissed


def acceptance(
    counts: Mapping[str, Mapping[str, Mapping[str, int]]], control: str, arms: Sequence[str]
) -> dict[str, Any]:
    """Acceptance rates of each arm in ``arms`` (in all and by edit type) from a feedback ledger's counts
    (arm -> edit type -> action -> count), and each arm but ``control`` compared with it."""
    out: dict[str, Any] = {}
    for arm in arms:
        types = counts.get(arm, {})
        accepted, trials = _feedback(types)
        out[arm] = {
            **_rate(accepted, trials - accepted),
            "by_type": {
                kind: _rate(actions.get("accepted", 0), actions.get("dismissed", 0))
                for kind, actions in sorted(types.items())
            },
        }
    reference = _feedback(counts.get(control, {}))
    comparisons = [
        {"arm": arm, "control": control, **two_proportions(reference, _feedback(counts.get(arm, {})))}
        for arm in arms
        if arm != control
    ]
    return {"arms": out, "comparisons": comparisons}
