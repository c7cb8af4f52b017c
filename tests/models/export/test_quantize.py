"""Static int8 (``models/export/quantize.py``, ``calibration.py``) on the tiny model: the exactness
it exists for, held as properties over random batches."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("torch", reason="build extra (torch) not installed")

from models.export.calibration import record_feeds
from models.export.exporter import export
from models.export.quantize import quantize_int8, weight_matmuls
from service.engine.engine import Engine
from tests.conftest import FIXTURE_MODEL

CALIBRATION = [
    "i saw a apple yesterday",
    "The cat likes teh old car.",
    "We visited a island last week.",
    "My friend my friend bought a umbrella",
    "She painted the red house. i took the the dog.",
    "Tom found an honest owl.",
]
WORDS = ["i", "saw", "a", "apple", "the", "cat", "teh", "owl", "island", "an", "dog", "house", "red", "."]


@pytest.fixture(scope="module")
def static_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("static") / "tiny-static"
    export(FIXTURE_MODEL / "hf", out, quantize="int8", method="static", samples=CALIBRATION, keep_fp32=False)
    return out


@pytest.fixture(scope="module")
def static_engine(static_model: Path) -> Engine:
    return Engine(static_model)


def test_export_records_and_verifies_static(static_model: Path, static_engine: Engine) -> None:
    report = static_engine.manifest.verification["int8"]
    assert report["method"] == "static" and report["calibration_sentences"] == len(CALIBRATION)
    assert report["greedy_agreement"] >= 0.8
    ops = {node.op_type for node in onnx.load(str(static_model / "decoder.int8.onnx")).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops and "DynamicQuantizeLinear" not in ops
    assert static_engine.correct(["i saw a apple yesterday"]) == ["I saw an apple yesterday."]


def test_only_weight_matmuls_are_quantized(static_model: Path) -> None:
    fp32 = onnx.load(str(FIXTURE_MODEL / "decoder.onnx"))
    weights = weight_matmuls(fp32)
    activations = [n.name for n in fp32.graph.node if n.op_type == "MatMul" and n.name not in weights]
    assert weights and activations  # projections, and attention's Q.K / P.V
    graph = onnx.load(str(static_model / "decoder.int8.onnx")).graph
    producers = {out: node for node in graph.node for out in node.output}
    for node in graph.node:
        if node.op_type == "MatMul":
            quantized = [getattr(producers.get(i), "op_type", None) == "DequantizeLinear" for i in node.input]
            assert all(quantized) == (node.name in weights), node.name


def test_static_needs_calibration(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="calibration"):
        quantize_int8(FIXTURE_MODEL / "decoder.onnx", tmp_path / "d.onnx", "static")


def test_calibration_sees_steps_and_verify_passes() -> None:
    feeds = record_feeds(FIXTURE_MODEL, CALIBRATION, batch_size=2, max_feeds=1000)
    assert len(feeds["encoder"]) == 3  # one per batch
    widths = {feed["input_ids"].shape[1] for feed in feeds["decoder"]}
    assert 1 in widths and max(widths) > 3  # greedy steps and aggressive verify passes
    capped = record_feeds(FIXTURE_MODEL, CALIBRATION, batch_size=2, max_feeds=5)
    assert len(capped["decoder"]) == 5 and capped["decoder"][0]["input_ids"].shape[1] == 1


sentence = st.lists(st.sampled_from(WORDS), min_size=0, max_size=14).map(" ".join)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(sentence, min_size=1, max_size=6))
def test_static_aggressive_equals_greedy_and_batching_changes_nothing(static_engine: Engine, texts: list[str]) -> None:
    sources = static_engine.codec.encode_batch(texts)
    greedy = [r.tokens for r in static_engine.generate(sources, "greedy")]
    assert [r.tokens for r in static_engine.generate(sources, "aggressive")] == greedy
    assert [static_engine.generate([s], "aggressive")[0].tokens for s in sources] == greedy


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), batch=st.integers(1, 4))
def test_static_aggressive_equals_greedy_on_random_tokens(static_engine: Engine, data, batch: int) -> None:
    vocab = static_engine.manifest.architecture["vocab_size"]
    sources = [
        data.draw(st.lists(st.integers(4, vocab - 1), min_size=0, max_size=20), label=f"row{i}") for i in range(batch)
    ]
    greedy = static_engine.generate(sources, "greedy")
    aggressive = static_engine.generate(sources, "aggressive")
    assert [r.tokens for r in aggressive] == [r.tokens for r in greedy]
    assert all(a.passes <= g.passes for a, g in zip(aggressive, greedy, strict=True))
