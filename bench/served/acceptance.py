"""Does the experiment's acceptance test find a planted difference, and only that? Repeated Locust runs of editors
who accept suggestions with a set probability per arm, each read back from the experiment's report.

    python -m bench.served.acceptance --spawn models/gec-default --runs 10 --duration 20 --users 40 \\
        --planted accelerated=0.6,autoregressive=0.5 --equal 0.5 [--json docs/benchmarks/acceptance.json]

Each run starts the experiment afresh (both backends, half the users each; its numbers start from nothing),
runs ``bench/served/locustfile.py``'s ``EditorUser`` headless with ``--accept-rate`` (editors say what they did
with each suggestion through ``POST /v1/feedback``), then reads ``GET /v1/experiments/{name}``: each arm's
feedback and acceptance rate, and the two-proportion test against the control. Half the runs plant a
difference (``--planted``), half give every arm the same rate (``--equal``). The summary says in how many runs
the test found the planted difference at p < 0.05 (its power at this sample size) and in how many it found a
difference where there is none (its false-positive rate, expected near 5%).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from bench.served.editor import accept_rates
from bench.served.spawn import RunningServer, start_server
from service.engine.report import table, write_json

ROOT = Path(__file__).resolve().parents[2]
ADMIN_KEY = "acceptance-run"
CONTROL, TREATMENT = "autoregressive", "accelerated"
EXPERIMENT = {
    "name": "acceptance",
    "description": "Planted acceptance rates per arm (bench.served.acceptance)",
    "control": CONTROL,
    "arms": [{"name": CONTROL, "weight": 50}, {"name": TREATMENT, "weight": 50}],
}


def one_run(server: RunningServer, rates: str, args: argparse.Namespace, seed: int, log: Path) -> dict[str, Any]:
    """Start the experiment afresh, run the editors, and read the acceptance back."""
    started = httpx.post(
        f"{server.url}/v1/experiments?replace=true",
        json=EXPERIMENT,
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
        timeout=30,
    )
    started.raise_for_status()
    command = [sys.executable, "-m", "locust", "-f", "bench/served/locustfile.py", "EditorUser", "--headless"]
    command += ["--only-summary", "-H", server.url, "-u", str(args.users), "-r", str(args.users)]
    command += ["-t", f"{args.duration:g}s", "--think-time", str(args.think_time), "--seed", str(seed)]
    command += ["--accept-rate", rates]
    with log.open("w") as out:
        code = subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
    if code != 0:
        raise RuntimeError(f"locust exited with {code}:\n{log.read_text()[-3000:]}")
    report = httpx.get(f"{server.url}/v1/experiments/{EXPERIMENT['name']}", timeout=30).json()["acceptance"]
    (test,) = report["comparisons"]
    arms = report["arms"]
    return {
        "seed": seed,
        **{f"{arm}_feedback": arms[arm]["accepted"] + arms[arm]["dismissed"] for arm in (CONTROL, TREATMENT)},
        **{f"{arm}_rate": arms[arm]["rate"] for arm in (CONTROL, TREATMENT)},
        "difference": test["difference"],
        "p_value": test["p_value"],
        "significant": bool(test["significant"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served.acceptance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--spawn", type=Path, required=True, metavar="MODEL", help="start a server for MODEL")
    parser.add_argument("--runs", type=int, default=10, help="runs of each kind, planted and equal")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load per run")
    parser.add_argument("--users", type=int, default=40, help="simulated editors")
    parser.add_argument("--think-time", type=float, default=0.2, help="mean seconds between an editor's sends")
    parser.add_argument("--planted", default=f"{TREATMENT}=0.6,{CONTROL}=0.5", help="rates of the planted runs")
    parser.add_argument("--equal", type=float, default=0.5, help="every arm's rate in the runs without a difference")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    planted = accept_rates(args.planted)
    equal = f"{TREATMENT}={args.equal},{CONTROL}={args.equal}"
    kinds = {"planted": args.planted, "equal": equal}
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(args.spawn, Path(logs), admin_key=ADMIN_KEY)
        try:
            for run in range(args.runs):
                for kind, rates in kinds.items():
                    result = one_run(server, rates, args, run, Path(logs) / f"{kind}-{run}.log")
                    results[kind].append(result)
                    print(f"run {run + 1}/{args.runs} {kind}: {result}", file=sys.stderr, flush=True)
        finally:
            server.stop()
    summary = [
        {
            "runs": kind,
            "rates": kinds[kind],
            "mean_feedback_per_arm": sum(r[f"{a}_feedback"] for r in rows for a in (CONTROL, TREATMENT))
            / 2
            / len(rows),
            "significant_at_0.05": sum(r["significant"] for r in rows),
            "of": len(rows),
            "share": sum(r["significant"] for r in rows) / len(rows),
        }
        for kind, rows in results.items()
    ]
    print(table(results["planted"] + results["equal"], list(results["planted"][0])))
    print(table(summary, list(summary[0])))
    print(
        f"planted difference {planted}: found in {summary[0]['significant_at_0.05']}/{args.runs} runs; "
        f"equal rates {args.equal}: a difference 'found' in {summary[1]['significant_at_0.05']}/{args.runs} runs"
    )
    if args.json:
        write_json(args.json, {"command": " ".join(sys.argv), "summary": summary, "runs": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
