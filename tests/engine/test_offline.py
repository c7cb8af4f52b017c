"""Offline batch correction on the tiny model: paragraphs in order, only what the model reads is decoded."""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.decoding.types import DecodeParams
from service.engine.engine import DecodeResult, Engine
from service.engine.offline import correct_texts, model_speller
from tests.conftest import FIXTURE_MODEL


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
