"""Readiness, refusals and engine faults, over real HTTP and gRPC, against a server in this process
whose engine the test holds (so the queue state each check needs is reached without racing the clock)
or breaks (a fault on one sentence)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import grpc
import httpx
import pytest
import uvicorn

from service.api.grpc.proto import gecserve_pb2 as pb
from service.api.grpc.proto import gecserve_pb2_grpc as pb_grpc
from service.api.grpc.service import create_grpc_server
from service.api.http.app import create_app
from service.config import Settings
from service.pipeline.pipeline import Pipeline
from service.wiring import Gateway
from tests.conftest import FIXTURE_MODEL
from tests.system.clients import wait_until
from tests.system.server import listening_socket

BREAKING = "Break the engine with this."  # the held engine raises on any batch holding this sentence
HOLD_S = 30.0  # a held batch is let go after this long even if a failing test never opens the gate


@dataclass
class HeldEngine:
    """Every engine's model waits for ``release`` before it encodes a batch (one it decodes to the end,
    or sentences joining a running batch) and raises on ``BREAKING``; the sources of each are kept."""

    release: threading.Event = field(default_factory=threading.Event)
    entered: threading.Event = field(default_factory=threading.Event)
    batches: list[list[list[int]]] = field(default_factory=list)

    def hold(self, pipeline: Pipeline) -> None:
        default = pipeline.models.get()
        breaking = default.preprocessor.encode(BREAKING)
        for engine in default.queues.engines:
            model = engine.model
            model.start = self._wrap(model.start, lambda sources, stop=None: sources, breaking)
            model.join = self._wrap(model.join, lambda state, slots, sources, owners: sources, breaking)

    def _wrap(self, encode: Callable, sources_of: Callable, breaking: list[int]) -> Callable:
        def held(*args, **kwargs):
            sources = sources_of(*args, **kwargs)
            self.batches.append([list(s) for s in sources])
            self.entered.set()
            self.release.wait(HOLD_S)
            if any(list(s) == breaking for s in sources):
                raise RuntimeError("the engine failed on this batch")
            return encode(*args, **kwargs)

        return held

    async def wait_entered(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, HOLD_S), "no batch reached the engine"


@dataclass
class Served:
    gateway: Gateway
    http: httpx.AsyncClient
    grpc: pb_grpc.CorrectorStub

    @property
    def pipeline(self) -> Pipeline:
        return self.gateway.pipeline

    def depth(self, queue: str) -> int:
        return self.pipeline.health()["queues"].get(queue, {}).get("depth", 0)

    async def until_depth(self, queue: str, depth: int) -> None:
        await wait_until(lambda: self.depth(queue) == depth, HOLD_S)


@asynccontextmanager
async def serving(start: bool = True, **overrides: object) -> AsyncIterator[Served]:
    """The HTTP app on uvicorn and the gRPC server on free ports, over one pipeline (started or not)."""
    gateway = Gateway(Settings(model_path=FIXTURE_MODEL, model_variant="int8", cache_size=0, **overrides))
    pipeline = gateway.pipeline
    http_socket = listening_socket()
    http_port = http_socket.getsockname()[1]
    http = uvicorn.Server(uvicorn.Config(create_app(pipeline), log_level="warning"))
    http_task = asyncio.create_task(http.serve(sockets=[http_socket]))
    grpc_server, _, grpc_port = create_grpc_server(pipeline, "127.0.0.1:0")
    await grpc_server.start()
    try:
        await wait_until(lambda: http.started, what="the HTTP server's start")
        if start:
            await gateway.start()
        async with (
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}", timeout=HOLD_S) as client,
            grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel,
        ):
            yield Served(gateway, client, pb_grpc.CorrectorStub(channel))
    finally:
        http.should_exit = True
        await asyncio.gather(http_task, grpc_server.stop(0))
        await gateway.stop()
        http_socket.close()


async def grpc_refusal(call) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call
    return refused.value


def retry_after(error: grpc.aio.AioRpcError) -> str | None:
    return dict(error.trailing_metadata() or ()).get("retry-after")


def test_readiness_follows_warm_up_and_shutdown() -> None:
    """Not ready before the model is warm (both APIs refuse with 503/UNAVAILABLE and a Retry-After),
    ready after, and not ready again as soon as shutdown begins, while in-flight work still finishes."""

    async def scenario() -> None:
        async with serving(start=False, admit_within=0) as served:
            assert (await served.http.get("/healthz")).status_code == 200
            assert (await served.http.get("/readyz")).status_code == 503
            early = await served.http.post("/v1/correct", json={"text": "i saw a apple"})
            assert early.status_code == 503 and early.headers["retry-after"] == "1"
            assert early.json()["error"]["reason"] == "not_ready"
            error = await grpc_refusal(served.grpc.Correct(pb.CorrectRequest(text="i saw a apple")))
            assert error.code() == grpc.StatusCode.UNAVAILABLE and retry_after(error) == "1"

            await served.gateway.start()
            assert (await served.http.get("/readyz")).status_code == 200
            engine = HeldEngine()
            engine.hold(served.pipeline)
            in_flight = asyncio.create_task(served.http.post("/v1/correct", json={"text": "i saw a apple yesterday."}))
            await engine.wait_entered()
            stopping = asyncio.create_task(served.gateway.stop())
            await asyncio.sleep(0)  # shutdown has begun: the drain waits for the held batch
            assert (await served.http.get("/readyz")).status_code == 503
            late = await served.http.post("/v1/correct", json={"text": "Tom found an owl."})
            assert late.status_code == 503 and late.json()["error"]["reason"] == "not_ready"
            engine.release.set()
            answer = await in_flight
            assert answer.status_code == 200 and answer.json()["text"] == "I saw an apple yesterday."
            await stopping

    asyncio.run(scenario())


def test_generate_refuses_too_large_when_full_and_past_its_deadline() -> None:
    """``/v1/generate``: 413 over the text limit, 503 with Retry-After when its queue is full, 504 when
    its deadline passes while the engine is busy; gRPC says the same in its codes."""

    async def scenario() -> None:
        async with serving(max_text_chars=200, max_queue=4, admit_within=0, request_timeout_s=1.0) as served:
            too_large = await served.http.post("/v1/generate", json={"text": "a" * 201})
            assert too_large.status_code == 413 and too_large.json()["error"]["reason"] == "too_large"
            error = await grpc_refusal(served.grpc.Generate(pb.GenerateRequest(text="a" * 201)))
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

            engine = HeldEngine()
            engine.hold(served.pipeline)
            held = asyncio.create_task(served.http.post("/v1/generate", json={"text": "i saw a apple"}))
            await engine.wait_entered()
            four = "i saw a apple. Tom found a owl. He go home. The cat likes teh old car."
            queued = asyncio.create_task(served.http.post("/v1/generate", json={"text": four}))
            await served.until_depth("generate", 4)
            full = await served.http.post("/v1/generate", json={"text": "He go home."})
            assert full.status_code == 503 and full.json()["error"]["reason"] == "overloaded"
            assert 1 <= int(full.headers["retry-after"]) <= 60
            error = await grpc_refusal(served.grpc.Generate(pb.GenerateRequest(text="He go home.")))
            assert error.code() == grpc.StatusCode.UNAVAILABLE and 1 <= int(retry_after(error)) <= 60

            late = [await held, await queued]  # the engine is held past their 1 s deadline
            assert [r.status_code for r in late] == [504, 504]
            assert {r.json()["error"]["reason"] for r in late} == {"deadline"}
            engine.release.set()
            after = await served.http.post("/v1/generate", json={"text": "i saw a apple"})
            assert after.status_code == 200 and after.json()["sequences"]

    asyncio.run(scenario())


def test_an_engine_fault_fails_only_the_request_it_came_from() -> None:
    """The engine raises on a batch holding one bad sentence: that request gets 500 (INTERNAL over
    gRPC) in the error shape, and the request batched with it still gets its correction."""

    async def scenario() -> tuple[HeldEngine, dict[str, int]]:
        async with serving(admit_within=0) as served:
            engine = HeldEngine()
            engine.hold(served.pipeline)
            first = asyncio.create_task(served.http.post("/v1/correct", json={"text": "Tom found an owl."}))
            await engine.wait_entered()
            bad = asyncio.create_task(served.http.post("/v1/correct", json={"text": BREAKING}))
            good = asyncio.create_task(served.http.post("/v1/correct", json={"text": "i saw a apple yesterday."}))
            await served.until_depth("accelerated", 2)
            engine.release.set()
            assert (await first).status_code == 200
            failed, served_ok = await bad, await good
            assert failed.status_code == 500 and failed.json()["error"]["reason"] == "internal"
            assert served_ok.status_code == 200 and served_ok.json()["text"] == "I saw an apple yesterday."
            error = await grpc_refusal(served.grpc.Correct(pb.CorrectRequest(text=BREAKING)))
            assert error.code() == grpc.StatusCode.INTERNAL
            outcomes = (await served.http.get("/v1/stats")).json()["series"]["accelerated"]["1m"]["outcomes"]
            return engine, outcomes

    engine, outcomes = asyncio.run(scenario())
    assert [len(batch) for batch in engine.batches[:2]] == [1, 2]  # the bad and the good one decoded together
    assert outcomes["internal"] == 2 and outcomes["ok"] == 2
