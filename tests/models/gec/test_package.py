"""The model's keep-bias levels, named from its figures across the bias: the default keeps correct sentences as
written, picky is the recall end below it."""

from __future__ import annotations

from models.gec.package import keep_bias_levels


def _row(bias: float, jfleg: float, fce: float, kept: float) -> dict:
    return {"keep_bias": bias, "jfleg_dev": {"gleu": jfleg}, "fce_dev": {"gleu": fce, "unchanged_kept": kept}}


def test_the_default_is_the_best_bias_that_keeps_correct_sentences_and_picky_the_best_below_it() -> None:
    curve = [
        _row(-1.5, 48.0, 63.0, 0.83),
        _row(-1.0, 47.5, 63.5, 0.90),
        _row(-0.5, 47.0, 63.2, 0.95),  # the best mean of those that keep 95%
        _row(0.0, 46.4, 62.7, 0.96),
        _row(0.5, 45.9, 62.2, 0.97),
    ]
    assert keep_bias_levels(curve) == {"default": -0.5, "picky": -1.5}


def test_without_a_bias_that_keeps_enough_the_highest_is_the_default() -> None:
    curve = [_row(-1.0, 47.0, 63.0, 0.90), _row(0.0, 46.0, 62.0, 0.93)]
    assert keep_bias_levels(curve) == {"default": 0.0, "picky": -1.0}


def test_with_nothing_below_the_default_picky_is_the_default() -> None:
    assert keep_bias_levels([_row(-1.0, 47.0, 63.0, 0.96)]) == {"default": -1.0, "picky": -1.0}


def test_a_model_that_replaces_another_keeps_as_many_correct_sentences() -> None:
    curve = [_row(0.0, 47.6, 64.2, 0.931), _row(0.5, 46.9, 63.7, 0.952), _row(0.75, 46.6, 63.3, 0.961)]
    assert keep_bias_levels(curve)["default"] == 0.5
    assert keep_bias_levels(curve, min_kept=0.953)["default"] == 0.75  # the replaced version kept 95.3%


def test_a_default_bias_given_is_the_default_and_picky_the_best_below_it() -> None:
    curve = [_row(-1.0, 47.5, 63.5, 0.90), _row(0.0, 46.4, 62.7, 0.96), _row(0.45, 46.0, 62.3, 0.97)]
    assert keep_bias_levels(curve, default_bias=0.45) == {"default": 0.45, "picky": -1.0}
