"""``gecserve bench preprocess``: thread pool vs process pool for preprocessing real paragraphs, with and without
the spelling stage; or, with ``--sizes``, the time to preprocess one text as it grows.

    gecserve bench preprocess --model models/gec-default --input fce.dev.detok.src [--workers 2] [--json OUT]
    gecserve bench preprocess --model models/gec-default --input fce.dev.detok.src --sizes 1000,2000,5000,10000,20000
                              [--json OUT] [--plot OUT.png]

Paragraphs are 3-8 consecutive input lines joined with a space (learner essays). Each pool
plans all of them with 64 paragraphs in flight; the table shows paragraphs/s and the time per
paragraph and per sentence for each mode, spelling off and on (where the model ships a
vocabulary); the spelling stage's cost is the difference.

``--sizes``: texts of each kind in ``KINDS`` (learner prose, and the inputs that once took
quadratic time or trip a parser: emoji runs, one endless word, a repeated line, URLs, markdown,
numbers, code, CJK, backticks, dotted chains) cut to each size, each planned alone with the
spelling stage, the best of ``--rounds``; the table gives the milliseconds per size and the
growth from the smallest size to the largest over the growth in length (1 is linear time).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench.latency import input_lines
from service.engine.report import table, write_json
from service.pipeline.preprocess import Preprocessor


def paragraphs(lines: list[str], seed: int = 0) -> list[str]:
    rng, out, i = random.Random(seed), [], 0
    while i < len(lines):
        size = rng.randint(3, 8)
        out.append(" ".join(lines[i : i + size]))
        i += size
    return out


async def _throughput(pre: Preprocessor, texts: list[str], in_flight: int, rounds: int, spelling: bool) -> float:
    await pre.start()
    await pre.plan(texts[:in_flight], spelling)  # warm the pool
    started = time.perf_counter()
    for _ in range(rounds):
        for i in range(0, len(texts), in_flight):
            await pre.plan(texts[i : i + in_flight], spelling)
    return rounds * len(texts) / (time.perf_counter() - started)


def _kinds(prose: str) -> dict[str, str]:
    """One long text of each kind (cut to each size); ``prose`` is learner text."""
    return {
        "learner prose": prose,
        "emoji run": "\U0001f600",
        "emoji in prose": "He have a cat. " + "\U0001f600" * 50 + " She go home. ",
        "one long word": "a",
        "repeated line": "Hi. ",
        "URLs and e-mail": "Please visit https://www.example.com/path?id=42 or write to john.smith@example.com now. ",
        "markdown": "## Title\n- item with **bold** and [a link](https://example.com) and `code`\n> quoted *text*\n",
        "numbers": "It costs $1,250.50 (about 1.2 million yen) on 2024-01-15 at 10:30, 50% off v1.2.3. ",
        "code lines": "x = compute(a, b)  # set the value\nfor (int i = 0; i < n; i++) {\n",
        "CJK": "我喜欢猫。",
        "backticks": "`a",
        "dotted chain": "a.",
    }


def _sizes_table(pre: Preprocessor, prose: str, sizes: list[int], rounds: int) -> list[dict[str, Any]]:
    rows = []
    for kind, unit in _kinds(prose).items():
        row: dict[str, Any] = {"kind": kind}
        for size in sizes:
            text = (unit * (size // len(unit) + 1))[:size]
            best = math.inf
            for _ in range(rounds):
                started = time.perf_counter()
                pre.plan_sync([text])
                best = min(best, time.perf_counter() - started)
            row[f"{size}_ms"] = 1e3 * best
        row["growth_over_length"] = (row[f"{sizes[-1]}_ms"] / row[f"{sizes[0]}_ms"]) / (sizes[-1] / sizes[0])
        print(table([row], list(row)), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def _plot(rows: list[dict[str, Any]], sizes: list[int], path: Path) -> None:
    import matplotlib  # a development dependency: only the plot needs it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5))
    palette = plt.get_cmap("tab20")
    for index, row in enumerate(rows):
        axes.plot(
            sizes,
            [row[f"{size}_ms"] for size in sizes],
            marker="osD^v<>ph*XP"[index % 11],
            color=palette(index % 20),
            label=row["kind"],
        )
    axes.plot(
        sizes,
        [sizes[i] / sizes[0] * min(r[f"{sizes[0]}_ms"] for r in rows) for i in range(len(sizes))],
        "k--",
        label="linear",
    )
    axes.set(
        xscale="log",
        yscale="log",
        xlabel="characters",
        ylabel="ms to preprocess",
        title="Preprocessing time against text length",
    )
    axes.legend(fontsize=7, ncol=2)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench preprocess", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--sizes", default=None, help="comma-separated text lengths: time one text as it grows")
    parser.add_argument("--plot", type=Path, default=None, help="with --sizes: a PNG of time against length")
    args = parser.parse_args(argv)
    if args.sizes:
        sizes = sorted(int(size) for size in args.sizes.split(","))
        pre = Preprocessor(args.model, "thread", 1)
        asyncio.run(pre.start())
        try:
            rows = _sizes_table(pre, " ".join(input_lines(args.input)), sizes, args.rounds)
        finally:
            pre.close()
        print(table(rows, list(rows[0])))
        if args.json:
            write_json(args.json, {"input": str(args.input), "sizes": sizes, "rows": rows})
        if args.plot:
            _plot(rows, sizes, args.plot)
        return 0
    texts = paragraphs(input_lines(args.input))
    rows = []
    for mode in ("thread", "process"):
        pre = Preprocessor(args.model, mode, args.workers)
        sentences = sum(len({u.sentence for u in units}) for units in pre.plan_sync(texts, spelling=False))
        try:
            for spelling in (False, True) if pre.spells else (False,):
                rate = asyncio.run(_throughput(pre, texts, 64, args.rounds, spelling))
                per_sentence = 1e3 * len(texts) / (rate * sentences)
                row = {"mode": mode, "spelling": spelling, "workers": args.workers, "paragraphs": len(texts)}
                rows.append(
                    row | {"paragraphs_per_s": rate, "ms_per_paragraph": 1e3 / rate, "ms_per_sentence": per_sentence}
                )
        finally:
            pre.close()
    print(table(rows, list(rows[0])))
    if args.json:
        write_json(args.json, {"input": str(args.input), "rows": rows})
    return 0
