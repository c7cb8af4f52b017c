"""``models/export/half.py``: the fp16 variant of a folder's fp32 graphs, served by the engine as fp32 is."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="build extra (onnx) not installed")
import onnxruntime as ort  # noqa: E402

from models.export.half import HALF_FILES, add_half_variant, main  # noqa: E402
from service.engine.engine import Engine  # noqa: E402
from service.engine.manifest import ModelManifest, file_sha256  # noqa: E402
from tests.conftest import FIXTURE_MODEL  # noqa: E402
from tests.engine.conftest import SENTENCES  # noqa: E402


@pytest.fixture(scope="module")
def halved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("half") / "tiny-gec"
    shutil.copytree(FIXTURE_MODEL, folder, ignore=shutil.ignore_patterns("hf"))
    add_half_variant(folder)
    return folder


def test_the_manifest_names_the_fp16_graphs_with_their_digests(halved: Path) -> None:
    manifest = ModelManifest.load(halved)
    assert manifest.variants["fp16"] == HALF_FILES
    assert manifest.variants["fp32"] == ModelManifest.load(FIXTURE_MODEL).variants["fp32"]
    for file in HALF_FILES.values():
        assert manifest.files_sha256[file] == file_sha256(halved / file)


def test_the_weights_are_half_and_the_inputs_and_outputs_float32(halved: Path) -> None:
    graph = onnx.load(str(halved / HALF_FILES["decoder"])).graph
    floats = [v for v in [*graph.input, *graph.output] if v.type.tensor_type.elem_type != onnx.TensorProto.INT64]
    assert floats and all(v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT for v in floats)
    weights = [w for w in graph.initializer if w.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16)]
    assert sum(w.data_type == onnx.TensorProto.FLOAT16 for w in weights) > 0.9 * len(weights)


def test_the_fp16_encoder_computes_the_fp32_states_to_half_precision(halved: Path) -> None:
    rng = np.random.default_rng(5)
    feeds = {"input_ids": rng.integers(3, 60, size=(3, 9)), "attention_mask": np.ones((3, 9), dtype=np.int64)}
    run = {
        name: ort.InferenceSession(str(halved / file), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        for name, file in (("fp32", "encoder.onnx"), ("fp16", HALF_FILES["encoder"]))
    }
    assert run["fp16"].dtype == np.float32
    assert np.linalg.norm(run["fp16"] - run["fp32"]) / np.linalg.norm(run["fp32"]) < 1e-2


def test_the_engine_decodes_the_fp16_variant_and_aggressive_equals_greedy(halved: Path) -> None:
    engine = Engine(halved, variant="fp16")
    sources = engine.codec.encode_batch(SENTENCES)
    greedy = [r.tokens for r in engine.generate(sources, "greedy")]
    assert [r.tokens for r in engine.generate(sources, "aggressive")] == greedy
    assert any(greedy)


def test_a_folder_without_fp32_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "int8-only"
    shutil.copytree(FIXTURE_MODEL, folder, ignore=shutil.ignore_patterns("hf", "encoder.onnx", "decoder.onnx"))
    manifest = ModelManifest.load(folder)
    del manifest.variants["fp32"]
    manifest.save(folder)
    assert main([str(folder)]) == 1
    assert "no fp32 variant" in capsys.readouterr().err
