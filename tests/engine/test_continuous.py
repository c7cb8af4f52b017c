"""Iteration-level batching: sources that join, leave and are dropped between passes decode to
exactly what each decodes alone, for greedy and aggressive decoding, with and without split passes."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.engine.decoding.aggressive import split_blocks
from service.engine.decoding.types import DecodeParams
from tests.engine.conftest import SENTENCES, engine_for
from tests.engine.test_aggressive import VARIANTS, text

STRATEGIES = [
    ("greedy", DecodeParams()),
    ("aggressive", DecodeParams(pass_cost=0)),  # one padded pass
    ("aggressive", DecodeParams()),  # the device's default: split passes on a CPU
    ("aggressive", DecodeParams(pass_cost=1)),
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    texts=st.lists(text, min_size=1, max_size=8),
    variant=st.sampled_from(VARIANTS),
    decoding=st.sampled_from(STRATEGIES),
)
def test_joining_and_leaving_rows_decode_as_alone(data, texts, variant, decoding) -> None:
    strategy, params = decoding
    engine = engine_for(*variant)
    sources = [s[: engine.max_source_tokens] for s in engine.codec.encode_batch(texts) if s]
    if not sources:
        return
    alone = {i: engine.generate([s], "greedy")[0] for i, s in enumerate(sources)}
    decoder = engine.continuous(strategy, params)
    waiting = list(range(len(sources)))
    owner: dict[int, int] = {}
    dropped: set[int] = set()
    finished: dict[int, list[int]] = {}
    while waiting or decoder.active:
        joining = data.draw(st.integers(0 if decoder.active else 1, len(waiting)), label="join") if waiting else 0
        picked, waiting = waiting[:joining], waiting[joining:]
        for handle, index in zip(decoder.join([sources[i] for i in picked]), picked, strict=True):
            owner[handle] = index
        if decoder.active > 1 and data.draw(st.booleans(), label="drop one"):
            handle = data.draw(st.sampled_from([h for h in decoder.handles if h is not None]), label="dropped")
            decoder.drop([handle])
            dropped.add(owner[handle])
        for handle, result in decoder.step():
            finished[owner[handle]] = result.tokens
    assert set(finished) | dropped == set(range(len(sources)))
    assert not set(finished) & dropped
    for index, tokens in finished.items():
        assert tokens == alone[index].tokens


def test_rows_leave_as_soon_as_they_finish(engine) -> None:
    sources = engine.codec.encode_batch(["A", "The cat likes teh old car and the dog likes the cat very much."])
    decoder = engine.continuous("greedy")
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
        decoder = engine.continuous("aggressive", DecodeParams(pass_cost=cost))
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


def test_only_steppable_strategies_are_continuous(engine) -> None:
    with pytest.raises(ValueError, match="closed batches only"):
        engine.continuous("beam")
