"""Locust's CSVs as markdown tables and PNG plots: latency and throughput per arm against offered load.

    python -m bench.served.report bench/results/run [more prefixes...] --out bench/results/report \\
        [--fast accelerated --slow autoregressive]

For each ``PREFIX`` (Locust's ``--csv PREFIX``) it reads ``PREFIX_stats.csv`` (Locust's whole-run
percentiles per request name) and, when there is one, ``PREFIX_steps.csv`` (a step load's rows,
``bench/served/shapes.py``). Writes ``OUT.md``: the whole-run table; and with steps, the table per
step and name, each arm's saturation point (the most users whose step kept within the SLA), and
the ratio of the slow arm's percentiles to the fast arm's at each load both ran; and the plots
``OUT-latency.png`` (p50/p95/p99 per arm against offered load), ``OUT-throughput.png`` (answered
against offered requests per second) and ``OUT-ratio.png``. Arms come from the request names
(``correct accelerated``: the arm that served it).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from bench.served.steps import STEP_COLUMNS

PERCENTILES = ("p50_ms", "p95_ms", "p99_ms")
STATS_COLUMNS = [
    "Type",
    "Name",
    "Request Count",
    "Failure Count",
    "Requests/s",
    "50%",
    "95%",
    "99%",
    "Max Response Time",
]
# the step CSV's columns (bench.served.steps) that the step table shows
STEP_TABLE_COLUMNS = [column for column in STEP_COLUMNS if column not in ("step", "type", "max_ms")]


def _number(value: str) -> Any:
    if value in ("True", "False"):
        return value == "True"
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return value


def read_csv(path: Path) -> list[dict[str, Any]]:
    """The rows of a CSV file, numbers as numbers."""
    with path.open(newline="") as source:
        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(source)]


def arm_of(name: str) -> str | None:
    """The arm in a correction's request name (``correct accelerated`` -> ``accelerated``), else None."""
    route, _, arm = name.partition(" ")
    return arm if route.lower() == "correct" and arm and not arm.startswith("(") else None


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.2f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def markdown(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A markdown table of ``columns`` of ``rows``."""
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def curves(steps: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The step rows of each arm's corrections, by users (HTTP and gRPC names apart: the HTTP ones)."""
    by_arm: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in steps:
        arm = arm_of(row["name"])
        if arm is not None and row["type"] != "grpc":
            by_arm[arm].append(row)
    return {arm: sorted(rows, key=lambda r: r["users"]) for arm, rows in by_arm.items()}


def saturation(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The step with the most users that kept within the SLA (None when none did)."""
    within = [r for r in rows if r["within_sla"]]
    return max(within, key=lambda r: r["users"]) if within else None


def ratios(arms: dict[str, list[dict[str, Any]]], fast: str, slow: str) -> list[dict[str, Any]]:
    """``slow`` over ``fast`` at each number of users both ran: percentiles and throughput."""
    slow_at = {r["users"]: r for r in arms.get(slow, [])}
    rows = []
    for f in arms.get(fast, []):
        s = slow_at.get(f["users"])
        if s is None:
            continue
        row = {"users": f["users"], "offered_rps": f["offered_rps"]}
        for p in PERCENTILES:
            row[f"{fast}_{p}"], row[f"{slow}_{p}"] = f[p], s[p]
            row[f"ratio_{p[:3]}"] = s[p] / f[p] if f[p] else math.nan
        rows.append(row)
    return rows


def plot(arms: dict[str, list[dict[str, Any]]], out: Path, fast: str, slow: str) -> list[Path]:
    """The three PNGs (latency, throughput, ratio against offered load); their paths."""
    x = "offered_rps" if all(not math.isnan(r["offered_rps"]) for rows in arms.values() for r in rows) else "users"
    label = "offered load (req/s: users / mean think time)" if x == "offered_rps" else "users"
    paths = []
    figure, axes = plt.subplots(figsize=(8, 5))
    for (arm, rows), color in zip(
        sorted(arms.items()), plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False
    ):
        for p, style in zip(PERCENTILES, ("-", "--", ":"), strict=True):
            axes.plot(
                [r[x] for r in rows], [r[p] for r in rows], style, marker="o", color=color, label=f"{arm} {p[:3]}"
            )
    axes.set(xlabel=label, ylabel="latency (ms)", yscale="log", title="Latency per arm against offered load")
    axes.legend()
    axes.grid(True, which="both", alpha=0.3)
    paths.append(_save(figure, out.with_name(f"{out.name}-latency.png")))

    figure, axes = plt.subplots(figsize=(8, 5))
    for arm, rows in sorted(arms.items()):
        axes.plot([r[x] for r in rows], [r["rps"] for r in rows], marker="o", label=f"{arm} answered")
    top = max((r[x] for rows in arms.values() for r in rows), default=1)
    if x == "offered_rps":
        axes.plot([0, top], [0, top], color="grey", linestyle=":", label="offered")
    axes.set(xlabel=label, ylabel="requests per second", title="Throughput against offered load")
    axes.legend()
    axes.grid(True, alpha=0.3)
    paths.append(_save(figure, out.with_name(f"{out.name}-throughput.png")))

    rows = ratios(arms, fast, slow)
    figure, axes = plt.subplots(figsize=(8, 5))
    for p in PERCENTILES:
        axes.plot([r[x] for r in rows], [r[f"ratio_{p[:3]}"] for r in rows], marker="o", label=p[:3])
    axes.axhline(1.0, color="grey", linestyle=":")
    axes.set(xlabel=label, ylabel=f"{slow} / {fast}", title=f"How many times faster {fast} is, at equal load")
    axes.legend()
    axes.grid(True, alpha=0.3)
    paths.append(_save(figure, out.with_name(f"{out.name}-ratio.png")))
    return paths


def _save(figure: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def steps_markdown(arms: dict[str, list[dict[str, Any]]], fast: str, slow: str) -> str:
    """The step table, each arm's saturation point and the ratio table, as markdown."""
    parts = ["### Per step and arm", "", markdown([r for rows in arms.values() for r in rows], STEP_TABLE_COLUMNS), ""]
    for arm, rows in sorted(arms.items()):
        point = saturation(rows)
        parts.append(
            f"- {arm}: saturation at {point['users']} users ({point['rps']:.1f} req/s answered, "
            f"p99 {point['p99_ms']:.1f} ms)"
            if point
            else f"- {arm}: no step kept within the SLA"
        )
    table = ratios(arms, fast, slow)
    if table:
        parts += ["", f"### {slow} / {fast} at equal load", ""]
        parts.append(markdown(table, ["users", "offered_rps", *(k for k in table[0] if k.startswith("ratio_"))]))
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served.report", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("prefixes", nargs="+", help="Locust --csv prefixes")
    parser.add_argument("--out", type=Path, required=True, help="OUT.md and OUT-*.png")
    parser.add_argument("--fast", default="accelerated")
    parser.add_argument("--slow", default="autoregressive")
    args = parser.parse_args(argv)
    parts, steps = [], []
    for prefix in args.prefixes:
        parts += [f"## {prefix}", "", markdown(read_csv(Path(f"{prefix}_stats.csv")), STATS_COLUMNS), ""]
        if Path(f"{prefix}_steps.csv").exists():
            steps += read_csv(Path(f"{prefix}_steps.csv"))
    arms = curves(steps)
    if arms:
        parts.append(steps_markdown(arms, args.fast, args.slow))
        for path in plot(arms, args.out, args.fast, args.slow):
            print(f"wrote {path}", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".md").write_text("\n".join(parts), encoding="utf-8")
    print("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
