"""A fixed overload drill that reads the server's memory: RSS when ready, after overload, after large
requests, and for a minute after the load ends.

    python -m bench.served.overload --spawn models/gec-default --input ../shared/data/dev/fce.dev.detok.src \\
        [--json docs/benchmarks/overload-memory.json]

``--spawn`` starts ``gecserve serve`` with its default settings but two, so that every phase does
the same work every run: no refusal by estimated wait (``GECSERVE_ADMIT_WITHIN=0``; the queue
bound still refuses) and a 60 s deadline, which the large probes meet. Other ``GECSERVE_*``
variables, and ``MALLOC_*`` ones, pass through to it. The drill, the same every run:

1. ``ready``: RSS once ``/readyz`` answers.
2. ``overload 1..3``: 600 simultaneous ``/v1/correct`` requests, each a paragraph of 5 consecutive
   input lines (each round goes on where the last one stopped, cycling through the input), far
   more than the queue holds: most are refused with 503, the rest decoded in the largest batches
   the queue forms.
3. ``correct 20k``: one ``/v1/correct`` of about 20,000 characters with ``options.alternatives`` 5
   (beam search over every sentence).
4. ``generate 5k``: one ``/v1/generate`` of about 5,000 characters, ``num_beams`` 16,
   ``num_return_sequences`` 8.
5. ``idle N s``: RSS every 5 seconds for 60 seconds with no load.

RSS is the server process's ``VmRSS`` from ``/proc/PID/status``, read as soon as a phase's last
answer is in; peak is its ``VmHWM``. Prints a table of the phases (statuses, RSS, peak) and
writes it as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

from bench.latency import input_lines
from bench.served.spawn import RunningServer, start_server
from service.engine.report import table, write_json

ROUNDS = 3
REQUESTS_PER_ROUND = 600
LINES_PER_PARAGRAPH = 5
CORRECT_CHARS = 20_000
GENERATE_CHARS = 5_000
IDLE_S = 60
SAMPLE_EVERY_S = 5
# Every phase is decoded in full, every run: no refusal by estimated wait, a deadline the large probes meet.
SERVER = {"admit_within": 0, "request_timeout_s": 60}
COLUMNS = ["phase", "seconds", "statuses", "rss_mb", "peak_mb"]


def text_of(lines: list[str], start: int, chars: int) -> str:
    """Consecutive lines from ``start`` (cycling), joined with spaces, at most ``chars`` characters."""
    parts: list[str] = []
    size, index = 0, start
    while size + len(lines[index % len(lines)]) + 1 <= chars:
        parts.append(lines[index % len(lines)])
        size += len(parts[-1]) + 1
        index += 1
    return " ".join(parts)


async def burst(url: str, path: str, payloads: list[dict[str, Any]], desc: str) -> dict[str, int]:
    """Send every payload at once; how many answers had each status (or transport error)."""
    statuses: Counter[str] = Counter()
    limits = httpx.Limits(max_connections=len(payloads), max_keepalive_connections=0)

    async def one(client: httpx.AsyncClient, payload: dict[str, Any], bar: tqdm) -> None:
        try:
            statuses[str((await client.post(f"{url}{path}", json=payload)).status_code)] += 1
        except httpx.HTTPError as error:
            statuses[type(error).__name__] += 1
        bar.update(1)

    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        with tqdm(total=len(payloads), desc=desc, unit="req", file=sys.stderr, leave=False) as bar:
            await asyncio.gather(*(one(client, payload, bar) for payload in payloads))
    return dict(sorted(statuses.items()))


def paragraph(lines: list[str], first: int) -> str:
    """``LINES_PER_PARAGRAPH`` consecutive lines from ``first`` (cycling), joined with spaces."""
    return " ".join(lines[(first + k) % len(lines)] for k in range(LINES_PER_PARAGRAPH))


def phases(lines: list[str]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """The drill's load phases: ``(name, path, payloads)``."""
    drill = []
    for round_ in range(ROUNDS):
        first = round_ * REQUESTS_PER_ROUND * LINES_PER_PARAGRAPH
        payloads = [{"text": paragraph(lines, first + i * LINES_PER_PARAGRAPH)} for i in range(REQUESTS_PER_ROUND)]
        drill.append((f"overload {round_ + 1}", "/v1/correct", payloads))
    correct = {"text": text_of(lines, 0, CORRECT_CHARS), "options": {"alternatives": 5}}
    generate = {"text": text_of(lines, 0, GENERATE_CHARS), "num_beams": 16, "num_return_sequences": 8}
    drill.append(("correct 20k, alternatives 5", "/v1/correct", [correct]))
    drill.append(("generate 5k, 16 beams, 8 sequences", "/v1/generate", [generate]))
    return drill


def drill(server: RunningServer, lines: list[str]) -> list[dict[str, Any]]:
    """Run the drill against ``server``; one row per phase and per idle sample."""
    rows: list[dict[str, Any]] = []
    started = time.monotonic()

    def record(phase: str, statuses: dict[str, int] | None = None) -> None:
        rss, peak = server.memory_mb()
        rows.append(
            {
                "phase": phase,
                "seconds": round(time.monotonic() - started, 1),
                "statuses": " ".join(f"{k}:{v}" for k, v in statuses.items()) if statuses else None,
                "rss_mb": rss,
                "peak_mb": peak,
            }
        )

    record("ready")
    for name, path, payloads in phases(lines):
        record(name, asyncio.run(burst(server.url, path, payloads, name)))
    ended = time.monotonic()
    for elapsed in tqdm(range(SAMPLE_EVERY_S, IDLE_S + 1, SAMPLE_EVERY_S), desc="idle", unit="sample", file=sys.stderr):
        time.sleep(max(0.0, ended + elapsed - time.monotonic()))
        record(f"idle {elapsed} s")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served.overload",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--spawn", type=Path, required=True, metavar="MODEL", help="start a server for MODEL")
    parser.add_argument("--input", type=Path, required=True, help="one sentence or paragraph per line")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    lines = input_lines(args.input)
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(args.spawn, Path(logs), **SERVER)
        try:
            rows = drill(server, lines)
        finally:
            server.stop()
    print(table(rows, COLUMNS))
    if args.json:
        environment = {k: v for k, v in os.environ.items() if k.startswith(("GECSERVE_", "MALLOC_"))}
        setup = {"model": str(args.spawn), "input": str(args.input), "settings": SERVER, "environment": environment}
        write_json(args.json, {**setup, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
