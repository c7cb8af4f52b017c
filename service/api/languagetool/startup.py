"""LanguageTool's start-up routes: what its clients call before they check text (the languages, this server's
software, its health, its text limit and its rules), and the plain-text errors LanguageTool answers with."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse, Response

from service.api.languagetool.matches import software
from service.api.languagetool.params import LANGUAGES
from service.api.responses import TextJSONResponse, documented_errors
from service.pipeline.pipeline import Pipeline
from service.text.rules import RULES

__all__ = ["PLAIN_ERROR", "lt_error", "plain_errors", "startup_router"]

PLAIN_ERROR = {"text/plain": {"schema": {"type": "string", "pattern": "^Error: "}}}


def plain_errors(descriptions: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` of errors answered as LanguageTool answers them."""
    return {status: {"description": text, "content": PLAIN_ERROR} for status, text in descriptions.items()}


def lt_error(status: int, message: str, retry_after: str | None = None) -> PlainTextResponse:
    """An error as LanguageTool answers it: ``Error: <message>`` as plain text."""
    headers = {"Retry-After": retry_after} if retry_after else None
    return PlainTextResponse(f"Error: {message}", status_code=status, headers=headers)


def startup_router(pipeline: Pipeline) -> APIRouter:
    """``/languages``, ``/info``, ``/healthcheck``, ``/maxtextlength`` and ``/configinfo`` (under ``/v2``)."""
    router = APIRouter()

    @router.get("/languages")
    async def languages() -> list[dict[str, str]]:
        """The languages `/v2/check` accepts (and `auto`)."""
        return [{"name": x.name, "code": x.code, "longCode": x.long_code} for x in LANGUAGES.values()]

    @router.get("/info")
    async def info() -> dict[str, Any]:
        """This server, as LanguageTool's `software` object."""
        return {"software": software(*pipeline.model_info)}

    @router.get("/healthcheck", response_class=PlainTextResponse, responses=plain_errors({503: "not ready"}))
    async def healthcheck() -> Response:
        """`OK` once the model is ready and while it is not shutting down (as `/readyz`), else 503."""
        if pipeline.serving:
            return PlainTextResponse("OK")
        return lt_error(503, "the model is not ready", retry_after="1")

    @router.get("/maxtextlength", response_class=PlainTextResponse)
    async def max_text_length() -> str:
        """The longest text `/v2/check` accepts, in characters (plain text)."""
        return str(pipeline.settings.max_text_chars)

    @router.get(
        "/configinfo",
        responses={
            **plain_errors({400: "no language, or one LanguageTool does not know"}),
            **documented_errors({422: "invalid parameters"}),
        },
    )
    async def config_info(language: str | None = None) -> Response:
        """The rules this server reports (one per edit type) and its text limit."""
        if not language:
            return lt_error(400, "'language' parameter missing")
        if language.casefold() not in LANGUAGES:
            return lt_error(400, f"'{language}' is not a language code known to LanguageTool.")
        rules = [
            {
                "ruleId": rule.id,
                "description": rule.description,
                "categoryId": rule.category_id,
                "categoryName": rule.category_name,
                "locQualityIssueType": rule.issue_type,
            }
            for rule in RULES.values()
        ]
        return TextJSONResponse(
            {
                "software": software(*pipeline.model_info),
                "parameter": {"maxTextLength": pipeline.settings.max_text_chars},
                "rules": rules,
            }
        )

    return router
