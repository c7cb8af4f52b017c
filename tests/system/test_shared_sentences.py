"""Identical sentences of concurrent requests are decoded once: a request waits for the decode another request
already has in flight (the same model and decoding) instead of submitting its own job. Over real HTTP and gRPC
against a server in this process whose engine the test holds (``test_held_engine.py``), so that every request
is waiting before the decode ends; each test says what the engine decoded, and what every request answered when
the request that submitted the sentence timed out, went away or failed."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from service.pipeline.pipeline import Pipeline
from tests.system.clients import wait_until
from tests.system.test_held_engine import BREAKING, HOLD_S, HeldEngine, Served, serving

SENTENCE = "i saw a apple yesterday."
CORRECTED = "I saw an apple yesterday."


def shared(pipeline: Pipeline, queue: str = "accelerated") -> float:
    return pipeline.metrics.registry.get_sample_value("gecserve_shared_sentences_total", {"queue": queue}) or 0.0


def decoded(engine: HeldEngine, served: Served, text: str) -> int:
    """How many times the engine was given ``text`` (sentences joining a batch, or starting one)."""
    tokens = served.pipeline.models.get().preprocessor.encode(text)
    return sum(source == tokens for batch in engine.batches for source in batch)


async def until_shared(served: Served, count: int) -> None:
    await wait_until(lambda: shared(served.pipeline) == count, HOLD_S)


def test_identical_concurrent_requests_share_one_decode() -> None:
    """Eight requests for one sentence, over HTTP and gRPC, while its decode is held: one job reaches the
    engine, seven requests wait for it, and all eight answer the correction."""

    async def scenario() -> None:
        async with serving() as served:
            engine = HeldEngine()
            engine.hold(served.pipeline)
            first = asyncio.create_task(served.http.post("/v1/correct", json={"text": SENTENCE}))
            await engine.wait_entered()
            others = [asyncio.create_task(served.http.post("/v1/correct", json={"text": SENTENCE})) for _ in range(5)]
            calls = [asyncio.ensure_future(served.grpc.Correct(pb.CorrectRequest(text=SENTENCE))) for _ in range(2)]
            await until_shared(served, 7)
            engine.release.set()
            answers = [await first] + [await task for task in others]
            assert [(a.status_code, a.json()["text"]) for a in answers] == [(200, CORRECTED)] * 6
            assert [(await call).text for call in calls] == [CORRECTED] * 2
            assert decoded(engine, served, SENTENCE) == 1
            assert served.depth("accelerated") == 0

    asyncio.run(scenario())


def test_waiters_outlive_the_deadline_of_the_request_decoding_their_sentence() -> None:
    """The request that submitted the sentence has a 1 s deadline and the engine is held past it: it gets
    504, and the two requests waiting for its decode submit the sentence again (once, together) and answer."""

    async def scenario() -> None:
        async with serving(admit_within=0) as served:
            engine = HeldEngine()
            engine.hold(served.pipeline)
            hurried = asyncio.create_task(
                served.http.post("/v1/correct", json={"text": SENTENCE}, headers={"X-Gecserve-Timeout-Ms": "1000"})
            )
            await engine.wait_entered()
            waiting = [asyncio.create_task(served.http.post("/v1/correct", json={"text": SENTENCE})) for _ in range(2)]
            await until_shared(served, 2)
            late = await hurried
            assert late.status_code == 504 and late.json()["error"]["reason"] == "deadline"
            await served.until_depth("accelerated", 1)  # submitted again, queued behind the held batch
            await until_shared(served, 3)  # one waiter submitted it; the other waits for that decode
            engine.release.set()
            answers = [await task for task in waiting]
            assert [(a.status_code, a.json()["text"]) for a in answers] == [(200, CORRECTED)] * 2
            assert decoded(engine, served, SENTENCE) == 2

    asyncio.run(scenario())


def test_waiters_answer_when_the_request_decoding_their_sentence_goes_away() -> None:
    """A gRPC call submits the sentence and is cancelled by its caller while the engine holds it: the HTTP
    request waiting for that decode submits the sentence itself and gets its correction."""

    async def scenario() -> None:
        async with serving() as served:
            engine = HeldEngine()
            engine.hold(served.pipeline)
            call = served.grpc.Correct(pb.CorrectRequest(text=SENTENCE))
            await engine.wait_entered()
            waiting = asyncio.create_task(served.http.post("/v1/correct", json={"text": SENTENCE}))
            await until_shared(served, 1)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await served.until_depth("accelerated", 1)
            engine.release.set()
            answer = await waiting
            assert (answer.status_code, answer.json()["text"]) == (200, CORRECTED)
            assert await call.code() == grpc.StatusCode.CANCELLED

    asyncio.run(scenario())


def test_waiters_answer_when_the_request_decoding_their_sentence_fails() -> None:
    """The request that submitted the sentence fails (another of its sentences breaks the engine: 500); the
    request waiting for the shared sentence still gets its correction."""

    async def scenario() -> None:
        async with serving(admit_within=0) as served:
            engine = HeldEngine()
            engine.hold(served.pipeline)
            failing = asyncio.create_task(served.http.post("/v1/correct", json={"text": f"{SENTENCE} {BREAKING}"}))
            await engine.wait_entered()
            waiting = asyncio.create_task(served.http.post("/v1/correct", json={"text": SENTENCE}))
            await until_shared(served, 1)
            engine.release.set()
            failed, answer = await failing, await waiting
            assert failed.status_code == 500 and failed.json()["error"]["reason"] == "internal"
            assert (answer.status_code, answer.json()["text"]) == (200, CORRECTED)

    asyncio.run(scenario())


def test_a_request_waits_only_for_a_decode_at_least_as_urgent_as_itself() -> None:
    """An editor's request (interactive) does not wait behind a bulk request's decode of its sentence: it
    submits its own job. A bulk request does wait for an interactive request's decode."""

    async def scenario() -> None:
        async with serving(admit_within=0) as served:
            engine = HeldEngine()
            engine.hold(served.pipeline)
            bulk = asyncio.create_task(served.http.post("/v1/correct", json={"texts": [SENTENCE, "Tom found a owl."]}))
            await engine.wait_entered()
            interactive = asyncio.create_task(served.http.post("/v1/correct", json={"text": SENTENCE}))
            await served.until_depth("accelerated", 1)
            assert shared(served.pipeline) == 0
            later_bulk = asyncio.create_task(served.http.post("/v1/correct", json={"texts": [SENTENCE, SENTENCE]}))
            await until_shared(served, 1)  # it waits for the interactive decode, the most urgent one
            engine.release.set()
            answers = [await bulk, await interactive, await later_bulk]
            assert [a.status_code for a in answers] == [200] * 3
            assert answers[0].json()["results"][0]["text"] == answers[1].json()["text"] == CORRECTED
            assert [r["text"] for r in answers[2].json()["results"]] == [CORRECTED] * 2
            assert decoded(engine, served, SENTENCE) == 2

    asyncio.run(scenario())
