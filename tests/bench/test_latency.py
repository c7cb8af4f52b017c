"""What every benchmark shares: its input lines and its latency summary."""

from __future__ import annotations

import math
from pathlib import Path

from bench.latency import input_lines, latency_summary


def test_latency_summary_in_milliseconds() -> None:
    summary = latency_summary([0.001 * i for i in range(1, 101)])
    assert summary["p50_ms"] == 50.5 and math.isclose(summary["mean_ms"], 50.5)
    assert 98 < summary["p99_ms"] < 100
    assert math.isnan(latency_summary([])["p95_ms"])


def test_input_lines_are_the_non_blank_lines_stripped(tmp_path: Path) -> None:
    path = tmp_path / "input.txt"
    path.write_text("  She go to school.\n\n   \nI has a car. \n", encoding="utf-8")
    assert input_lines(path) == ["She go to school.", "I has a car."]
