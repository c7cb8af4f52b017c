"""Everyday learner errors: how many of the sentences of ``learner_errors.tsv`` the served correction fixes exactly.

    python -m models.gec.learner_set --model models/gec-default [--json out.json]

``learner_errors.tsv`` (``class``, ``source``, ``corrected``) holds short sentences written for this project, each with
one error of a class a writer knows (a/an, agreement, a bare verb after a modal, uncountable nouns, plurals after
numbers, double comparatives, verb patterns, their/there, capitals, repeated words, "will" after "if") and its
correction. Each source goes through the served batch path (``service.engine.offline.correct_texts``: the spelling
stage, the language model's review, the confidence fit and the rule stage, at the default level); a sentence counts
when its correction equals the expected one. It is a check of what a writer sees, not a set to tune on.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_confidence, model_review, model_speller
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions

SENTENCES = Path(__file__).with_name("learner_errors.tsv")


def read_set(path: Path = SENTENCES) -> list[tuple[str, str, str]]:
    """The ``(class, source, corrected)`` rows of the set."""
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [(kind, source, corrected) for kind, source, corrected in (line.split("\t") for line in lines)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write each sentence's correction and the counts here")
    args = parser.parse_args(argv)
    rows = read_set()
    engine = Engine(args.model, options=RuntimeOptions(intra_op_threads=args.threads))
    corrected = correct_texts(
        engine,
        [source for _, source, _ in rows],
        speller=model_speller(args.model),
        review=model_review(args.model),
        confidence=model_confidence(args.model),
    )
    sentences, exact = Counter[str](), Counter[str]()
    results = []
    for (kind, source, expected), correction in zip(rows, corrected, strict=True):
        sentences[kind] += 1
        exact[kind] += correction.text == expected
        results.append({"class": kind, "source": source, "expected": expected, "corrected": correction.text})
    counts = [{"class": k, "sentences": sentences[k], "exact": exact[k]} for k in sentences]
    counts.append({"class": "all", "sentences": sum(sentences.values()), "exact": sum(exact.values())})
    print(table(counts, ["class", "sentences", "exact"]))
    if args.json:
        write_json(args.json, {"counts": counts, "sentences": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
