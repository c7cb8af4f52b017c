"""Tests for the JFLEG GLEU implementation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from models.gec.metrics.gleu import corpus_gleu, gleu_from_stats, gleu_stats


def _t(text: str) -> list[str]:
    return text.split()


SRC = _t("he go to school every day by bus")
REF = _t("he goes to school every day by bus")


def test_identical_to_single_reference_is_100() -> None:
    result = corpus_gleu([SRC], [[REF]], [REF])
    assert result.mean == pytest.approx(100.0)
    assert result.std == 0.0
    assert result.ci == pytest.approx((100.0, 100.0))


def test_hand_computed_source_copy() -> None:
    # Hypothesis = source. Matches with the reference minus source n-grams absent from it:
    #   n=1: 7 - 1 ("go") over 8; n=2: 5 - 2 ("he go", "go to") over 7;
    #   n=3: 4 - 2 over 6;         n=4: 3 - 2 over 5; equal lengths so no brevity penalty.
    stats = gleu_stats(SRC, REF, SRC)
    assert stats.tolist() == [8, 8, 6, 8, 3, 7, 2, 6, 1, 5]
    expected = 100 * (6 / 8 * 3 / 7 * 2 / 6 * 1 / 5) ** 0.25
    assert expected == pytest.approx(38.2603, abs=1e-4)
    assert corpus_gleu([SRC], [[REF]], [SRC]).mean == pytest.approx(expected)


def test_hand_computed_brevity_penalty() -> None:
    hyp = _t("he goes to school every day")  # all n-grams right, 6 tokens vs 8
    assert gleu_stats(SRC, REF, hyp).tolist() == [6, 8, 6, 6, 5, 5, 4, 4, 3, 3]
    expected = 100 * math.exp(1 - 8 / 6)
    assert corpus_gleu([SRC], [[REF]], [hyp]).mean == pytest.approx(expected)


def test_source_scores_below_correction() -> None:
    sources = [SRC, _t("she like apples")]
    refs = [[REF], [_t("she likes apples")]]
    corrected = corpus_gleu(sources, refs, [REF, _t("she likes apples")]).mean
    copied = corpus_gleu(sources, refs, sources).mean
    assert copied < corrected


def test_penalty_is_clipped_at_zero() -> None:
    # every hypothesis unigram is a source unigram missing from the reference
    stats = gleu_stats(_t("a a a"), ["b"], _t("a a a"))
    assert stats[2] == 0
    assert gleu_from_stats(stats) == 0.0


def test_corpus_statistics_are_summed() -> None:
    hyp2 = _t("he goes to school every day")
    total = gleu_stats(SRC, REF, SRC) + gleu_stats(SRC, REF, hyp2)
    result = corpus_gleu([SRC, SRC], [[REF], [REF]], [SRC, hyp2])
    assert result.mean == pytest.approx(gleu_from_stats(total))


def test_identical_references_equal_single_reference() -> None:
    sources = [SRC, _t("she like apples")]
    hyps = [SRC, _t("she likes apple")]
    single = corpus_gleu(sources, [[REF], [_t("she likes apples")]], hyps)
    multi = corpus_gleu(sources, [[REF] * 4, [_t("she likes apples")] * 4], hyps)
    assert multi.mean == pytest.approx(single.mean)
    assert multi.std == pytest.approx(0.0, abs=1e-9)


def test_multi_reference_is_deterministic_by_seed() -> None:
    other = _t("he goes to the school every day by bus")
    sources = [SRC] * 20
    refs = [[REF, other]] * 20
    hyps = [REF] * 20
    first = corpus_gleu(sources, refs, hyps, iterations=50, seed=3)
    again = corpus_gleu(sources, refs, hyps, iterations=50, seed=3)
    assert first == again
    assert first.std > 0.0
    assert gleu_from_stats(sum(gleu_stats(SRC, other, REF) for _ in range(20))) < first.mean
    assert first.mean < 100.0
    half = first.mean - first.ci[0]
    assert half == pytest.approx(1.959964 * first.std, rel=1e-5)
    assert first.ci[1] - first.mean == pytest.approx(half)


def test_rounds_match_a_plain_loop() -> None:
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(6)]

    def sent(length: int) -> list[str]:
        return list(rng.choice(vocab, size=length))

    n, iterations, seed = 30, 40, 11
    sources = [sent(8) for _ in range(n)]
    refs = [[sent(8) for _ in range(1 + i % 3)] for i in range(n)]
    hyps = [sent(7) for _ in range(n)]
    choice = np.random.default_rng(seed).integers(0, [len(r) for r in refs], size=(iterations, n))
    scores = [
        gleu_from_stats(sum(gleu_stats(sources[i], refs[i][k], hyps[i]) for i, k in enumerate(row))) for row in choice
    ]
    result = corpus_gleu(sources, refs, hyps, iterations=iterations, seed=seed)
    assert result.mean == pytest.approx(float(np.mean(scores)))
    assert result.std == pytest.approx(float(np.std(scores)))


def test_input_validation() -> None:
    with pytest.raises(ValueError, match="length mismatch"):
        corpus_gleu([SRC], [[REF], [REF]], [SRC])
    with pytest.raises(ValueError, match="no reference"):
        corpus_gleu([SRC], [[]], [SRC])
    with pytest.raises(ValueError, match="empty"):
        corpus_gleu([], [], [])
