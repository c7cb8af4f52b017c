"""``gecserve bench diversity``: diverse beam search against plain beam search at the same beam count.

    gecserve bench diversity --model models/gec-default --input ../shared/data/dev/jfleg.dev.src \\
        [--num-beams 6] [--groups 2,3,6] [--penalties 0.5,1,2] [--batch-size 8] [--rounds 3] [--limit N] [--json OUT]

Each row decodes every sentence with ``--num-beams`` beams and returns all of them (``num_return_sequences`` =
``num_beams``, the list ``options.alternatives`` draws from); the first row is plain beam search, the others split
the beams into ``--groups`` (those that divide ``--num-beams``) with each ``--penalties`` value
(``diversity_penalty``). Per row: how many of the n outputs are distinct texts (mean per sentence, and the share of
sentences with all n distinct), the mean pairwise edit distance between a sentence's outputs in model tokens, and in
words (whitespace-split), how often the best output is plain beam search's best, and the cost: ms per sentence
(batches of ``--batch-size``, sentences in input order; the fastest of ``--rounds`` runs of every configuration,
the rounds interleaved, so that a burst of other work on the machine inflates no row) and that over plain beam
search's.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein
from tqdm import tqdm

from bench.engine.decoding import csv_list, load_sources
from service.engine.decoding.params import DecodeParams, DecodeResult
from service.engine.engine import Engine
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions

COLUMNS = [
    "groups",
    "penalty",
    "distinct_outputs",
    "all_distinct",
    "token_distance",
    "word_distance",
    "best_as_beam",
    "ms_per_sentence",
    "cost_vs_beam",
]


def mean_pairwise_distance(items: Sequence[Sequence[Any]]) -> float:
    """The mean Levenshtein distance over every pair of ``items`` (0 for fewer than two)."""
    pairs = list(itertools.combinations(items, 2))
    return sum(Levenshtein.distance(a, b) for a, b in pairs) / len(pairs) if pairs else 0.0


def decode_all(
    engine: Engine, sources: list[list[int]], params: DecodeParams, batch: int
) -> tuple[list[DecodeResult], float]:
    """Every source's result (batches of ``batch`` in order) and the seconds they took."""
    results: list[DecodeResult] = []
    started = time.perf_counter()
    for start in range(0, len(sources), batch):
        results.extend(engine.generate(sources[start : start + batch], "beam", params))
    return results, time.perf_counter() - started


def row(engine: Engine, results: list[DecodeResult], seconds: float, beam: dict[str, Any] | None) -> dict[str, Any]:
    """One configuration's figures (``beam``: plain beam search's row, None for that row itself)."""
    texts = [[engine.codec.decode(h.tokens) for h in r.hypotheses] for r in results]
    distinct = [len(set(outputs)) for outputs in texts]
    n = len(results)
    figures = {
        "distinct_outputs": sum(distinct) / n,
        "all_distinct": sum(d == len(outputs) for d, outputs in zip(distinct, texts, strict=True)) / n,
        "token_distance": sum(mean_pairwise_distance([h.tokens for h in r.hypotheses]) for r in results) / n,
        "word_distance": sum(mean_pairwise_distance([t.split() for t in outputs]) for outputs in texts) / n,
        "ms_per_sentence": seconds * 1e3 / n,
        "best": [outputs[0] for outputs in texts],
    }
    reference = figures if beam is None else beam
    figures["best_as_beam"] = sum(a == b for a, b in zip(figures["best"], reference["best"], strict=True)) / n
    figures["cost_vs_beam"] = figures["ms_per_sentence"] / reference["ms_per_sentence"]
    return figures


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Plain beam search's row, then one row per group count and penalty."""
    runtime = RuntimeOptions(provider=args.provider, intra_op_threads=args.threads)
    engine = Engine(args.model, options=runtime)
    sources = load_sources(engine, Path(args.input), args.limit)
    configs = [(1, 0.0)] + [(g, p) for g in args.groups for p in args.penalties if args.num_beams % g == 0 and g > 1]
    params = [
        DecodeParams(
            num_beams=args.num_beams, num_return_sequences=args.num_beams, num_beam_groups=g, diversity_penalty=p
        )
        for g, p in configs
    ]
    engine.generate(sources[: args.batch_size], "beam", params[0])  # warm-up
    results: list[list[DecodeResult]] = [[] for _ in configs]
    seconds = [float("inf")] * len(configs)
    with tqdm(total=args.rounds * len(configs), desc="bench diversity", unit="run", file=sys.stderr) as progress:
        for _ in range(args.rounds):
            for index, config in enumerate(params):
                results[index], elapsed = decode_all(engine, sources, config, args.batch_size)
                seconds[index] = min(seconds[index], elapsed)
                progress.update(1)
    rows: list[dict[str, Any]] = []
    beam = None
    for (groups, penalty), outputs, elapsed in zip(configs, results, seconds, strict=True):
        figures = row(engine, outputs, elapsed, beam)
        beam = beam or figures
        rows.append({"groups": groups, "penalty": penalty, **figures})
    for figures in rows:
        del figures["best"]
    return {
        "model": str(args.model),
        "variant": engine.model.variant,
        "input": str(args.input),
        "sentences": len(sources),
        "num_beams": args.num_beams,
        "batch_size": args.batch_size,
        "rounds": args.rounds,
        "threads": args.threads,
        "provider": runtime.providers()[0],
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve bench diversity", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--input", type=Path, required=True, help="one sentence per line")
    parser.add_argument("--num-beams", type=int, default=6, help="beams, and outputs returned per sentence")
    parser.add_argument("--groups", type=lambda s: csv_list(s, int), default=[2, 3, 6], help="num_beam_groups")
    parser.add_argument(
        "--penalties", type=lambda s: csv_list(s, float), default=[0.5, 1.0, 2.0], help="diversity_penalty values"
    )
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3, help="runs of every configuration; the fastest is reported")
    parser.add_argument("--threads", type=int, default=1, help="ORT intra-op threads")
    parser.add_argument("--provider", default="auto")
    parser.add_argument("--limit", type=int, default=None, help="first N sentences only")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = run(args)
    print(
        f"\n{result['sentences']} sentences from {args.input}, {args.num_beams} beams, all returned, batches of "
        f"{args.batch_size}, model {args.model} [{result['variant']}], {args.threads} thread(s)"
    )
    print(table(result["rows"], COLUMNS))
    if args.json:
        write_json(args.json, result)
    return 0
