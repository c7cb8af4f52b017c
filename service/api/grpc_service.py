"""The gRPC API (grpc.aio): the same pipeline as HTTP, with health checking and reflection."""

from __future__ import annotations

import asyncio
import time

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from service.api.proto import gecserve_pb2 as pb
from service.api.proto import gecserve_pb2_grpc as pb_grpc
from service.pipeline.errors import RequestError
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import Correction, CorrectRequest, GenerateRequest, Timings

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Corrector"].full_name

STATUS_CODES = {
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    422: grpc.StatusCode.INVALID_ARGUMENT,
    503: grpc.StatusCode.UNAVAILABLE,
    504: grpc.StatusCode.DEADLINE_EXCEEDED,
}


def _timings(t: Timings) -> pb.Timings:
    return pb.Timings(**t.as_ms())


def _correction(c: Correction) -> pb.Correction:
    return pb.Correction(text=c.text, edits=[pb.Edit(**e.__dict__) for e in c.edits])


class CorrectorService(pb_grpc.CorrectorServicer):
    """Translates protobuf messages to pipeline requests and errors to gRPC status codes."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    async def _call(self, route: str, context: grpc.aio.ServicerContext, call):
        settings, metrics = self.pipeline.settings, self.pipeline.metrics
        started, status, backend = time.monotonic(), "OK", "none"
        remaining = context.time_remaining()
        timeout = settings.request_timeout_s if remaining is None else min(remaining, settings.request_timeout_s)
        try:
            with metrics.in_progress(route):
                result = await asyncio.wait_for(call(), timeout=timeout)
            backend = getattr(result, "backend", "generate")
            self.pipeline.stats.record_request(
                backend, time.monotonic() - started, sentences=getattr(result, "sentences", 1)
            )
            return result
        except TimeoutError:
            status = "DEADLINE_EXCEEDED"
            metrics.reject("deadline")
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"not answered within {timeout:g} s")
        except RequestError as error:
            code = STATUS_CODES.get(error.status, grpc.StatusCode.INVALID_ARGUMENT)
            status = code.name
            metrics.reject(error.reason)
            if error.retry_after:
                context.set_trailing_metadata((("retry-after", error.retry_after),))
            await context.abort(code, f"{error.reason}: {error.message}")
        finally:
            metrics.observe_request(route, backend, status, time.monotonic() - started)

    async def Correct(self, request: pb.CorrectRequest, context: grpc.aio.ServicerContext) -> pb.CorrectResponse:  # noqa: N802
        single = request.HasField("text")
        if single == bool(request.texts):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "invalid: give exactly one of 'text' or 'texts'")
        unit = request.offset_unit or "codepoint"
        texts = [request.text] if single else list(request.texts)
        correct_request = CorrectRequest(
            texts=texts,
            single=single,
            offset_unit=unit,
            backend=request.options.backend or None,
            alternatives=request.options.alternatives,
            user_id=request.client.user_id or None,
            session_id=request.client.session_id or None,
        )
        result = await self._call("Correct", context, lambda: self.pipeline.correct(correct_request))
        response = pb.CorrectResponse(
            model=pb.ModelInfo(name=result.model_name, version=result.model_version),
            backend=result.backend,
            timings_ms=_timings(result.timings),
        )
        if single:
            response.text = result.corrections[0].text
            response.edits.extend(_correction(result.corrections[0]).edits)
        else:
            response.results.extend(_correction(c) for c in result.corrections)
        return response

    async def Generate(self, request: pb.GenerateRequest, context: grpc.aio.ServicerContext) -> pb.GenerateResponse:  # noqa: N802
        generate_request = GenerateRequest(
            text=request.text,
            num_return_sequences=request.num_return_sequences or 1,
            strategy=request.strategy or "beam",
            num_beams=request.num_beams if request.HasField("num_beams") else 4,
            temperature=request.temperature if request.HasField("temperature") else 1.0,
            top_k=request.top_k if request.HasField("top_k") else 0,
            top_p=request.top_p if request.HasField("top_p") else 1.0,
            seed=request.seed if request.HasField("seed") else None,
            max_new_tokens=request.max_new_tokens if request.HasField("max_new_tokens") else None,
        )
        result = await self._call("Generate", context, lambda: self.pipeline.generate(generate_request))
        return pb.GenerateResponse(
            sequences=[pb.GeneratedSequence(text=t, score=s) for t, s in result.sequences],
            model=pb.ModelInfo(name=result.model_name, version=result.model_version),
            timings_ms=_timings(result.timings),
        )


def create_grpc_server(pipeline: Pipeline, address: str) -> tuple[grpc.aio.Server, health.HealthServicer, int]:
    """A grpc.aio server with the Corrector, health and reflection services bound to ``address``."""
    server = grpc.aio.server()
    pb_grpc.add_CorrectorServicer_to_server(CorrectorService(pipeline), server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in (SERVICE_NAME, ""):
        health_servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    port = server.add_insecure_port(address)
    return server, health_servicer, port
