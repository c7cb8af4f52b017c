"""``gecserve bench profile`` on the tiny model: where the time of a pass goes, and the CTranslate2 rows."""

from __future__ import annotations

import json

import pytest

from bench.engine import profile
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import SENTENCES


def test_bench_profile_splits_each_sentence_and_shares_the_kernel_time(tmp_path, capsys) -> None:
    pytest.importorskip("ctranslate2", reason="build extra not installed")
    sentences = tmp_path / "input.txt"
    sentences.write_text("\n".join(s for s in SENTENCES * 3 if s) + "\n")
    out = tmp_path / "profile.json"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--batch-size", "1,4"]
    args += ["--peer-ct2", str(FIXTURE_MODEL / "hf"), "--json", str(out)]
    assert profile.main(args) == 0
    result = json.loads(out.read_text())
    rows = {(r["strategy"], r["batch"]): r for r in result["rows"]}
    assert set(rows) == {(s, b) for s in ("greedy", "aggressive") for b in (1, 4)}
    for row in rows.values():
        parts = row["encoder_ms"] + row["decoder_ms"] + row["python_ms"]
        assert parts == pytest.approx(row["ms_per_sent"], rel=1e-6)
        assert row["passes_per_sent"] > 0 and row["python_functions"]
    assert rows[("aggressive", 1)]["passes_per_sent"] < rows[("greedy", 1)]["passes_per_sent"]
    for graph in ("encoder", "decoder"):
        shares = [op["share"] for op in result["operators"] if op["graph"] == graph and op["batch"] == 1]
        assert sum(shares) == pytest.approx(2.0)  # greedy's and aggressive's, each summing to 1
    peer = {r["batch"]: r for r in result["peer"]}
    assert set(peer) == {1, 4} and peer[1]["step_us"] > 0
    printed = capsys.readouterr().out
    assert "kernel time by operator type" in printed and "ct2-greedy" in printed


def test_bench_profile_replays_against_graphs_that_take_the_cache_whole(tmp_path) -> None:
    """``--against`` a folder exported before the lean rewrite: its decoder is fed the cache stacked whole."""
    torch = pytest.importorskip("torch", reason="build extra (torch) not installed")
    from transformers import BartForConditionalGeneration

    from models.export.graphs import export_graphs

    old = tmp_path / "old"
    old.mkdir()
    for file in ("manifest.json", "tokenizer.json", "encoder.onnx", "decoder.onnx"):
        (old / file).write_bytes((FIXTURE_MODEL / file).read_bytes())
    with torch.no_grad():
        export_graphs(BartForConditionalGeneration.from_pretrained(str(FIXTURE_MODEL / "hf")), old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["variants"][manifest["default_variant"]] = {"encoder": "encoder.onnx", "decoder": "decoder.onnx"}
    (old / "manifest.json").write_text(json.dumps(manifest))
    sentences = tmp_path / "input.txt"
    sentences.write_text("\n".join(s for s in SENTENCES if s) + "\n")
    out = tmp_path / "profile.json"
    args = ["--model", str(FIXTURE_MODEL), "--input", str(sentences), "--batch-size", "2", "--strategies", "greedy"]
    assert profile.main([*args, "--against", str(old), "--json", str(out)]) == 0
    rows = {r["graph"]: r for r in json.loads(out.read_text())["against"]["rows"]}
    assert set(rows) == {"encoder", "decoder"}
    for row in rows.values():
        assert row["runs"] > 0 and row["us_per_run"] > 0 and row["speedup"] > 0
