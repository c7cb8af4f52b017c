"""``gecserve bench stages``: a short run against spawned servers (one from this tree as the baseline), read back
from its JSON."""

from __future__ import annotations

import json

import pytest

from bench.served import stages
from tests.conftest import FIXTURE_MODEL, ROOT, copy_with_language_model

pytestmark = pytest.mark.server

CORPUS = "I saw an apple yesterday. We visited an island last week. The cat likes the old car."


def test_each_stage_of_each_input_against_a_baseline(tmp_path, capsys) -> None:
    model = copy_with_language_model(FIXTURE_MODEL, tmp_path / "tiny-gec", CORPUS)  # so that the review runs
    inputs = []
    for name, lines in (("one.txt", ["i saw a apple.", "We visited a island."]), ("two.txt", ["The cat like car."])):
        inputs += ["--input", str(tmp_path / name)]
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "stages.json"
    args = ["--spawn", str(model), "--baseline", str(ROOT), *inputs, "--requests", "4", "--warmup", "1"]
    assert stages.main([*args, "--rounds", "2", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result["urls"]) == {"this", "baseline"}
    rows = {(row["input"], row["stage"]): row for row in result["rows"]}
    assert set(rows) == {(name, stage) for name in ("one.txt", "two.txt") for stage in stages.ROWS}
    for name in ("one.txt", "two.txt"):
        latency, inference = rows[(name, "latency")], rows[(name, "inference")]
        assert 0 < inference["p50_ms"] < latency["p50_ms"]
        assert rows[(name, "review")]["mean_ms"] > 0  # the model ships a language model
        assert rows[(name, "outside the engine")]["mean_ms"] == pytest.approx(latency["mean_ms"] - inference["mean_ms"])
        parts = [rows[(name, stage)]["mean_ms"] for stage in stages.ROWS[: stages.ROWS.index("latency")]]
        assert sum(parts) == pytest.approx(latency["mean_ms"])  # the parts add up to the client's latency
        assert rows[(name, "HTTP + JSON")]["p50_ms"] is None  # a mean only
        assert latency["baseline_p50_ms"] > 0 and latency["p50_ratio"] > 0
    printed = capsys.readouterr().out
    assert "one.txt: 8 requests one at a time" in printed and "two.txt" in printed
