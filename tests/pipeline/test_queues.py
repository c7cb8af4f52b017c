"""Local queues: the arms whose strategy is listed decode with iteration-level batching, the
others in closed batches; both give every job its own answer."""

from __future__ import annotations

import asyncio

import pytest

from service.batching import BatchPolicy, Job
from service.config import Settings
from service.engine.engine import Engine
from service.experiments.arms import Arm
from service.pipeline import queues as queues_module
from service.pipeline.queues import LocalQueues
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import SENTENCES


@pytest.mark.parametrize(
    ("setting", "continuous"),
    [("aggressive", {"accelerated"}), ("greedy,aggressive", {"accelerated", "autoregressive"}), ("", set())],
)
def test_listed_strategies_decode_continuously(setting: str, continuous: set[str], monkeypatch) -> None:
    engine = Engine(FIXTURE_MODEL, "int8")
    made = []

    class Recorded(queues_module.DecodingSession):
        def __init__(self, engine: Engine, strategy: str, *args) -> None:
            made.append(strategy)
            super().__init__(engine, strategy, *args)

    monkeypatch.setattr(queues_module, "DecodingSession", Recorded)
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
    assert Settings(continuous_batching="aggressive,beam,sample").continuous_strategies == {
        "aggressive",
        "beam",
        "sample",
    }
    with pytest.raises(ValueError, match="nucleus: not a strategy"):
        Settings(continuous_batching="aggressive,nucleus")
