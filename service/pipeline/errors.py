"""Request failures the APIs translate into status codes (HTTP) and status codes (gRPC).

``reason`` is the short code of the error body (``{"error": {"reason", "message"}}``) and the
``outcome`` label of the request metrics and logs; ``status_of`` gives a reason's HTTP status.
"""

from __future__ import annotations

from service.observability.stats import OK


class RequestError(Exception):
    """A request that cannot be served; ``status`` is the HTTP status, ``reason`` a short code."""

    status = 400
    reason = "bad_request"

    def __init__(self, message: str, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class InvalidRequestError(RequestError):
    status, reason = 422, "invalid"


class UnknownArmRequestError(RequestError):
    status, reason = 400, "unknown_arm"


class UnknownModelRequestError(RequestError):
    status, reason = 400, "unknown_model"


class UnknownLanguageRequestError(RequestError):
    """A ``language`` this service does not serve (the message names those it does, as LanguageTool's)."""

    status, reason = 400, "unknown_language"


class UnknownEditsRequestError(RequestError):
    """Feedback on edit ids the service does not know (never given, or forgotten)."""

    status, reason = 404, "unknown_edits"


class PayloadTooLargeError(RequestError):
    status, reason = 413, "too_large"


class OverloadedError(RequestError):
    status, reason = 503, "overloaded"


class NotReadyError(RequestError):
    """Loading, shutting down, or no live worker: worth retrying in a second (here or elsewhere)."""

    status, reason = 503, "not_ready"

    def __init__(self, message: str, retry_after: str | None = "1") -> None:
        super().__init__(message, retry_after)


class RequestDeadlineError(RequestError):
    status, reason = 504, "deadline"


class InternalError(RequestError):
    """Something failed inside the service (an engine error on this request's batch); others go on."""

    status, reason = 500, "internal"


CANCELLED = "cancelled"  # the outcome of a request whose caller went away before it was answered
CLIENT_CLOSED = 499  # nginx's "client closed request": the status logged for it


def status_of(outcome: str) -> int:
    """The HTTP status of a request's ``outcome``: ``ok``, ``cancelled``, or the ``reason`` of a ``RequestError``
    (any subclass imported so far, the APIs' own included: each reason has one status)."""
    if outcome == OK:
        return 200
    if outcome == CANCELLED:
        return CLIENT_CLOSED
    classes: list[type[RequestError]] = [RequestError]
    while classes:
        cls = classes.pop()
        if cls.reason == outcome:
            return cls.status
        classes += cls.__subclasses__()
    return InternalError.status
