"""``gecserve bench serve`` on a real server it starts: a row per backend and concurrency, without errors, with the
server's own stage timings; and each row has the server's CPU milliseconds per answered request, its decoding
threads' share, and its event loop's mean lag, read from the server process and its ``/metrics``; clients spread
over processes answer every request and bring back the server's stage timings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.served import serve
from tests.conftest import FIXTURE_MODEL, REDIS_URL

pytestmark = pytest.mark.server


def test_each_row_has_the_server_s_cpu_per_request_and_loop_lag_from_clients_over_processes(tmp_path: Path) -> None:
    sentences = tmp_path / "input.txt"
    sentences.write_text("She go to school every days.\nI has a car.\nThe cat sat on the mat.\n")
    out = tmp_path / "serve.json"
    args = ["--spawn", str(FIXTURE_MODEL), "--input", str(sentences), "--concurrency", "1,8", "--requests", "40"]
    args += ["--backend", "autoregressive", "--warmup", "2", "--client-processes", "3", "--json", str(out)]
    assert serve.main(args) == 0
    rows = json.loads(out.read_text())["rows"]
    # one client needs one process; eight go 3 + 3 + 2 over three, and the 40 requests 14 + 13 + 13
    assert [(row["concurrency"], row["client_processes"]) for row in rows] == [(1, 1), (8, 3)]
    for row in rows:
        assert row["errors"] == 0 and row["answered"] == 40
        assert row["server_stages_ms"]["inference"] > 0 and row["client_cpu_ms_per_req"] > 0
        # a request costs the server some CPU, and less than the wall time of the whole run per request
        assert 0 < row["cpu_ms_per_req"] < 1000 * row["requests"] / row["req_per_s"]
        # of which the decoding threads' is some, not all: the gateway's own work is the rest
        assert 0 < row["decoding_cpu_ms_per_req"] < row["cpu_ms_per_req"]
        assert row["gateway_cpu_ms_per_req"] == pytest.approx(row["cpu_ms_per_req"] - row["decoding_cpu_ms_per_req"])
        assert row["loop_lag_mean_ms"] is not None and row["loop_lag_mean_ms"] >= 0


def test_a_server_without_the_loop_lag_series_has_none() -> None:
    before = serve.ServerReadings(1.0, 10.0)
    assert serve.loop_lag_ms(before, serve.ServerReadings(1.0, 10.0)) is None
    assert serve.loop_lag_ms(before, serve.ServerReadings(1.5, 20.0)) == pytest.approx(50.0)


def test_bench_serve_spawns_a_real_server(tmp_path, sentences) -> None:
    out = tmp_path / "serve.json"
    args = ["--spawn", str(FIXTURE_MODEL), "--input", str(sentences), "--concurrency", "1,4", "--requests", "12"]
    assert serve.main([*args, "--warmup", "2", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["url"].startswith("http://127.0.0.1:")
    rows = result["rows"]
    assert {(r["backend"], r["concurrency"]) for r in rows} == {
        (b, c) for b in ("accelerated", "autoregressive") for c in (1, 4)
    }
    assert all(r["errors"] == 0 for r in rows)
    # The server's own timings came back with the answers, and the model decoded: nothing came from a cache.
    assert all(r["server_stages_ms"]["inference"] > 0 for r in rows)


def test_scale_out_runs_a_gateway_and_its_workers_and_counts_the_gateway_s_cpu(tmp_path, sentences) -> None:
    out = tmp_path / "serve.json"
    args = ["--spawn", str(FIXTURE_MODEL), "--input", str(sentences), "--concurrency", "4", "--requests", "12"]
    args += ["--backend", "accelerated", "--queue", REDIS_URL, "--workers", "2", "--warmup", "2"]
    assert serve.main([*args, "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["errors"] == 0 and row["server_stages_ms"]["inference"] > 0
    # the gateway decodes nothing: its CPU is its own, none of it the decoding threads'
    assert row["cpu_ms_per_req"] > 0 and row["decoding_cpu_ms_per_req"] is None


def test_queue_needs_spawn(sentences) -> None:
    with pytest.raises(SystemExit):
        serve.main(["--input", str(sentences), "--queue", REDIS_URL])
