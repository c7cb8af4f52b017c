"""LanguageTool's HTTP API over the pipeline, so that editor integrations made for LanguageTool work
with a server-URL setting: ``/v2/check`` and what clients call at start-up.

``/v2/check`` is served by ``Pipeline.correct`` like ``/v1/correct``: the same experiment assignment
(``username`` as the sticky key), arm override (``X-Gecserve-Arm``), limits, deadline and records,
under the route label ``lt_check``. The paragraph is corrected in code points and the answer's
offsets converted to UTF-16 once, at the end (``matches.py``): markup has to be mapped back and
context windows cut by characters first. The language of the text is detected on every check
(``service.text.language``) and reported in the answer's ``language`` block as LanguageTool reports
it. Errors are answered as LanguageTool answers them: plain text ``Error: ...`` with the status (400
for parameters it refuses; 401 and 429 with ``Retry-After`` from access control; 413, 503 with
``Retry-After``, 504 as elsewhere in this service). With API keys
configured ``/v2/check`` admits a request itself (``access/control.py``): LanguageTool's ``apiKey`` form
field is a credential, as are this service's headers; the start-up routes stay open.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError

from service.api import schemas
from service.api.access.control import REFUSALS, AccessControl, presented_key
from service.api.entry import ARM_HEADER, correct_request, served_by, validation_message
from service.api.languagetool.matches import check_answer
from service.api.languagetool.params import CHECK_PARAMETERS, BadCheckRequestError, check_params, decode_form
from service.api.languagetool.startup import PLAIN_ERROR, lt_error, plain_errors, startup_router
from service.api.responses import TextJSONResponse, documented_errors
from service.error_reasons import ErrorReason
from service.pipeline.errors import RequestError
from service.pipeline.pipeline import Pipeline
from service.text.language import language_identifier
from service.text.rules import RULES

ROUTE = "lt_check"  # the route label of /v2/check in the metrics
MAX_ARM_CHARS = 64


CHECK_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "LanguageTool's answer: software, language, matches"},
    **plain_errors(
        {
            400: "a parameter LanguageTool refuses",
            401: "no API key (apiKey, X-Api-Key, Authorization: Bearer), or one that is not valid (keys configured)",
            413: "text over the limit",
            422: "decoding settings the engine refuses",
            429: REFUSALS[429],
            500: "a failure inside the service",
            503: "overloaded or not ready; see Retry-After",
            504: "over its deadline",
        }
    ),
}
# A body over the limit is cut off before any route runs, in the service's own error shape (JSON).
CHECK_RESPONSES[413] = {**documented_errors({413: "text or body over the limit"})[413], "content": PLAIN_ERROR}
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


def languagetool_router(pipeline: Pipeline, access: AccessControl) -> APIRouter:
    """The ``/v2`` routes; ``/v2/check`` admitted by ``access``."""
    router = APIRouter(prefix="/v2", tags=["LanguageTool"])
    identifier = language_identifier()  # loaded with the routes, not in a first request

    @router.get("/check", response_class=TextJSONResponse, responses=CHECK_RESPONSES, openapi_extra=CHECK_QUERY)
    @router.post("/check", response_class=TextJSONResponse, responses=CHECK_RESPONSES, openapi_extra=CHECK_FORM)
    async def check(request: Request) -> Response:
        """LanguageTool's check: form parameters `text` or `data`, `language` (en, en-US, en-GB, en-CA, en-AU, auto),
        `motherTongue`, `enabledRules`, `disabledRules`, `enabledCategories`, `disabledCategories`,
        `enabledOnly`, `level`, `preferredVariants`, `username` (the sticky key), `instanceId`; and ours,
        `alternatives` (0-5). Answers LanguageTool's JSON; errors in its plain-text form."""
        headers = request.headers
        try:
            body = await request.body() if request.method == "POST" else b""
            form = decode_form(body, request.url.query)
        except BadCheckRequestError as error:
            pipeline.refused("http", ROUTE, ErrorReason.BAD_REQUEST)
            return lt_error(ErrorReason.BAD_REQUEST.status, str(error))
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
            pipeline.refused("http", ROUTE, ErrorReason.BAD_REQUEST)
            return lt_error(ErrorReason.BAD_REQUEST.status, str(error))
        fields = {
            "text": params.text.plain,
            "options": {
                "alternatives": params.alternatives,
                "spelling": params.rules.selected(RULES["SPELL"]),  # disabledCategories=TYPOS: no spelling stage
                "level": params.level,  # picky: the model's recall end (ModelManifest.keep_bias)
                "language": params.dialect,  # en-GB: American spellings get British variants
            },
            "client": {"user_id": params.user_id, "session_id": params.session_id},
        }
        try:
            body = schemas.CorrectBody.model_validate(fields)
        except ValidationError as error:
            pipeline.refused("http", ROUTE, ErrorReason.BAD_REQUEST)
            return lt_error(ErrorReason.BAD_REQUEST.status, validation_message(error.errors()))
        try:
            result = await pipeline.correct(correct_request(body, arm), api="http", route=ROUTE)
        except RequestError as error:
            return lt_error(error.status, error.message, error.retry_after)
        detected = identifier.detect(params.text.plain)
        answer = check_answer(params, detected, result.corrections[0], result.model_name, result.model_version)
        return TextJSONResponse(answer, headers=served_by(result))

    router.include_router(startup_router(pipeline))
    return router
