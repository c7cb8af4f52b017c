"""Greedy decoding against ``transformers`` ``generate(num_beams=1)`` on the same weights."""

from __future__ import annotations

import pytest

from service.engine.decoding.params import DecodeParams
from tests.engine.conftest import SENTENCES, engine_for

torch = pytest.importorskip("torch", reason="build extra (torch) not installed")


@pytest.fixture(scope="module")
def hf_model(tiny_model_dir):
    from transformers import AutoModelForSeq2SeqLM

    return AutoModelForSeq2SeqLM.from_pretrained(str(tiny_model_dir / "hf")).eval()


def test_fp32_greedy_equals_transformers(hf_model) -> None:
    from models.export.verify import hf_greedy

    engine = engine_for("fp32")
    sources = [s for s in engine.codec.encode_batch(SENTENCES) if s]
    reference = hf_greedy(hf_model, engine, sources, max_new_tokens=40)
    ours = engine.generate(sources, "greedy", DecodeParams(max_new_tokens=40))
    assert [r.tokens for r in ours] == reference


def test_greedy_batched_equals_one_by_one() -> None:
    for variant in ("fp32", "int8"):
        engine = engine_for(variant)
        sources = engine.codec.encode_batch(SENTENCES)
        batched = engine.generate(sources, "greedy")
        single = [engine.generate([s], "greedy")[0] for s in sources]
        assert [r.tokens for r in batched] == [r.tokens for r in single]


def test_greedy_corrects_fixture_errors(engine) -> None:
    assert engine.correct(["i saw a apple yesterday"], "greedy") == ["I saw an apple yesterday."]


def test_length_limit_stops_unfinished(engine) -> None:
    sources = engine.codec.encode_batch(["The cat likes the old car. Tom found an honest owl."])
    result = engine.generate(sources, "greedy", DecodeParams(max_new_tokens=3))[0]
    assert len(result.tokens) == 3
    assert result.finished is False
