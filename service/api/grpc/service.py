"""The gRPC API (grpc.aio): the same pipeline as HTTP, with health checking and reflection.

Messages are turned into the HTTP API's pydantic models and validated there, so both APIs accept
and refuse exactly the same requests; errors map to status codes. A message that is not valid
protobuf (a string that is not UTF-8, say) is ``INVALID_ARGUMENT``, not an internal error: the
service registers its methods with a deserializer that reports the failure to the handler.

Each call first takes its request id (metadata ``x-request-id``, or a new one) and is admitted by
the same access control as HTTP (``access/control.py``: metadata ``authorization: Bearer KEY`` or
``x-api-key``; UNAUTHENTICATED, or RESOURCE_EXHAUSTED with ``retry-after`` trailing metadata). The
request id goes back in the initial metadata of an answer and the trailing metadata of an error.
Health and reflection are other services, and stay open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from pydantic import BaseModel, ValidationError

from service.api import schemas
from service.api.access.control import AccessControl, presented_key
from service.api.entry import (
    ARM_HEADER,
    correct_request,
    feedback_request,
    generate_request,
    served_by,
    validation_message,
)
from service.api.grpc.proto import gecserve_pb2 as pb
from service.observability.request_id import current_request_id, start_request
from service.pipeline.errors import InvalidRequestError, RequestError
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import Correction, CorrectResult, Timings

__all__ = ["SERVICE_NAME", "create_grpc_server"]

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Corrector"].full_name
ARM_METADATA = ARM_HEADER.lower()
REQUEST_ID_METADATA = "x-request-id"


@dataclass(frozen=True)
class _Undecodable:
    """What the deserializer hands over when the bytes are not a valid message."""

    error: str


def _lenient(message: type[Message]) -> Callable[[bytes], Message | _Undecodable]:
    def deserialize(data: bytes) -> Message | _Undecodable:
        try:
            return message.FromString(data)
        except DecodeError as error:
            return _Undecodable(str(error) or "undecodable message")

    return deserialize


def _timings(t: Timings) -> pb.Timings:
    return pb.Timings(**t.as_ms())


def _correction(c: Correction) -> pb.Correction:
    return pb.Correction(text=c.text, edits=[pb.Edit(**e.__dict__) for e in c.edits])


def _correct_fields(request: pb.CorrectRequest) -> dict[str, Any]:
    """The HTTP body a ``CorrectRequest`` stands for (proto3's empty strings are "not given")."""
    fields: dict[str, Any] = {
        "options": {"backend": request.options.backend or None, "alternatives": request.options.alternatives},
        "client": {"user_id": request.client.user_id or None, "session_id": request.client.session_id or None},
    }
    if request.options.HasField("spelling"):
        fields["options"]["spelling"] = request.options.spelling
    if request.options.level:
        fields["options"]["level"] = request.options.level
    if request.options.HasField("keep_bias"):
        fields["options"]["keep_bias"] = request.options.keep_bias
    if request.options.HasField("min_confidence"):
        fields["options"]["min_confidence"] = request.options.min_confidence
    if request.options.language:
        fields["options"]["language"] = request.options.language
    if request.offset_unit:
        fields["offset_unit"] = request.offset_unit
    if request.HasField("text"):
        fields["text"] = request.text
    if request.texts:
        fields["texts"] = list(request.texts)
    if request.model:
        fields["model"] = request.model
    return fields


def _generate_fields(request: pb.GenerateRequest) -> dict[str, Any]:
    fields: dict[str, Any] = {"text": request.text}
    if request.num_return_sequences:
        fields["num_return_sequences"] = request.num_return_sequences
    if request.strategy:
        fields["strategy"] = request.strategy
    for name in (
        "num_beams",
        "num_beam_groups",
        "diversity_penalty",
        "temperature",
        "top_k",
        "top_p",
        "seed",
        "max_new_tokens",
    ):
        if request.HasField(name):
            fields[name] = getattr(request, name)
    if request.model:
        fields["model"] = request.model
    return fields


class CorrectorService:
    """Translates protobuf messages to pipeline requests and errors to gRPC status codes."""

    def __init__(self, pipeline: Pipeline, access: AccessControl) -> None:
        self.pipeline = pipeline
        self.access = access
        self.generate_body = schemas.generate_body(pipeline.max_new_tokens)

    async def _admit(self, context: grpc.aio.ServicerContext, route: str) -> dict[str, str]:
        """Start the call: its request id, then access control. Returns the invocation metadata."""
        metadata = dict(context.invocation_metadata() or ())
        start_request(metadata.get(REQUEST_ID_METADATA))
        try:
            await self.access.admit(presented_key(metadata.get("authorization"), metadata.get("x-api-key")))
        except RequestError as error:
            self.pipeline.refused("grpc", route, error.reason)
            await self._abort(context, error)
        return metadata

    async def _validated(
        self, model: type[BaseModel], fields: Any, route: str, context: grpc.aio.ServicerContext
    ) -> Any:
        if isinstance(fields, _Undecodable):
            self.pipeline.refused("grpc", route, InvalidRequestError.reason)
            await self._abort(context, InvalidRequestError(f"the request is not decodable: {fields.error}"))
        try:
            return model.model_validate(fields)
        except ValidationError as error:
            self.pipeline.refused("grpc", route, InvalidRequestError.reason)
            await self._abort(context, InvalidRequestError(validation_message(error.errors())))

    async def _abort(self, context: grpc.aio.ServicerContext, error: RequestError) -> None:
        trailing = [(REQUEST_ID_METADATA, current_request_id.get() or "")]
        if error.retry_after:
            trailing.append(("retry-after", error.retry_after))
        context.set_trailing_metadata(trailing)
        await context.abort(grpc.StatusCode[error.reason.grpc_code], f"{error.reason}: {error.message}")

    async def Correct(self, request: Any, context: grpc.aio.ServicerContext) -> pb.CorrectResponse:  # noqa: N802
        metadata = await self._admit(context, "correct")
        fields = request if isinstance(request, _Undecodable) else _correct_fields(request)
        body = await self._validated(schemas.CorrectBody, fields, "correct", context)
        try:
            result: CorrectResult = await self.pipeline.correct(
                correct_request(body, metadata.get(ARM_METADATA)), api="grpc", timeout=context.time_remaining()
            )
        except RequestError as error:
            await self._abort(context, error)
        served = [(name.lower(), value) for name, value in served_by(result).items()]
        await context.send_initial_metadata([(REQUEST_ID_METADATA, current_request_id.get() or ""), *served])
        response = pb.CorrectResponse(
            model=pb.ModelInfo(name=result.model_name, version=result.model_version),
            arm=result.arm,
            backend=result.backend,
            experiment=result.experiment or "",
            timings_ms=_timings(result.timings),
        )
        if body.text is not None:
            response.text = result.corrections[0].text
            response.edits.extend(_correction(result.corrections[0]).edits)
        else:
            response.results.extend(_correction(c) for c in result.corrections)
        return response

    async def Generate(self, request: Any, context: grpc.aio.ServicerContext) -> pb.GenerateResponse:  # noqa: N802
        await self._admit(context, "generate")
        fields = request if isinstance(request, _Undecodable) else _generate_fields(request)
        body = await self._validated(self.generate_body, fields, "generate", context)
        try:
            result = await self.pipeline.generate(generate_request(body), api="grpc", timeout=context.time_remaining())
        except RequestError as error:
            await self._abort(context, error)
        await context.send_initial_metadata([(REQUEST_ID_METADATA, current_request_id.get() or "")])
        return pb.GenerateResponse(
            sequences=[pb.GeneratedSequence(text=t, score=s) for t, s in result.sequences],
            model=pb.ModelInfo(name=result.model_name, version=result.model_version),
            timings_ms=_timings(result.timings),
        )

    async def Feedback(self, request: Any, context: grpc.aio.ServicerContext) -> pb.FeedbackResponse:  # noqa: N802
        await self._admit(context, "feedback")
        fields = request if isinstance(request, _Undecodable) else _feedback_fields(request)
        body = await self._validated(schemas.FeedbackBody, fields, "feedback", context)
        try:
            report = await self.pipeline.feedback(feedback_request(body), api="grpc")
        except RequestError as error:
            await self._abort(context, error)
        await context.send_initial_metadata([(REQUEST_ID_METADATA, current_request_id.get() or "")])
        return pb.FeedbackResponse(counted=report.counted, repeated=report.repeated)


def _feedback_fields(request: pb.FeedbackRequest) -> dict[str, Any]:
    return {"edit_ids": list(request.edit_ids), "action": request.action}


def _handlers(service: CorrectorService) -> grpc.GenericRpcHandler:
    methods = {
        "Correct": grpc.unary_unary_rpc_method_handler(
            service.Correct,
            request_deserializer=_lenient(pb.CorrectRequest),
            response_serializer=pb.CorrectResponse.SerializeToString,
        ),
        "Generate": grpc.unary_unary_rpc_method_handler(
            service.Generate,
            request_deserializer=_lenient(pb.GenerateRequest),
            response_serializer=pb.GenerateResponse.SerializeToString,
        ),
        "Feedback": grpc.unary_unary_rpc_method_handler(
            service.Feedback,
            request_deserializer=_lenient(pb.FeedbackRequest),
            response_serializer=pb.FeedbackResponse.SerializeToString,
        ),
    }
    return grpc.method_handlers_generic_handler(SERVICE_NAME, methods)


def create_grpc_server(
    pipeline: Pipeline, address: str, access: AccessControl | None = None, shared: bool = False
) -> tuple[grpc.aio.Server, health.HealthServicer, int]:
    """A grpc.aio server with the Corrector, health and reflection services bound to ``address``; calls
    are admitted by ``access`` (by default the settings' keys and limits). A port in use is an error, unless
    ``shared``: a front end's, bound by each of its siblings too (``service.api.supervisor``)."""
    access = access or AccessControl.from_settings(pipeline.settings, pipeline.metrics)
    server = grpc.aio.server(options=[("grpc.so_reuseport", int(shared))])
    server.add_generic_rpc_handlers((_handlers(CorrectorService(pipeline, access)),))
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in (SERVICE_NAME, ""):
        health_servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    port = server.add_insecure_port(address)
    return server, health_servicer, port
