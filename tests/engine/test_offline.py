"""Offline batch correction on the tiny model: paragraphs in order, only what the model reads is decoded."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from service.engine.decoding.params import DecodeParams
from service.engine.engine import DecodeResult, Engine
from service.engine.manifest import level_keep_bias
from service.engine.offline import correct_texts, model_confidence, model_review, model_speller
from service.engine.runtime import RuntimeOptions
from service.text.dialects import swaps_dialect
from tests.conftest import DEFAULT_MODEL, FIXTURE_MODEL


class CountingEngine:
    """The engine, with the batches it is given recorded."""

    def __init__(self, engine: Engine) -> None:
        self.engine, self.batches = engine, []
        self.codec, self.max_source_tokens, self.manifest = engine.codec, engine.max_source_tokens, engine.manifest

    def generate(
        self,
        sources: Sequence[Sequence[int]],
        strategy: str,
        params: DecodeParams | None = None,
        keep_biases: Sequence[float] | None = None,
    ) -> list[DecodeResult]:
        self.batches.append(len(sources))
        return self.engine.generate(sources, strategy, params, keep_biases=keep_biases)


def test_paragraphs_in_order_and_only_what_the_model_reads_is_decoded(engine: Engine) -> None:
    counting = CountingEngine(engine)
    texts = ["i saw a apple yesterday", "", "Das ist ein Test. Ich habe keine Zeit.", "😀😀😀", "Tom found an owl."]
    corrected = [c.text for c in correct_texts(counting, texts, batch_size=1)]  # type: ignore[arg-type]
    assert corrected[0] == "I saw an apple yesterday."
    assert corrected[1:4] == texts[1:4]  # empty, German, emoji: as written
    assert counting.batches == [1, 1]  # one unit per English paragraph, none for the others
    assert [c.text for c in correct_texts(engine, texts, batch_size=8)] == corrected


def test_the_fixture_ships_no_spelling_stage() -> None:
    assert model_speller(FIXTURE_MODEL) is None


TEMPTING = [  # sentences with an error beside a word of one dialect (the bundled models write "theatre" for "theater")
    "I realized that the theater was close.",
    "My favorite color is blue and I likes it.",
    "The colour of the cars are very nice.",
    "She traveled to London and analyzed the datas.",
    "We has organised a meeting at the city centre yesterday.",
    "The neighbors was very friendly with us.",
    "He is in the theater now and he like the programme.",  # version 4 writes "theatre" here
]


@pytest.mark.slow
def test_the_bundled_model_s_dialect_swaps_are_dropped_and_its_other_edits_kept() -> None:
    engine = Engine(DEFAULT_MODEL, options=RuntimeOptions(intra_op_threads=1))
    bias = level_keep_bias(engine.manifest, "default")
    sources = [engine.codec.encode(text) for text in TEMPTING]
    raw = [
        engine.codec.decode_with_ends(r.tokens)[0]
        for r in engine.generate(sources, "aggressive", keep_biases=[bias] * len(sources))
    ]
    assert any(swaps_dialect(text, out) for text, out in zip(TEMPTING, raw, strict=True)), "the model swaps none"
    corrected = correct_texts(
        engine,
        TEMPTING,
        speller=model_speller(DEFAULT_MODEL),
        review=model_review(DEFAULT_MODEL),
        confidence=model_confidence(DEFAULT_MODEL),
    )
    for text, result in zip(TEMPTING, corrected, strict=True):
        assert not any(swaps_dialect(e.original, e.replacement) for e in [*result.edits, *result.held]), text
        assert not swaps_dialect(text, result.text), result.text
    assert any(result.edits for result in corrected)  # the other errors are still corrected
