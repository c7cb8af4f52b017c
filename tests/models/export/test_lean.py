"""``models/export/lean.py``: exported graphs rewritten with fewer nodes and per-layer cache inputs, same outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="build extra (torch) not installed")
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from transformers import BartForConditionalGeneration  # noqa: E402

from models.export.graphs import export_graphs  # noqa: E402
from models.export.lean import make_graph_lean, make_lean, probe_feeds  # noqa: E402
from service.engine.engine import Engine  # noqa: E402
from service.engine.model import LAYER_INPUTS, layer_inputs  # noqa: E402
from tests.conftest import FIXTURE_MODEL  # noqa: E402


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny fixture's checkpoint exported as the exporter writes it, before the rewrite."""
    out = tmp_path_factory.mktemp("exported")
    export_graphs(BartForConditionalGeneration.from_pretrained(str(FIXTURE_MODEL / "hf")), out)
    return out


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize(
    "sizes", [{"batch": 1, "new": 1, "past": 1, "source": 2}, {"batch": 4, "new": 9, "past": 31, "source": 6}]
)
def test_the_lean_decoder_computes_the_same_bits_at_other_sizes(exported: Path, sizes: dict[str, int]) -> None:
    original = onnx.load(str(exported / "decoder.onnx"))
    lean = make_lean(original)
    feeds = probe_feeds(original, sizes, seed=3)
    split = {name: array for name, array in feeds.items() if name not in LAYER_INPUTS}
    for name, prefix in LAYER_INPUTS.items():
        split.update(layer_inputs(prefix, feeds[name]))
    for want, got in zip(_run(original, feeds), _run(lean, split), strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_lean_decoder_takes_the_cache_per_layer_and_computes_no_shapes(exported: Path) -> None:
    original = onnx.load(str(exported / "decoder.onnx"))
    lean = make_lean(original)
    names = {value.name for value in lean.graph.input}
    layers = 1  # the fixture's decoder
    expected = {f"{p}_{k}_{layer}" for p in ("past", "cross") for k in ("key", "value") for layer in range(layers)}
    assert expected <= names and not names & set(LAYER_INPUTS)
    stored = {init.name for init in lean.graph.initializer}
    assert all(node.input[1] in stored for node in lean.graph.node if node.op_type == "Reshape")
    assert not any(node.op_type in ("Gather", "Shape") and node.input[0] in LAYER_INPUTS for node in lean.graph.node)
    assert len(lean.graph.node) < len(original.graph.node) * 0.6


def test_the_rewrite_is_done_once(exported: Path, tmp_path: Path) -> None:
    graph = tmp_path / "encoder.onnx"
    graph.write_bytes((exported / "encoder.onnx").read_bytes())
    assert make_graph_lean(graph) is True
    rewritten = graph.read_bytes()
    assert make_graph_lean(graph) is False
    assert graph.read_bytes() == rewritten


def test_the_engine_refuses_a_decoder_that_takes_the_cache_whole(exported: Path, tmp_path: Path) -> None:
    folder = tmp_path / "old"
    folder.mkdir()
    for file in ("manifest.json", "tokenizer.json", "encoder.onnx"):
        (folder / file).write_bytes((FIXTURE_MODEL / file).read_bytes())
    (folder / "decoder.onnx").write_bytes((exported / "decoder.onnx").read_bytes())
    with pytest.raises(ValueError, match=r"models\.export\.lean"):
        Engine(folder, variant="fp32")
