"""The shared benchmark table and latency summary."""

from __future__ import annotations

import json
import math

from service.engine.report import latency_summary, table, write_json


def test_table_aligns_numbers_right_and_text_left() -> None:
    rows = [
        {"system": "source", "gleu": 38.2564, "n": 754},
        {"system": "ours", "gleu": 55.8, "n": 1200, "note": "best"},
        {"system": "none", "gleu": None, "n": 3},
    ]
    assert table(rows, ["system", "gleu", "n", "note"]).splitlines() == [
        "system   gleu     n  note",
        "------  -----  ----  ----",
        "source  38.26   754  -   ",
        "ours    55.80  1200  best",
        "none        -     3  -   ",
    ]


def test_table_large_floats_nan_and_no_rows() -> None:
    assert table([{"r": 12345.6}, {"r": math.nan}], ["r"]).splitlines() == ["    r", "-----", "12346", "    -"]
    assert table([], ["a", "bb"]) == "a  bb\n-  --"


def test_latency_summary_in_milliseconds(tmp_path) -> None:
    summary = latency_summary([0.001 * i for i in range(1, 101)])
    assert summary["p50_ms"] == 50.5 and math.isclose(summary["mean_ms"], 50.5)
    assert 98 < summary["p99_ms"] < 100
    assert math.isnan(latency_summary([])["p95_ms"])
    write_json(tmp_path / "out" / "r.json", {"rows": [summary]})
    written = json.loads((tmp_path / "out" / "r.json").read_text())
    assert written["rows"][0]["p50_ms"] == 50.5 and written["machine"]["cores"] >= 1
