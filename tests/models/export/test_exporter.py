"""``gecserve export`` on small random checkpoints of each family, and its self-verification."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="build extra (torch) not installed")
from transformers import (  # noqa: E402
    BartConfig,
    BartForConditionalGeneration,
    MarianConfig,
    MarianMTModel,
    MBartConfig,
    MBartForConditionalGeneration,
)

from models.export.exporter import export, main  # noqa: E402
from models.export.verify import check_logits, greedy_agreement  # noqa: E402
from service.engine.engine import Engine  # noqa: E402
from service.engine.manifest import ModelManifest  # noqa: E402
from tests.conftest import FIXTURE_MODEL  # noqa: E402

SAMPLES = ["i saw a apple yesterday.", "The cat likes teh old car.", "Tom found an honest owl."]


def _common(vocab: int) -> dict:
    return dict(
        vocab_size=vocab,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        bos_token_id=0,
        pad_token_id=1,
        eos_token_id=2,
    )


def _checkpoint(family: str, path: Path, seed: int = 0) -> Path:
    vocab = json.loads((FIXTURE_MODEL / "manifest.json").read_text())["architecture"]["vocab_size"]
    torch.manual_seed(seed)
    if family == "bart":
        model = BartForConditionalGeneration(
            BartConfig(**_common(vocab), decoder_start_token_id=2, scale_embedding=True)
        )
        model.generation_config.forced_bos_token_id = 0  # where BART checkpoints keep it
    elif family == "mbart":
        model = MBartForConditionalGeneration(MBartConfig(**_common(vocab), decoder_start_token_id=2))
    else:
        model = MarianMTModel(MarianConfig(**_common(vocab), decoder_start_token_id=1))
    with torch.no_grad():  # sharpen the random model so greedy outputs are not all near-ties
        model.lm_head.weight.mul_(20)
    model.save_pretrained(path)
    shutil.copy(FIXTURE_MODEL / "tokenizer.json", path / "tokenizer.json")
    return path


@pytest.mark.parametrize("family", ["bart", "mbart", "marian"])
def test_each_family_exports_and_verifies(tmp_path: Path, family: str) -> None:
    checkpoint = _checkpoint(family, tmp_path / "hf")
    manifest = export(checkpoint, tmp_path / "out", samples=SAMPLES)
    report = manifest.verification["fp32"]
    assert report["logits_max_abs_diff"] < 1e-3
    assert report["greedy_identical"] == report["greedy_total"] == len(SAMPLES)
    assert manifest.family == family
    if family == "bart":
        assert manifest.decoder_prefix_ids == [2, 0]  # decoder start, then the forced BOS
    if family == "marian":
        assert manifest.decoder_prefix_ids == [1]


def test_verification_catches_a_graph_that_does_not_match(tmp_path: Path) -> None:
    """The checks compare against the checkpoint given: a different model's graphs fail both."""
    export(_checkpoint("bart", tmp_path / "a", seed=1), tmp_path / "out", samples=SAMPLES)
    trained = BartForConditionalGeneration.from_pretrained(str(FIXTURE_MODEL / "hf")).eval()
    engine = Engine(tmp_path / "out", variant="fp32")
    sources = engine.codec.encode_batch(SAMPLES)
    assert check_logits(trained, engine, sources, [s[:3] for s in sources]).worst > 1e-2
    same, total, differ = greedy_agreement(trained, engine, sources)
    assert same < total and differ


def _int8_kernel(graph: Path) -> str:
    import onnx

    ops = {node.op_type for node in onnx.load(str(graph)).graph.node}
    if "MatMulNBits" in ops:
        return "rowwise"
    if "DynamicQuantizeLinear" in ops or "MatMulInteger" in ops:
        return "dynamic"
    return "static" if "QuantizeLinear" in ops else "none"


@pytest.mark.parametrize("method", ["static", "rowwise", "dynamic", "hybrid"])
def test_int8_variants(tmp_path: Path, method: str) -> None:
    manifest = export(
        FIXTURE_MODEL / "hf", tmp_path / "out", quantize="int8", method=method, samples=SAMPLES, keep_fp32=False
    )
    assert set(manifest.variants) == {"int8"} and manifest.default_variant == "int8"
    assert not (tmp_path / "out" / "decoder.onnx").exists()
    assert manifest.verification["int8"]["method"] == method
    assert 0.0 <= manifest.verification["int8"]["greedy_agreement"] <= 1.0
    assert Engine(tmp_path / "out").correct(["i saw a apple yesterday"]) == ["I saw an apple yesterday."]
    kernels = {part: _int8_kernel(tmp_path / "out" / f"{part}.int8.onnx") for part in ("encoder", "decoder")}
    expected = {"encoder": "dynamic", "decoder": "rowwise"} if method == "hybrid" else dict.fromkeys(kernels, method)
    assert kernels == expected


def test_cli_writes_hashes_that_match_with_the_fp16_variant(tmp_path: Path, capsys) -> None:
    out = tmp_path / "cli"
    assert main(["--from", str(FIXTURE_MODEL / "hf"), "--out", str(out), "--name", "cli-model", "--fp16"]) == 0
    manifest = ModelManifest.load(out)
    assert manifest.name == "cli-model"
    assert set(manifest.variants) == {"fp32", "fp16"} and "decoder.fp16.onnx" in manifest.files_sha256
    assert 0.0 <= manifest.verification["fp16"]["greedy_agreement"] <= 1.0
    for name, digest in manifest.files_sha256.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    assert json.loads(capsys.readouterr().out)["fp32"]["greedy_identical"] > 0


def test_cli_fails_on_an_unsupported_family(tmp_path: Path, capsys) -> None:
    from transformers import PegasusConfig, PegasusForConditionalGeneration

    pegasus = tmp_path / "pegasus"
    PegasusForConditionalGeneration(PegasusConfig(**_common(400))).save_pretrained(pegasus)
    shutil.copy(FIXTURE_MODEL / "tokenizer.json", pegasus / "tokenizer.json")
    assert main(["--from", str(pegasus), "--out", str(tmp_path / "pegasus-out")]) == 1
    assert "'pegasus' is not supported" in capsys.readouterr().err
