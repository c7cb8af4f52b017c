"""Local queues: the arms whose strategy is listed decode with iteration-level batching, the
others in closed batches; both give every job its own answer; an arm may batch by its own size."""

from __future__ import annotations

import asyncio

import pytest

from service.batching import BatchPolicy, Job
from service.batching.batcher import NullHooks
from service.config import Settings
from service.engine.engine import Engine
from service.experiments.arms import Arm
from service.pipeline import queues as queues_module
from service.pipeline.queues import LocalQueues
from service.startup import CheckedSettings
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import SENTENCES


@pytest.mark.parametrize(
    ("setting", "continuous"),
    [("aggressive", {"accelerated"}), ("greedy,aggressive", {"accelerated", "autoregressive"}), ("", set())],
)
def test_listed_strategies_decode_continuously(setting: str, continuous: set[str], monkeypatch) -> None:
    engine = Engine(FIXTURE_MODEL, "int8")
    made = []

    class Recorded(queues_module.IterationBatch):
        def __init__(self, engine: Engine, strategy: str, *args) -> None:
            made.append(strategy)
            super().__init__(engine, strategy, *args)

    monkeypatch.setattr(queues_module, "IterationBatch", Recorded)
    strategies = Settings(continuous_batching=setting).continuous_strategies

    async def main() -> None:
        queues = LocalQueues([engine], BatchPolicy(max_wait_ms=1), None, continuous=strategies)
        await queues.start()
        sources = [s for s in engine.codec.encode_batch(SENTENCES) if s]
        for backend in ("accelerated", "autoregressive"):
            outcomes = await queues.get(Arm.of_backend(backend)).submit_many([Job(tokens) for tokens in sources])
            alone = [engine.generate([tokens], "greedy")[0].tokens for tokens in sources]
            assert [outcome.result.tokens for outcome in outcomes] == alone
        await queues.stop(timeout=5)

    asyncio.run(main())
    names = {"aggressive": "accelerated", "greedy": "autoregressive"}
    assert {names[strategy] for strategy in made} == continuous


def test_only_strategies_can_be_listed() -> None:
    assert CheckedSettings(continuous_batching="aggressive,beam,sample").continuous_strategies == {
        "aggressive",
        "beam",
        "sample",
    }
    with pytest.raises(ValueError, match="nucleus: not a strategy"):
        CheckedSettings(continuous_batching="aggressive,nucleus")


class _Sizes(NullHooks):
    def __init__(self) -> None:
        self.sizes: dict[str, list[int]] = {}

    def on_batch(self, name: str, size: int, padded_tokens: int) -> None:
        self.sizes.setdefault(name, []).append(size)


@pytest.mark.parametrize("continuous", [frozenset(), frozenset({"aggressive"})])
def test_an_arm_batches_by_its_own_size(continuous: frozenset[str]) -> None:
    engine = Engine(FIXTURE_MODEL, "int8")
    hooks = _Sizes()
    small = Arm("small", "accelerated", (("max_batch_size", 2),))
    assert small.params == Arm.of_backend("accelerated").params and small.queue == "small"

    async def main() -> None:
        queues = LocalQueues([engine], BatchPolicy(max_batch_size=8, max_wait_ms=1000), hooks, continuous)
        await queues.start()
        sources = [s for s in engine.codec.encode_batch(SENTENCES) if s] * 2
        for arm in (small, Arm.of_backend("accelerated")):
            outcomes = await queues.get(arm).submit_many([Job(tokens) for tokens in sources])
            assert [o.result.tokens for o in outcomes] == [r.tokens for r in engine.generate(sources, "greedy")]
        await queues.stop(timeout=5)

    asyncio.run(main())
    assert max(hooks.sizes["small"]) == 2
    assert max(hooks.sizes["accelerated"]) > 2


def test_the_batch_size_is_the_device_s_unless_set() -> None:
    assert Settings().batch_size(on_gpu=False) == 8
    assert Settings().batch_size(on_gpu=True) == 32
    assert Settings(max_batch_size=3).batch_size(on_gpu=True) == 3
