"""Models at run time, measured: what each loaded model takes (memory, time to load and warm up), and a swap of the
default model under a steady open-loop load, counting the requests it loses (any answer but 200).

    python -m bench.served.swap --models gec-v5=models/gec-default,gec-v2=models/gec-v2 \\
        --input ../shared/data/dev/fce.dev.detok.src --rate 20 --duration 30 --swap-at 10 \\
        [--json docs/benchmarks/model-swap.json]

A server is started with ``--models`` (the first is the default); ``GET /v1/models`` gives each model's resident
memory and load time. Then a Poisson stream of ``--rate`` requests a second runs for ``--duration`` seconds, and
``--swap-at`` seconds in, the default model is swapped for the second listed model's folder under the default's
name (``POST /v1/models``). The summary: the models table, the swap's duration, every status the load got, and
the latency percentiles before, during and after the swap.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.latency import input_lines, latency_summary
from bench.served.openloop import offered_load, statuses
from bench.served.spawn import start_server
from service.engine.report import table, write_json

ADMIN_KEY = "swap-run"


def models_table(url: str) -> list[dict[str, Any]]:
    listed = httpx.get(f"{url}/v1/models", timeout=30).json()["models"]
    keys = ("name", "version", "variant", "default", "state", "parameters", "memory_mib", "load_s")
    return [{key: model.get(key) for key in keys} for model in listed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served.swap", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", required=True, help="GECSERVE_MODELS: name=path pairs, the default first")
    parser.add_argument("--input", type=Path, required=True, help="one paragraph per line")
    parser.add_argument("--rate", type=float, default=20.0, help="offered load, requests per second")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load")
    parser.add_argument("--swap-at", type=float, default=10.0, help="seconds into the load when the swap starts")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    (default, default_path), (_, other_path) = (entry.split("=", 1) for entry in args.models.split(",")[:2])
    lines = input_lines(args.input)
    with tempfile.TemporaryDirectory() as logs:
        server = start_server(Path(default_path), Path(logs), models=args.models, admin_key=ADMIN_KEY)
        try:
            loaded = models_table(server.url)
            print(table(loaded, list(loaded[0])))
            start_at = time.time() + 3.0
            load: dict[str, Any] = {}
            runner = threading.Thread(
                target=lambda: load.update(offered_load(server.url, lines, args.rate, args.duration, start_at=start_at))
            )
            runner.start()
            time.sleep(max(0.0, start_at + args.swap_at - time.time()))
            swap_started = time.time()
            swapped = httpx.post(
                f"{server.url}/v1/models",
                json={"name": default, "path": other_path},
                headers={"Authorization": f"Bearer {ADMIN_KEY}"},
                timeout=120,
            )
            swap_ended = time.time()
            runner.join()
            after = models_table(server.url)
        finally:
            server.stop()
    swapped.raise_for_status()
    phases = {"before": [], "during": [], "after": []}
    for record in load["records"]:
        sent = start_at + record["at_s"]
        phase = "before" if sent < swap_started else "during" if sent < swap_ended else "after"
        if record["status"] == 200:
            phases[phase].append(record["seconds"])
    rows = [{"phase": phase, "answered": len(values), **latency_summary(values)} for phase, values in phases.items()]
    got = statuses(load)
    unanswered = load["scheduled"] - load["answered"]
    lost = unanswered + sum(count for status, count in got.items() if status != "200")
    print(table(rows, list(rows[0])))
    print(
        f"swap of {default!r} to {other_path}: {swap_ended - swap_started:.2f} s; {load['scheduled']} requests sent, "
        f"statuses {got}, {unanswered} unanswered: {lost} lost"
    )
    if args.json:
        write_json(
            args.json,
            {
                "command": " ".join(sys.argv),
                "models": loaded,
                "after_swap": after,
                "swap_s": swap_ended - swap_started,
                "offered_rate": args.rate,
                "sent": load["scheduled"],
                "statuses": got,
                "lost": lost,
                "phases": rows,
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
