"""Offline batch correction: paragraphs corrected by an engine in this process, read and reviewed as the service
does.

The batch path that ``gecserve correct`` (``service.commands.correct``), ``gecserve eval``
(``models.gec.evaluate``), ``models.gec.compare_spelling`` and ``models.gec.package`` share: paragraphs are
planned into units (``service.text.units``: protected spans, sentences, languages, the spelling stage), the units
the model reads are decoded in batches of similar length (with the model's keep bias), reviewed by the language
model where it ships one (``service.text.lm_review``), and the corrections assembled with the guard and the rule
stage (``service.text.units.assemble``), as served. No server, no queues: the engine is called directly.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine, keep_bias_for
from service.engine.manifest import ModelManifest
from service.text.confidence import UNCALIBRATED, ConfidenceModel, TokenScores
from service.text.dialects import dialect_of
from service.text.language import language_identifier
from service.text.lm_review import LanguageModelReview
from service.text.ngrams import NgramModel
from service.text.policy import threshold_of
from service.text.ranking import Ranker
from service.text.spelling import Speller, spelling_files
from service.text.units import Assembled, Scoring, assemble, plan_units
from service.text.variants import suggest_variants


def model_speller(model_dir: Path) -> Speller | None:
    """The spelling stage of a model folder, as the service loads it; None where it ships no vocabulary."""
    files = spelling_files(model_dir, ModelManifest.load(model_dir))
    return Speller.load(*files) if files is not None else None


def model_review(model_dir: Path) -> LanguageModelReview | None:
    """The language model's review of a model folder's corrections, as the service loads it; None where it ships
    no language model."""
    name = ModelManifest.load(model_dir).language_model
    return LanguageModelReview(NgramModel.load(model_dir / name)) if name is not None else None


def model_confidence(model_dir: Path) -> ConfidenceModel:
    """The fit that gives a model's edits their confidence, as the service loads it (``UNCALIBRATED`` where the
    model ships none)."""
    name = ModelManifest.load(model_dir).confidence
    return ConfidenceModel.load(model_dir / name) if name is not None else UNCALIBRATED


def model_scoring(model_dir: Path, review: LanguageModelReview | None, speller: Speller | None = None) -> Scoring:
    """How a model folder's edits get their confidence, as the service scores them (none held back): its fit, the
    language model of its ``review``, and the learners' letter edits of its spelling ranking (the loaded ``speller``'s
    where there is one, else read from the folder: 24 MB not held twice)."""
    manifest = ModelManifest.load(model_dir)
    if speller is not None:
        ranking = speller.ranker
    else:
        ranking = Ranker.load(model_dir / manifest.spelling_model) if manifest.spelling_model else None
    return Scoring(
        model_confidence(model_dir),
        review.model if review is not None else None,
        ranking.edits.log_prob if ranking is not None else None,
    )


def correct_texts(
    engine: Engine,
    texts: Sequence[str],
    decoding: str = "aggressive",
    batch_size: int = 32,
    params: DecodeParams | None = None,
    progress: bool = False,
    speller: Speller | None = None,
    keep_bias: float | None = None,
    review: LanguageModelReview | None = None,
    confidence: ConfidenceModel | None = None,
    level: str = "default",
    min_confidence: float | None = None,
    language: str | None = None,
) -> list[Assembled]:
    """Correct paragraphs (spelled first by ``speller`` if given), decoded with ``keep_bias`` (None: the model's
    for ``level``, as served) and reviewed by ``review`` if given; units of similar length are decoded together in
    batches, and units the model does not read (other languages, text it cannot read) are not decoded, as in the
    service. Each paragraph's correction, as the service assembles it (with what the guard dropped); with a
    ``confidence`` model, each edit's confidence is its, and edits under ``level``'s threshold (or
    ``min_confidence``) are held back (``Assembled.held``), else every edit is kept. With ``language`` (an English
    dialect's code, ``service.text.dialects``), words spelled in another dialect's way get its spelling, as served."""
    dialect = dialect_of(language)
    if keep_bias is None:
        keep_bias = keep_bias_for(engine.manifest, decoding, level)
    spell = speller.corrections if speller is not None else None
    english = language_identifier().english_sentences
    known = speller.may_rewrite if speller is not None else None
    plans = [plan_units(t, engine.codec, engine.max_source_tokens, spell, english, known) for t in texts]
    flat = [(p, u) for p, units in enumerate(plans) for u in range(len(units))]
    outputs: dict[int, str] = {
        i: unit.text for i, (p, u) in enumerate(flat) if not (unit := plans[p][u]).decoded_by_model
    }
    scores: dict[int, TokenScores] = {}
    order = sorted(
        (i for i in range(len(flat)) if i not in outputs), key=lambda i: len(plans[flat[i][0]][flat[i][1]].tokens)
    )
    bar = tqdm(total=len(order), desc=f"correct ({decoding})", unit="sent", file=sys.stderr, disable=not progress)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        sources = [plans[flat[i][0]][flat[i][1]].tokens for i in chunk]
        biases = [keep_bias] * len(sources)
        for i, result in zip(chunk, engine.generate(sources, decoding, params, keep_biases=biases), strict=True):
            output, ends = engine.codec.decode_with_ends(result.tokens)
            if result.logprobs:
                scores[i] = TokenScores(output, ends, tuple(result.logprobs))
            outputs[i] = output if review is None else review.review(plans[flat[i][0]][flat[i][1]].text, output).text
        bar.update(len(chunk))
    bar.close()
    ranker = speller.ranker if speller is not None else None
    scoring = Scoring(
        confidence or UNCALIBRATED,
        review.model if review is not None else None,
        ranker.edits.log_prob if ranker is not None else None,
        threshold_of(level, min_confidence) if confidence is not None else 0.0,
    )
    corrected: list[Assembled] = []
    position = 0
    for text, units in zip(texts, plans, strict=True):
        indices = range(position, position + len(units))
        position += len(units)
        outputs_of, scores_of = [outputs[i] for i in indices], [scores.get(i) for i in indices]
        assembled = assemble(text, units, outputs_of, None, scores_of, scoring)
        corrected.append(suggest_variants(text, units, assembled, dialect, scoring.threshold))
    return corrected
