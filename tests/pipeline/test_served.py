"""What ``GET /v1/models`` says of a model's quality (``served.served_quality``): each level as it is served (its
confidence threshold and keep bias) with the dev figures the manifest's ``quality`` measured there, never figures
measured at another threshold, keep bias or confidence fit, nor ``models.gec.package``'s figures of the model as
packaged (every edit kept, keep bias 0.5 where version 4 is served at 0.45)."""

from __future__ import annotations

import copy

import pytest

from service.engine.manifest import ModelManifest, level_keep_bias
from service.pipeline.served import served_quality
from service.text.policy import LEVELS
from tests.conftest import DEFAULT_MODEL, SHIPPED_MODELS


@pytest.fixture()
def manifest() -> ModelManifest:
    return ModelManifest.load(DEFAULT_MODEL)


@pytest.mark.parametrize("model", SHIPPED_MODELS, ids=lambda path: path.name)
def test_every_shipped_model_lists_each_level_s_served_figures(model) -> None:
    manifest = ModelManifest.load(model)
    listed = served_quality(manifest)
    measured = manifest.extra["quality"]["levels"]
    assert list(listed["levels"]) == list(LEVELS)
    for level, threshold in LEVELS.items():
        served = listed["levels"][level]
        assert served["threshold"] == threshold and served["keep_bias"] == level_keep_bias(manifest, level)
        assert listed["keep_bias"][level] == served["keep_bias"]
        for name in ("jfleg_dev", "fce_dev"):
            assert served[name] == measured[level][name]
    assert listed["jfleg_dev"] == listed["levels"]["default"]["jfleg_dev"]
    assert listed["fce_dev"] == listed["levels"]["default"]["fce_dev"]


def test_the_default_model_lists_what_it_is_served_at_not_what_it_was_packaged_at(manifest: ModelManifest) -> None:
    listed = served_quality(manifest)
    packaged = manifest.extra["packaging_quality"]
    assert listed["keep_bias"]["default"] == manifest.keep_bias["default"] != packaged["keep_bias"]["default"]
    assert listed["jfleg_dev"]["gleu"] != packaged["jfleg_dev"]["gleu"]
    # the safe level keeps fewer edits than the default, picky more
    gleu = {level: served["jfleg_dev"]["gleu"] for level, served in listed["levels"].items()}
    assert gleu["safe"] < gleu["default"] < gleu["picky"]


def test_a_level_served_otherwise_than_measured_is_listed_without_figures(manifest: ModelManifest) -> None:
    manifest.keep_bias = {**manifest.keep_bias, "picky": -0.5}
    listed = served_quality(manifest)
    assert listed["levels"]["picky"] == {"threshold": LEVELS["picky"], "keep_bias": -0.5}
    assert "jfleg_dev" in listed["levels"]["default"] and "fce_dev" in listed["levels"]["safe"]
    assert listed["keep_bias"]["picky"] == -0.5


def test_figures_measured_with_another_confidence_fit_are_not_listed(manifest: ModelManifest) -> None:
    manifest.files_sha256 = {**manifest.files_sha256, manifest.confidence: "0" * 64}
    listed = served_quality(manifest)
    assert "jfleg_dev" not in listed and all(
        set(served) == {"threshold", "keep_bias"} for served in listed["levels"].values()
    )


def test_packaging_figures_alone_are_not_listed(manifest: ModelManifest) -> None:
    manifest.extra = {"quality": copy.deepcopy(manifest.extra["packaging_quality"])}
    listed = served_quality(manifest)
    assert listed["keep_bias"] == {level: level_keep_bias(manifest, level) for level in LEVELS}
    assert "jfleg_dev" not in listed and "fce_dev" not in listed["levels"]["default"]
