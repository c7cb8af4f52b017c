"""The gRPC API with a real grpc.aio client: same answers as HTTP, arms, health, reflection, errors."""

from __future__ import annotations

import asyncio

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from service.api.grpc.proto import gecserve_pb2 as pb
from tests.system.clients import grpc_call, grpc_error, post, rebuild
from tests.system.test_http import TEXTS

pytestmark = pytest.mark.server


def edits_of(message) -> list[dict]:
    return [
        {"offset": e.offset, "length": e.length, "original": e.original, "replacement": e.replacement, "type": e.type}
        for e in message.edits
    ]


@pytest.mark.parametrize("unit", ["codepoint", "utf16"])
def test_offsets_rebuild_the_text_and_match_http(server, unit: str) -> None:
    for text in TEXTS:
        reply, _ = grpc_call(server, "Correct", pb.CorrectRequest(text=text, offset_unit=unit))
        assert rebuild(text, edits_of(reply), unit) == reply.text
        http = post(server, "/v1/correct", {"text": text, "offset_unit": unit}).json()
        assert reply.text == http["text"]
        assert edits_of(reply) == [
            {k: e[k] for k in ("offset", "length", "original", "replacement", "type")} for e in http["edits"]
        ]
    many, _ = grpc_call(server, "Correct", pb.CorrectRequest(texts=TEXTS, offset_unit=unit))
    for text, result in zip(TEXTS, many.results, strict=True):
        assert rebuild(text, edits_of(result), unit) == result.text


def test_response_names_the_arm(server) -> None:
    reply, metadata = grpc_call(server, "Correct", pb.CorrectRequest(text="i saw a apple yesterday."))
    assert reply.arm == reply.backend == "accelerated" == metadata["x-gecserve-arm"]
    assert reply.experiment == ""
    assert reply.model.name == "tiny-gec" and reply.timings_ms.total > 0


def test_texts_and_arm_by_option_or_metadata(server) -> None:
    texts = ["Tom found an honest owl.", "i saw a apple yesterday."]
    by_option, _ = grpc_call(
        server, "Correct", pb.CorrectRequest(texts=texts, options=pb.CorrectOptions(backend="autoregressive"))
    )
    by_metadata, metadata = grpc_call(
        server, "Correct", pb.CorrectRequest(texts=texts), metadata=(("x-gecserve-arm", "autoregressive"),)
    )
    assert [r.text for r in by_option.results] == ["Tom found an honest owl.", "I saw an apple yesterday."]
    assert by_option.arm == by_metadata.arm == metadata["x-gecserve-arm"] == "autoregressive"
    assert list(by_option.results) == list(by_metadata.results)


def test_request_ids_in_and_out(server) -> None:
    _, metadata = grpc_call(server, "Correct", pb.CorrectRequest(text="a"), metadata=(("x-request-id", "ed-7"),))
    assert metadata["x-request-id"] == "ed-7"
    _, metadata = grpc_call(server, "Generate", pb.GenerateRequest(text="a"), metadata=(("x-request-id", "bad id"),))
    assert len(metadata["x-request-id"]) == 32
    error = grpc_error(server, "Correct", pb.CorrectRequest(), metadata=(("x-request-id", "ed-8"),))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dict(error.trailing_metadata())["x-request-id"] == "ed-8"


def test_generate(server) -> None:
    reply, _ = grpc_call(
        server, "Generate", pb.GenerateRequest(text="i saw a apple", num_return_sequences=2, num_beams=3)
    )
    assert len(reply.sequences) == 2
    assert reply.sequences[0].score >= reply.sequences[1].score
    options = {"num_return_sequences": 4, "num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 2.0}
    diverse, _ = grpc_call(server, "Generate", pb.GenerateRequest(text="i saw a apple", **options))
    http = post(server, "/v1/generate", {"text": "i saw a apple", **options}).json()
    assert [s.text for s in diverse.sequences] == [s["text"] for s in http["sequences"]]
    request = pb.GenerateRequest(text="i saw a apple", strategy="sample", seed=4, temperature=2.0)
    assert (
        grpc_call(server, "Generate", request)[0].sequences[0].text
        == grpc_call(server, "Generate", request)[0].sequences[0].text
    )


@pytest.mark.parametrize(
    ("request_message", "code", "fragment"),
    [
        (pb.CorrectRequest(), grpc.StatusCode.INVALID_ARGUMENT, "exactly one"),
        (pb.CorrectRequest(text="a", offset_unit="bytes"), grpc.StatusCode.INVALID_ARGUMENT, "offset_unit"),
        (
            pb.CorrectRequest(text="a", options=pb.CorrectOptions(backend="quantum")),
            grpc.StatusCode.INVALID_ARGUMENT,
            "unknown_arm",
        ),
        (
            pb.CorrectRequest(text="a", options=pb.CorrectOptions(alternatives=9)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "alternatives",
        ),
        (pb.CorrectRequest(text="a" * 20_001), grpc.StatusCode.RESOURCE_EXHAUSTED, "20000"),
        (
            pb.GenerateRequest(text="a", num_beams=4, num_beam_groups=3, diversity_penalty=1.0),
            grpc.StatusCode.INVALID_ARGUMENT,
            "num_beam_groups",
        ),
        (
            pb.GenerateRequest(text="a", num_beams=4, num_beam_groups=2, diversity_penalty=-0.5),
            grpc.StatusCode.INVALID_ARGUMENT,
            "diversity_penalty",
        ),
    ],
)
def test_bad_requests_map_to_status_codes(server, request_message, code, fragment: str) -> None:
    method = "Generate" if isinstance(request_message, pb.GenerateRequest) else "Correct"
    error = grpc_error(server, method, request_message)
    assert error.code() == code
    assert fragment in error.details()


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

    status, names = asyncio.run(check())
    assert status == health_pb2.HealthCheckResponse.SERVING
    assert "gecserve.v1.Corrector" in names and "grpc.health.v1.Health" in names


def test_grpc_requests_are_counted_with_their_api(server) -> None:
    grpc_call(server, "Correct", pb.CorrectRequest(text="Tom found an owl."))
    grpc_error(server, "Correct", pb.CorrectRequest())
    metrics = httpx.get(server.url + "/metrics").text
    assert 'api="grpc",arm="accelerated",experiment="none",outcome="ok",route="correct"' in metrics
    assert 'api="grpc",arm="none",experiment="none",outcome="invalid",route="correct"' in metrics


def test_a_dialect_by_grpc_and_an_unknown_one_is_invalid_argument(server) -> None:
    options = pb.CorrectOptions(language="en-GB")
    reply, _ = grpc_call(server, "Correct", pb.CorrectRequest(text="Color", options=options))
    assert reply.text == "Colour"
    assert [(e.original, e.replacement, e.category) for e in reply.edits] == [("Color", "Colour", "R:SPELL:DIALECT")]
    plain, _ = grpc_call(server, "Correct", pb.CorrectRequest(text="Color"))
    assert plain.text == "Color" and not plain.edits
    error = grpc_error(server, "Correct", pb.CorrectRequest(text="a", options=pb.CorrectOptions(language="de-DE")))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "'de-DE'" in error.details() and "en-US, en-GB, en-CA, en-AU" in error.details()
