"""The shipped model's serving files and keep-bias levels carried into an fp32 export of the same version: the
folder then has a spelling stage, a review and the levels, with their checksums."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from models.gec.carry import carry, main
from models.gec.language_model import ship_language_model
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest, file_sha256
from service.engine.offline import correct_texts, model_review, model_speller
from tests.conftest import FIXTURE_MODEL, copy_with_vocabulary


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    """The tiny model's int8 folder with a vocabulary, a ranking, a language model and levels of its own."""
    model = copy_with_vocabulary(FIXTURE_MODEL, tmp_path / "shipped")
    ship_language_model(model, tmp_path / "shipped-data", order=3, min_count=1)
    manifest = ModelManifest.load(model)
    manifest.keep_bias = {"default": 0.5, "picky": -1.0}
    manifest.save(model)
    return model


def _fp32_export(tmp_path: Path) -> Path:
    out = tmp_path / "fp32"
    out.mkdir()
    for name in ("manifest.json", "tokenizer.json", "encoder.onnx", "decoder.onnx"):
        shutil.copy(FIXTURE_MODEL / name, out / name)
    return out


def test_the_export_is_served_as_the_shipped_model(shipped: Path, tmp_path: Path) -> None:
    target = _fp32_export(tmp_path)
    assert model_speller(target) is None and model_review(target) is None
    manifest = carry(shipped, target)
    assert manifest.keep_bias == {"default": 0.5, "picky": -1.0}
    for role in ("vocabulary", "spelling_model", "language_model"):
        file = getattr(manifest, role)
        assert file == getattr(ModelManifest.load(shipped), role)
        assert manifest.files_sha256[file] == file_sha256(target / file)
    speller, review = model_speller(target), model_review(target)
    assert speller is not None and review is not None
    engine = Engine(target, variant="fp32")
    (served,) = correct_texts(engine, ["I saw a aple yesterday."], speller=speller, review=review)
    assert "apple" in served.text  # the spelling stage runs on the export


def test_another_version_is_refused(shipped: Path, tmp_path: Path) -> None:
    target = _fp32_export(tmp_path)
    manifest = ModelManifest.load(target)
    manifest.version = "99"
    manifest.save(target)
    assert main(["--from", str(shipped), "--to", str(target)]) == 2
    assert ModelManifest.load(target).language_model is None
