"""Sampling: the warpers match ``transformers``, seeds reproduce, degenerate settings are greedy."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine.decoding import sampling
from service.engine.decoding.params import DecodeParams, Hypothesis
from service.engine.decoding.ranking import log_softmax
from service.engine.decoding.sampling import SampleDecoder, warp
from tests.engine.conftest import SENTENCES, engine_for

UNSURE = "Completely unrelated text that the tiny model never saw!"  # the flattest first-token distribution
sentence = st.sampled_from([s for s in SENTENCES if s])
seeds = st.integers(0, 2**32)
knobs = st.fixed_dictionaries(
    {
        "temperature": st.sampled_from([0.7, 1.0, 1.5, 3.0]),
        "top_k": st.sampled_from([0, 2, 10]),
        "top_p": st.sampled_from([1.0, 0.9, 0.5]),
        "num_return_sequences": st.integers(1, 3),
    }
)


def _outputs(results) -> list[list[tuple[list[int], float]]]:
    return [[(h.tokens, round(h.score, 5)) for h in r.hypotheses] for r in results]


def _assert_same_samples(a, b) -> None:
    assert [h.tokens for h in a.hypotheses] == [h.tokens for h in b.hypotheses]
    assert [h.score for h in a.hypotheses] == pytest.approx([h.score for h in b.hypotheses], rel=1e-5)


def _first_step_logits(engine, source: list[int]) -> np.ndarray:
    state = engine.model.start([source])
    return state.step(np.array([engine.manifest.decoder_prefix_ids]))[0, -1]


def _log_prob(engine, source: list[int], target: list[int]) -> float:
    """Teacher-forced log-probability of ``target`` (content ids, then ``</s>`` if it has one)."""
    prefix = list(engine.manifest.decoder_prefix_ids)
    state = engine.model.start([source])
    logits = state.step(np.array([prefix + target[:-1]]))[0, len(prefix) - 1 :]
    return float(log_softmax(logits)[np.arange(len(target)), target].sum())


def _first_tokens(result, eos: int) -> np.ndarray:
    return np.array([h.tokens[0] if h.tokens else eos for h in result.hypotheses])


@settings(max_examples=40, deadline=None)
@given(knobs=knobs, seed=seeds)
def test_warp_matches_transformers_processors(knobs: dict, seed: int) -> None:
    torch = pytest.importorskip("torch", reason="build extra (torch) not installed")
    from transformers import GenerationConfig, LogitsProcessorList
    from transformers.generation.utils import GenerationMixin

    params = DecodeParams(**knobs)
    config = GenerationConfig(do_sample=True, temperature=params.temperature, top_k=params.top_k, top_p=params.top_p)

    class _Bare(GenerationMixin):  # only to ask transformers which warpers it applies, in which order
        pass

    processors = _Bare()._get_logits_processor(generation_config=config, logits_processor=LogitsProcessorList())
    logits = (np.random.default_rng(seed).standard_normal((3, 400)) * 3).astype(np.float32)
    reference = processors(torch.zeros((3, 1), dtype=torch.long), torch.from_numpy(logits.copy())).numpy()
    ours = warp(logits, params)
    assert np.array_equal(np.isneginf(ours), np.isneginf(reference))
    kept = np.isfinite(reference)
    np.testing.assert_allclose(ours[kept], reference[kept], rtol=1e-5, atol=1e-5)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=sentence, others=st.lists(sentence, min_size=1, max_size=3), seed=seeds, knobs=knobs)
def test_same_seed_same_output_whatever_else_is_in_the_batch(text: str, others: list[str], seed: int, knobs) -> None:
    engine = engine_for("fp32")
    source, *rest = engine.codec.encode_batch([text, *others])
    params = DecodeParams(seed=seed, **knobs)
    alone = engine.generate([source], "sample", params)
    assert _outputs(engine.generate([source], "sample", params)) == _outputs(alone)
    # Samples are identical whatever the batch; scores may differ in the last float bits, since
    # fp32 matrix products of a different batch shape can sum in a different order.
    _assert_same_samples(engine.generate([source, *rest], "sample", params)[0], alone[0])
    # the seed stream is tied to the index: at index 1, any neighbour at index 0 gives the same samples
    second = [engine.generate([other, source], "sample", params)[1] for other in (rest[0], [7, 8, 9])]
    _assert_same_samples(second[0], second[1])


def test_different_seeds_differ() -> None:
    engine = engine_for("fp32")
    sources = engine.codec.encode_batch([UNSURE])
    outputs = {
        tuple(engine.generate(sources, "sample", DecodeParams(seed=seed, temperature=1.5))[0].tokens)
        for seed in range(8)
    }
    assert len(outputs) > 1


def test_no_seed_draws_a_fresh_one_for_each_call(monkeypatch) -> None:
    """Without a seed each call draws its own from the OS, and samples as that seed would."""
    engine = engine_for("fp32")
    sources = engine.codec.encode_batch([UNSURE])
    params = DecodeParams(temperature=3.0, num_return_sequences=3)
    drawn = iter([5, 6])
    monkeypatch.setattr(sampling.secrets, "randbits", lambda bits: next(drawn))
    unseeded = [_outputs(engine.generate(sources, "sample", params)) for _ in range(2)]
    seeded = [_outputs(engine.generate(sources, "sample", replace(params, seed=s))) for s in (5, 6)]
    assert unseeded == seeded and seeded[0] != seeded[1]


@pytest.mark.parametrize(
    "knobs",
    [
        {"temperature": 0.0},
        {"top_k": 1, "temperature": 3.0},
        {"top_p": 1e-9, "temperature": 3.0},
    ],
)
def test_degenerate_settings_are_greedy(knobs: dict) -> None:
    engine = engine_for("fp32")
    sources = engine.codec.encode_batch([s for s in SENTENCES if s])
    for limit in (4, None):
        greedy = engine.generate(sources, "greedy", DecodeParams(max_new_tokens=limit))
        sampled = engine.generate(
            sources, "sample", DecodeParams(max_new_tokens=limit, seed=1, num_return_sequences=2, **knobs)
        )
        for g, s in zip(greedy, sampled, strict=True):
            assert [h.tokens for h in s.hypotheses] == [g.tokens, g.tokens]
            assert s.tokens == g.tokens and s.finished == g.finished


def _chi_square(counts: np.ndarray, probs: np.ndarray, bins: np.ndarray) -> float:
    """Chi-square of token counts against ``probs`` over the given tokens plus one bin for the rest."""
    observed = np.append(counts[bins], counts.sum() - counts[bins].sum())
    expected = np.append(probs[bins], 1.0 - probs[bins].sum()) * counts.sum()
    return float(((observed - expected) ** 2 / expected).sum())


def test_temperature_reshapes_the_distribution() -> None:
    engine = engine_for("fp32")
    source = engine.codec.encode(UNSURE)
    logits = _first_step_logits(engine, source)
    vocab, eos = len(logits), engine.manifest.eos_token_id
    bins = np.argsort(logits)[::-1][:5]  # the 5 likeliest first tokens, plus "the rest": 5 degrees of freedom
    counts, probs = {}, {}
    for temperature in (1.0, 2.0):
        params = DecodeParams(seed=11, temperature=temperature, num_return_sequences=3000, max_new_tokens=1)
        first = _first_tokens(engine.generate([source], "sample", params)[0], eos)
        counts[temperature] = np.bincount(first, minlength=vocab)
        probs[temperature] = np.exp(log_softmax(logits / temperature))
    assert probs[1.0][bins[0]] > 0.9 > 0.4 > probs[2.0][bins[0]]
    # each temperature's samples fit its own softmax(logits / T) (chi-square 5 dof, 99.99%: 25.7) ...
    assert _chi_square(counts[1.0], probs[1.0], bins) < 25.7
    assert _chi_square(counts[2.0], probs[2.0], bins) < 25.7
    # ... and not the other one
    assert _chi_square(counts[1.0], probs[2.0], bins) > 1000
    assert _chi_square(counts[2.0], probs[1.0], bins) > 1000


def test_top_k_and_top_p_limit_the_support() -> None:
    engine = engine_for("fp32")
    source = engine.codec.encode(UNSURE)
    logits = _first_step_logits(engine, source) / 2.0
    eos = engine.manifest.eos_token_id
    order = np.argsort(logits)[::-1]
    probs = np.exp(log_softmax(logits))[order]
    nucleus = set(order[np.cumsum(probs) - probs < 0.5].tolist())  # mass of the likelier tokens below top_p
    for knobs, allowed in (({"top_k": 3}, set(order[:3].tolist())), ({"top_p": 0.5}, nucleus)):
        params = DecodeParams(seed=5, temperature=2.0, num_return_sequences=600, max_new_tokens=1, **knobs)
        seen = set(_first_tokens(engine.generate([source], "sample", params)[0], eos).tolist())
        assert seen <= allowed
        assert len(seen) >= 3


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(sentence, min_size=1, max_size=3), seed=seeds, knobs=knobs, limit=st.sampled_from([None, 3, 8]))
def test_samples_end_at_eos_or_the_limit_and_score_their_log_prob(texts, seed: int, knobs, limit) -> None:
    engine = engine_for("fp32")
    m = engine.manifest
    sources = engine.codec.encode_batch(texts)
    results = engine.generate(sources, "sample", DecodeParams(seed=seed, max_new_tokens=limit, **knobs))
    for source, result in zip(sources, results, strict=True):
        cap = limit or 2 * len(source) + 10
        assert len(result.hypotheses) == knobs["num_return_sequences"]
        assert result.tokens == result.hypotheses[0].tokens
        assert result.finished == (len(result.tokens) < cap)
        assert result.passes == len(result.accepted) == 1 + max(min(len(h.tokens), cap - 1) for h in result.hypotheses)
        for h in result.hypotheses:
            assert m.eos_token_id not in h.tokens and len(h.tokens) <= cap
            ended = len(h.tokens) < cap  # stopped before the limit: only </s> does that
            target = h.tokens + ([m.eos_token_id] if ended else [])
            assert h.score == pytest.approx(_log_prob(engine, source, target), abs=1e-4)


@pytest.mark.parametrize(
    "knobs",
    [
        {"num_return_sequences": 0},
        {"top_k": -1},
        {"top_p": 1.5},
        {"top_p": -0.1},
        {"top_p": 0.0},
        {"top_p": float("nan")},
        {"seed": -3},
        {"temperature": -1.0},
        {"temperature": 1e-320},  # logits / 1e-320 overflow to inf: refused, not sampled into garbage
        {"temperature": float("nan")},
        {"temperature": float("inf")},
    ],
)
def test_bad_settings_raise(knobs: dict) -> None:
    engine = engine_for("fp32")
    with pytest.raises(ValueError, match=next(iter(knobs))):
        SampleDecoder(engine.model, DecodeParams(**knobs))


def test_empty_source_gives_an_empty_hypothesis() -> None:
    engine = engine_for("fp32")
    results = engine.generate([[], [5, 6]], "sample", DecodeParams(seed=0, num_return_sequences=2))
    assert results[0].tokens == [] and results[0].hypotheses == [Hypothesis([], 0.0)]
    assert len(results[1].hypotheses) == 2
