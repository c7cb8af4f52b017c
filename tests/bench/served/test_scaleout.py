"""``gecserve bench scaleout`` end to end on the tiny model: every topology measured, the Redis keys it made gone."""

from __future__ import annotations

import json

import pytest
import redis

from bench.served import scaleout
from tests.conftest import FIXTURE_MODEL, REDIS_URL


@pytest.mark.slow
@pytest.mark.server
def test_bench_scaleout_runs_every_topology(tmp_path, sentences, capsys) -> None:
    out = tmp_path / "scaleout.json"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--requests", "8", "--rounds", "2"]
    assert scaleout.main([*args, "--warmup", "2", "--saturation", "4", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    rows = {(r["topology"], r["concurrency"]): r for r in result["rows"]}
    decoding = ("in-process", "redis, 1 worker", "redis, 2 workers")
    assert set(rows) == {(t, c) for t in decoding for c in (1, 4)} | {("cache hit: memory", 1), ("cache hit: redis", 1)}
    assert all(r["errors"] == 0 and r["requests"] == 16 and len(r["rounds"]) == 2 for r in rows.values())
    assert rows[("cache hit: redis", 1)]["server_stages_ms"]["inference"] == 0  # every sentence came from the cache
    assert rows[("redis, 1 worker", 1)]["server_stages_ms"]["inference"] > 0
    assert "Redis hop at concurrency 1" in capsys.readouterr().out
    assert not [key for key in redis.Redis.from_url(REDIS_URL).scan_iter(match="gecserve-bench:*")]
