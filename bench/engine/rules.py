"""``gecserve bench rules``: what the rule stage (``service.text.grammar_rules``, merged by ``units.with_rules``)
adds to a request.

    gecserve bench rules --model models/gec-default --input fce.dev.detok.src [--input jfleg.dev.src] [--json OUT]

Each line is one request's text: planned into units with the model's tokenizer as the service plans it (no spelling
stage), then timed through the rule stage alone, as ``assemble`` runs it on each unit with the model's output (here
the unit as written, the common case of a sentence the model leaves alone; where the model edits, the stage does the
same work). Lines are timed once to warm the lexicon's caches, then once more; the table gives each input's mean
and p50/p95/p99 per request in milliseconds, and the share of requests the stage edited.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.latency import input_lines, latency_summary
from service.engine.manifest import ModelManifest
from service.engine.report import table, write_json
from service.engine.tokenization import TextCodec
from service.text.units import Unit, plan_units, with_rules


def _time(paragraph: str, units: list[Unit]) -> tuple[float, bool]:
    """The seconds the rule stage takes on ``paragraph``'s units, and whether it edited any."""
    started = time.perf_counter()
    edited = False
    for unit in units:
        text, _ = with_rules(unit, unit.normalized.text, paragraph)
        edited |= text != unit.normalized.text
    return time.perf_counter() - started, edited


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench rules", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--input", type=Path, action="append", required=True, help="one request's text a line")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    manifest = ModelManifest.load(args.model)
    codec, _ = TextCodec.for_model(args.model, manifest)
    rows = []
    for path in args.input:
        lines = input_lines(path)
        plans = [plan_units(line, codec, 10_000) for line in lines]
        for line, units in zip(lines, plans, strict=True):  # warm the lexicon's caches
            _time(line, units)
        timed = [_time(line, units) for line, units in zip(lines, plans, strict=True)]
        edited = sum(e for _, e in timed)
        summary = latency_summary([seconds for seconds, _ in timed])
        rows.append({"input": path.name, "requests": len(lines), "edited_%": 100 * edited / len(lines), **summary})
    print(table(rows, ["input", "requests", "edited_%", "mean_ms", "p50_ms", "p95_ms", "p99_ms"]))
    if args.json:
        write_json(args.json, {"rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
