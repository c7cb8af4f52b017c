"""``gecserve bench soak`` on a real server: the resident set read through the load and after it, plotted; the
slope that says whether it is flat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.served import soak
from tests.conftest import FIXTURE_MODEL


@given(st.floats(-50, 50), st.floats(0, 1000), st.integers(2, 40))
def test_the_slope_of_a_straight_line_is_its_gradient(gradient: float, start: float, count: int) -> None:
    samples = [(60.0 * i, start + gradient * i, i) for i in range(count)]
    assert soak.slope_mb_per_min(samples) == pytest.approx(gradient, abs=1e-6)


@pytest.mark.server
def test_a_short_soak_reads_the_resident_set_during_and_after_the_load(tmp_path: Path) -> None:
    sentences = tmp_path / "input.txt"
    sentences.write_text("She go to school every days.\nI has a car.\nThe cat sat on the mat.\n")
    out = tmp_path / "soak"
    args = ["--spawn", str(FIXTURE_MODEL), "--input", str(sentences), "--clients", "4", "--minutes", "0.1"]
    assert soak.main([*args, "--every", "1", "--settle", "2", "--out", str(out)]) == 0
    result = json.loads(out.with_suffix(".json").read_text())
    seconds = [s["seconds"] for s in result["samples"]]
    assert seconds == sorted(seconds) and seconds[-1] > result["load_seconds"]  # read after the load too
    assert all(s["rss_mb"] > 10 for s in result["samples"])
    assert result["requests"] >= soak.ROUND and result["requests"] == result["samples"][-1]["answered"]
    assert out.with_suffix(".png").stat().st_size > 1000
