"""Compare sentence splitters (Bling Fire, pySBD) on paragraphs rebuilt from one-sentence-per-line learner text.

Consecutive lines are joined with a space into paragraphs of 3-8 lines (seeded); the line boundaries are the gold
sentence boundaries. Both libraries run through the same ``split_with`` wrapper that the service uses, so the
figures include the exact-offset bookkeeping. Development tool only (run from a checkout with the dev extra):
``pysbd`` is imported here and nowhere else.

    python -m tools.compare_segmenters [--data PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from service.text.segment import CutFinder, blingfire_cuts, split_with

DEFAULT_DATA = Path("/work/shared/data/dev/fce.dev.detok.src")


@dataclass(frozen=True)
class Paragraph:
    text: str
    gold: list[tuple[int, int]]


@dataclass(frozen=True)
class Result:
    name: str
    exact: float
    precision: float
    recall: float
    f1: float
    ms_per_paragraph: float


def build_paragraphs(lines: list[str], seed: int = 0) -> list[Paragraph]:
    """Join runs of 3-8 consecutive non-empty lines with a single space; gold spans are the lines."""
    rng = random.Random(seed)
    lines = [line.strip() for line in lines if line.strip()]
    paragraphs, i = [], 0
    while i < len(lines):
        group = lines[i : i + rng.randint(3, 8)]
        i += len(group)
        gold, pos = [], 0
        for line in group:
            gold.append((pos, pos + len(line)))
            pos += len(line) + 1
        paragraphs.append(Paragraph(" ".join(group), gold))
    return paragraphs


def pysbd_cuts_factory() -> CutFinder:
    """pySBD without cleaning returns substrings that concatenate to the input; their ends are the cuts."""
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False)

    def cuts(line: str) -> list[int]:
        ends, pos = [], 0
        for sentence in segmenter.segment(line):
            found = line.find(sentence, pos)
            if found >= 0:
                pos = found + len(sentence)
                ends.append(pos)
        return ends

    return cuts


def evaluate(name: str, find_cuts: CutFinder, paragraphs: list[Paragraph], repeats: int) -> Result:
    predicted = [[(s.start, s.end) for s in split_with(p.text, find_cuts)] for p in paragraphs]
    exact = sum(pred == p.gold for pred, p in zip(predicted, paragraphs, strict=True)) / len(paragraphs)
    tp = fp = fn = 0
    for pred, p in zip(predicted, paragraphs, strict=True):
        pred_cuts, gold_cuts = {e for _, e in pred[:-1]}, {e for _, e in p.gold[:-1]}
        tp += len(pred_cuts & gold_cuts)
        fp += len(pred_cuts - gold_cuts)
        fn += len(gold_cuts - pred_cuts)
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-9)
    seconds = _best_time(lambda: [split_with(p.text, find_cuts) for p in paragraphs], repeats)
    return Result(name, exact, precision, recall, f1, 1000 * seconds / len(paragraphs))


def _best_time(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="one sentence per line")
    parser.add_argument("--limit", type=int, default=0, help="use only the first N lines (0: all)")
    parser.add_argument("--repeats", type=int, default=3, help="timing repetitions (best is kept)")
    args = parser.parse_args(argv)
    lines = args.data.read_text(encoding="utf-8").splitlines()
    if args.limit:
        lines = lines[: args.limit]
    paragraphs = build_paragraphs(lines)
    n_sentences = sum(len(p.gold) for p in paragraphs)
    print(f"{len(paragraphs)} paragraphs, {n_sentences} sentences from {args.data}")
    print(f"{'segmenter':<10} {'exact para':>10} {'bound P':>8} {'bound R':>8} {'bound F1':>8} {'ms/para':>8}")
    for name, finder in (("blingfire", blingfire_cuts), ("pysbd", pysbd_cuts_factory())):
        r = evaluate(name, finder, paragraphs, args.repeats)
        print(
            f"{r.name:<10} {r.exact:>10.1%} {r.precision:>8.1%} {r.recall:>8.1%} {r.f1:>8.1%} "
            f"{r.ms_per_paragraph:>8.3f}"
        )


if __name__ == "__main__":
    main()
