"""``gecserve eval``: GLEU and change statistics of a model on a dev set.

    gecserve eval --model models/gec-default --src jfleg.dev.src --refs jfleg.dev.ref0 ... --tokenized
    gecserve eval --model models/gec-default --src fce.dev.detok.src --refs fce.dev.detok.tgt [--no-spelling]

The sentences go through the served path's preprocessing (protected spans, sentence split,
normalisation, the spelling stage where the model ships a vocabulary, the model's codec),
aggressive decoding with the model's keep bias (``--keep-bias`` to set another), the language
model's review where the model ships one (``--no-lm-review`` to leave it out), and the served
assembly (the guard, protected spans, each edit's confidence with the edits under the level's threshold held back:
``--level``, ``--min-confidence``, or ``--no-confidence`` for every edit the model makes; ``--language`` for an
English dialect's spelling variants, as a request's ``language``).

``served_quality`` measures both dev sets so at every level (``service.text.policy.LEVELS``: the level's
threshold and keep bias), what ``models.gec.calibrate`` writes into the manifest's ``quality`` for
``GET /v1/models``.

GLEU is the JFLEG multi-reference definition (500 iterations of random reference choice,
compared on tokens). With ``--tokenized`` the source and references are tokenised text (as
JFLEG is): the source is detokenised before the model reads it. Also reported, against the
first reference: exact match, the share of sentences that need no change and were left
unchanged, and the share of sentences changed; and how many of the model's outputs the guard
(``service.text.guard``) dropped, by reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from models.gec.metrics import change_stats, corpus_gleu, detokenize, tokenize
from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine
from service.engine.manifest import file_sha256, level_keep_bias
from service.engine.offline import correct_texts, model_confidence, model_review, model_speller
from service.engine.offline_options import add_confidence_options, add_language_option, confidence_of
from service.engine.report import table
from service.engine.runtime import RuntimeOptions
from service.text.confidence import ConfidenceModel
from service.text.guard import REASONS
from service.text.lm_review import LanguageModelReview
from service.text.policy import LEVELS
from service.text.spelling import Speller

# The dev sets the manifest's served figures are measured on: (source, references, tokenised) under ``data/dev``.
DEV_SETS = {
    "jfleg_dev": ("jfleg.dev.src", tuple(f"jfleg.dev.ref{i}" for i in range(4)), True),
    "fce_dev": ("fce.dev.detok.src", ("fce.dev.detok.tgt",), False),
}
FIGURES = ("sentences", "gleu", "gleu_std", "exact_match", "unchanged_kept", "needs_no_change", "changed")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def evaluate(
    engine: Engine,
    sources: list[str],
    references: list[list[str]],
    tokenized: bool,
    decoding: str = "aggressive",
    batch_size: int = 32,
    speller: Speller | None = None,
    keep_bias: float | None = None,
    review: LanguageModelReview | None = None,
    confidence: ConfidenceModel | None = None,
    level: str = "default",
    min_confidence: float | None = None,
    language: str | None = None,
) -> dict[str, Any]:
    """Correct ``sources`` (spelled first by ``speller`` if given, decoded with ``keep_bias``, None: the model's
    for ``level``, reviewed by ``review`` if given, edits under ``level``'s confidence threshold or ``min_confidence``
    held back where a ``confidence`` model is given, with ``language``'s spelling variants) and score them;
    ``references[k][i]`` is reference k of sentence i."""
    inputs = [detokenize(s) if tokenized else s for s in sources]
    corrected = correct_texts(
        engine,
        inputs,
        decoding,
        batch_size,
        DecodeParams(),
        progress=True,
        speller=speller,
        keep_bias=keep_bias,
        review=review,
        confidence=confidence,
        level=level,
        min_confidence=min_confidence,
        language=language,
    )
    dropped = Counter(reason for c in corrected for reason in c.dropped)
    figures = score(sources, references, tokenized, [c.text for c in corrected])
    return figures | {f"guard_{reason}": dropped[reason] for reason in REASONS}


def score(sources: list[str], references: list[list[str]], tokenized: bool, hypotheses: list[str]) -> dict[str, Any]:
    """GLEU and change statistics of ``hypotheses`` (natural text) for ``sources`` (see the module docstring)."""

    def toks(text: str, already: bool) -> list[str]:
        return text.split() if already else tokenize(text)

    gleu = corpus_gleu(
        [toks(s, tokenized) for s in sources],
        [[toks(ref[i], tokenized) for ref in references] for i in range(len(sources))],
        [tokenize(h) for h in hypotheses],
    )
    if tokenized:
        stats = change_stats(sources, references[0], [" ".join(tokenize(h)) for h in hypotheses])
    else:
        stats = change_stats(sources, references[0], hypotheses)
    return {
        "sentences": len(sources),
        "gleu": gleu.mean,
        "gleu_std": gleu.std,
        "exact_match": stats.exact_match,
        "unchanged_kept": stats.keep_rate_no_change,
        "needs_no_change": stats.n_need_no_change,
        "changed": stats.changed_rate,
        "hypotheses": hypotheses,
    }


def served_quality(model_dir: Path, data: Path, threads: int = 2) -> dict[str, Any]:
    """JFLEG dev's and FCE dev's figures (``FIGURES``) for the model in ``model_dir`` as served at each level, as
    ``gecserve eval --level L`` measures them (its spelling stage, the level's keep bias, the language model's review,
    the rule stage, its confidence fit with the edits under the level's threshold held back), with the threshold and
    keep bias each level was measured at and the SHA-256 of the fit (None: the model ships none): the manifest's
    ``quality``, which ``GET /v1/models`` lists while the served settings are these."""
    engine = Engine(model_dir, options=RuntimeOptions(intra_op_threads=threads))
    speller, review, confidence = model_speller(model_dir), model_review(model_dir), model_confidence(model_dir)
    dev = data / "dev"
    sets = {
        name: (_lines(dev / source), [_lines(dev / ref) for ref in refs], tokenized)
        for name, (source, refs, tokenized) in DEV_SETS.items()
    }
    served = {"speller": speller, "review": review, "confidence": confidence}
    levels: dict[str, Any] = {}
    for level, threshold in LEVELS.items():
        figures = {"threshold": threshold, "keep_bias": level_keep_bias(engine.manifest, level)}
        for name, (sources, references, tokenized) in sets.items():
            result = evaluate(engine, sources, references, tokenized, level=level, **served)
            figures[name] = {key: result[key] for key in FIGURES}
        levels[level] = figures
    fit = engine.manifest.confidence
    return {
        "measured": "gecserve eval at each --level: the served path, edits under the level's threshold held back",
        "confidence_sha256": file_sha256(model_dir / fit) if fit is not None else None,
        "levels": levels,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve eval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--src", type=Path, required=True)
    parser.add_argument("--refs", type=Path, nargs="+", required=True)
    parser.add_argument("--tokenized", action="store_true", help="source and references are tokenised (JFLEG)")
    parser.add_argument("--decoding", default="aggressive", choices=["aggressive", "greedy", "beam"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--variant", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-spelling", action="store_true", help="the model alone, without the spelling stage")
    parser.add_argument("--no-lm-review", action="store_true", help="without the language model's review")
    parser.add_argument(
        "--keep-bias",
        type=float,
        default=None,
        help="the keep bias (default: the model's, as served; greedy, aggressive)",
    )
    add_confidence_options(parser)
    add_language_option(parser)
    parser.add_argument("--out", type=Path, default=None, help="write the corrected sentences here")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    engine = Engine(args.model, variant=args.variant, options=RuntimeOptions(intra_op_threads=args.threads))
    sources = _lines(args.src)
    references = [_lines(p) for p in args.refs]
    if any(len(r) != len(sources) for r in references):
        parser.error("every reference file must have as many lines as the source")
    speller = None if args.no_spelling else model_speller(args.model)
    review = None if args.no_lm_review else model_review(args.model)
    confidence = confidence_of(args, args.model)
    result = evaluate(
        engine,
        sources,
        references,
        args.tokenized,
        args.decoding,
        args.batch_size,
        speller,
        args.keep_bias,
        review,
        confidence,
        args.level,
        args.min_confidence,
        args.language,
    )
    hypotheses = result.pop("hypotheses")
    if args.out:
        args.out.write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    held = "none" if confidence is None else args.level if args.min_confidence is None else args.min_confidence
    row = {
        "set": args.src.name,
        "spelling": speller is not None,
        "lm_review": review is not None,
        "held": held,
        "language": args.language,
        **result,
    }
    columns = ["set", "spelling", "lm_review", "held", "sentences", "gleu", "exact_match", "unchanged_kept", "changed"]
    print(table([row], columns + [f"guard_{reason}" for reason in REASONS]))
    if args.json:
        args.json.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
