"""Each arm against offered load, with Locust, on a server this starts: a saturation search per arm,
then every arm at the same loads (light, near saturation), with the CPU each side used.

    python -m bench.served.measure --spawn models/gec-default --out docs/benchmarks/locust \\
        [--arms accelerated,autoregressive] [--think-time 1.0] [--sla-p99-ms 300] \\
        [--step-users 4 --step-factor 1.5 --max-steps 12 --step-time 30] \\
        [--fractions 0.3,0.9 --compare-time 120] [--results bench/results/measure]

``--spawn`` starts ``gecserve serve`` with its sentence cache off (every sentence is decoded;
other ``GECSERVE_*`` variables pass through). Then, one Locust process at a time
(``bench/served/locustfile.py``'s ``EditorUser`` with ``--arm``, headless):

1. Saturation search: for each arm, the step load of ``bench/served/shapes.py`` (users
   ``--step-users`` growing by ``--step-factor`` every ``--step-time`` seconds) until a step's
   p99 passes ``--sla-p99-ms`` (two steps in a row); the arm's saturation point is its busiest
   step within the SLA.
2. Equal load: ``--fractions`` of the lowest saturation point (in users, so the same offered load
   for every arm), each arm for ``--compare-time`` seconds, arm after arm at each load.

Every run notes the load generator's CPU time (the Locust process, from its rusage), the server's
(``/proc``), and the server's mean time per stage and mean batch size per arm (from ``/metrics``
before and after): where the time goes. Locust's CSV and HTML reports of every run stay in
``--results``; ``OUT.json`` and ``OUT.md`` get the tables, ``OUT-{latency,throughput,ratio}.png``
the curves of step 1 (``bench/served/report.py``). Prints a line per run and the tables at the end.
"""

from __future__ import annotations

import argparse
import math
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from tqdm import tqdm

from bench.served.report import PERCENTILES, curves, markdown, plot, read_csv, saturation, steps_markdown
from bench.served.spawn import RunningServer, start_server
from service.engine.report import machine, table, write_json
from service.observability import REQUEST_STAGES

ROOT = Path(__file__).resolve().parents[2]
LOCUSTFILES = "bench/served/locustfile.py,bench/served/shapes.py"
COMPARE_COLUMNS = [
    "load",
    "users",
    "offered_rps",
    "arm",
    "rps",
    "failures",
    *PERCENTILES,
    "server_queue_ms",
    "server_inference_ms",
    "server_other_ms",
    "mean_batch",
    "server_cpu_pct",
    "locust_cpu_pct",
]


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _sums(server: RunningServer) -> dict[tuple[str, ...], float]:
    """The server's stage and batch-size histogram sums and counts, keyed by (sample, stage or queue, arm)."""
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    sums: dict[tuple[str, ...], float] = defaultdict(float)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.startswith("gecserve_stage_duration_seconds_"):
                sums[(sample.name, sample.labels["stage"], sample.labels["arm"])] += sample.value
            elif sample.name.startswith("gecserve_batch_size_"):
                sums[(sample.name, "batch", sample.labels["queue"])] += sample.value
    return sums


def _server_means(before: dict[tuple[str, ...], float], after: dict[tuple[str, ...], float], arm: str) -> dict:
    def mean(prefix: str, what: str) -> float:
        count = after.get((f"{prefix}_count", what, arm), 0) - before.get((f"{prefix}_count", what, arm), 0)
        total = after.get((f"{prefix}_sum", what, arm), 0) - before.get((f"{prefix}_sum", what, arm), 0)
        return total / count if count else math.nan

    stages = {s: 1e3 * mean("gecserve_stage_duration_seconds", s) for s in REQUEST_STAGES}
    return {"stages_ms": stages, "mean_batch": mean("gecserve_batch_size", "batch")}


def run_locust(args: argparse.Namespace, server: RunningServer, prefix: Path, arm: str, shape: list[str]) -> dict:
    """One headless Locust run of ``EditorUser`` forced to ``arm``; its step rows and the CPU used."""
    command = [sys.executable, "-m", "locust", "-f", LOCUSTFILES, "EditorUser", "--headless", "--only-summary"]
    command += ["-H", server.url, "--arm", arm, "--think-time", str(args.think_time), "--seed", str(args.seed)]
    command += ["--sla-p99-ms", str(args.sla_p99_ms), "--csv", str(prefix), "--html", f"{prefix}.html", *shape]
    if args.corpus:
        command += ["--corpus", args.corpus]
    metrics, server_cpu, locust_cpu = _sums(server), server.cpu_seconds(), _children_cpu_s()
    started = time.perf_counter()
    with Path(f"{prefix}.log").open("w") as log:
        code = subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
    wall = time.perf_counter() - started
    steps = Path(f"{prefix}_steps.csv")
    if code not in (0, 1) or not steps.exists():  # 1: some requests failed, which a saturated step may do
        raise RuntimeError(f"locust exited with {code}:\n{Path(f'{prefix}.log').read_text()[-3000:]}")
    return {
        "arm": arm,
        "prefix": str(prefix),
        "wall_s": wall,
        "steps": read_csv(steps),
        "locust_cpu_pct": 100 * (_children_cpu_s() - locust_cpu) / wall,
        "server_cpu_pct": 100 * (server.cpu_seconds() - server_cpu) / wall,
        "server": _server_means(metrics, _sums(server), arm),
    }


