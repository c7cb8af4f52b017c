"""The confidence fit (``models.gec.calibrate``): weights fitted with the clean sentences' edits counted more, then
rescaled so that the probabilities are calibrated with learners' and clean sentences weighing alike."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.gec.calibrate import fit_logistic, fit_weighted


def _data(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edits of learners' sentences (half right) and of clean ones (all wrong), told apart by a feature."""
    rng = np.random.default_rng(seed)
    n = 600
    clean = rng.random(n) < 0.4
    evidence = rng.normal(size=n) + np.where(clean, -0.5, 0.5)
    rarity = rng.normal(size=n) + np.where(clean, 1.0, 0.0)
    right = (~clean) & (rng.random(n) < 1 / (1 + np.exp(-2 * evidence)))
    return np.column_stack([np.ones(n), evidence, rarity]), right.astype(float), clean


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1.0, 2.0, 4.0]), st.sampled_from([0.5, 1.0, 2.0]))
def test_the_rescaled_fit_ranks_as_the_weighted_one_and_is_calibrated_at_the_balance(
    seed: int, clean_weight: float, balance: float
) -> None:
    x, y, clean = _data(seed)
    weighted = fit_logistic(x, y, counts=np.where(clean, clean_weight, 1.0))
    rescaled = fit_weighted(x, y, clean, clean_weight, balance)
    order = np.argsort(x @ weighted, kind="stable")
    assert np.all(np.diff((x @ rescaled)[order]) >= -1e-9)  # the same ranking: a rising affine map of the score
    p = 1 / (1 + np.exp(-(x @ rescaled)))
    counts = np.where(clean, balance, 1.0)
    assert abs(np.sum(counts * (p - y))) / np.sum(counts) < 1e-6  # calibrated in the mean at the balance


def test_counting_the_clean_edits_more_lowers_their_confidence() -> None:
    x, y, clean = _data(7)
    alike = 1 / (1 + np.exp(-(x @ fit_logistic(x, y))))
    weighted = 1 / (1 + np.exp(-(x @ fit_logistic(x, y, counts=np.where(clean, 4.0, 1.0)))))
    assert weighted[clean].mean() < alike[clean].mean()
