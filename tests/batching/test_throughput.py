"""Throughput over a sliding horizon, and the Retry-After it suggests."""

from __future__ import annotations

import pytest

from service.batching.throughput import ThroughputMeter, suggest_retry_after


def test_rate_over_the_horizon() -> None:
    now = [100.0]
    meter = ThroughputMeter(horizon_s=10.0, clock=lambda: now[0])
    assert meter.rate() == 0.0
    now[0] = 102.0
    meter.record(20)  # 20 jobs over the 2 s since the meter started
    assert meter.rate() == pytest.approx(10.0)
    now[0] = 110.0
    meter.record(30)
    assert meter.rate() == pytest.approx(5.0)  # 50 jobs over the full 10 s horizon
    now[0] = 115.0
    assert meter.rate() == pytest.approx(3.0)  # the first 20 fell out
    now[0] = 200.0
    assert meter.rate() == 0.0


def test_suggested_retry_after() -> None:
    assert suggest_retry_after(100, 20.0) == pytest.approx(5.0)
    assert suggest_retry_after(1, 1000.0) == 1.0  # floor
    assert suggest_retry_after(10_000, 1.0) == 60.0  # cap
    assert suggest_retry_after(5, 0.0) == 2.0  # nothing measured yet
