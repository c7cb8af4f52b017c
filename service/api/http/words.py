"""The writers' own words over HTTP: LanguageTool's ``/v2/words`` API, and the same under ``/v1/words`` in JSON.

LanguageTool's routes, as its clients send them (parameters URL-encoded in the body or the query, the query's
winning, whatever the ``Content-Type``: ``languagetool.params.decode_form``):

* ``GET /v2/words?username=U[&offset=0&limit=10]`` → ``{"words": [...]}`` (sorted; ``limit`` 10 by default, as
  LanguageTool's);
* ``POST /v2/words/add`` (``word``, ``username``) → ``{"added": true|false}`` (false: it was there);
* ``POST /v2/words/delete`` (``word``, ``username``) → ``{"deleted": true|false}`` (false: it was not there).

They admit a request themselves, as ``/v2/check`` does (``access.control.SELF_CHECKED``): LanguageTool's ``apiKey`` is a
credential, as are ``X-Api-Key`` and ``Authorization: Bearer``. Errors are answered as LanguageTool answers them,
plain text ``Error: <message>`` with the status: 400 for a missing ``username`` or ``word``, a bad word or
paging number; 401 and 429 (``Retry-After``) from access control; 409 for a full dictionary; 503 (``Retry-After``)
when the store's Redis does not answer.

The ``/v1`` routes, behind the API-key middleware like every ``/v1`` route: ``GET /v1/words?user=U[&offset&limit]``
→ ``{"user", "words"}``; ``POST /v1/words`` ``{"user", "word"}`` → 201 ``{"added"}``; ``DELETE
/v1/words/{word}?user=U`` → ``{"deleted"}``; errors in the one JSON shape: 400 ``bad_word``, 409
``dictionary_full``, 422 ``invalid``, 503 ``store_unavailable``.

A dictionary is the writer's, named by ``username``/``user`` whatever API key presents it. The words live in a
``WordStore`` (``service.pipeline.dictionary``; in Redis, ``{prefix}words:{user}``, one set per writer).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from redis.exceptions import RedisError
from starlette.convertors import Convertor, register_url_convertor

from service.api.access.control import REFUSALS, AccessControl, presented_key
from service.api.http.experiments import StoreUnavailableError
from service.api.languagetool.params import BadCheckRequestError, decode_form
from service.api.languagetool.startup import lt_error, plain_errors
from service.api.responses import TextJSONResponse, documented_errors
from service.error_reasons import ErrorReason
from service.pipeline.dictionary import MAX_USER_CHARS, MAX_WORD_CHARS, DictionaryFullError, WordStore, check_user
from service.pipeline.errors import RequestError

__all__ = [
    "LT_PATHS",
    "BadWordError",
    "DictionaryFullRequestError",
    "WordBody",
    "words_router",
]

LT_PATHS = frozenset({"/v2/words", "/v2/words/add", "/v2/words/delete"})  # admitted by the routes themselves
LT_DEFAULT_LIMIT = 10  # LanguageTool's
RETRY_AFTER_S = "5"  # a store that does not answer: try again in a few seconds
_WHOLE = re.compile(r"[0-9]{1,9}")
T = TypeVar("T")


def _digits(value: object) -> object:
    """A query's whole number as digits only: pydantic would read "+0.0", "1.0" or " 3" as a whole number."""
    if isinstance(value, str) and not re.fullmatch(r"[0-9]+", value):
        raise ValueError("a whole number, in digits")
    return value


_Count = Annotated[int, BeforeValidator(_digits)]


