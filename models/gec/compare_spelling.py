"""Variants of the spelling stage compared on the dev sets: GLEU, and how often correct sentences are changed.

    python -m models.gec.compare_spelling --model models/gec-default --data ../shared/data [--json OUT]

Each variant corrects JFLEG dev (GLEU against its 4 references) and FCE dev through the served path's
preprocessing (``correct_texts``); "false positives" is the share of the sentences that need no edit (source ==
first reference) that the variant changes, on each set. Variants, with the model's own vocabulary and ranking: the
model alone; the spelling stage alone (no model); the stage before the model as served; without the ranking (the
closest known word, the most frequent of them, no splits), with and without capitalised first words; without
capitalised first words; with those of sentences of any length; with a ranking that has no learners' edits (every
edit as likely, given its letters); and the stage after the model (only words the model left misspelled).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from models.gec.evaluate import score
from models.gec.metrics import detokenize
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest
from service.engine.offline import correct_texts
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions
from service.text.letter_edits import LetterEdits
from service.text.ranking import Ranker
from service.text.spelling import Speller, load_vocabulary, spelling_files
from service.text.units import assemble, plan_units

Correct = Callable[[list[str]], list[str]]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def spelled_only(engine: Engine, speller: Speller) -> Correct:
    """The spelling stage's output, with no model."""

    def run(texts: list[str]) -> list[str]:
        out = []
        for text in texts:
            units = plan_units(text, engine.codec, engine.max_source_tokens, speller.corrections)
            out.append(assemble(text, units, [u.text for u in units]).text)
        return out

    return run


def compare(data: Path, variants: dict[str, Callable[[], Correct]]) -> list[dict[str, Any]]:
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


def variants(engine: Engine, model_dir: Path) -> dict[str, Callable[[], Correct]]:
    files = spelling_files(model_dir, ModelManifest.load(model_dir))
    if files is None or files[1] is None:
        raise SystemExit(f"{model_dir} ships no vocabulary or no spelling ranking")
    vocabulary, ranker = load_vocabulary(files[0]), Ranker.load(files[1])
    unlearned = Ranker(ranker.pairs, LetterEdits({}, ranker.edits.contexts))

    def model(make_speller: Callable[[], Speller | None]) -> Callable[[], Correct]:
        def make() -> Correct:
            speller = make_speller()
            return lambda texts: [c.text for c in correct_texts(engine, texts, speller=speller)]

        return make

    def after_model() -> Correct:
        spell = spelled_only(engine, Speller(vocabulary, ranker))
        return lambda texts: spell([c.text for c in correct_texts(engine, texts)])

    return {
        "model alone": model(lambda: None),
        "spelling alone (no model)": lambda: spelled_only(engine, Speller(vocabulary, ranker)),
        "spelling, then the model (served)": model(lambda: Speller(vocabulary, ranker)),
        "no ranking (closest, most frequent), no capitalised first words": model(
            lambda: Speller(vocabulary, initial_min_words=None)
        ),
        "no ranking": model(lambda: Speller(vocabulary)),
        "no capitalised first words": model(lambda: Speller(vocabulary, ranker, initial_min_words=None)),
        "capitalised first words of any sentence": model(lambda: Speller(vocabulary, ranker, initial_min_words=1)),
        "ranking without the learners' edits": model(lambda: Speller(vocabulary, unlearned)),
        "the model, then spelling (words it left)": after_model,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    engine = Engine(args.model, options=RuntimeOptions(intra_op_threads=1))
    rows = compare(args.data, variants(engine, args.model))
    print(table(rows, list(rows[0])))
    if args.json:
        write_json(args.json, {"model": str(args.model), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
