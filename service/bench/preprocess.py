"""``gecserve bench preprocess``: thread pool vs process pool for preprocessing real paragraphs, with and without
the spelling stage.

    gecserve bench preprocess --model models/gec-default --input fce.dev.detok.src [--workers 2] [--json OUT]

Paragraphs are 3-8 consecutive input lines joined with a space (learner essays). Each pool
plans all of them with 64 paragraphs in flight; the table shows paragraphs/s and the time per
paragraph and per sentence for each mode, spelling off and on (where the model ships a
vocabulary); the spelling stage's cost is the difference.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from pathlib import Path

from service.bench.report import input_lines, table, write_json
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench preprocess", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--input", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
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
