"""Offline batch correction: paragraphs corrected by an engine in this process, read and reviewed as the service
does.

The batch path that ``gecserve correct`` (``service.commands.correct``), ``gecserve eval``
(``models.gec.evaluate``), ``models.gec.compare_spelling`` and ``models.gec.package`` share: paragraphs are
planned into units (``service.text.units``: protected spans, sentences, languages, the spelling stage), the units
the model reads are decoded in batches of similar length (with the model's keep bias), reviewed by the language
model where it ships one (``service.text.lm_review``), and the corrections assembled with the guard. No server, no
queues: the engine is called directly.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from service.engine.decoding.types import DecodeParams
from service.engine.engine import Engine, takes_keep_bias
from service.engine.manifest import ModelManifest
from service.text.language import language_identifier
from service.text.lm_review import LanguageModelReview
from service.text.ngrams import NgramModel
from service.text.spelling import Speller, spelling_files
from service.text.units import Assembled, Unit, assemble, plan_units


def model_speller(model_dir: Path) -> Speller | None:
    """The spelling stage of a model folder, as the service loads it; None where it ships no vocabulary."""
    files = spelling_files(model_dir, ModelManifest.load(model_dir))
    return Speller.load(*files) if files is not None else None


def model_review(model_dir: Path) -> LanguageModelReview | None:
    """The language model's review of a model folder's corrections, as the service loads it; None where it ships
    no language model."""
    name = ModelManifest.load(model_dir).language_model
    return LanguageModelReview(NgramModel.load(model_dir / name)) if name is not None else None


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
) -> list[Assembled]:
    """Correct paragraphs (spelled first by ``speller`` if given), decoded with ``keep_bias`` (None: the model's
    default level, as served) and reviewed by ``review`` if given; units of similar length are decoded together in
    batches, and units the model does not read (other languages, text it cannot read) are not decoded, as in the
    service. Each paragraph's correction, as the service assembles it (with what the guard dropped)."""
    if keep_bias is None:
        keep_bias = engine.manifest.keep_bias.get("default", 0.0) if takes_keep_bias(decoding) else 0.0
    spell = speller.corrections if speller is not None else None
    english = language_identifier().english_sentences
    plans: list[list[Unit]] = [plan_units(t, engine.codec, engine.max_source_tokens, spell, english) for t in texts]
    flat = [(p, u) for p, units in enumerate(plans) for u in range(len(units))]
    outputs: dict[int, str] = {
        i: unit.text for i, (p, u) in enumerate(flat) if not (unit := plans[p][u]).decoded_by_model
    }
    order = sorted(
        (i for i in range(len(flat)) if i not in outputs), key=lambda i: len(plans[flat[i][0]][flat[i][1]].tokens)
    )
    bar = tqdm(total=len(order), desc=f"correct ({decoding})", unit="sent", file=sys.stderr, disable=not progress)
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        sources = [plans[flat[i][0]][flat[i][1]].tokens for i in chunk]
        biases = [keep_bias] * len(sources)
        for i, result in zip(chunk, engine.generate(sources, decoding, params, keep_biases=biases), strict=True):
            output = engine.codec.decode(result.tokens)
            outputs[i] = output if review is None else review.review(plans[flat[i][0]][flat[i][1]].text, output).text
        bar.update(len(chunk))
    bar.close()
    corrected: list[Assembled] = []
    position = 0
    for text, units in zip(texts, plans, strict=True):
        unit_texts = [outputs[position + k] for k in range(len(units))]
        position += len(units)
        corrected.append(assemble(text, units, unit_texts))
    return corrected
