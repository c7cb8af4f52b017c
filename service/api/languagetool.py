"""LanguageTool's HTTP API over the pipeline, so that editor integrations made for LanguageTool work
with a server-URL setting: ``/v2/check`` and what clients call at start-up.

``/v2/check`` is served by ``Pipeline.correct`` like ``/v1/correct``: the same experiment assignment
(``username`` as the sticky key), arm override (``X-Gecserve-Arm``), limits, deadline and records,
under the route label ``lt_check``. The paragraph is corrected in code points and the answer's
offsets converted to UTF-16 once, at the end (``lt_matches``): markup has to be mapped back and
context windows cut by characters first. The language of the text is detected on every check
(``service.text.language``) and reported in the answer's ``language`` block as LanguageTool reports
it. Errors are answered as LanguageTool answers them: plain text ``Error: ...`` with the status (400
for parameters it refuses; 401 and 429 with ``Retry-After`` from access control; 413, 503 with
``Retry-After``, 504 as elsewhere in this service). With API keys
configured ``/v2/check`` admits a request itself (``access.py``): LanguageTool's ``apiKey`` form
field is a credential, as are this service's headers; the start-up routes stay open.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response

from service.api.access import AccessControl, presented_key
from service.api.lt_matches import check_answer, software
from service.api.lt_params import CHECK_PARAMETERS, LANGUAGES, BadCheckRequestError, check_params, decode_form
from service.api.responses import ARM_HEADER, TextJSONResponse, documented_errors, served_headers
from service.pipeline.errors import RequestError
from service.pipeline.pipeline import Pipeline
from service.pipeline.types import CorrectRequest
from service.text.language import language_identifier
from service.text.rules import RULES

ROUTE = "lt_check"  # the route label of /v2/check in the metrics
MAX_ARM_CHARS = 64

_PLAIN_ERROR = {"text/plain": {"schema": {"type": "string", "pattern": "^Error: "}}}


def _plain_errors(descriptions: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` of errors answered as LanguageTool answers them."""
    return {status: {"description": text, "content": _PLAIN_ERROR} for status, text in descriptions.items()}


CHECK_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "LanguageTool's answer: software, language, matches"},
    **_plain_errors(
        {
            400: "a parameter LanguageTool refuses",
            401: "no API key (apiKey, X-Api-Key, Authorization: Bearer), or one that is not valid (keys configured)",
            413: "text over the limit",
            422: "decoding settings the engine refuses",
            429: "the API key is over its rate limit; see Retry-After",
            500: "a failure inside the service",
            503: "overloaded or not ready; see Retry-After",
            504: "over its deadline",
        }
    ),
}
# A body over the limit is cut off before any route runs, in the service's own error shape (JSON).
CHECK_RESPONSES[413] = {**documented_errors({413: "text or body over the limit"})[413], "content": _PLAIN_ERROR}
_REQUIRED = {"language"}
CHECK_QUERY = {
    "parameters": [
        {"name": name, "in": "query", "required": name in _REQUIRED, "schema": schema}
        for name, schema in CHECK_PARAMETERS.items()
    ]
}
CHECK_FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {"type": "object", "properties": CHECK_PARAMETERS, "required": sorted(_REQUIRED)}
            }
        },
    }
}


def lt_error(status: int, message: str, retry_after: str | None = None) -> PlainTextResponse:
    """An error as LanguageTool answers it: ``Error: <message>`` as plain text."""
    headers = {"Retry-After": retry_after} if retry_after else None
    return PlainTextResponse(f"Error: {message}", status_code=status, headers=headers)


def languagetool_router(pipeline: Pipeline, access: AccessControl) -> APIRouter:
    """The ``/v2`` routes; ``/v2/check`` admitted by ``access``."""
    router = APIRouter(prefix="/v2", tags=["LanguageTool"])
    name, model_version = pipeline.model_info
    identifier = language_identifier()  # loaded with the routes, not in a first request

    @router.get("/check", response_class=TextJSONResponse, responses=CHECK_RESPONSES, openapi_extra=CHECK_QUERY)
    @router.post("/check", response_class=TextJSONResponse, responses=CHECK_RESPONSES, openapi_extra=CHECK_FORM)
    async def check(request: Request) -> Response:
        """LanguageTool's check: form parameters `text` or `data`, `language` (en, en-US, en-GB, auto),
        `motherTongue`, `enabledRules`, `disabledRules`, `enabledCategories`, `disabledCategories`,
        `enabledOnly`, `level`, `preferredVariants`, `username` (the sticky key), `instanceId`; and ours,
        `alternatives` (0-5). Answers LanguageTool's JSON; errors in its plain-text form."""
        headers = request.headers
        try:
            body = await request.body() if request.method == "POST" else b""
            form = decode_form(body, request.url.query)
        except BadCheckRequestError as error:
            pipeline.refused("http", ROUTE, "bad_request")
            return lt_error(400, str(error))
        try:
            key = presented_key(headers.get("authorization"), headers.get("x-api-key"), form.get("apiKey"))
            await access.admit(key)
        except RequestError as error:
            pipeline.refused("http", ROUTE, error.reason)
            return lt_error(error.status, error.message, error.retry_after)
        arm = headers.get(ARM_HEADER)
        try:
            if arm is not None and len(arm) > MAX_ARM_CHARS:
                raise BadCheckRequestError(f"{ARM_HEADER} is longer than {MAX_ARM_CHARS} characters")
            params = check_params(form)
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
        detected = identifier.detect(params.text.plain)
        answer = check_answer(params, detected, result.corrections[0], result.model_name, result.model_version)
        return TextJSONResponse(answer, headers=served_headers(result))

    @router.get("/languages")
    async def languages() -> list[dict[str, str]]:
        """The languages `/v2/check` accepts (and `auto`)."""
        return [{"name": x.name, "code": x.code, "longCode": x.long_code} for x in LANGUAGES.values()]

    @router.get("/info")
    async def info() -> dict[str, Any]:
        """This server, as LanguageTool's `software` object."""
        return {"software": software(name, model_version)}

    @router.get("/healthcheck", response_class=PlainTextResponse, responses=_plain_errors({503: "not ready"}))
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
            **_plain_errors({400: "no language, or one LanguageTool does not know"}),
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
                "software": software(name, model_version),
                "parameter": {"maxTextLength": pipeline.settings.max_text_chars},
                "rules": rules,
            }
        )

    return router
