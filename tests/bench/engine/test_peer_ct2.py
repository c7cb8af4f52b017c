"""The CTranslate2 peer decodes the same weights as the engine: in fp32 both give the same greedy tokens."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import SENTENCES, engine_for

pytest.importorskip("ctranslate2", reason="build extra not installed")


def test_fp32_peer_equals_the_fp32_engine() -> None:
    from bench.engine.peer_ct2 import CT2Greedy

    engine = engine_for("fp32")
    sources = engine.codec.encode_batch([s for s in SENTENCES if s])
    ours = [r.tokens for r in engine.generate(sources, "greedy")]
    peer = CT2Greedy(FIXTURE_MODEL / "hf", quantization="float32").generate(sources)
    assert [engine.codec.decode(t) for t in peer] == [engine.codec.decode(t) for t in ours]
    assert peer == ours
