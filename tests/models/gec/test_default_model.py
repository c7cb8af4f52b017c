"""The shipped models (the default and the earlier version kept beside it): their files, their manifests, their
tokenizers on every dev sentence, and aggressive decoding equal to greedy on real dev sentences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_review, model_speller
from service.engine.runtime import RuntimeOptions
from tests.conftest import DEV_DATA as DEV
from tests.conftest import SHIPPED_MODELS

MAX_SHIPPED_MIB = 70  # int8 graphs (version 5, the larger model: 48 MB), tokenizer, vocabulary, spelling, n-grams


@pytest.fixture(scope="module", params=SHIPPED_MODELS, ids=lambda path: path.name)
def model(request: pytest.FixtureRequest) -> Path:
    return request.param


@pytest.fixture(scope="module")
def engine(model: Path) -> Engine:
    return Engine(model, options=RuntimeOptions(intra_op_threads=1))


def _dev_lines() -> list[str]:
    if not DEV.is_dir():
        pytest.skip(f"the GEC dev data is not beside the project ({DEV})")
    lines: list[str] = []
    for path in sorted(DEV.glob("*")):
        if path.is_file() and not path.name.endswith(".md"):
            lines += path.read_text(encoding="utf-8").splitlines()
    return lines


def test_shipped_files_are_int8_only_and_small(model: Path) -> None:
    manifest = json.loads((model / "manifest.json").read_text())
    assert set(manifest["variants"]) == {"int8"}
    files = [p for p in model.iterdir() if p.is_file()]
    assert not any(p.name in ("encoder.onnx", "decoder.onnx") or p.suffix in (".pt", ".bin") for p in files)
    assert sum(p.stat().st_size for p in files) <= MAX_SHIPPED_MIB * 2**20


def test_manifest_records_provenance_and_quality(model: Path) -> None:
    manifest = json.loads((model / "manifest.json").read_text())
    assert "NON-COMMERCIAL" in manifest["licence"]
    assert {d["name"].split()[0] for d in manifest["training_data"]} >= {"W&I+LOCNESS", "FCE", "NUCLE", "Lang-8"}
    training = manifest["training"]
    first = training  # a fine-tuned model's stage 1 came first, in the model it continued (or the one before it)
    while "stage1" not in first and "continued_from" in first:
        first = first["continued_from"]["training"]
    assert first["stage1"]["steps"] > 0 and training["stage2"]["steps"] > 0 and training["hours"] > 0
    assert "hardware" in training and "recipe" in training
    for quality in (manifest["packaging_quality"], *manifest["quality"]["levels"].values()):  # packaged, as served
        assert quality["jfleg_dev"]["sentences"] == 754 and quality["fce_dev"]["sentences"] == 2210
    assert manifest["verification"]["int8"]["greedy_agreement"] > 0.9


def test_tokenizer_round_trips_every_dev_sentence(engine: Engine) -> None:
    lines = _dev_lines()
    assert len(lines) > 5000
    codec = engine.codec
    for line, ids in zip(lines, codec.encode_batch(lines), strict=True):
        assert codec.decode(ids) == line


@pytest.mark.parametrize(
    "text",
    ["“Curly quotes” and ‘single’ ones", "emoji 😀👍🏽 here", "tabs\tand  double  spaces ", "e\u0301 and 日本語"],
)
def test_tokenizer_round_trips_odd_text(engine: Engine, text: str) -> None:
    assert engine.codec.decode(engine.codec.encode(text)) == text


def test_the_model_as_served_corrects_and_keeps(model: Path, engine: Engine) -> None:
    """With its spelling stage, keep bias and review, as the service runs it (version 3's weights alone write
    "shown in lin 2." for the last: its review takes that back)."""
    texts = ["She go to school every days.", "I have recieved your letter.", "The results are shown in Table 2."]
    served = correct_texts(engine, texts, speller=model_speller(model), review=model_review(model))
    fixed, spelled, kept = [correction.text for correction in served]
    assert "every day." in fixed and "go to" not in fixed
    assert spelled == "I have received your letter."
    assert kept == "The results are shown in Table 2."


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.data())
def test_aggressive_equals_greedy_on_dev_sentences(engine: Engine, data: st.DataObject) -> None:
    lines = [line for line in _dev_lines() if 0 < len(line) < 300]
    batch = data.draw(st.lists(st.sampled_from(lines), min_size=1, max_size=6))
    sources = engine.codec.encode_batch(batch)
    greedy = [r.tokens for r in engine.generate(sources, "greedy")]
    assert [r.tokens for r in engine.generate(sources, "aggressive")] == greedy
    assert [engine.generate([s], "aggressive")[0].tokens for s in sources] == greedy  # batch-invariant
