"""How the HTTP API answers what goes wrong: every error in the one shape (``responses.error_response``), and each
request refused before it reached the pipeline recorded as refused."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from service.api.entry import validation_message
from service.api.responses import error_response
from service.error_reasons import FRAMEWORK_FALLBACK, ErrorReason
from service.observability.request_id import REQUEST_ID_HEADER, current_request_id
from service.pipeline.errors import InvalidRequestError, RequestError
from service.pipeline.pipeline import Pipeline

__all__ = ["ROUTES", "install_error_handlers"]

# The route label of a request refused before it reached the pipeline, by path.
ROUTES = {"/v1/correct": "correct", "/v1/generate": "generate", "/v1/feedback": "feedback"}
# Reasons of errors raised by the web framework itself, by status (a body it cannot read, 400, is answered
# 422 invalid, as invalid JSON is).
FRAMEWORK_REASONS = {
    reason.status: reason for reason in (ErrorReason.NOT_FOUND, ErrorReason.METHOD_NOT_ALLOWED, ErrorReason.TOO_LARGE)
}


def _unreadable(cause: BaseException | None) -> str:
    """Why FastAPI could not read a request body (``cause``: what it raised)."""
    if isinstance(cause, UnicodeDecodeError):
        return f"the request body is not UTF-8 (byte {cause.start}: {cause.reason})"
    if isinstance(cause, RecursionError):
        return "the request body is not valid JSON: it is nested too deeply"
    if cause is None:
        return "the request body could not be read"
    return f"the request body could not be read ({type(cause).__name__})"


def install_error_handlers(app: FastAPI, pipeline: Pipeline) -> None:
    """``app``'s answers to invalid requests, the framework's errors, the pipeline's and anything unexpected."""

    def refused(request: Request) -> None:
        pipeline.refused("http", ROUTES.get(request.url.path, "other"), InvalidRequestError.reason)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        refused(request)
        return error_response(InvalidRequestError.reason, validation_message(error.errors()))

    @app.exception_handler(HTTPException)
    async def framework_error(request: Request, error: HTTPException) -> Response:
        if error.status_code == 400:  # FastAPI could not read the body: a body that is not JSON is invalid
            refused(request)
            return error_response(InvalidRequestError.reason, _unreadable(error.__cause__))
        reason = FRAMEWORK_REASONS.get(error.status_code, FRAMEWORK_FALLBACK)
        return error_response(reason, str(error.detail), headers=error.headers, status=error.status_code)

    @app.exception_handler(RequestError)
    async def request_error(request: Request, error: RequestError) -> Response:
        return error_response(error.reason, error.message, error.retry_after)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> Response:
        # Answered outside the middlewares (Starlette re-raises the error, and the server logs it).
        request_id = current_request_id.get() or ""
        message = f"the request failed inside the service: {type(error).__name__}"
        return error_response(ErrorReason.INTERNAL, message, headers={REQUEST_ID_HEADER: request_id})
