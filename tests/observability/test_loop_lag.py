"""The event loop's lag: a loop held up by a blocking call is measured late by about as long, an idle one
barely; the measures reach the gauge and the histogram; the operations page's table is the registry's."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from service.observability.loop_lag import watch_loop_lag
from service.observability.metrics import LOOP_LAG_BUCKETS, Metrics

OPERATIONS = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")


def test_a_blocked_loop_is_measured_late_by_as_long_as_it_was_blocked() -> None:
    lags: list[float] = []

    async def scenario() -> None:
        async with watch_loop_lag(lags.append, interval_s=0.01):
            await asyncio.sleep(0.2)
            idle = len(lags)
            time.sleep(0.3)  # the blocking call whose lag is measured
            await asyncio.sleep(0.05)
        assert idle >= 3
        assert min(lags[:idle]) < 0.05  # some timer ran on time while the loop was idle
        assert 0.25 <= max(lags[idle:]) < 1.0

    asyncio.run(scenario())


def test_each_measure_sets_the_gauge_and_counts_in_the_histogram() -> None:
    metrics = Metrics()
    for seconds in (0.0004, 0.002, 0.15):
        metrics.loop_lagged(seconds)
    families = {family.name: family for family in text_string_to_metric_families(metrics.render().decode())}
    gauge = families["gecserve_event_loop_lag_seconds"]
    histogram = families["gecserve_event_loop_lag_distribution_seconds"]
    assert gauge.type == "gauge" and gauge.samples[0].value == 0.15
    samples = {(s.name, s.labels.get("le")): s.value for s in histogram.samples}
    assert samples[("gecserve_event_loop_lag_distribution_seconds_count", None)] == 3
    assert samples[("gecserve_event_loop_lag_distribution_seconds_sum", None)] == sum((0.0004, 0.002, 0.15))
    below_1ms = max(bound for bound in LOOP_LAG_BUCKETS if bound <= 0.001)
    assert samples[("gecserve_event_loop_lag_distribution_seconds_bucket", str(below_1ms))] == 1


def test_the_operations_page_lists_the_loop_lag_series_as_registered() -> None:
    registered = {
        family.name: family.type
        for family in Metrics().registry.collect()
        if family.name.startswith("gecserve_event_loop_lag")
    }
    rows = dict(re.findall(r"^\| `(gecserve_event_loop_lag\w*)` \| (\w+) \|", OPERATIONS, re.MULTILINE))
    assert rows == registered
