"""Iteration-level batching: sources that join, leave and are dropped between passes decode to
exactly what each decodes alone, for every strategy (aggressive with and without split passes), each
source with its own keep bias where the strategy takes one."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine.decoding.aggressive import split_blocks
from service.engine.decoding.params import DecodeParams, DecodeResult
from tests.engine.conftest import SENTENCES, engine_for
from tests.engine.test_aggressive import VARIANTS, text

STRATEGIES = [
    pytest.param("greedy", DecodeParams(), id="greedy"),
    pytest.param("aggressive", DecodeParams(pass_cost=0), id="aggressive-one-pass"),
    pytest.param("aggressive", DecodeParams(), id="aggressive-device-default"),  # a CPU splits passes
    pytest.param("aggressive", DecodeParams(pass_cost=1), id="aggressive-split"),
    pytest.param("beam", DecodeParams(num_beams=3, num_return_sequences=2), id="beam"),
    pytest.param("beam", DecodeParams(num_beams=2, early_stopping=False, max_new_tokens=12), id="beam-limited"),
    pytest.param("sample", DecodeParams(seed=7, temperature=1.5, num_return_sequences=3), id="sample"),
    pytest.param("sample", DecodeParams(seed=3, top_k=20, top_p=0.9, max_new_tokens=10), id="sample-limited"),
]


def _same(result, alone, variant: tuple[str, str]) -> None:
    """``result`` decoded in a changing batch is what ``alone`` decoded by itself; every hypothesis too.
    Beam scores on int8 graphs may move in the fourth decimal with the batch (see ``test_beam``)."""
    assert result.tokens == alone.tokens
    assert [h.tokens for h in result.hypotheses] == [h.tokens for h in alone.hypotheses]
    tolerance = 1e-3 if variant[0] == "int8" else 1e-5
    assert [h.score for h in result.hypotheses] == pytest.approx([h.score for h in alone.hypotheses], abs=tolerance)
    assert result.passes == alone.passes


@pytest.mark.parametrize(("strategy", "params"), STRATEGIES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), texts=st.lists(text, min_size=1, max_size=8), variant=st.sampled_from(VARIANTS))
def test_joining_and_leaving_rows_decode_as_alone(data, texts, variant, strategy: str, params: DecodeParams) -> None:
    if strategy == "sample":  # a draw is a threshold on probabilities: int8's batch noise could move one
        variant = ("fp32", variant[1])
    engine = engine_for(*variant)
    sources = [s[: engine.max_source_tokens] for s in engine.codec.encode_batch(texts) if s]
    if not sources:
        return
    biased = strategy in ("greedy", "aggressive")
    biases = [data.draw(st.floats(-3, 3), label="keep bias") if biased else 0.0 for _ in sources]
    alone = {i: engine.generate([s], strategy, params, keep_biases=[biases[i]])[0] for i, s in enumerate(sources)}
    decoder = engine.decoder(strategy, params)
    waiting = list(range(len(sources)))
    owner: dict[int, int] = {}
    dropped: set[int] = set()
    finished: dict[int, DecodeResult] = {}
    while waiting or decoder.active:
        joining = data.draw(st.integers(0 if decoder.active else 1, len(waiting)), label="join") if waiting else 0
        picked, waiting = waiting[:joining], waiting[joining:]
        handles = decoder.join([sources[i] for i in picked], [biases[i] for i in picked])
        for handle, index in zip(handles, picked, strict=True):
            owner[handle] = index
        running = sorted({h for h in decoder.handles if h is not None})
        if len(running) > 1 and data.draw(st.booleans(), label="drop one"):
            handle = data.draw(st.sampled_from(running), label="dropped")
            decoder.drop([handle])
            dropped.add(owner[handle])
        for handle, result in decoder.step():
            finished[owner[handle]] = result
    assert set(finished) | dropped == set(range(len(sources)))
    assert not set(finished) & dropped
    for index, result in finished.items():
        _same(result, alone[index], variant)
    if biased:
        greedy = {i: engine.generate([sources[i]], "greedy", keep_biases=[biases[i]])[0].tokens for i in finished}
        assert {i: r.tokens for i, r in finished.items()} == greedy


def test_rows_leave_as_soon_as_they_finish(engine) -> None:
    sources = engine.codec.encode_batch(["A", "The cat likes teh old car and the dog likes the cat very much."])
    decoder = engine.decoder("greedy")
    short, long = decoder.join(sources)
    first = []
    while not first:
        first = decoder.step()
    assert [handle for handle, _ in first] == [short]
    assert decoder.active == 1
    while decoder.active:
        finished = decoder.step()
    assert [handle for handle, _ in finished] == [long]


def test_split_passes_take_fewer_positions_and_keep_greedy_outputs(engine) -> None:
    sources = engine.codec.encode_batch(SENTENCES[:7])
    greedy = [r.tokens for r in engine.generate(sources, "greedy")]
    split = engine.generate(sources, "aggressive", DecodeParams(pass_cost=1))
    assert [r.tokens for r in split] == greedy


def test_a_cpu_splits_passes_by_default_and_zero_turns_it_off(engine) -> None:
    assert not engine.model.on_gpu
    sources = engine.codec.encode_batch(SENTENCES[:7])
    runs = {}
    for cost in (None, 0.0):
        decoder = engine.decoder("aggressive", DecodeParams(pass_cost=cost))
        decoder.join(sources)
        steps = 0
        while decoder.active:
            decoder.step()
            steps += 1
        runs[cost] = (decoder.state.passes, steps)
    assert runs[0.0][0] == runs[0.0][1]  # one decoder run per step
    assert runs[None][0] > runs[None][1]  # some steps ran narrow and wide blocks apart


@given(widths=st.lists(st.integers(1, 20), min_size=1, max_size=16), cost=st.floats(0.5, 40))
def test_split_blocks_partitions_rows_and_never_costs_more(widths: list[int], cost: float) -> None:
    groups = split_blocks(widths, cost)
    assert sorted(i for group in groups for i in group) == list(range(len(widths)))
    assert 1 <= len(groups) <= 2
    together = len(widths) * max(widths)
    split = sum(len(g) * max(widths[i] for i in g) for g in groups) + cost * (len(groups) - 1)
    assert split <= together
    if len(groups) == 2:
        assert max(widths[i] for i in groups[0]) <= min(widths[i] for i in groups[1])


def test_unknown_strategies_and_bad_settings_are_refused(engine) -> None:
    with pytest.raises(ValueError, match="unknown strategy"):
        engine.decoder("nucleus")
    with pytest.raises(ValueError, match="num_return_sequences"):
        engine.decoder("beam", DecodeParams(num_beams=2, num_return_sequences=3))
    with pytest.raises(ValueError, match="temperature"):
        engine.decoder("sample", DecodeParams(temperature=-1.0))


def test_a_source_of_several_rows_leaves_once_all_are_done(engine) -> None:
    """Beam search's beams and sampling's samples are rows of one handle: it finishes once, with all."""
    sources = engine.codec.encode_batch(["A", "The cat likes teh old car and the dog likes the cat very much."])
    for strategy, params in [
        ("beam", DecodeParams(num_beams=3, num_return_sequences=3)),
        ("sample", DecodeParams(seed=1, num_return_sequences=4, temperature=2.0)),
    ]:
        decoder = engine.decoder(strategy, params)
        handles = decoder.join(sources)
        rows = params.num_beams if strategy == "beam" else params.num_return_sequences
        assert decoder.active == 2 * rows
        results: dict[int, DecodeResult] = {}
        while decoder.active:
            for handle, result in decoder.step():
                assert handle not in results
                results[handle] = result
        assert sorted(results) == sorted(handles)
        assert all(len(results[h].hypotheses) == params.num_return_sequences for h in handles)
