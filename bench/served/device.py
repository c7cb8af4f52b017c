"""``gecserve bench device``: the device engine in Chromium against the server, on this machine.

    gecserve bench device --spawn models/gec-default --input fce.dev.detok.src [--sentences 200] [--rounds 2] \\
        [--json OUT]

Starts ``gecserve serve`` (the sentence cache off) and a headless Chromium (``bench.served.browser``), and measures:

- **to ready**, on a first load (a fresh browser context: nothing cached) and from the cache (a second page in the
  same context): the bytes downloaded (the resources' transfer sizes, gzip on the wire) and the seconds from
  asking the device engine to load until it can correct;
- **per sentence** at concurrency 1, on the same lines: the latency of ``window.gecserve.correct(line,
  {engine})`` timed in the page, for the device engine and for the server (``/v1/correct`` through the same
  client, spelling off on both), p50/p95/mean;
- **memory**: the growth of a fresh page's renderer process (its Web Worker runs there) in unique memory (USS):
  while the device engine loads and corrects the lines (runtime and model), and in another page while
  onnxruntime-web's wasm runtime alone is instantiated by a one-node graph: the model's share is the difference.

Prints a table and writes JSON; ``--rounds`` repeats the latency runs, alternating which engine goes first.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from bench.latency import input_lines, latency_summary
from bench.served.browser import chromium
from bench.served.spawn import start_server
from service.engine.report import table, write_json

TIME_EACH = """async ([lines, engine]) => {
  const seconds = [];
  for (const line of lines) {
    const began = performance.now();
    await window.gecserve.correct(line, {engine, spelling: false});
    seconds.push((performance.now() - began) / 1000);
  }
  return seconds;
}"""
LOAD = """async () => {
  const began = performance.now();
  const info = await window.gecserve.engine("device").load();
  return {...info, seconds: (performance.now() - began) / 1000};
}"""


# A one-node ONNX graph (Identity): enough to instantiate onnxruntime-web's wasm runtime without a model.
IDENTITY_GRAPH = "CAg6NwoQCgF4EgF5IghJZGVudGl0eRIBaVoPCgF4EgoKCAgBEgQKAggBYg8KAXkSCgoICAESBAoCCAFCBAoAEA0="
RUNTIME_ONLY = """async (graph) => {
  const described = await (await fetch("/device/model.json")).json();
  const ort = await import(described.files.ort.url);
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmPaths = {wasm: described.files.wasm.url};
  const bytes = Uint8Array.from(atob(graph), (c) => c.charCodeAt(0));
  window.runtimeOnly = await ort.InferenceSession.create(bytes, {executionProviders: ["wasm"]});
}"""


def renderer_uss() -> dict[int, int]:
    """Unique memory of each Chromium renderer process started under this one, by pid."""
    found = {}
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "--type=renderer" in " ".join(child.cmdline()):
                found[child.pid] = child.memory_full_info().uss
    return found


def open_page(context: Any, url: str) -> Any:
    """A new page of ``context`` at ``url`` (the editor), once its script has started."""
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("body[data-loaded]")
    return page


def growth(context: Any, url: str, work: Callable[[Any], object]) -> int:
    """How much a new page's renderer grows (USS, bytes) while ``work(page)`` runs in it."""
    page = open_page(context, url)
    before = renderer_uss()
    work(page)
    after = renderer_uss()
    page.close()
    return max((after[pid] - before.get(pid, 0) for pid in after), default=0)


def to_ready(context: Any, url: str) -> dict[str, Any]:
    """Load the device engine in a new page of ``context``: bytes transferred and seconds."""
    page = open_page(context, url)
    info = page.evaluate(LOAD)
    page.close()
    return {"bytes_transferred": info["transferred"], "model_bytes": info["bytes"], "seconds": info["seconds"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench device", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spawn", type=Path, required=True, help="the model folder to serve")
    parser.add_argument("--input", type=Path, required=True, help="one sentence per line")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    lines = input_lines(args.input)[: args.sentences]
    with tempfile.TemporaryDirectory() as logs, chromium() as browser:
        server = start_server(args.spawn, Path(logs), cache_size=0)
        try:
            url = f"{server.url}/editor?engine=device"
            context = browser.new_context()
            loads = {"first load": to_ready(context, url), "from the cache": to_ready(context, url)}
            page = open_page(context, url)
            page.evaluate(LOAD)
            seconds: dict[str, list[float]] = {"device": [], "server": []}
            for round_ in range(args.rounds):
                for engine in ("device", "server") if round_ % 2 == 0 else ("server", "device"):
                    print(f"round {round_ + 1}: {engine}, {len(lines)} sentences", file=sys.stderr)
                    seconds[engine] += page.evaluate(TIME_EACH, [lines, engine])
            page.close()
            grown = growth(context, url, lambda page: page.evaluate(TIME_EACH, [lines, "device"]))
            runtime = growth(context, url, lambda page: page.evaluate(RUNTIME_ONLY, IDENTITY_GRAPH))
            context.close()
        finally:
            server.stop()
    rows = [{"engine": e, "sentences": len(s), **latency_summary(s)} for e, s in seconds.items()]
    print(
        table(
            [{"load": name, **values} for name, values in loads.items()],
            ["load", "bytes_transferred", "model_bytes", "seconds"],
        )
    )
    print(table(rows, ["engine", "sentences", "mean_ms", "p50_ms", "p95_ms", "p99_ms"]))
    print(
        f"page memory (the renderer's USS): +{grown / 1e6:.1f} MB with the engine loaded, +{runtime / 1e6:.1f} MB "
        f"with the runtime alone: the model's share {(grown - runtime) / 1e6:.1f} MB"
    )
    if args.json:
        write_json(
            args.json,
            {
                "model": str(args.spawn),
                "input": str(args.input),
                "sentences": len(lines),
                "rounds": args.rounds,
                "to_ready": loads,
                "latency": rows,
                "memory_bytes": {"engine": grown, "runtime_alone": runtime, "model": grown - runtime},
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
