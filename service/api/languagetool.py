"""LanguageTool's HTTP API over the pipeline, so that editor integrations made for LanguageTool work
with a server-URL setting: ``/v2/check`` and what clients call at start-up.

``/v2/check`` is served by ``Pipeline.correct`` like ``/v1/correct``: the same experiment assignment
(``username`` as the sticky key), arm override (``X-Gecserve-Arm``), limits, deadline and records,
under the route label ``lt_check``. The paragraph is corrected in code points and the answer's
offsets converted to UTF-16 once, at the end (``lt_matches``): markup has to be mapped back and
context windows cut by characters first. Errors are answered as LanguageTool answers them: plain
text ``Error: ...`` with the status (400 for parameters it refuses; 413, 503 with ``Retry-After``,
504 as elsewhere in this service).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response

from service.api.lt_matches import check_answer, software
from service.api.lt_params import LANGUAGES, BadCheckRequestError, check_params, decode_form
from service.api.responses import ARM_HEADER, TextJSONResponse, served_headers
from service.pipeline.errors import RequestError
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import CorrectRequest
from service.text.rules import RULES

ROUTE = "lt_check"  # the route label of /v2/check in the metrics
MAX_ARM_CHARS = 64


def lt_error(status: int, message: str, retry_after: str | None = None) -> PlainTextResponse:
    """An error as LanguageTool answers it: ``Error: <message>`` as plain text."""
    headers = {"Retry-After": retry_after} if retry_after else None
    return PlainTextResponse(f"Error: {message}", status_code=status, headers=headers)


def languagetool_router(pipeline: Pipeline) -> APIRouter:
    """The ``/v2`` routes."""
    router = APIRouter(prefix="/v2", tags=["LanguageTool"])
    name, model_version = pipeline.model_info

    @router.api_route("/check", methods=["GET", "POST"], response_class=TextJSONResponse)
    async def check(request: Request) -> Response:
        """LanguageTool's check: form parameters `text` or `data`, `language` (en, en-US, en-GB, auto),
        `motherTongue`, `enabledRules`, `disabledRules`, `enabledCategories`, `disabledCategories`,
        `enabledOnly`, `level`, `preferredVariants`, `username` (the sticky key), `instanceId`; and ours,
        `alternatives` (0-5). Answers LanguageTool's JSON; errors in its plain-text form."""
        arm = request.headers.get(ARM_HEADER)
        try:
            if arm is not None and len(arm) > MAX_ARM_CHARS:
                raise BadCheckRequestError(f"{ARM_HEADER} is longer than {MAX_ARM_CHARS} characters")
            body = await request.body() if request.method == "POST" else b""
            params = check_params(decode_form(body, request.url.query))
        except BadCheckRequestError as error:
            pipeline.refused("http", ROUTE, "bad_request")
            return lt_error(400, str(error))
        correct = CorrectRequest(
            texts=[params.text.plain],
            single=True,
            arm=arm,
            alternatives=params.alternatives,
            spelling=params.rules.selected(RULES["spelling"]),  # disabledCategories=TYPOS: no spelling stage
            user_id=params.user_id,
            session_id=params.session_id,
        )
        try:
            result = await pipeline.correct(correct, api="http", route=ROUTE)
        except RequestError as error:
            return lt_error(error.status, error.message, error.retry_after)
        answer = check_answer(params, result.corrections[0], result.model_name, result.model_version)
        return TextJSONResponse(answer, headers=served_headers(result))

    @router.get("/languages")
    async def languages() -> list[dict[str, str]]:
        """The languages `/v2/check` accepts (and `auto`)."""
        return [{"name": x.name, "code": x.code, "longCode": x.long_code} for x in LANGUAGES.values()]

    @router.get("/info")
    async def info() -> dict[str, Any]:
        """This server, as LanguageTool's `software` object."""
        return {"software": software(name, model_version)}

    @router.get("/healthcheck", response_class=PlainTextResponse)
    async def healthcheck() -> Response:
        """`OK` once the model is ready (as `/readyz`), else 503."""
        if pipeline.accepting:
            return PlainTextResponse("OK")
        return lt_error(503, "the model is not ready", retry_after="1")

    @router.get("/maxtextlength", response_class=PlainTextResponse)
    async def max_text_length() -> str:
        """The longest text `/v2/check` accepts, in characters (plain text)."""
        return str(pipeline.settings.max_text_chars)

    @router.get("/configinfo")
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
                "software": software(name, model_version),
                "parameter": {"maxTextLength": pipeline.settings.max_text_chars},
                "rules": rules,
            }
        )

    return router
