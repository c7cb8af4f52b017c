"""SIGTERM to a real ``gecserve serve``: readiness turns off at once while the listeners stay open, requests
are served for the shutdown delay, then refused with 503 while those in flight finish, and only then do the
listeners close."""

from __future__ import annotations

import asyncio
import json
import signal
import time

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.system.clients import in_progress, wait_until
from tests.system.server import RunningServer, start_server
from tests.system.test_load_behaviour import _paragraphs

pytestmark = [pytest.mark.slow, pytest.mark.server]

BOUND = 120.0  # seconds: tells "soon" from "never" (a wedged server), not a speed limit


async def grpc_health(server: RunningServer) -> int:
    async with grpc.aio.insecure_channel(server.grpc_target) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        return reply.status


def logged(server: RunningServer, message: str) -> list[dict]:
    lines = [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]
    return [line for line in lines if line["msg"] == message]


def test_sigterm_keeps_listening_with_readiness_off_until_in_flight_work_is_done(tmp_path) -> None:
    """A request of ~1,000 sentences decoded one at a time is in flight at SIGTERM: meanwhile ``/readyz`` answers
    503 (the connection is not refused), gRPC health NOT_SERVING, LanguageTool's healthcheck 503 and a new
    correction 503 ``not_ready`` with Retry-After, each answer with ``Connection: close``; the request in flight
    gets its answer; then the server exits 0 and its port is closed."""
    server = start_server(
        tmp_path, max_batch_size=1, max_queue=4096, cache_size=0, request_timeout_s=BOUND, drain_timeout_s=BOUND
    )
    paragraphs = _paragraphs(32, 30, seed=11)

    async def scenario() -> tuple[httpx.Response, list[httpx.Response], int, bool]:
        async with httpx.AsyncClient(base_url=server.url, timeout=BOUND) as client:
            slow = asyncio.create_task(client.post("/v1/correct", json={"texts": paragraphs}))
            deadline = time.monotonic() + BOUND

            async def admitted() -> bool:
                return slow.done() or await asyncio.to_thread(in_progress, server) >= 1

            await wait_until(admitted, BOUND, every=0.01, what="the request's admission")
            assert not slow.done(), "the request was answered before SIGTERM: nothing would be in flight"
            server.process.send_signal(signal.SIGTERM)
            readyz = await client.get("/readyz")  # the server takes the signal soon after, not at once
            while readyz.status_code == 200 and time.monotonic() < deadline:
                readyz = await client.get("/readyz")
            answers = [
                readyz,
                await client.post("/v1/correct", json={"text": "Tom found a owl."}),
                await client.get("/v2/healthcheck"),
            ]
            health = await grpc_health(server)
            draining = not slow.done()
            return await slow, answers, health, draining

    slow, (readyz, late, lt_health), health, draining = asyncio.run(scenario())
    assert draining, "the request in flight finished before the checks: the drain was not observed"
    assert readyz.status_code == 503 and readyz.json()["ready"] is False
    assert readyz.headers["connection"] == late.headers["connection"] == "close"  # clients reconnect elsewhere
    assert late.status_code == 503 and late.headers["retry-after"] == "1"
    assert late.json()["error"] == {
        "reason": "not_ready",
        "message": "the service is shutting down",
        "request_id": late.headers["x-request-id"],
    }
    assert lt_health.status_code == 503
    assert health == health_pb2.HealthCheckResponse.NOT_SERVING
    assert slow.status_code == 200 and len(slow.json()["results"]) == len(paragraphs)
    assert server.process.wait(BOUND) == 0, server.log()
    with pytest.raises(httpx.TransportError):
        httpx.get(server.url + "/readyz", timeout=2)


def test_requests_are_served_during_the_shutdown_delay(tmp_path) -> None:
    """With ``GECSERVE_SHUTDOWN_DELAY_S``, readiness is off from SIGTERM but corrections are still served until
    the delay is over (for load balancers that poll readiness); the process leaves after it, with status 0."""
    delay = 3.0
    server = start_server(tmp_path, shutdown_delay_s=delay)
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    readyz = httpx.get(server.url + "/readyz", timeout=5)
    while readyz.status_code == 200 and time.monotonic() - signalled < BOUND:  # taken soon after, not at once
        readyz = httpx.get(server.url + "/readyz", timeout=5)
    assert readyz.status_code == 503
    # Sent once readiness is off, so after the server took the signal: a 200 is an answer during the delay (after
    # it, new requests get 503). An ordering, not a speed check: how soon after SIGTERM it came is only reported.
    served = httpx.post(server.url + "/v1/correct", json={"text": "i saw a apple yesterday."}, timeout=5)
    answered = time.monotonic() - signalled
    assert served.status_code == 200, f"{served.text} ({answered:.1f} s after SIGTERM, the delay is {delay} s)"
    assert served.json()["text"] == "I saw an apple yesterday."
    assert server.process.wait(BOUND) == 0, server.log()
    assert time.monotonic() - signalled >= delay  # a lower bound: it holds however slow the machine
    (shutting_down,) = logged(server, "shutting down")
    assert shutting_down["shutdown_delay_s"] == delay