class _WordConvertor(Convertor[str]):
    """A path's word as it came: any characters, ``/`` and line breaks included (``path``'s ``.*`` stops at a line
    break, which would answer 404 for what is a bad word, 400)."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("gecserve_word", _WordConvertor())


class BadWordError(RequestError):
    reason = ErrorReason.BAD_WORD


class DictionaryFullRequestError(RequestError):
    reason = ErrorReason.DICTIONARY_FULL


class WordBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid", strict=True, json_schema_extra={"examples": [{"user": "writer-17", "word": "gecserve"}]}
    )
    user: str = Field(min_length=1, max_length=MAX_USER_CHARS, description="the writer whose dictionary it is")
    word: str = Field(description=f"1-{MAX_WORD_CHARS} characters, no whitespace; kept as given (case-sensitive)")

    @field_validator("user")
    @classmethod
    def _user(cls, value: str) -> str:
        return check_user(value)


class WordsResponse(BaseModel):
    user: str
    words: list[str] = Field(description="the writer's words in code-point order, the page asked for")


class AddedResponse(BaseModel):
    added: bool = Field(description="false: the word was already there")


class DeletedResponse(BaseModel):
    deleted: bool = Field(description="false: the word was not there")


_STRING = {"type": "string"}
_LT_FIELDS: dict[str, dict[str, Any]] = {
    "username": {**_STRING, "maxLength": MAX_USER_CHARS, "description": "the writer whose dictionary it is"},
    "apiKey": {**_STRING, "description": "this service's API key (when keys are configured)"},
}
# LanguageTool's form values are text: a whole number, or blank for the default (``_whole``).
_LT_PAGE: dict[str, dict[str, Any]] = {
    "offset": {**_STRING, "pattern": rf"^{_WHOLE.pattern}$|^$", "default": "0"},
    "limit": {**_STRING, "pattern": rf"^{_WHOLE.pattern}$|^$", "default": str(LT_DEFAULT_LIMIT)},
}
_LT_WORD = {"word": {**_STRING, "minLength": 1, "maxLength": MAX_WORD_CHARS, "pattern": r"^\S+$"}}
LT_WORDS_QUERY = {
    "parameters": [
        {"name": name, "in": "query", "required": name == "username", "schema": schema}
        for name, schema in {**_LT_FIELDS, **_LT_PAGE}.items()
    ]
}
LT_WORD_FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "properties": {**_LT_WORD, **_LT_FIELDS},
                    "required": ["word", "username"],
                }
            }
        },
    }
}


def _lt_responses(ok: str, full: bool = False) -> dict[int | str, dict[str, Any]]:
    errors = {
        400: "no username (or word), a bad word, or a paging number that is not a whole number",
        401: "no API key (apiKey, X-Api-Key, Authorization: Bearer), or one that is not valid (keys configured)",
        429: REFUSALS[429],
        503: "the dictionaries' store does not answer; see Retry-After",
    }
    if full:
        errors[409] = "the writer's dictionary is full: nothing was added"
    return {200: {"description": ok}, **plain_errors(dict(sorted(errors.items())))}


def _whole(form: dict[str, str], name: str, default: int) -> int:
    value = form.get(name)
    if value is None or value == "":
        return default
    if not _WHOLE.fullmatch(value):
        raise ValueError(f"'{name}' must be a whole number of 0 or more, not '{value}'")
    return int(value)


def words_router(store: WordStore, access: AccessControl) -> APIRouter:
    """``/v2/words`` (LanguageTool's, admitted by ``access`` in the routes) and ``/v1/words`` (JSON), over
    ``store``."""
    router = APIRouter()
    _add_languagetool_routes(router, store, access)
    _add_json_routes(router, store)
    return router


async def _lt_call(
    request: Request, access: AccessControl, answer: Callable[[dict[str, str], str], Awaitable[dict[str, Any]]]
) -> Response:
    """Read LanguageTool's parameters, admit the request, then answer what ``answer(form, user)`` gives."""
    headers = request.headers
    try:
        body = await request.body() if request.method == "POST" else b""
        form = decode_form(body, request.url.query)
    except BadCheckRequestError as error:
        return lt_error(400, str(error))
    try:
        key = presented_key(headers.get("authorization"), headers.get("x-api-key"), form.get("apiKey"))
        await access.admit(key)
    except RequestError as error:
        return lt_error(error.status, error.message, error.retry_after)
    user = form.get("username")
    if not user:
        return lt_error(400, "'username' parameter missing")
    try:
        return TextJSONResponse(await answer(form, check_user(user)))
    except ValueError as error:
        return lt_error(400, str(error))
    except DictionaryFullError as error:
        return lt_error(409, str(error))
    except RedisError as error:
        return lt_error(503, f"the dictionaries' store is unreachable: {error}", RETRY_AFTER_S)


def _lt_word(form: dict[str, str]) -> str:
    word = form.get("word")
    if word is None:
        raise ValueError("'word' parameter missing")
    return word


def _add_languagetool_routes(router: APIRouter, store: WordStore, access: AccessControl) -> None:
    """LanguageTool's ``/v2/words``, ``/v2/words/add`` and ``/v2/words/delete``: form fields in, its JSON out."""

    @router.get(
        "/v2/words",
        tags=["LanguageTool"],
        response_class=TextJSONResponse,
        responses=_lt_responses("the writer's words, sorted: {words}"),
        openapi_extra=LT_WORDS_QUERY,
    )
    async def lt_words(request: Request) -> Response:
        """LanguageTool's words of a writer (`username`), sorted, `offset` and `limit` (default 10) paging them."""

        async def answer(form: dict[str, str], user: str) -> dict[str, Any]:
            offset, limit = _whole(form, "offset", 0), _whole(form, "limit", LT_DEFAULT_LIMIT)
            return {"words": await store.words(user, offset, limit)}

        return await _lt_call(request, access, answer)

    @router.post(
        "/v2/words/add",
        tags=["LanguageTool"],
        response_class=TextJSONResponse,
        responses=_lt_responses("{added}: false when the word was already there", full=True),
        openapi_extra=LT_WORD_FORM,
    )
    async def lt_add(request: Request) -> Response:
        """Add `word` to the dictionary of `username` (LanguageTool's form fields)."""

        async def answer(form: dict[str, str], user: str) -> dict[str, Any]:
            return {"added": await store.add(user, _lt_word(form))}

        return await _lt_call(request, access, answer)

    @router.post(
        "/v2/words/delete",
        tags=["LanguageTool"],
        response_class=TextJSONResponse,
        responses=_lt_responses("{deleted}: false when the word was not there"),
        openapi_extra=LT_WORD_FORM,
    )
    async def lt_delete(request: Request) -> Response:
        """Delete `word` from the dictionary of `username` (LanguageTool's form fields)."""

        async def answer(form: dict[str, str], user: str) -> dict[str, Any]:
            return {"deleted": await store.delete(user, _lt_word(form))}

        return await _lt_call(request, access, answer)


_V1_ERRORS = {
    401: REFUSALS[401],
    422: "invalid JSON, fields or parameters",
    429: REFUSALS[429],
    503: "the dictionaries' store (Redis) does not answer; see Retry-After",
}
"""The errors every ``/v1/words`` route may answer (access is checked by the app's middleware)."""


def _add_json_routes(router: APIRouter, store: WordStore) -> None:
    """``/v1/words``: list (GET), add (POST) and delete (DELETE ``/v1/words/{word}``), in JSON."""

    @router.get(
        "/v1/words",
        tags=["words"],
        response_model=WordsResponse,
        response_class=TextJSONResponse,
        responses=documented_errors(_V1_ERRORS),
    )
    async def words(
        user: str = Query(min_length=1, max_length=MAX_USER_CHARS, description="the writer"),
        offset: Annotated[_Count, Query(ge=0, description="words to skip")] = 0,
        limit: Annotated[_Count | None, Query(ge=0, description="words to answer at most (unset: all)")] = None,
    ) -> dict[str, Any]:
        """The writer's own words, in code-point order (`offset` and `limit` page them)."""
        return {"user": user, "words": await _stored(store.words(user, offset, limit))}

    @router.post(
        "/v1/words",
        tags=["words"],
        status_code=201,
        response_model=AddedResponse,
        response_class=TextJSONResponse,
        responses=documented_errors(
            {400: "a word that is not 1-64 characters without whitespace", 409: "the dictionary is full", **_V1_ERRORS}
        ),
    )
    async def add(body: WordBody) -> dict[str, Any]:
        """Add a word the service must not flag for this writer; `added` is false when it was already there."""
        return {"added": await _stored(store.add(body.user, body.word))}

    @router.delete(
        "/v1/words/{word:gecserve_word}",
        tags=["words"],
        response_model=DeletedResponse,
        response_class=TextJSONResponse,
        responses=documented_errors({400: "a word that is not 1-64 characters without whitespace", **_V1_ERRORS}),
    )
    async def delete(
        word: str, user: str = Query(min_length=1, max_length=MAX_USER_CHARS, description="the writer")
    ) -> dict[str, Any]:
        """Delete a word from the writer's dictionary; `deleted` is false when it was not there."""
        return {"deleted": await _stored(store.delete(user, word))}


async def _stored(call: Awaitable[T]) -> T:
    """The store's answer, its failures as request errors."""
    try:
        return await call
    except DictionaryFullError as error:
        raise DictionaryFullRequestError(str(error)) from error
    except ValueError as error:
        raise BadWordError(str(error)) from error
    except RedisError as error:
        raise StoreUnavailableError(
            f"the dictionaries' store is unreachable: {error}", retry_after=RETRY_AFTER_S
        ) from error
