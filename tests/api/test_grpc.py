"""The gRPC API with a real grpc.aio client: same answers as HTTP, health, reflection, errors."""

from __future__ import annotations

import asyncio

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from service.api.proto import gecserve_pb2 as pb
from service.api.proto import gecserve_pb2_grpc as pb_grpc


def run(coro):
    return asyncio.run(coro)


async def _call(target: str, method: str, request):
    async with grpc.aio.insecure_channel(target) as channel:
        return await getattr(pb_grpc.CorrectorStub(channel), method)(request, timeout=30)


def test_correct_matches_http(server) -> None:
    text = "😀 i saw a apple yesterday.  We visited a island last week"
    reply = run(_call(server.grpc_target, "Correct", pb.CorrectRequest(text=text, offset_unit="utf16")))
    http = httpx.post(server.url + "/v1/correct", json={"text": text, "offset_unit": "utf16"}).json()
    assert reply.text == http["text"]
    assert [(e.offset, e.length, e.original, e.replacement, e.type) for e in reply.edits] == [
        (e["offset"], e["length"], e["original"], e["replacement"], e["type"]) for e in http["edits"]
    ]
    assert reply.model.name == "tiny-gec" and reply.backend == "accelerated"
    assert reply.timings_ms.total > 0


def test_texts_and_backend_option(server) -> None:
    request = pb.CorrectRequest(
        texts=["Tom found an honest owl.", "i saw a apple yesterday."],
        options=pb.CorrectOptions(backend="autoregressive"),
    )
    reply = run(_call(server.grpc_target, "Correct", request))
    assert [r.text for r in reply.results] == ["Tom found an honest owl.", "I saw an apple yesterday."]
    assert reply.backend == "autoregressive"


def test_generate(server) -> None:
    reply = run(
        _call(
            server.grpc_target,
            "Generate",
            pb.GenerateRequest(text="i saw a apple", num_return_sequences=2, num_beams=3),
        )
    )
    assert len(reply.sequences) == 2
    assert reply.sequences[0].score >= reply.sequences[1].score
    sampled = [
        run(
            _call(
                server.grpc_target,
                "Generate",
                pb.GenerateRequest(text="i saw a apple", strategy="sample", seed=4, temperature=2.0),
            )
        )
        for _ in range(2)
    ]
    assert sampled[0].sequences[0].text == sampled[1].sequences[0].text


@pytest.mark.parametrize(
    ("request_message", "code"),
    [
        (pb.CorrectRequest(), grpc.StatusCode.INVALID_ARGUMENT),
        (pb.CorrectRequest(text="a", offset_unit="bytes"), grpc.StatusCode.INVALID_ARGUMENT),
        (pb.CorrectRequest(text="a", options=pb.CorrectOptions(backend="quantum")), grpc.StatusCode.INVALID_ARGUMENT),
        (pb.CorrectRequest(text="a", options=pb.CorrectOptions(alternatives=9)), grpc.StatusCode.INVALID_ARGUMENT),
        (pb.CorrectRequest(text="a" * 20_001), grpc.StatusCode.RESOURCE_EXHAUSTED),
    ],
)
def test_bad_requests_map_to_status_codes(server, request_message, code) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        run(_call(server.grpc_target, "Correct", request_message))
    assert error.value.code() == code
    assert error.value.details()


def test_health_and_reflection(server) -> None:
    async def check() -> tuple[int, list[str]]:
        async with grpc.aio.insecure_channel(server.grpc_target) as channel:
            status = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="gecserve.v1.Corrector"), timeout=10
            )
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            names = []
            async for response in stub.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")])
            ):
                names = [s.name for s in response.list_services_response.service]
            return status.status, names

    status, names = run(check())
    assert status == health_pb2.HealthCheckResponse.SERVING
    assert "gecserve.v1.Corrector" in names and "grpc.health.v1.Health" in names
