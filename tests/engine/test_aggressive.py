"""Aggressive decoding returns token-for-token what greedy returns, for every input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.fixture import clean_sentence, corrupt
from service.engine.decoding.alignment import anchors_of, realign
from service.engine.decoding.params import DecodeParams
from service.engine.engine import InputTooLongError
from tests.engine.conftest import SENTENCES, engine_for

VARIANTS = [("fp32", "compact"), ("int8", "compact"), ("int8", "masked")]


def _tokens(results) -> list[list[int]]:
    return [r.tokens for r in results]


@pytest.mark.parametrize(("variant", "cache"), VARIANTS)
def test_aggressive_equals_greedy_on_known_sentences(variant: str, cache: str) -> None:
    engine = engine_for(variant, cache)
    sources = engine.codec.encode_batch(SENTENCES)
    greedy = _tokens(engine.generate(sources, "greedy"))
    assert _tokens(engine.generate(sources, "aggressive")) == greedy
    assert [engine.generate([s], "aggressive")[0].tokens for s in sources] == greedy


realistic = st.builds(
    lambda seed, extra: corrupt(
        clean_sentence(__import__("random").Random(seed)), __import__("random").Random(seed + extra)
    ),
    st.integers(0, 10**6),
    st.integers(0, 1000),
)
text = st.one_of(realistic, st.text(alphabet=st.characters(codec="utf-8"), max_size=60))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(text, min_size=1, max_size=6),
    variant=st.sampled_from(VARIANTS),
    limit=st.one_of(st.none(), st.integers(1, 30)),
)
def test_aggressive_equals_greedy_on_sentences(texts: list[str], variant: tuple[str, str], limit: int | None) -> None:
    engine = engine_for(*variant)
    sources = [s[: engine.max_source_tokens] for s in engine.codec.encode_batch(texts)]
    params = DecodeParams(max_new_tokens=limit)
    greedy = engine.generate(sources, "greedy", params)
    aggressive = engine.generate(sources, "aggressive", params)
    assert _tokens(aggressive) == _tokens(greedy)
    assert [r.finished for r in aggressive] == [r.finished for r in greedy]
    for a, g in zip(aggressive, greedy, strict=True):
        assert a.passes <= g.passes
        assert sum(a.accepted) == g.passes  # every token (and </s>) accounted for once
        # each token's log-probability, read off the pass that verified it, is greedy's (a correction's confidence)
        assert len(a.logprobs) == len(a.tokens)
        np.testing.assert_allclose(a.logprobs, g.logprobs, atol=2e-3)
        assert all(p <= 1e-6 for p in a.logprobs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), batch=st.integers(1, 5), variant=st.sampled_from(VARIANTS))
def test_aggressive_equals_greedy_on_random_tokens(data, batch: int, variant: tuple[str, str]) -> None:
    engine = engine_for(*variant)
    vocab = engine.manifest.architecture["vocab_size"]
    sources = [data.draw(st.lists(st.integers(4, vocab - 1), min_size=0, max_size=40)) for _ in range(batch)]
    params = DecodeParams(max_new_tokens=data.draw(st.integers(1, 50)))
    assert _tokens(engine.generate(sources, "aggressive", params)) == _tokens(
        engine.generate(sources, "greedy", params)
    )


def test_clean_sentence_takes_one_pass(engine) -> None:
    sources = engine.codec.encode_batch(["Tom found an honest owl."])
    result = engine.generate(sources, "aggressive")[0]
    assert engine.codec.decode(result.tokens) == "Tom found an honest owl."
    assert result.passes == 1
    assert result.accepted == [len(result.tokens) + 1]


def test_aggressive_uses_fewer_passes_than_greedy(engine) -> None:
    sources = engine.codec.encode_batch(SENTENCES[:6])
    greedy = engine.generate(sources, "greedy")
    aggressive = engine.generate(sources, "aggressive")
    assert sum(r.passes for r in aggressive) * 2 < sum(r.passes for r in greedy)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(text, min_size=1, max_size=6))
def test_guessed_drafts_save_passes_and_change_no_output(texts: list[str]) -> None:
    engine = engine_for("int8")
    sources = [s[: engine.max_source_tokens] for s in engine.codec.encode_batch(texts)]
    guessing = engine.generate(sources, "aggressive", DecodeParams(), keep_biases=[0.5] * len(sources))
    plain = engine.generate(sources, "aggressive", DecodeParams(max_guess=0), keep_biases=[0.5] * len(sources))
    assert _tokens(guessing) == _tokens(plain)
    assert sum(r.passes for r in guessing) <= sum(r.passes for r in plain)


def test_realign_needs_a_unique_ngram() -> None:
    anchors = anchors_of([5, 6, 7, 5, 8])
    assert realign([9, 6], anchors) == 2  # "6" occurs once: resume after it
    assert realign([9, 5], anchors) is None  # "5" occurs twice, "9 5" never
    assert realign([7, 5], anchors) == 4  # the 2-gram "7 5" is unique
    assert realign([], anchors) is None


def test_relaxed_verification_is_opt_in_and_lossy_by_design(engine) -> None:
    sources = engine.codec.encode_batch(SENTENCES[:6])
    exact = engine.generate(sources, "aggressive")
    relaxed = engine.generate(sources, "aggressive", DecodeParams(relaxed_top_k=3, min_block=2))
    assert sum(r.passes for r in relaxed) <= sum(r.passes for r in exact)
    # min_block forces draft tokens in: "i" is kept although the model would write "I".
    assert engine.codec.decode(relaxed[0].tokens).startswith("i ")
    assert engine.codec.decode(exact[0].tokens).startswith("I ")


def test_empty_and_too_long_inputs(engine) -> None:
    assert engine.generate([[]], "aggressive")[0].tokens == []
    too_long = [5] * (engine.max_source_tokens + 1)
    with pytest.raises(InputTooLongError):
        engine.generate([too_long], "aggressive")
    fits = [5] * engine.max_source_tokens
    assert engine.generate([fits], "aggressive", DecodeParams(max_new_tokens=4))[0].passes >= 1


def test_gap_recording_matches_greedy_logits(engine) -> None:
    sources = engine.codec.encode_batch(["i saw a apple yesterday"])
    greedy = engine.generate(sources, "greedy", DecodeParams(record_gaps=True))[0]
    aggressive = engine.generate(sources, "aggressive", DecodeParams(record_gaps=True))[0]
    assert len(greedy.gaps) == len(greedy.tokens) + 1
    np.testing.assert_allclose(aggressive.gaps, greedy.gaps, atol=1e-3)


def test_batch_with_rows_near_the_position_limit(engine) -> None:
    """A short block padded beside a long one must not run past the position table."""
    long_source = engine.codec.encode("The cat likes the old car. " * 12)[: engine.max_source_tokens]
    short_source = engine.codec.encode("Tom found an owl.")
    sources = [long_source, short_source]
    greedy = engine.generate(sources, "greedy")
    assert _tokens(engine.generate(sources, "aggressive")) == _tokens(greedy)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(text, min_size=1, max_size=6), limit=st.one_of(st.none(), st.integers(1, 30)))
def test_greedy_is_the_same_in_both_cache_layouts(texts: list[str], limit: int | None) -> None:
    """The compact and masked key/value layouts are two views of one history: same tokens, same passes."""
    compact, masked = engine_for("int8", "compact"), engine_for("int8", "masked")
    sources = [s[: compact.max_source_tokens] for s in compact.codec.encode_batch(texts)]
    params = DecodeParams(max_new_tokens=limit)
    from_compact = compact.generate(sources, "greedy", params)
    from_masked = masked.generate(sources, "greedy", params)
    assert _tokens(from_compact) == _tokens(from_masked)
    assert [r.finished for r in from_compact] == [r.finished for r in from_masked]
