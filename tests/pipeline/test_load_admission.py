"""Admission by the gateway's load: the decision (properties over every input), the lag smoothed and the seconds per
answer learnt from the CPU clocks (scripted clocks, then the real ones on a real event loop whose lag is measured)."""

from __future__ import annotations

import asyncio
import math
import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.observability.loop_lag import watch_loop_lag
from service.observability.metrics import Metrics
from service.pipeline.load_admission import IN_FLIGHT, LOOP_LAG, SHED_REASONS, Clocks, LoadAdmission, shed_reason

OPERATIONS = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")

seconds = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)
shares = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
counts = st.integers(min_value=0, max_value=10_000)


@given(lag=seconds, in_flight=counts, per_answer=seconds, left=seconds, share=shares)
def test_a_request_is_refused_exactly_when_the_wait_is_past_its_share_of_the_time_left(
    lag: float, in_flight: int, per_answer: float, left: float, share: float
) -> None:
    reason = shed_reason(lag, in_flight, per_answer, left, share)
    wait = lag + (in_flight + 1) * per_answer
    if share == 0 or in_flight == 0:
        assert reason is None  # off, or nothing in flight to wait for
    elif lag > left * share:
        assert reason == LOOP_LAG
    else:
        assert reason == (IN_FLIGHT if wait > left * share else None)


@given(lag=seconds, in_flight=counts, per_answer=seconds, left=seconds, share=shares, more=counts, later=seconds)
def test_more_load_or_less_time_never_turns_a_refusal_into_an_admission(
    lag: float, in_flight: int, per_answer: float, left: float, share: float, more: int, later: float
) -> None:
    if shed_reason(lag, in_flight, per_answer, left, share) is not None:
        assert shed_reason(lag, in_flight + more, per_answer, left, share) is not None
        assert shed_reason(lag + later, in_flight, per_answer, left, share) is not None
        assert shed_reason(lag, in_flight, per_answer, max(0.0, left - later), share) is not None


class Script:
    """Clocks the test sets: wall time, the loop thread's CPU and the process's CPU, in seconds."""

    def __init__(self) -> None:
        self.wall = self.thread = self.process = 0.0

    def clocks(self) -> Clocks:
        return Clocks(wall=lambda: self.wall, thread_cpu=lambda: self.thread, process_cpu=lambda: self.process)

    def advance(self, wall: float, thread: float, process: float) -> None:
        self.wall += wall
        self.thread += thread
        self.process += process


def test_seconds_per_answer_is_the_cpu_spent_while_requests_were_in_flight_over_the_answers() -> None:
    script = Script()
    admission = LoadAdmission(0.5, smoothing_s=1.0, cores=2, clocks=script.clocks())
    script.advance(10.0, 0.5, 0.8)  # idle: not counted
    admission.tick(0.0)
    assert admission.s_per_answer == 0.0
    for _ in range(4):  # four answers, 5 ms of the loop's CPU and 12 ms of the process's each
        with admission.serving():
            script.advance(0.02, 0.005, 0.012)
    admission.tick(0.0)
    # the loop's 5 ms, not the process's 12 ms over 2 cores
    assert admission.s_per_answer == pytest.approx(0.006)
    script.advance(60.0, 1.0, 1.0)
    admission.tick(0.0)  # nothing in flight since the last tick: not counted
    assert admission.s_per_answer == pytest.approx(0.006)
    with admission.serving():  # the process's CPU over its cores is the more now
        script.advance(0.02, 0.004, 0.030)
    admission.tick(0.0)
    decay = 0.5 ** (1 / 64)  # one answer more: the earlier ones' weight, at a half-life of 64 answers
    assert admission.s_per_answer == pytest.approx((0.048 * decay + 0.030) / 2 / (4 * decay + 1))


def test_older_answers_count_less_as_new_ones_come() -> None:
    script = Script()
    admission = LoadAdmission(0.5, smoothing_s=1.0, cores=1, clocks=script.clocks(), half_life=4)
    for cost in (0.010, 0.002):
        for _ in range(4):
            with admission.serving():
                script.advance(0.01, cost, cost)
        admission.tick(0.0)
    # the first four answers' weight halved when the next four came: (0.040 / 2 + 0.008) / (4 / 2 + 4)
    assert admission.s_per_answer == pytest.approx((0.040 / 2 + 0.008) / 6)


