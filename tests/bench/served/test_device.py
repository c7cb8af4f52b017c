"""``gecserve bench device``: a short run in Chromium against a spawned server on the tiny model, read back from
its JSON."""

from __future__ import annotations

import json

import pytest

from bench.served import device
from tests.conftest import FIXTURE_MODEL, NEEDS_CHROMIUM

pytestmark = [
    pytest.mark.server,
    pytest.mark.slow,
    NEEDS_CHROMIUM,
]


def test_load_latency_and_memory_of_both_engines(tmp_path, capsys) -> None:
    lines = tmp_path / "lines.txt"
    lines.write_text("i saw a apple.\nWe visited a island.\nThe cat like car.\n", encoding="utf-8")
    out = tmp_path / "device.json"
    args = ["--spawn", str(FIXTURE_MODEL), "--input", str(lines), "--sentences", "3", "--rounds", "2"]
    assert device.main([*args, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    first, cached = result["to_ready"]["first load"], result["to_ready"]["from the cache"]
    assert first["bytes_transferred"] > 1_000_000 and cached["bytes_transferred"] < 10_000  # the model came from cache
    assert first["model_bytes"] == cached["model_bytes"] > first["bytes_transferred"]  # sent compressed
    assert {row["engine"]: row["sentences"] for row in result["latency"]} == {"device": 6, "server": 6}
    assert all(row["p50_ms"] > 0 for row in result["latency"])
    memory = result["memory_bytes"]
    assert memory["engine"] > 0 and memory["runtime_alone"] > 0  # the tiny model's share is within the noise
    assert memory["model"] == memory["engine"] - memory["runtime_alone"]
    assert "with the runtime alone" in capsys.readouterr().out
