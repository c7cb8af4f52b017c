"""Every reason an error answer can carry: one table, each reason with its HTTP status, its gRPC status code and
what it means.

A reason is the ``reason`` of an error body (``{"error": {"reason", "message", "request_id"}}``), the ``outcome``
label of the request metrics and the ``outcome`` of the request's log line; an error class of the pipeline or the
APIs names one (``service.pipeline.errors.RequestError.reason``) and answers its status. ``ErrorReason`` is a
``StrEnum``: a reason is the string itself wherever it is written. gRPC aborts a call with the reason's code;
the reasons only HTTP answers (the administration routes', the web framework's) keep the code gRPC gives every
status it has no code of its own for, ``INVALID_ARGUMENT``. ``docs/errors.md``'s table is this one.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FRAMEWORK_FALLBACK", "ErrorReason"]


class ErrorReason(StrEnum):
    """A reason, with ``status`` (HTTP), ``grpc_code`` (the name of a ``grpc.StatusCode``) and ``meaning``."""

    status: int
    grpc_code: str
    meaning: str

    def __new__(cls, reason: str, status: int, grpc_code: str, meaning: str) -> ErrorReason:
        member = str.__new__(cls, reason)
        member._value_ = reason
        member.status, member.grpc_code, member.meaning = status, grpc_code, meaning
        return member

    UNKNOWN_ARM = "unknown_arm", 400, "INVALID_ARGUMENT", "an arm no backend or running experiment has"
    UNKNOWN_LANGUAGE = "unknown_language", 400, "INVALID_ARGUMENT", "a language that is no English dialect served"
    UNKNOWN_MODEL = "unknown_model", 400, "INVALID_ARGUMENT", "a model no one serves here"
    BAD_MODEL = "bad_model", 400, "INVALID_ARGUMENT", "a model folder that cannot be served"
    INVALID_WEIGHTS = "invalid_weights", 400, "INVALID_ARGUMENT", "experiment weights that cannot be used"
    BAD_REQUEST = "bad_request", 400, "INVALID_ARGUMENT", "a /v2/check parameter LanguageTool refuses"
    BAD_WORD = "bad_word", 400, "INVALID_ARGUMENT", "a word that is not 1-64 characters without whitespace"
    UNAUTHORIZED = "unauthorized", 401, "UNAUTHENTICATED", "no API key, or a wrong one"
    FORBIDDEN = "forbidden", 403, "PERMISSION_DENIED", "a change of state while no admin key is configured"
    NOT_FOUND = "not_found", 404, "NOT_FOUND", "an unknown route, experiment or device engine file"
    UNKNOWN_EDITS = "unknown_edits", 404, "NOT_FOUND", "feedback on edit ids the service does not know"
    METHOD_NOT_ALLOWED = "method_not_allowed", 405, "INVALID_ARGUMENT", "a route called with a method it does not take"
    CONFLICT = "conflict", 409, "INVALID_ARGUMENT", "a change of experiment or model that another holds up"
    MODEL_LIMIT = "model_limit", 409, "INVALID_ARGUMENT", "a model beyond the models or the memory allowed"
    DICTIONARY_FULL = "dictionary_full", 409, "INVALID_ARGUMENT", "a word beyond the words a writer may keep"
    TOO_LARGE = "too_large", 413, "RESOURCE_EXHAUSTED", "a text, a body or a request over its limit"
    INVALID = "invalid", 422, "INVALID_ARGUMENT", "a body or fields that are not valid"
    RATE_LIMITED = "rate_limited", 429, "RESOURCE_EXHAUSTED", "a key over its rate limit"
    INTERNAL = "internal", 500, "INTERNAL", "a failure inside the service on this request"
    OVERLOADED = (
        "overloaded",
        503,
        "UNAVAILABLE",
        "a full queue, or more work ahead (queued, or in flight on a lagging event loop) than the deadline allows",
    )
    NOT_READY = "not_ready", 503, "UNAVAILABLE", "loading, shutting down, or no live engine worker"
    STORE_UNAVAILABLE = "store_unavailable", 503, "UNAVAILABLE", "the Redis store of experiments or words is down"
    DEADLINE = "deadline", 504, "DEADLINE_EXCEEDED", "past the request's deadline"


# The reason of an error the web framework raises with a status none of the table's framework reasons has (a
# static file it may not read, 401): answered with the framework's own status.
FRAMEWORK_FALLBACK = "http_error"
