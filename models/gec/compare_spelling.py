"""Variants of the spelling stage compared on the dev sets: GLEU, and how often correct sentences are changed.

    python -m models.gec.compare_spelling --model models/gec-default --data ../shared/data [--json OUT]

Each variant corrects JFLEG dev (GLEU against its 4 references) and FCE dev through the served path's
preprocessing (``correct_texts``); "false positives" is the share of the sentences that need no edit (source ==
first reference) that the variant changes, on each set. Variants: the model alone; the spelling stage alone (no
model); the stage before the model (as served) with vocabularies of words seen at least N times, also correcting
capitalised first words, with distance 1 only, and with the bundled dictionary alone; and the stage after the model
(only words the model left misspelled).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from models.gec.evaluate import score
from models.gec.metrics import detokenize
from models.gec.vocabulary import MIN_COUNT, count_words, sources
from service.bench.report import table, write_json
from service.commands.correct import correct_texts
from service.engine.engine import Engine
from service.engine.sessions import SessionSettings
from service.pipeline.units import assemble, plan_units
from service.text.spelling import Speller

Correct = Callable[[list[str]], list[str]]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def spelled_only(engine: Engine, speller: Speller) -> Correct:
    """The spelling stage's output, with no model."""

    def run(texts: list[str]) -> list[str]:
        out = []
        for text in texts:
            units = plan_units(text, engine.codec.encode, engine.max_source_tokens, speller.corrections)
            out.append(assemble(text, units, [u.text for u in units])[0])
        return out

    return run


def compare(engine: Engine, data: Path, variants: dict[str, Callable[[], Correct]]) -> list[dict[str, Any]]:
    """One row per variant; each variant's speller is built when its turn comes (each holds SymSpell's index)."""
    dev = data / "dev"
    jfleg_src = _lines(dev / "jfleg.dev.src")
    jfleg_refs = [_lines(dev / f"jfleg.dev.ref{i}") for i in range(4)]
    fce_src, fce_ref = _lines(dev / "fce.dev.detok.src"), _lines(dev / "fce.dev.detok.tgt")
    rows = []
    for name, make in variants.items():
        run = make()
        jfleg = score(jfleg_src, jfleg_refs, True, run([detokenize(s) for s in jfleg_src]))
        fce = score(fce_src, [fce_ref], False, run(fce_src))
        row = {
            "variant": name,
            "jfleg_gleu": jfleg["gleu"],
            "jfleg_false_positives_%": 100 * (1 - jfleg["unchanged_kept"]),
            "fce_gleu": fce["gleu"],
            "fce_false_positives_%": 100 * (1 - fce["unchanged_kept"]),
            "fce_changed_%": 100 * fce["changed"],
        }
        print(table([row], list(row)), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


def variants(engine: Engine, data: Path, thresholds: list[int]) -> dict[str, Callable[[], Correct]]:
    counts = count_words(sources(data))

    def vocabulary(min_count: int) -> dict[str, int]:
        return {w: c for w, c in counts.items() if c >= min_count}

    def model(make_speller: Callable[[], Speller | None]) -> Callable[[], Correct]:
        def make() -> Correct:
            speller = make_speller()
            return lambda texts: correct_texts(engine, texts, speller=speller)

        return make

    def after_model() -> Correct:
        spell = spelled_only(engine, Speller(vocabulary(MIN_COUNT)))
        return lambda texts: spell(correct_texts(engine, texts))

    found: dict[str, Callable[[], Correct]] = {
        "model alone": model(lambda: None),
        f"spelling alone, N={MIN_COUNT}": lambda: spelled_only(engine, Speller(vocabulary(MIN_COUNT))),
    }
    for n in thresholds:
        found[f"spelling then model, N={n}"] = model(lambda n=n: Speller(vocabulary(n)))
    found[f"spelling then model, N={MIN_COUNT}, capitalised first words too"] = model(
        lambda: Speller(vocabulary(MIN_COUNT), sentence_initial=True)
    )
    found[f"spelling then model, N={MIN_COUNT}, distance 1"] = model(
        lambda: Speller(vocabulary(MIN_COUNT), max_distance=1)
    )
    found["spelling then model, dictionary only"] = model(lambda: Speller({}))
    found[f"model then spelling, N={MIN_COUNT}"] = after_model
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--min-counts", default="3,10,30", help="vocabulary thresholds to compare")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    engine = Engine(args.model, settings=SessionSettings(intra_op_threads=1))
    thresholds = [int(n) for n in args.min_counts.split(",")]
    rows = compare(engine, args.data, variants(engine, args.data, thresholds))
    print(table(rows, list(rows[0])))
    if args.json:
        write_json(args.json, {"model": str(args.model), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
