"""Request failures the APIs translate into status codes (HTTP) and status codes (gRPC).

Each names its ``reason`` (``service.error_reasons``: the short code of the error body, the ``outcome`` label of
the request metrics and logs, with its HTTP status and gRPC code); ``status_of`` gives an outcome's HTTP status.
"""

from __future__ import annotations

from service.error_reasons import ErrorReason
from service.observability.stats import OK


class RequestError(Exception):
    """A request that cannot be served, for ``reason`` (whose HTTP status is ``status``)."""

    reason = ErrorReason.BAD_REQUEST

    def __init__(self, message: str, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after

    @property
    def status(self) -> int:
        return self.reason.status


class InvalidRequestError(RequestError):
    reason = ErrorReason.INVALID


class UnknownArmRequestError(RequestError):
    reason = ErrorReason.UNKNOWN_ARM


class UnknownModelRequestError(RequestError):
    reason = ErrorReason.UNKNOWN_MODEL


class UnknownLanguageRequestError(RequestError):
    """A ``language`` this service does not serve (the message names those it does, as LanguageTool's)."""

    reason = ErrorReason.UNKNOWN_LANGUAGE


class UnknownEditsRequestError(RequestError):
    """Feedback on edit ids the service does not know (never given, or forgotten)."""

    reason = ErrorReason.UNKNOWN_EDITS


class PayloadTooLargeError(RequestError):
    reason = ErrorReason.TOO_LARGE


class OverloadedError(RequestError):
    reason = ErrorReason.OVERLOADED


class NotReadyError(RequestError):
    """Loading, shutting down, or no live worker: worth retrying in a second (here or elsewhere)."""

    reason = ErrorReason.NOT_READY

    def __init__(self, message: str, retry_after: str | None = "1") -> None:
        super().__init__(message, retry_after)


class RequestDeadlineError(RequestError):
    reason = ErrorReason.DEADLINE


class InternalError(RequestError):
    """Something failed inside the service (an engine error on this request's batch); others go on."""

    reason = ErrorReason.INTERNAL


CANCELLED = "cancelled"  # the outcome of a request whose caller went away before it was answered
CLIENT_CLOSED = 499  # nginx's "client closed request": the status logged for it


def status_of(outcome: str) -> int:
    """The HTTP status of a request's ``outcome``: ``ok``, ``cancelled``, or an error's reason (500 for any other)."""
    if outcome == OK:
        return 200
    if outcome == CANCELLED:
        return CLIENT_CLOSED
    try:
        return ErrorReason(outcome).status
    except ValueError:
        return ErrorReason.INTERNAL.status
