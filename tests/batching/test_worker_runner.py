"""``gecserve worker``'s runner on a real engine that fails on one sentence: only that job fails (and
is answered ``failed``, a 500 at the gateway); the jobs batched with it get the results they get alone."""

from __future__ import annotations

from collections.abc import Callable

from service.batching import Job
from service.engine.decoding.types import DecodeParams, decoding_to_json
from service.engine.engine import Engine
from service.pipeline.runners import IdleRelease
from service.worker import make_runner
from tests.engine.conftest import engine_for


def breaking(engine: Engine, bad: list[int]) -> Callable:
    """``engine.generate`` that raises on any batch holding the source ``bad``."""
    generate = engine.generate

    def failing(sources, *args, **kwargs):
        if any(list(source) == bad for source in sources):
            raise RuntimeError("the engine failed on this batch")
        return generate(sources, *args, **kwargs)

    return failing


def test_an_engine_fault_fails_only_its_own_job() -> None:
    engine = engine_for()
    texts = ["i saw a apple yesterday", "Break the engine with this.", "We visited a island last week."]
    sources = [engine.codec.encode(text) for text in texts]
    decoding = decoding_to_json("greedy", DecodeParams())

    def jobs() -> list[Job]:
        return [Job(tokens=list(source), payload=dict(decoding)) for source in sources]

    run = make_runner(engine, IdleRelease([engine]))
    alone = [run(0, [job]) for job in jobs()]
    engine.generate = breaking(engine, sources[1])
    try:
        together = run(0, jobs())
    finally:
        del engine.generate  # the shared engine's own method again
    assert isinstance(together[1], RuntimeError)
    for index in (0, 2):
        assert together[index]["result"] == alone[index][0]["result"]
        assert together[index]["batch_size"] == 1  # decoded again alone after the batch failed
