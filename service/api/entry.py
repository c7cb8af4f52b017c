"""The one request entry of every protocol: a validated body (and the arm its header or metadata names) as the
pipeline's request, validation errors as one message, and the names of what served an answer.

HTTP (``http/``), gRPC (``grpc/service.py``, which validates its messages with the same models) and
LanguageTool's ``/v2/check`` (``languagetool/check.py``, whose parameters become the same body) call these, so that
the three accept, refuse and answer alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from service.api import schemas
from service.pipeline.errors import InvalidRequestError
from service.pipeline.types import CorrectRequest, CorrectResult, FeedbackRequest, GenerateRequest

__all__ = [
    "ARM_HEADER",
    "EXPERIMENT_HEADER",
    "correct_request",
    "feedback_request",
    "generate_request",
    "served_by",
    "validation_message",
]

ARM_HEADER = "X-Gecserve-Arm"  # also gRPC metadata, in lower case
EXPERIMENT_HEADER = "X-Gecserve-Experiment"


def correct_request(body: schemas.CorrectBody, named_arm: str | None) -> CorrectRequest:
    """The correction ``body`` asks for; ``named_arm``: the arm the header (or gRPC metadata) names, which must
    agree with ``options.backend`` when both are given."""
    arm = body.options.backend  # the public field keeps its name: it names an arm (docs/architecture.md#glossary)
    if arm and named_arm and arm != named_arm:
        raise InvalidRequestError(f"options.backend {arm!r} and {ARM_HEADER} {named_arm!r} disagree")
    return CorrectRequest(
        texts=[body.text] if body.text is not None else list(body.texts or []),
        single=body.text is not None,
        offset_unit=body.offset_unit,
        arm=arm or named_arm,
        alternatives=body.options.alternatives,
        spelling=body.options.spelling,
        level=body.options.level,
        keep_bias=body.options.keep_bias,
        min_confidence=body.options.min_confidence,
        user_id=body.client.user_id,
        session_id=body.client.session_id,
        model=body.model,
        language=body.options.language,
    )


def generate_request(body: BaseModel) -> GenerateRequest:
    """The rewrites ``body`` (``schemas.generate_body``'s model) asks for."""
    return GenerateRequest(**body.model_dump())


def feedback_request(body: schemas.FeedbackBody) -> FeedbackRequest:
    """The feedback ``body`` gives."""
    return FeedbackRequest(edit_ids=list(dict.fromkeys(body.edit_ids)), action=body.action)


def validation_message(errors: Sequence[Mapping[str, Any]]) -> str:
    """pydantic's errors as one line: ``field.path: message; ...``."""
    details = "; ".join(f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in errors)
    return details or "invalid request"


def served_by(result: CorrectResult) -> dict[str, str]:
    """The arm that served a correction, and the experiment that assigned it, by header name (gRPC sends them
    as metadata, names in lower case)."""
    names = {ARM_HEADER: result.arm}
    if result.experiment:
        names[EXPERIMENT_HEADER] = result.experiment
    return names
