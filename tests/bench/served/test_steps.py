"""A step load's bookkeeping (``bench/served/steps.py``): answers count in the step whose window they came back in,
however late the shape's once-a-second tick saw the step end."""

from __future__ import annotations

import math

import pytest

from bench.served.steps import Answers, Sla, ladder

SLA = Sla(p99_ms=100.0, failures=0.0)


def test_a_step_read_late_still_counts_the_answers_after_its_settling() -> None:
    answers = Answers()
    for at in (0.2, 0.7, 1.2, 2.6):  # the first while settling, the last after the step's nominal end
        answers.add(at, "POST", "correct accelerated", 10.0)
    (row,) = answers.step(0, 2, start=0.5, end=2.9, sla=SLA, think_s=0.2)
    assert (row["users"], row["requests"], row["failures"], row["within_sla"]) == (2, 3, 0, True)
    assert row["rps"] == pytest.approx(3 / 2.4) and row["offered_rps"] == pytest.approx(10.0)
    assert answers.step(1, 3, start=3.4, end=5.0, sla=SLA, think_s=0.2) == []  # each answer read once


def test_a_step_is_past_the_sla_by_its_p99_or_its_failures_each_name_apart() -> None:
    answers = Answers()
    for k in range(100):
        answers.add(1.0 + k / 100, "POST", "correct accelerated", 10.0 if k < 98 else 500.0)
        answers.add(1.0 + k / 100, "grpc", "Correct accelerated", 10.0)
    answers.add(1.5, "POST", "correct autoregressive", 10.0)
    answers.add(1.6, "POST", "correct autoregressive", None)
    answers.add(2.5, "POST", "correct autoregressive", 900.0)  # the next step's
    rows = answers.step(0, 4, start=0.5, end=2.1, sla=SLA, think_s=None)
    assert [(r["type"], r["name"], r["within_sla"]) for r in rows] == [
        ("POST", "correct accelerated", False),
        ("POST", "correct autoregressive", False),
        ("grpc", "Correct accelerated", True),
    ]
    assert rows[1]["requests"] == 2 and rows[1]["failures"] == 1 and math.isnan(rows[0]["offered_rps"])
    (later,) = answers.step(1, 6, start=2.1, end=3.0, sla=SLA, think_s=None)
    assert later["p99_ms"] == 900.0


def test_the_ladder_grows_strictly_or_takes_the_steps_given() -> None:
    assert ladder("2,5", 4, 1.5, 12) == [2, 5]
    assert ladder("", 1, 1.2, 5) == [1, 2, 3, 4, 5]
    assert ladder("", 4, 1.5, 4) == [4, 6, 9, 14]
