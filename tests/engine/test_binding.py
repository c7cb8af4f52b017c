"""IO binding: the bound decoder path gives exactly what the plain ``session.run`` path gives."""

from __future__ import annotations

import numpy as np
import pytest

from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine
from service.engine.model import layer_inputs
from service.engine.runtime import RuntimeOptions
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import SENTENCES, engine_for

PARAMS = {
    "greedy": DecodeParams(max_new_tokens=40),
    "aggressive": DecodeParams(max_new_tokens=40),
    "beam": DecodeParams(max_new_tokens=40, num_beams=4, num_return_sequences=3),
    "sample": DecodeParams(max_new_tokens=40, num_return_sequences=2, top_k=5, temperature=0.8, seed=7),
}


@pytest.fixture(scope="module")
def bound() -> Engine:
    return Engine(FIXTURE_MODEL, variant="int8", options=RuntimeOptions(provider="cpu", io_binding="on"))


def test_settings_choose_binding() -> None:
    assert RuntimeOptions(provider="cpu").binds_io is False  # auto: only with CUDA
    assert RuntimeOptions(provider="cpu", io_binding="on").binds_io is True
    assert RuntimeOptions(provider="cpu", io_binding="on").device == "cpu"
    with pytest.raises(ValueError, match="io_binding"):
        _ = RuntimeOptions(io_binding="sometimes").binds_io


@pytest.mark.parametrize("strategy", sorted(PARAMS))
def test_bound_decoding_equals_unbound(bound: Engine, strategy: str) -> None:
    plain = engine_for("int8")
    assert bound.model.binds_io and not plain.model.binds_io
    sources = plain.codec.encode_batch(SENTENCES)
    expected = plain.generate(sources, strategy, PARAMS[strategy])
    got = bound.generate(sources, strategy, PARAMS[strategy])
    assert [r.tokens for r in got] == [r.tokens for r in expected]
    assert [[h.tokens for h in r.hypotheses] for r in got] == [[h.tokens for h in r.hypotheses] for r in expected]


def test_bound_state_follows_row_selection(bound: Engine) -> None:
    """After rows are dropped and reordered, the device copy holds the new rows, not the old ones."""
    plain = engine_for("int8")
    sources = [s for s in plain.codec.encode_batch(SENTENCES) if s][:4]
    states = [engine.model.start(sources) for engine in (plain, bound)]
    prefix = np.array([plain.manifest.decoder_prefix_ids] * len(sources), dtype=np.int64)
    for state in states:
        state.step(prefix)
        state.select(np.array([3, 1], dtype=np.int64))
    for name, expected in layer_inputs("cross", states[1].cross_kv).items():
        np.testing.assert_array_equal(states[1].device_inputs.values[name].numpy(), expected)
    nxt = np.array([[5], [6]], dtype=np.int64)
    np.testing.assert_array_equal(states[1].step(nxt), states[0].step(nxt))
