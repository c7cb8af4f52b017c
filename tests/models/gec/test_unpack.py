"""``models.gec.unpack`` (int8 folder -> HF checkpoint) and re-packaging the weights with another method."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="build extra (torch) not installed")
from transformers import AutoModelForSeq2SeqLM  # noqa: E402

from models.export.exporter import export  # noqa: E402
from models.gec.package import calibration_sentences, repackage  # noqa: E402
from models.gec.unpack import unpack  # noqa: E402
from service.engine.engine import Engine  # noqa: E402
from service.engine.manifest import ModelManifest  # noqa: E402
from tests.conftest import FIXTURE_MODEL  # noqa: E402

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
LINEAR = ("proj.weight", "fc1.weight", "fc2.weight")


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return AutoModelForSeq2SeqLM.from_pretrained(str(path)).state_dict()


def _compare(unpacked: Path) -> None:
    original, rebuilt = _weights(FIXTURE_MODEL / "hf"), _weights(unpacked)
    assert set(rebuilt) == set(original)
    for name, tensor in original.items():
        if name.endswith(LINEAR):  # int8: within half a quantisation step of the trained weight
            step = tensor.abs().max() / 127
            assert (rebuilt[name] - tensor).abs().max() <= step, name
        else:  # embeddings, layer norms, biases: stored exactly
            assert torch.equal(rebuilt[name], tensor), name


def test_unpack_rowwise_gives_back_the_trained_weights(tmp_path: Path) -> None:
    _compare(unpack(FIXTURE_MODEL, tmp_path / "hf"))
    assert (tmp_path / "hf" / "tokenizer.json").read_bytes() == (FIXTURE_MODEL / "tokenizer.json").read_bytes()


def test_unpack_static_qdq_graphs(tmp_path: Path) -> None:
    export(FIXTURE_MODEL / "hf", tmp_path / "static", quantize="int8", method="static", keep_fp32=False)
    _compare(unpack(tmp_path / "static", tmp_path / "hf"))


def test_unpack_refuses_other_families(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(FIXTURE_MODEL, model, ignore=shutil.ignore_patterns("hf"))
    manifest = json.loads((model / "manifest.json").read_text())
    (model / "manifest.json").write_text(json.dumps({**manifest, "family": "marian"}))
    with pytest.raises(ValueError, match="marian"):
        unpack(model, tmp_path / "hf")


def test_repackage_keeps_the_training_record(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(FIXTURE_MODEL, model, ignore=shutil.ignore_patterns("hf", "*.onnx"))
    for part in ("encoder", "decoder"):
        shutil.copy(FIXTURE_MODEL / f"{part}.int8.onnx", model)
    manifest = json.loads((model / "manifest.json").read_text())
    manifest["variants"] = {"int8": manifest["variants"]["int8"]}
    manifest["default_variant"] = "int8"
    manifest["training"] = {"hours": 0.02, "hardware": {"device": "cpu"}}
    (model / "manifest.json").write_text(json.dumps(manifest))
    checkpoint = unpack(model, tmp_path / "hf")
    result = repackage(checkpoint, model, data=None, method="static")
    assert result.version == "2" and result.verification["int8"]["method"] == "static"
    saved = ModelManifest.load(model)
    assert saved.extra["training"] == {"hours": 0.02, "hardware": {"device": "cpu"}}
    assert saved.extra["repackaged"]["previous_method"] == manifest["verification"]["int8"]["method"]
    assert set(saved.variants) == {"int8"} and not (model / "encoder.onnx").exists()
    assert Engine(model).correct(["i saw a apple yesterday"]) == ["I saw an apple yesterday."]


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not beside the checkout")
def test_calibration_sentences_come_from_training_sources_only() -> None:
    picked = calibration_sentences(DATA, count=40)
    assert len(picked) == 40 and picked == calibration_sentences(DATA, count=40)
    assert all(3 <= len(line.split()) <= 50 for line in picked)
    train = {
        line for path in (DATA / "train").glob("*.train.detok.src") for line in path.read_text("utf-8").splitlines()
    }
    assert set(picked) <= train  # learner training sources only: dev never calibrates the model it scores
