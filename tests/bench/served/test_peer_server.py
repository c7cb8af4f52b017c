"""The FastAPI + CTranslate2 peer (``bench/served/peer_server.py``), a real process: it corrects the bundled model's way
sentence by sentence, and ``gecserve bench serve --peer-ct2`` measures it beside the service in one table."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from bench.served import serve
from bench.served.spawn import start_peer_ct2
from tests.conftest import DEFAULT_MODEL, FIXTURE_MODEL

pytest.importorskip("ctranslate2", reason="build extra not installed")
pytest.importorskip("torch", reason="build extra not installed")

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def default_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled model's weights as a Hugging Face checkpoint, as ``make runs/gec-default-hf`` builds it."""
    from models.gec.unpack import unpack

    return unpack(DEFAULT_MODEL, tmp_path_factory.mktemp("checkpoint") / "gec-default-hf")


def test_the_peer_corrects_each_sentence_of_a_text(default_checkpoint: Path, tmp_path: Path) -> None:
    peer = start_peer_ct2(default_checkpoint, tmp_path)
    try:
        corrected = httpx.post(f"{peer.url}/v1/correct", json={"text": "She go to school every days. I has a car."})
        empty = httpx.post(f"{peer.url}/v1/correct", json={"text": ""})
        invalid = httpx.post(f"{peer.url}/v1/correct", json={"words": "I has a car."})
    finally:
        peer.stop()
    assert corrected.status_code == 200
    assert corrected.json() == {"text": "She goes to school every day. I have a car."}
    assert empty.json() == {"text": ""}
    assert invalid.status_code == 422


def test_bench_serve_measures_the_peer_beside_the_service(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    sentences = tmp_path / "input.txt"
    sentences.write_text("She go to school every days.\nI has a car.\nThe cat sat on the mat.\n")
    out = tmp_path / "serve.json"
    args = ["--spawn", str(FIXTURE_MODEL), "--input", str(sentences), "--concurrency", "1,4", "--requests", "12"]
    args += ["--backend", "accelerated", "--warmup", "2", "--peer-ct2", str(FIXTURE_MODEL / "hf"), "--json", str(out)]
    assert serve.main(args) == 0
    result = json.loads(out.read_text())
    rows = {(r["backend"], r["concurrency"]): r for r in result["rows"]}
    assert [(r["backend"], r["concurrency"]) for r in result["rows"]] == [
        ("accelerated", 1),
        (serve.PEER, 1),
        ("accelerated", 4),
        (serve.PEER, 4),
    ]
    assert all(r["errors"] == 0 and r["req_per_s"] > 0 for r in rows.values())
    for concurrency in (1, 4):
        ratio = rows[("accelerated", concurrency)]["req_per_s"] / rows[(serve.PEER, concurrency)]["req_per_s"]
        assert rows[("accelerated", concurrency)]["req_per_s_vs_peer"] == pytest.approx(ratio)
    assert result["peer"]["checkpoint"] == str(FIXTURE_MODEL / "hf")
    assert "fastapi+ct2" in capsys.readouterr().out
