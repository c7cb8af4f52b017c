"""The writers' own words over real HTTP: LanguageTool's ``/v2/words`` (form-encoded or query, as its clients send
them; ``requests`` as language-tool-python sends its calls) and ``/v1/words`` (JSON), with API keys configured or
not, over the real Redis store.

The service's own app (``create_app``: its middlewares, error handlers and routers, as ``gecserve serve`` builds
it) is served by uvicorn, in a thread of this process; its model is never loaded, as the words routes do not need
it. (language-tool-python 3.4 has no client of ``/v2/words``: its transport is ``requests.post(url, data=...)`` and
``requests.get(url, params=...)``, which these tests use as it does.)

LanguageTool's shapes are those of its ``ApiV2`` (``handleWordsRequest``: ``offset`` 0 and ``limit`` 10 by
default, ``{"words": [...]}``; ``handleWordAddRequest``: ``{"added": bool}``; ``handleWordDeleteRequest``:
``{"deleted": bool}``) in languagetool-org/languagetool's languagetool-server, read through the public code index.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import requests
import uvicorn

from bench.served.spawn import free_port
from service.api.access.auth import hash_key
from service.api.access.control import SELF_CHECKED, guarded
from service.api.http.app import create_app
from service.api.http.words import LT_PATHS
from service.config import Settings
from service.observability.metrics import Metrics
from service.pipeline.dictionary import MAX_WORD_CHARS
from service.pipeline.errors import status_of
from service.wiring import Gateway
from tests.conftest import FIXTURE_MODEL, REDIS_URL
from tests.system.server import listening_socket
from tests.waiting import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.server]

ERRORS_PAGE = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text(encoding="utf-8")
BOUND = 4
KEY, SLOW_KEY = "editor-key-1", "slow-key-2"
KEYS = f"editor:{hash_key(KEY)},slow:{hash_key(SLOW_KEY)}:0.001:1"  # slow: one request, then 429 for ~1000 s
START_S = 10.0
JSON = {"content-type": "application/json"}


@dataclass
class Served:
    url: str
    metrics: Metrics

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, self.url + path, timeout=10, **kwargs)

    lt = v1 = call  # the two APIs' calls, named apart for the reader

    def refused(self, reason: str) -> float:
        """HTTP requests the app counted as refused for ``reason`` before they reached a route or the pipeline (the
        API-key middleware's refusals among them), from its ``request_duration_seconds``."""
        return sum(
            sample.value
            for metric in self.metrics.request_seconds.collect()
            for sample in metric.samples
            if sample.name.endswith("_count") and sample.labels["outcome"] == reason
        )


@contextmanager
def serving(redis_url: str, prefix: str, max_words: int = BOUND, api_keys: str | None = None) -> Iterator[Served]:
    """The service's app on uvicorn (in a thread, on a free port), its writers' words in the Redis at ``redis_url``
    under ``prefix``, ``max_words`` a writer; the gateway is stopped (its stores closed) when the server ends."""
    settings = Settings(
        model_path=FIXTURE_MODEL,
        redis_url=redis_url,
        redis_prefix=prefix,
        dictionary_max_words=max_words,
        api_keys=api_keys,
    )
    gateway = Gateway(settings)
    http_socket = listening_socket()
    server = uvicorn.Server(uvicorn.Config(create_app(gateway.pipeline), log_level="warning"))

    async def serve() -> None:
        try:
            await server.serve(sockets=[http_socket])
        finally:
            await gateway.stop()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    wait_for(lambda: server.started or not thread.is_alive(), START_S, what="the test server's start")
    assert server.started, "the test server stopped before it started"
    try:
        yield Served(f"http://127.0.0.1:{http_socket.getsockname()[1]}", gateway.pipeline.metrics)
    finally:
        server.should_exit = True
        thread.join(START_S)
        http_socket.close()


@pytest.fixture
def served(redis_prefix: str) -> Iterator[Served]:
    """Open (no API keys), over the real Redis."""
    with serving(REDIS_URL, redis_prefix) as running:
        yield running


@pytest.fixture
def keyed(redis_prefix: str) -> Iterator[Served]:
    """With API keys configured, over the real Redis."""
    with serving(REDIS_URL, redis_prefix, api_keys=KEYS) as running:
        yield running


def plain_error(response: httpx.Response | requests.Response, status: int) -> str:
    """The message of LanguageTool's plain-text error, after checking its form."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text.startswith("Error: ")
    return response.text.removeprefix("Error: ")


def json_error(response: httpx.Response, status: int, reason: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["reason"] == reason and status_of(reason) == status
    assert error["request_id"] == response.headers["x-request-id"]
    return error["message"]


# -- LanguageTool's /v2/words ---------------------------------------------------------------------------------


def test_languagetool_add_list_delete_as_form_fields(served: Served) -> None:
    for word, new in (("gecserve", True), ("Zorbling", True), ("añadir", True), ("gecserve", False)):
        added = served.lt("POST", "/v2/words/add", data={"word": word, "username": "ann", "apiKey": "unused"})
        assert added.status_code == 200 and added.headers["content-type"] == "application/json"
        assert added.json() == {"added": new}
    listed = served.lt("GET", "/v2/words", params={"username": "ann"})
    assert listed.status_code == 200 and listed.json() == {"words": ["Zorbling", "añadir", "gecserve"]}
    assert served.lt("GET", "/v2/words", params={"username": "bob"}).json() == {"words": []}
    deleted = served.lt("POST", "/v2/words/delete", data={"word": "Zorbling", "username": "ann"})
    assert deleted.status_code == 200 and deleted.json() == {"deleted": True}
    again = served.lt("POST", "/v2/words/delete", data={"word": "Zorbling", "username": "ann"})
    assert again.json() == {"deleted": False}
    assert served.lt("GET", "/v2/words", params={"username": "ann"}).json() == {"words": ["añadir", "gecserve"]}


def test_languagetool_pages_with_offset_and_a_default_limit_of_ten(redis_prefix: str) -> None:
    words = [f"w{n:02d}" for n in range(12)]
    with serving(REDIS_URL, redis_prefix, max_words=20) as served:
        for word in words:
            assert served.lt("POST", "/v2/words/add", data={"word": word, "username": "ann"}).json() == {"added": True}
        assert served.lt("GET", "/v2/words?username=ann").json() == {"words": words[:10]}
        assert served.lt("GET", "/v2/words?username=ann&offset=10").json() == {"words": words[10:]}
        assert served.lt("GET", "/v2/words?username=ann&offset=3&limit=2").json() == {"words": words[3:5]}
        assert served.lt("GET", "/v2/words?username=ann&limit=0").json() == {"words": []}
        assert served.lt("GET", "/v2/words?username=ann&offset=&limit=").json() == {"words": words[:10]}  # blank
        for bad in ("offset=-1", "limit=ten", "offset=1.5", "limit=99999999999"):
            assert "whole number" in plain_error(served.lt("GET", f"/v2/words?username=ann&{bad}"), 400)


def test_languagetool_parameters_in_the_query_or_a_body_of_any_content_type(served: Served) -> None:
    """LanguageTool reads a POST body as URL-encoded whatever its Content-Type (LTeX sends application/json), and
    the query string too (its values win)."""
    in_query = served.lt("POST", "/v2/words/add?word=gecserve&username=ann")
    assert in_query.json() == {"added": True}
    as_json_type = served.lt(
        "POST",
        "/v2/words/add",
        content="word=Zorbling&username=ann",
        headers={"content-type": "application/json"},
    )
    assert as_json_type.json() == {"added": True}
    query_wins = served.lt("POST", "/v2/words/add?username=bob", data={"word": "x", "username": "ann"})
    assert query_wins.json() == {"added": True}
    assert served.lt("GET", "/v2/words", params={"username": "bob"}).json() == {"words": ["x"]}
    assert served.lt("GET", "/v2/words", params={"username": "ann"}).json() == {"words": ["Zorbling", "gecserve"]}


def test_languagetool_calls_as_language_tool_python_sends_them(served: Served) -> None:
    """requests.post(url, data=params) and requests.get(url, params=params), as language-tool-python's transport
    (``LanguageTool._query_server``) sends every call."""
    base = served.url + "/v2/"
    added = requests.post(base + "words/add", data={"word": "naïve", "username": "writer@example.org"}, timeout=10)
    assert added.status_code == 200 and added.json() == {"added": True}
    listed = requests.get(base + "words", params={"username": "writer@example.org", "limit": "5"}, timeout=10)
    assert listed.json() == {"words": ["naïve"]}
    deleted = requests.post(base + "words/delete", data={"word": "naïve", "username": "writer@example.org"}, timeout=10)
    assert deleted.json() == {"deleted": True}
    message = plain_error(
        requests.post(base + "words/add", data={"word": "two words", "username": "w"}, timeout=10), 400
    )
    assert "whitespace" in message


def test_languagetool_refusals_are_plain_text(served: Served) -> None:
    assert plain_error(served.lt("GET", "/v2/words"), 400) == "'username' parameter missing"
    assert plain_error(served.lt("POST", "/v2/words/add", data={"word": "x"}), 400) == "'username' parameter missing"
    assert plain_error(served.lt("POST", "/v2/words/add", data={"username": "ann"}), 400) == "'word' parameter missing"
    missing = served.lt("POST", "/v2/words/delete", data={"username": "ann"})
    assert plain_error(missing, 400) == "'word' parameter missing"
    for word, why in (("", "empty"), ("two words", "whitespace"), ("x" * (MAX_WORD_CHARS + 1), "1-64 characters")):
        assert why in plain_error(served.lt("POST", "/v2/words/add", data={"word": word, "username": "ann"}), 400)
    too_long_user = served.lt("GET", "/v2/words", params={"username": "u" * 257})
    assert "1-256 characters" in plain_error(too_long_user, 400)
    not_utf8 = served.lt("POST", "/v2/words/add", content=b"word=%FF&username=ann")
    assert "UTF-8" in plain_error(not_utf8, 400)
    for n in range(BOUND):
        served.lt("POST", "/v2/words/add", data={"word": f"w{n}", "username": "ann"})
    full = served.lt("POST", "/v2/words/add", data={"word": "one-more", "username": "ann"})
    assert f"holds {BOUND} words" in plain_error(full, 409)
    assert served.lt("POST", "/v2/words/add", data={"word": "w0", "username": "ann"}).json() == {"added": False}


def test_languagetool_routes_admit_by_api_key(keyed: Served) -> None:
    form = {"word": "gecserve", "username": "ann"}
    no_key = keyed.lt("POST", "/v2/words/add", data=form)
    assert "an API key is needed" in plain_error(no_key, 401)
    assert "not valid" in plain_error(keyed.lt("POST", "/v2/words/add", data={**form, "apiKey": "wrong"}), 401)
    assert "not valid" in plain_error(keyed.lt("GET", "/v2/words", params={"username": "ann", "apiKey": "wrong"}), 401)
    assert plain_error(keyed.lt("GET", "/v2/words"), 401)  # refused before its parameters are read
    assert keyed.lt("GET", "/v2/words", params={"username": "ann"}).status_code == 401
    assert keyed.lt("POST", "/v2/words/add", data={**form, "apiKey": KEY}).json() == {"added": True}
    listed = keyed.lt("GET", "/v2/words", params={"username": "ann"}, headers={"x-api-key": KEY})
    assert listed.json() == {"words": ["gecserve"]}
    bearer = keyed.lt("POST", "/v2/words/delete", data=form, headers={"authorization": f"Bearer {KEY}"})
    assert bearer.json() == {"deleted": True}
    assert keyed.refused("unauthorized") == 0  # the middleware left them to the routes
    assert keyed.lt("GET", "/v2/words", params={"username": "ann", "apiKey": SLOW_KEY}).status_code == 200
    limited = keyed.lt("GET", "/v2/words", params={"username": "ann", "apiKey": SLOW_KEY})
    assert "over its rate limit" in plain_error(limited, 429) and int(limited.headers["retry-after"]) >= 1


# -- /v1/words ------------------------------------------------------------------------------------------------


def test_v1_add_list_delete(served: Served) -> None:
    first = served.v1("POST", "/v1/words", json={"user": "ann", "word": "gecserve"})
    assert first.status_code == 201 and first.json() == {"added": True}
    again = served.v1("POST", "/v1/words", json={"user": "ann", "word": "gecserve"})
    assert again.status_code == 201 and again.json() == {"added": False}
    for word in ("and/or", "Zorbling"):
        assert served.v1("POST", "/v1/words", json={"user": "ann", "word": word}).json() == {"added": True}
    listed = served.v1("GET", "/v1/words", params={"user": "ann"})
    assert listed.status_code == 200 and listed.json() == {"user": "ann", "words": ["Zorbling", "and/or", "gecserve"]}
    page = served.v1("GET", "/v1/words", params={"user": "ann", "offset": 1, "limit": 1})
    assert page.json() == {"user": "ann", "words": ["and/or"]}
    deleted = served.v1("DELETE", "/v1/words/Zorbling", params={"user": "ann"})
    assert deleted.status_code == 200 and deleted.json() == {"deleted": True}
    assert served.v1("DELETE", "/v1/words/Zorbling", params={"user": "ann"}).json() == {"deleted": False}
    assert served.v1("DELETE", f"/v1/words/{quote('and/or', safe='')}?user=ann").json() == {"deleted": True}
    assert served.v1("GET", "/v1/words?user=ann").json() == {"user": "ann", "words": ["gecserve"]}
    # one dictionary, whichever API: LanguageTool's routes see the same words
    assert served.lt("GET", "/v2/words", params={"username": "ann"}).json() == {"words": ["gecserve"]}


def test_v1_refusals_in_the_one_error_shape(served: Served) -> None:
    assert "whitespace" in json_error(
        served.v1("POST", "/v1/words", json={"user": "ann", "word": "a b"}), 400, "bad_word"
    )
    assert "empty" in json_error(served.v1("POST", "/v1/words", json={"user": "ann", "word": ""}), 400, "bad_word")
    surrogate = served.v1("POST", "/v1/words", content=b'{"user": "ann", "word": "x\\ud800"}', headers=JSON)
    assert "surrogate" in json_error(surrogate, 400, "bad_word")
    assert "whitespace" in json_error(served.v1("DELETE", "/v1/words/a%20b?user=ann"), 400, "bad_word")
    assert "whitespace" in json_error(served.v1("DELETE", "/v1/words/%0Aword?user=ann"), 400, "bad_word")
    assert "empty" in json_error(served.v1("DELETE", "/v1/words/?user=ann"), 400, "bad_word")
    json_error(served.v1("POST", "/v1/words", json={"user": "ann"}), 422, "invalid")
    json_error(served.v1("POST", "/v1/words", json={"user": "", "word": "x"}), 422, "invalid")
    json_error(served.v1("POST", "/v1/words", json={"user": "ann", "word": "x", "extra": 1}), 422, "invalid")
    json_error(served.v1("POST", "/v1/words", json={"user": "ann", "word": 7}), 422, "invalid")
    json_error(
        served.v1("POST", "/v1/words", content=b'{"user": "\\udc00", "word": "x"}', headers=JSON), 422, "invalid"
    )
    json_error(served.v1("POST", "/v1/words", content=b"not json", headers=JSON), 422, "invalid")
    json_error(served.v1("GET", "/v1/words"), 422, "invalid")
    json_error(served.v1("GET", "/v1/words?user=ann&offset=-1"), 422, "invalid")
    for bad in ("limit=%2B0.0", "limit=1.0", "offset=+1", "offset=%203"):  # what pydantic alone read as a number
        json_error(served.v1("GET", f"/v1/words?user=ann&{bad}"), 422, "invalid")
    json_error(served.v1("DELETE", "/v1/words/x"), 422, "invalid")
    for n in range(BOUND):
        served.v1("POST", "/v1/words", json={"user": "ann", "word": f"w{n}"})
    full = served.v1("POST", "/v1/words", json={"user": "ann", "word": "one-more"})
    assert f"holds {BOUND} words" in json_error(full, 409, "dictionary_full")


def test_v1_routes_need_a_key_from_the_middleware(keyed: Served) -> None:
    refused = keyed.v1("GET", "/v1/words", params={"user": "ann"})
    json_error(refused, 401, "unauthorized")
    assert refused.headers["www-authenticate"].startswith("Bearer")
    json_error(
        keyed.v1("POST", "/v1/words", json={"user": "ann", "word": "x"}, headers={"x-api-key": "no"}),
        401,
        "unauthorized",
    )
    assert keyed.refused("unauthorized") == 2
    assert keyed.v1("GET", "/v1/words?user=ann&apiKey=" + KEY).status_code == 401  # apiKey is LanguageTool's only
    headers = {"authorization": f"Bearer {KEY}"}
    assert keyed.v1("POST", "/v1/words", json={"user": "ann", "word": "x"}, headers=headers).status_code == 201
    assert keyed.v1("DELETE", "/v1/words/x?user=ann", headers={"x-api-key": KEY}).json() == {"deleted": True}


def test_an_unreachable_store_is_503_with_retry_after(redis_prefix: str) -> None:
    with serving(f"redis://127.0.0.1:{free_port()}/0", redis_prefix) as served:
        lt = served.lt("POST", "/v2/words/add", data={"word": "x", "username": "ann"})
        assert "unreachable" in plain_error(lt, 503) and lt.headers["retry-after"] == "5"
        v1 = served.v1("GET", "/v1/words?user=ann")
        assert "unreachable" in json_error(v1, 503, "store_unavailable") and v1.headers["retry-after"] == "5"


def test_the_schema_and_the_access_rules_name_the_routes(served: Served) -> None:
    paths = served.v1("GET", "/openapi.json").json()["paths"]
    assert {"/v2/words", "/v2/words/add", "/v2/words/delete", "/v1/words", "/v1/words/{word}"} <= paths.keys()
    assert LT_PATHS <= SELF_CHECKED  # admitted by the routes, from apiKey too
    assert guarded("/v1/words") and guarded("/v1/words/{word}")  # by the middleware
    for reason, status in (("bad_word", 400), ("dictionary_full", 409)):
        assert f"| {status} | `{reason}` |" in ERRORS_PAGE
