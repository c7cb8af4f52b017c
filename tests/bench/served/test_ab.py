"""``python -m bench.served.ab``: a short A/B run against a spawned server, read back from its report."""

from __future__ import annotations

import json

import pytest
import yaml

from bench.served import ab
from bench.served.browser import CHROMIUM
from tests.conftest import FIXTURE_MODEL
from tests.system.test_experiments import EXPERIMENT

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_an_ab_run_reports_both_arms_agreement_and_the_sample_ratio(tmp_path, capsys) -> None:
    experiment = tmp_path / "ab.yaml"
    experiment.write_text(yaml.safe_dump(EXPERIMENT))
    source = tmp_path / "input.txt"
    source.write_text("i saw a apple.\nWe visited a island last week.\nHe go home every days.\n")
    out, png = tmp_path / "ab.json", tmp_path / "dashboard.png"
    args = ["--spawn", str(FIXTURE_MODEL), "--experiment", str(experiment), "--input", str(source)]
    args += ["--rate", "20", "--duration", "3", "--users", "50", "--json", str(out)]
    if CHROMIUM is not None:
        args += ["--screenshot", str(png)]
    assert ab.main(args) == 0
    result = json.loads(out.read_text())
    assert {row["arm"] for row in result["rows"]} == {"accelerated", "autoregressive"}
    assert sum(row["requests"] for row in result["rows"]) == result["sent"] == result["statuses"]["200"]
    assert all(row["client_p50_ms"] > 0 for row in result["rows"])  # each answer's arm read from its header
    (pair,) = result["agreement"]
    assert pair["compared"] > 0 and pair["agreement"] == 1.0
    assert result["sample_ratio"]["mismatch"] is False
    assert "sentences agree" in capsys.readouterr().out
    if CHROMIUM is not None:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