def compare_rows(runs: list[dict[str, Any]], loads: dict[int, str]) -> tuple[list[dict], list[dict]]:
    """The equal-load table (one row per load and arm) and the ratios of the other arms to the first."""
    rows = []
    for run in runs:
        (step,) = [s for s in run["steps"] if s["name"] == f"correct {run['arm']}"]
        stages = run["server"]["stages_ms"]
        rows.append(
            {
                "load": loads[step["users"]],
                "users": step["users"],
                "offered_rps": step["offered_rps"],
                "arm": run["arm"],
                "rps": step["rps"],
                "failures": sum(s["failures"] for s in run["steps"]),  # refused ones are named "(no arm)"
                **{p: step[p] for p in PERCENTILES},
                "server_queue_ms": stages["queue"],
                "server_inference_ms": stages["inference"],
                "server_other_ms": sum(stages.get(s, 0.0) for s in REQUEST_STAGES if s not in ("queue", "inference")),
                "mean_batch": run["server"]["mean_batch"],
                "server_cpu_pct": run["server_cpu_pct"],
                "locust_cpu_pct": run["locust_cpu_pct"],
            }
        )
    ratios = []
    for users in sorted({r["users"] for r in rows}):
        fast, *others = [r for r in rows if r["users"] == users]
        for other in others:
            ratio = {"load": fast["load"], "users": users, "arms": f"{other['arm']} / {fast['arm']}"}
            ratio.update({f"ratio_{p[:3]}": other[p] / fast[p] for p in PERCENTILES})
            ratios.append(ratio)
    return rows, ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served.measure", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spawn", type=Path, required=True, metavar="MODEL", help="start a server for MODEL")
    parser.add_argument("--out", type=Path, required=True, help="OUT.json, OUT.md, OUT-*.png")
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results" / "measure")
    parser.add_argument("--arms", type=lambda s: s.split(","), default=["accelerated", "autoregressive"])
    parser.add_argument("--corpus", default="", help="the locustfile's --corpus (default: FCE dev and JFLEG dev)")
    parser.add_argument("--think-time", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sla-p99-ms", type=float, default=300.0)
    parser.add_argument("--step-users", type=int, default=4)
    parser.add_argument("--step-factor", type=float, default=1.5)
    parser.add_argument("--max-steps", type=int, default=12)
    parser.add_argument("--step-time", type=float, default=30.0)
    parser.add_argument("--step-settle", type=float, default=5.0)
    parser.add_argument("--fractions", type=lambda s: [float(x) for x in s.split(",")], default=[0.3, 0.9])
    parser.add_argument("--compare-time", type=float, default=120.0)
    args = parser.parse_args(argv)
    args.results.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(args.spawn.resolve(), Path(logs), cache_size=0)
        try:
            return _measure(args, server)
        finally:
            server.stop()


def _measure(args: argparse.Namespace, server: RunningServer) -> int:
    settle = ["--step-settle", str(args.step_settle)]
    ladder = ["--step-users", str(args.step_users), "--step-factor", str(args.step_factor)]
    ladder += ["--max-steps", str(args.max_steps), "--step-time", str(args.step_time), *settle]
    searches, compares = [], []
    with tqdm(total=len(args.arms) * (1 + len(args.fractions)), desc="locust runs", unit="run", file=sys.stderr) as bar:
        for arm in args.arms:
            searches.append(run_locust(args, server, args.results / f"search-{arm}", arm, ladder))
            bar.update(1)
        arms = curves(s for run in searches for s in run["steps"])
        points = {arm: saturation(arms.get(arm, [])) for arm in args.arms}
        base = min((p["users"] for p in points.values() if p), default=args.step_users)
        loads = {max(1, round(f * base)): f"{f:.0%} of {base} users" for f in args.fractions}
        for users in sorted(loads):
            for arm in args.arms:
                shape = ["--steps", str(users), "--step-time", str(args.compare_time), *settle]
                compares.append(run_locust(args, server, args.results / f"equal-{users}-{arm}", arm, shape))
                bar.update(1)
    rows, ratios = compare_rows(compares, loads)
    figures = plot(arms, args.out, args.arms[0], args.arms[-1]) if len(arms) > 1 else []
    print(table(rows, COMPARE_COLUMNS))
    print(table(ratios, list(ratios[0])) if ratios else "")
    for run in searches:
        cpu = f"load generator {run['locust_cpu_pct']:.0f}% of a core, server {run['server_cpu_pct']:.0f}%"
        print(f"search {run['arm']}: {cpu}")
    details = {
        "command": " ".join(["python -m bench.served.measure", *sys.argv[1:]]),
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "saturation": points,
        "equal_load": rows,
        "ratios": ratios,
        "searches": searches,
        "compares": compares,
    }
    write_json(args.out.with_suffix(".json"), details)
    about = machine()
    text = [
        f"# Locust: {', '.join(args.arms)} against offered load",
        "",
        f"{about['cpu']}, {about['cores']} cores; `{details['command']}`; server sentence cache off; "
        f"editors with a mean think time of {args.think_time:g} s (offered req/s = users / think time).",
        "",
        "## Equal load",
        "",
        markdown(rows, COMPARE_COLUMNS),
        "",
        markdown(ratios, list(ratios[0])) if ratios else "",
        "",
        "## Saturation search",
        "",
        steps_markdown(arms, args.arms[0], args.arms[-1]),
        *(f"![{path.stem}]({path.name})" for path in figures),
        "",
    ]
    args.out.with_suffix(".md").write_text("\n".join(text), encoding="utf-8")
    print(
        f"wrote {args.out.with_suffix('.json')}, {args.out.with_suffix('.md')} and {len(figures)} plots",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
