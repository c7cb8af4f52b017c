"""The table and the JSON that benchmarks and the model tools write."""

from __future__ import annotations

import json
import math

from service.engine.report import table, write_json


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


def test_json_is_written_after_the_date_and_the_machine(tmp_path) -> None:
    write_json(tmp_path / "out" / "r.json", {"rows": [{"p50_ms": 50.5}]})
    written = json.loads((tmp_path / "out" / "r.json").read_text())
    assert list(written)[:2] == ["date", "machine"]
    assert written["rows"][0]["p50_ms"] == 50.5 and written["machine"]["cores"] >= 1
