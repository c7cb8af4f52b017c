"""The confidence fit (``models.gec.calibrate``): weights fitted with the clean sentences' edits counted more, then
rescaled so that the probabilities are calibrated with learners' and clean sentences weighing alike; and the model's
dev figures as served at each level, measured into its manifest (``--measure-only``) for ``GET /v1/models``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.gec.calibrate import fit_logistic, fit_weighted, main
from models.gec.evaluate import evaluate
from service.engine.manifest import ModelManifest, level_keep_bias
from service.engine.offline import model_confidence
from service.pipeline.served import served_quality
from service.text.policy import LEVELS
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import engine_for


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


SOURCES = ["i saw a apple yesterday", "I saw an apple yesterday.", "Tom found an honest owl."]
REFERENCES = ["I saw an apple yesterday.", "I saw an apple yesterday.", "Tom found an honest owl."]


def _dev_data(root: Path) -> Path:
    """A data folder whose dev sets are three sentences (JFLEG's four references alike)."""
    dev = root / "dev"
    dev.mkdir(parents=True)
    lines = lambda texts: "\n".join(texts) + "\n"  # noqa: E731
    for name in ("jfleg.dev.src", "fce.dev.detok.src"):
        (dev / name).write_text(lines(SOURCES))
    for name in [f"jfleg.dev.ref{i}" for i in range(4)] + ["fce.dev.detok.tgt"]:
        (dev / name).write_text(lines(REFERENCES))
    return root


def test_measure_only_writes_the_served_figures_of_each_level_and_keeps_the_packaging_ones(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(FIXTURE_MODEL, model)
    raw = json.loads((model / "manifest.json").read_text())
    packaged = {"jfleg_dev": {"gleu": 1.0}, "fce_dev": {"gleu": 2.0}, "keep_bias": {"default": 0.5, "picky": -1.0}}
    raw["quality"] = packaged  # what models.gec.package wrote before its figures were named packaging_quality
    (model / "manifest.json").write_text(json.dumps(raw, indent=2) + "\n")
    assert main(["--measure-only", "--model", str(model), "--data", str(_dev_data(tmp_path)), "--threads", "1"]) == 0
    manifest = ModelManifest.load(model)
    assert manifest.extra["packaging_quality"] == packaged
    measured = manifest.extra["quality"]
    assert list(measured["levels"]) == list(LEVELS) and measured["confidence_sha256"] is None  # the fixture has no fit
    fit = model_confidence(model)
    for level, threshold in LEVELS.items():
        figures = measured["levels"][level]
        assert figures["threshold"] == threshold and figures["keep_bias"] == level_keep_bias(manifest, level)
        expected = evaluate(engine_for(), SOURCES, [REFERENCES] * 4, True, confidence=fit, level=level)  # as eval does
        assert figures["jfleg_dev"]["gleu"] == expected["gleu"] and figures["jfleg_dev"]["sentences"] == 3
    listed = served_quality(manifest)
    assert listed["fce_dev"] == measured["levels"]["default"]["fce_dev"] and listed["keep_bias"]["default"] == 0.0
    assert main(["--measure-only", "--model", str(model), "--data", str(tmp_path), "--threads", "1"]) == 0
    assert (
        ModelManifest.load(model).extra["packaging_quality"] == packaged
    )  # measured again: the packaging figures stay
