"""``gecserve worker``'s running batch on a real engine: a job that makes the engine fail fails alone (and is
answered ``failed``, a 500 at the gateway), the jobs batched with it get the results they get alone;
jobs whose strategy batches continuously join one running batch; an unreadable decoding fails its job."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from service.batching import Job
from service.engine.allocator import IdleRelease
from service.engine.decoding.params import DecodeParams, decoding_to_json
from service.engine.engine import Engine
from service.inference.remote import RemoteBatch
from tests.engine.conftest import SENTENCES, engine_for


def breaking(engine: Engine, bad: list[int]) -> Callable:
    """``engine.generate`` that raises on any batch holding the source ``bad``."""
    generate = engine.generate

    def failing(sources, *args, **kwargs):
        if any(list(source) == bad for source in sources):
            raise RuntimeError("the engine failed on this batch")
        return generate(sources, *args, **kwargs)

    return failing


def decoded(batch: RemoteBatch, jobs: list[Job]) -> list[Any]:
    """Every job's reply, the batch advanced until it holds none."""
    replies: dict[Job, Any] = {}
    waiting = list(jobs)
    while waiting or batch.active:
        batch.advance(waiting, threading.Event(), replies.update)
        waiting = []
    return [replies[job] for job in jobs]


def batch_for(engine: Engine) -> RemoteBatch:
    return RemoteBatch(engine, IdleRelease([engine]), frozenset({"aggressive"}), max_rows=8)


def test_an_engine_fault_fails_only_its_own_job() -> None:
    engine = engine_for()
    texts = ["i saw a apple yesterday", "Break the engine with this.", "We visited a island last week."]
    sources = [engine.codec.encode(text) for text in texts]
    decoding = decoding_to_json("greedy", DecodeParams())

    def jobs() -> list[Job]:
        return [Job(tokens=list(source), payload=dict(decoding)) for source in sources]

    batch = batch_for(engine)
    alone = [decoded(batch, [job]) for job in jobs()]
    engine.generate = breaking(engine, sources[1])
    try:
        together = decoded(batch, jobs())
    finally:
        del engine.generate  # the shared engine's own method again
    assert isinstance(together[1], RuntimeError)
    for index in (0, 2):
        assert together[index]["result"] == alone[index][0]["result"]
        assert together[index]["batch_size"] == 1  # decoded again alone after the batch failed


def test_continuous_strategies_join_one_batch_and_others_decode_closed() -> None:
    engine = engine_for()
    sources = [s for s in engine.codec.encode_batch(SENTENCES) if s]
    accelerated = decoding_to_json("aggressive", DecodeParams())
    beam = decoding_to_json("beam", DecodeParams(num_beams=2))
    jobs = [Job(tokens=list(s), payload=dict(accelerated)) for s in sources]
    jobs += [Job(tokens=list(sources[0]), payload=dict(beam)), Job(tokens=[5, 6], payload={"strategy": "x"})]
    batch = batch_for(engine)
    replies = decoded(batch, jobs)
    greedy = [engine.generate([s], "greedy")[0].tokens for s in sources]
    assert [reply["result"]["tokens"] for reply in replies[: len(sources)]] == greedy
    assert max(reply["batch_size"] for reply in replies[: len(sources)]) == len(sources)  # one running batch
    expected_beam = engine.generate([sources[0]], "beam", DecodeParams(num_beams=2))[0]
    assert replies[-2]["result"] == expected_beam.to_json()
    assert isinstance(replies[-1], ValueError) and "unreadable decoding" in str(replies[-1])
    assert batch.active == 0 and not batch.decoding.batches
