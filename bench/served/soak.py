"""``gecserve bench soak``: the server's resident set over a long closed-loop run, and a plot of it.

    gecserve bench soak --spawn MODEL --input FILE [--clients 16] [--minutes 30] [--every 10] [--settle 30] \\
        [--backend autoregressive] --out docs/benchmarks/soak

Starts ``gecserve serve`` for ``MODEL`` (its sentence cache off; other ``GECSERVE_*`` variables pass through),
runs ``--clients`` closed-loop clients (``bench.served.serve.closed_loop``, in rounds of ``ROUND`` requests, the
input's lines in order and cycling) for ``--minutes``, and reads the server's resident set (``VmRSS``) every
``--every`` seconds, and for ``--settle`` seconds after the load stops. Writes ``OUT.json`` (each sample: seconds
since the load began, resident MB, requests answered; and the summary) and ``OUT.png`` (resident MB against
minutes). The summary: the resident set after the first minute and at the end of the load, its slope over the
load's second half (MB a minute: a flat resident set is one near 0), after settling, and requests answered.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from tqdm import tqdm

from bench.latency import input_lines
from bench.served.serve import closed_loop
from bench.served.spawn import RunningServer, start_server
from service.engine.report import write_json

ROUND = 400  # requests of one closed-loop round; the resident set is read between rounds too


def sample(server: RunningServer, begun: float, answered: list[int], stop: threading.Event, every: float) -> list:
    """Every ``every`` seconds until ``stop``: (seconds since ``begun``, resident MB, requests answered)."""
    samples: list[tuple[float, float, int]] = []
    while True:
        samples.append((time.monotonic() - begun, server.memory_mb()[0], sum(answered)))
        if stop.wait(every):
            return samples


def slope_mb_per_min(samples: list[tuple[float, float, int]]) -> float:
    """The least-squares slope of resident MB against minutes over ``samples``."""
    minutes = [seconds / 60 for seconds, _, _ in samples]
    mb = [rss for _, rss, _ in samples]
    mean_t, mean_mb = sum(minutes) / len(minutes), sum(mb) / len(mb)
    spread = sum((t - mean_t) ** 2 for t in minutes)
    return sum((t - mean_t) * (m - mean_mb) for t, m in zip(minutes, mb, strict=True)) / spread if spread else 0.0


def soak(args: argparse.Namespace, server: RunningServer, lines: list[str]) -> dict[str, Any]:
    """The load for ``args.minutes`` with the resident set sampled; the samples and their summary."""
    answered: list[int] = []
    stop = threading.Event()
    begun = time.monotonic()
    samples: list[tuple[float, float, int]] = []
    sampler = threading.Thread(target=lambda: samples.extend(sample(server, begun, answered, stop, args.every)))
    sampler.start()
    deadline = begun + 60 * args.minutes
    with tqdm(desc="bench soak", unit="req", file=sys.stderr) as progress:
        while time.monotonic() < deadline:
            window = lines[(len(answered) * ROUND) % len(lines) :] + lines
            row = asyncio.run(closed_loop(server.url, window, args.backend, args.clients, ROUND, progress))
            answered.append(row["requests"] - row["errors"])
    loaded = time.monotonic() - begun
    time.sleep(args.settle)
    stop.set()
    sampler.join()
    during = [s for s in samples if s[0] <= loaded]
    second_half = [s for s in during if s[0] >= loaded / 2]
    first_minute = min(during, key=lambda s: abs(s[0] - 60))
    return {
        "samples": [{"seconds": t, "rss_mb": rss, "answered": n} for t, rss, n in samples],
        "load_seconds": loaded,
        "requests": sum(answered),
        "rss_mb_after_1_min": first_minute[1],
        "rss_mb_at_end_of_load": during[-1][1],
        "rss_mb_per_min_second_half": slope_mb_per_min(second_half),
        "rss_mb_settled": samples[-1][1],
    }


def plot(result: dict[str, Any], path: Path, title: str) -> None:
    minutes = [s["seconds"] / 60 for s in result["samples"]]
    figure, axes = plt.subplots(figsize=(8, 4))
    axes.plot(minutes, [s["rss_mb"] for s in result["samples"]], marker=".")
    axes.axvline(result["load_seconds"] / 60, color="grey", linestyle="--", label="load stops")
    axes.set(xlabel="minutes", ylabel="resident set (MB)", title=title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench soak", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spawn", type=Path, required=True, metavar="MODEL", help="start a server for MODEL")
    parser.add_argument("--input", type=Path, required=True, help="one text per line")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between reads of the resident set")
    parser.add_argument("--settle", type=float, default=30.0, help="seconds of reads after the load stops")
    parser.add_argument("--backend", default="autoregressive")
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.png")
    args = parser.parse_args(argv)
    lines = input_lines(args.input)
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(args.spawn, Path(logs), cache_size=0)
        try:
            result = soak(args, server, lines)
        finally:
            server.stop()
    summary = {key: value for key, value in result.items() if key != "samples"}
    print(" ".join(f"{key}={value:.1f}" for key, value in summary.items()))
    write_json(args.out.with_suffix(".json"), {"model": str(args.spawn), "input": str(args.input), **result})
    title = f"{args.clients} clients, {args.backend}, {args.spawn.name}, {args.input.name}"
    plot(result, args.out.with_suffix(".png"), title)
    return 0
