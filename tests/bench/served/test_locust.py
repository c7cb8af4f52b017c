"""A few-second headless Locust run of ``bench/served/locustfile.py`` against a real server running an A/B
experiment (so the locustfile never rots), and the step load read back by ``bench.served.report``."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest
import yaml

from bench.served import acceptance, report
from tests.conftest import FIXTURE_MODEL
from tests.system.server import ROOT, RunningServer, start_server
from tests.system.test_experiments import EXPERIMENT

pytestmark = [pytest.mark.slow, pytest.mark.server]

CORPUS = ["i saw a apple.", "We visited a island last week.", "He go home every days.", "She like 😀 music."]
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def ab_server(tmp_path_factory) -> RunningServer:
    folder = tmp_path_factory.mktemp("locust")
    path = folder / "ab.yaml"
    path.write_text(yaml.safe_dump({**EXPERIMENT, "shadow": None}))
    running = start_server(folder, experiment=path, cache_size=0)
    yield running
    running.stop()


def locust(server: RunningServer, tmp_path, *args: str) -> subprocess.CompletedProcess:
    corpus = tmp_path / "corpus.detok.src"
    corpus.write_text("\n".join(CORPUS) + "\n")
    command = [sys.executable, "-m", "locust", "--headless", "--only-summary", "-H", server.url]
    command += ["--grpc-target", server.grpc_target, "--corpus", str(corpus), "--think-time", "0.2", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_every_user_kind_runs_without_a_failure_and_requests_are_named_by_the_serving_arm(ab_server, tmp_path):
    prefix = tmp_path / "ab"
    run_csv = ["--csv", str(prefix), "--html", f"{prefix}.html"]
    run = locust(ab_server, tmp_path, "-f", "bench/served/locustfile.py", "-u", "20", "-r", "20", "-t", "4s", *run_csv)
    assert run.returncode == 0, run.stdout + run.stderr  # Locust exits 1 when any request failed
    rows = {(r["Type"], r["Name"]): r for r in report.read_csv(prefix.with_name("ab_stats.csv"))}
    assert {("POST", "correct accelerated"), ("POST", "correct autoregressive"), ("POST", "generate")} <= set(rows)
    assert any(kind == "grpc" and report.arm_of(name) for kind, name in rows)
    named = {report.arm_of(name) for _, name in rows} - {None}
    assert named == {"accelerated", "autoregressive"}  # no request refused, none named otherwise
    assert all(row["Failure Count"] == 0 and row["Request Count"] > 0 for row in rows.values())
    assert "correct autoregressive" in prefix.with_name("ab.html").read_text()


def test_a_forced_arm_step_load_is_reported_per_step(ab_server, tmp_path):
    prefix = tmp_path / "steps"
    args = ["-f", "bench/served/locustfile.py,bench/served/shapes.py", "EditorUser", "--arm", "autoregressive"]
    args += ["--steps", "2,5", "--step-time", "4", "--step-settle", "1", "--csv", str(prefix)]
    run = locust(ab_server, tmp_path, *args)
    assert run.returncode == 0, run.stdout + run.stderr
    steps = report.read_csv(prefix.with_name("steps_steps.csv"))
    expected = [(2, "correct autoregressive"), (5, "correct autoregressive")]
    assert [(s["users"], s["name"]) for s in steps] == expected, run.stderr[-3000:]
    assert all(s["requests"] > 0 and s["failures"] == 0 for s in steps)
    assert steps[1]["offered_rps"] == pytest.approx(5 / 0.2)
    out = tmp_path / "report"
    assert report.main([str(prefix), "--out", str(out)]) == 0
    text = out.with_suffix(".md").read_text()
    assert "| 5 | 25.00 | correct autoregressive |" in text and "autoregressive: saturation at" in text
    for name in ("latency", "throughput", "ratio"):
        assert (tmp_path / f"report-{name}.png").read_bytes()[:8] == PNG


def test_the_step_load_stops_after_two_steps_in_a_row_past_the_sla(ab_server, tmp_path):
    """An SLA no answer can meet: the first step past it may be an outlier, the second ends the run."""
    prefix = tmp_path / "strict"
    args = ["-f", "bench/served/locustfile.py,bench/served/shapes.py", "EditorUser", "--arm", "accelerated"]
    args += ["--steps", "2,3,4,5", "--step-time", "2", "--step-settle", "0.5", "--sla-p99-ms", "0.001"]
    run = locust(ab_server, tmp_path, *args, "--csv", str(prefix))
    assert run.returncode == 0, run.stdout + run.stderr
    steps = report.read_csv(prefix.with_name("strict_steps.csv"))
    assert [(s["users"], s["within_sla"]) for s in steps] == [(2, False), (3, False)], run.stderr[-3000:]


def test_editors_accept_suggestions_at_each_arm_s_rate_and_the_report_counts_them(ab_server, tmp_path):
    """Editors accept every suggestion of one arm and dismiss every one of the other (HTTP and gRPC): the run has
    no failure, and the experiment's acceptance is 100% and 0% with feedback on both arms."""
    prefix = tmp_path / "feedback"
    args = ["-f", "bench/served/locustfile.py", "EditorUser", "GrpcEditorUser", "-u", "10", "-r", "10", "-t", "4s"]
    run = locust(ab_server, tmp_path, *args, "--accept-rate", "accelerated=1,autoregressive=0", "--csv", str(prefix))
    assert run.returncode == 0, run.stdout + run.stderr
    names = {row["Name"] for row in report.read_csv(prefix.with_name("feedback_stats.csv"))}
    assert {"feedback accepted", "feedback dismissed"} <= names
    acceptance = httpx.get(f"{ab_server.url}/v1/experiments/ab").json()["acceptance"]["arms"]
    assert acceptance["accelerated"]["rate"] == 1.0 and acceptance["accelerated"]["accepted"] > 0
    assert acceptance["autoregressive"]["rate"] == 0.0 and acceptance["autoregressive"]["dismissed"] > 0


def test_the_acceptance_runs_report_what_they_find(tmp_path, capsys):
    out = tmp_path / "acceptance.json"
    args = ["--spawn", str(FIXTURE_MODEL), "--runs", "1", "--duration", "3", "--users", "8", "--json", str(out)]
    assert acceptance.main([*args, "--planted", "accelerated=0.9,autoregressive=0.1"]) == 0
    result = json.loads(out.read_text())
    planted, equal = result["summary"]
    assert (planted["runs"], equal["runs"]) == ("planted", "equal") and planted["of"] == equal["of"] == 1
    (run,) = result["runs"]["planted"]
    assert run["accelerated_rate"] > run["autoregressive_rate"] and run["accelerated_feedback"] > 0
    assert "planted difference" in capsys.readouterr().out
