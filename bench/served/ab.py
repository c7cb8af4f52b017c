"""An A/B run at a fixed offered load: editor traffic against a server running an experiment, read back
through the experiment's own report.

    python -m bench.served.ab --spawn models/gec-default \\
        --experiment deploy/experiments/accelerated-vs-autoregressive.yaml \\
        --input ../shared/data/dev/fce.dev.detok.src --rate 10 --duration 120 [--users 300] [--json OUT]

Requests arrive as a Poisson stream at ``--rate`` per second (an open loop, ``bench.served.openloop``:
the offered load does not fall when the server slows down), each from one of ``--users`` simulated users (a stable
``client.user_id``, so the experiment's sticky assignment holds) with the next line of the input.
The arm of each answer is the one the response names. At the end the script prints, per arm, the
latency percentiles seen by the client and those the server reports with their 95% intervals,
the speedups with their intervals and the median test, the shadow agreement and the sample-ratio
check, and writes them as JSON. ``--spawn`` starts the server (sentence cache off) and stops it;
``--screenshot`` saves the dashboard as it stands at the end.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.latency import input_lines, latency_summary
from bench.served.browser import chromium
from bench.served.openloop import latencies_by_arm, offered_load, statuses
from bench.served.spawn import start_server
from service.engine.report import table, write_json


def _interval(entry: dict[str, Any]) -> str:
    if entry.get("value") is None:
        return "-"
    ci = entry.get("ci")
    return f"{entry['value']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{entry['value']:.2f}"


def summarise(client: dict[str, Any], report: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = []
    for arm in report["arms"]:
        seen = latency_summary(client["latencies"].get(arm["name"], []))
        rows.append(
            {
                "arm": arm["name"],
                "requests": arm["requests"],
                "errors": arm["errors"],
                "client_p50_ms": seen["p50_ms"],
                "client_p95_ms": seen["p95_ms"],
                "client_p99_ms": seen["p99_ms"],
                **{f"server_{p}_ms": _interval(arm["latency_ms"][p]) for p in ("p50", "p95", "p99")},
            }
        )
    shadow = report.get("shadow") or {}
    verdict = {
        "comparisons": [
            {
                "arm": c["arm"],
                "control": c["control"],
                **{f"speedup_{p}": _interval(c["speedup"][p]) for p in ("p50", "p95", "p99")},
                "median_test_p": c["median_test"]["p_value"],
            }
            for c in report["comparisons"]
        ],
        "agreement": [
            {k: pair[k] for k in ("served", "shadow", "compared", "agreed", "agreement")}
            for pair in shadow.get("pairs", [])
        ],
        "sample_ratio": {k: report["sample_ratio"][k] for k in ("observed", "expected_share", "p_value", "mismatch")},
    }
    return rows, verdict


def screenshot(url: str, path: Path) -> None:
    """The dashboard as a reader sees it, once the page has drawn the report twice."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/dashboard")
        page.wait_for_selector("body[data-loaded='2']", timeout=30_000)
        page.screenshot(path=str(path), full_page=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served.ab", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="a running server (with --experiment)")
    parser.add_argument("--spawn", type=Path, default=None, metavar="MODEL", help="start a server for MODEL")
    parser.add_argument("--experiment", type=Path, required=True, help="the experiment file the server runs")
    parser.add_argument("--input", type=Path, required=True, help="one paragraph per line")
    parser.add_argument("--rate", type=float, default=10.0, help="offered load, requests per second")
    parser.add_argument("--duration", type=float, default=120.0, help="seconds of load")
    parser.add_argument("--users", type=int, default=300, help="simulated users (sticky user ids)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds for shadow runs to finish before reading")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--screenshot", type=Path, default=None, help="a PNG of the dashboard at the end (chromium)")
    args = parser.parse_args(argv)
    name = yaml.safe_load(args.experiment.read_text())["name"]
    lines = input_lines(args.input)
    if args.spawn is None:
        return _run(args, name, lines, args.url)
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(args.spawn, Path(logs), cache_size=0, experiment=args.experiment.resolve())
        try:
            return _run(args, name, lines, server.url)
        finally:
            server.stop()


def _run(args: argparse.Namespace, name: str, lines: list[str], url: str) -> int:
    print(f"A/B at {args.rate:g} req/s for {args.duration:g} s", file=sys.stderr)
    load = offered_load(url, lines, args.rate, args.duration, user_ids=args.users, seed=args.seed)
    client = {"latencies": latencies_by_arm(load), "statuses": statuses(load), "elapsed_s": load["elapsed_s"]}
    generator_cpu = load["cpu_s"]
    time.sleep(args.settle)
    report = httpx.get(f"{url}/v1/experiments/{name}", timeout=60).json()
    if args.screenshot:
        screenshot(url, args.screenshot)
    rows, verdict = summarise(client, report)
    print(table(rows, list(rows[0])))
    print(table(verdict["comparisons"], list(verdict["comparisons"][0])) if verdict["comparisons"] else "")
    for pair in verdict["agreement"]:
        print(f"shadow {pair['served']} vs {pair['shadow']}: {pair['agreed']}/{pair['compared']} sentences agree")
    srm = verdict["sample_ratio"]
    print(f"sample ratio: observed {srm['observed']}, p = {srm['p_value']}, mismatch: {srm['mismatch']}")
    print(f"offered {args.rate:g} req/s for {client['elapsed_s']:.0f} s: {client['statuses']};")
    print(f"load generator CPU: {generator_cpu:.1f} s ({100 * generator_cpu / client['elapsed_s']:.0f}% of one core)")
    if args.json:
        write_json(
            args.json,
            {
                "command": " ".join(sys.argv),
                "experiment": name,
                "offered_rate": args.rate,
                "duration_s": client["elapsed_s"],
                "sent": len(load["records"]),
                "statuses": client["statuses"],
                "load_generator_cpu_s": generator_cpu,
                "rows": rows,
                **verdict,
                "report": report,
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