def test_the_lag_is_smoothed_over_time_and_a_lagging_loop_refuses_what_it_cannot_answer() -> None:
    script = Script()
    admission = LoadAdmission(0.5, smoothing_s=1.0, cores=1, clocks=script.clocks())
    script.advance(1.0, 0, 0)
    admission.tick(0.4)
    assert admission.lag_s == pytest.approx(0.4 * (1 - math.exp(-1)))
    script.advance(1.0, 0, 0)
    admission.tick(0.4)
    assert admission.lag_s == pytest.approx(0.4 * (1 - math.exp(-2)))
    assert admission.admit(deadline=0.5, now=0.0) is None  # nothing in flight: never refused
    with admission.serving():
        refused = admission.admit(deadline=0.5, now=0.0)
        assert refused is not None and refused.reason == LOOP_LAG
        assert refused.retry_after == "1"
        assert admission.admit(deadline=10.0, now=0.0) is None  # 0.35 s of lag is within half of 10 s


def test_the_requests_in_flight_refuse_what_they_would_keep_past_the_deadline() -> None:
    script = Script()
    admission = LoadAdmission(0.5, smoothing_s=1.0, cores=1, clocks=script.clocks())
    with admission.serving():
        script.advance(0.01, 0.01, 0.01)
    admission.tick(0.0)  # 10 ms an answer
    serving = [admission.serving() for _ in range(99)]
    for request in serving:
        request.__enter__()
    try:
        assert admission.admit(deadline=2.0, now=0.0) is None  # 100 x 10 ms = 1 s: within half of 2 s
        refused = admission.admit(deadline=1.9, now=0.0)
        assert refused is not None and refused.reason == IN_FLIGHT and "99 requests in flight" in refused.message
        assert refused.retry_after == "1"
    finally:
        for request in serving:
            request.__exit__(None, None, None)
    assert admission.in_flight == 0
    assert LoadAdmission(0.0, 1.0).admit(deadline=0.0, now=1.0) is None  # off


def test_a_refusal_counts_as_a_request_that_left_so_refusing_never_makes_an_answer_dearer() -> None:
    script = Script()
    admission = LoadAdmission(0.5, smoothing_s=1.0, cores=1, clocks=script.clocks(), half_life=math.inf)
    with admission.serving():
        script.advance(0.01, 0.01, 0.01)
    admission.tick(0.0)  # 10 ms an answer
    with admission.serving():
        for _ in range(10):  # refused: 2 x 10 ms is more than half of 30 ms; each refusal takes 1 ms
            assert admission.admit(deadline=0.03, now=0.0) is not None
            script.advance(0.001, 0.001, 0.001)
        admission.tick(0.0)
        assert admission.s_per_answer == pytest.approx((0.01 + 0.01) / 11)  # lower, not (0.01 + 0.01) / 1


def test_a_real_loop_that_is_blocked_is_measured_and_refuses_a_request_that_would_wait_for_it() -> None:
    admission = LoadAdmission(0.5, smoothing_s=0.05)

    async def scenario() -> None:
        async with watch_loop_lag(admission.tick, interval_s=0.01):
            await asyncio.sleep(0.05)
            assert admission.lag_s < 0.05
            with admission.serving():
                spin(0.3)  # the loop is blocked: the timer runs 0.3 s late
                await asyncio.sleep(0.02)
                assert admission.lag_s > 0.1
                now = time.monotonic()
                refused = admission.admit(deadline=now + 0.2, now=now)
                assert refused is not None and refused.reason == LOOP_LAG
                assert admission.s_per_answer == 0.0  # nothing answered yet
            await asyncio.sleep(0.05)

    asyncio.run(scenario())
    # the loop's CPU while it was blocked was spent on the one answer (up to 0.3 s: less where other processes took
    # some of the core)
    assert 0 < admission.s_per_answer <= 0.4


def spin(seconds: float) -> None:
    """Keep the CPU busy for ``seconds`` of wall time."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_the_operations_page_lists_the_shed_series_and_its_reasons() -> None:
    metrics = Metrics()
    for reason in SHED_REASONS:
        metrics.shed(reason)
    (family,) = [family for family in metrics.registry.collect() if family.name == "gecserve_requests_shed"]
    assert family.type == "counter"
    assert sorted(sample.labels["reason"] for sample in family.samples if sample.name.endswith("_total")) == sorted(
        SHED_REASONS
    )
    assert "| `gecserve_requests_shed_total{reason}` | counter |" in OPERATIONS
    header = "| `reason` | refused because |\n| --- | --- |\n"
    table = OPERATIONS[OPERATIONS.index(header) + len(header) :].split("\n\n")[0]
    assert re.findall(r"^\| `(\w+)` \| ", table, re.MULTILINE) == list(SHED_REASONS)
