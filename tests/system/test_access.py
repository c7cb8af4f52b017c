"""Access control against real servers: API keys over HTTP, gRPC and LanguageTool's API, per-key rate
limits (in one process, across HTTP and gRPC, and across two replicas through a real Redis), the
admin key on every state-changing route, CORS, request ids, and no key material in the logs."""

from __future__ import annotations

import asyncio
import json

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from service.api.access.auth import hash_key
from service.api.access.control import OPEN_PATHS
from service.api.grpc.proto import gecserve_pb2 as pb
from tests.conftest import REDIS_URL
from tests.system.clients import grpc_call, grpc_error, metric, post
from tests.system.server import RunningServer, free_port, start_server

pytestmark = pytest.mark.server

ALICE, CAROL, ADMIN = "alice-7Qm2xVb9KpL3", "carol-Zt8wR1nF6yH0", "admin-Jd4sP9cX2vB7"
LIMITED = {name: f"{name}-Lk3mN8qR5tW1" for name in ("dave", "erin", "frank")}  # each test its own bucket
ORIGIN = "https://editor.example"
TEXT = {"text": "i saw a apple yesterday."}
OPEN = ["/healthz", "/readyz", "/metrics", "/docs", "/openapi.json", "/dashboard", "/static/dashboard.js"]
OPEN += ["/", "/static/front.css", "/editor", "/static/editor.js", "/static/gecserve.js"]
OPEN += ["/v2/languages", "/v2/info", "/v2/healthcheck", "/v2/maxtextlength", "/v2/configinfo?language=en"]
# Seconds: tells an answer (one word: milliseconds, even on a loaded machine well under a second) from a request
# held on a Redis that is down (its retries, or until the client gives up); a bound, not a speed limit.
HELD_S = 10.0


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory) -> RunningServer:
    """Keys from a file (alice; dave, erin, frank with a limit of their own: 2 at once, a token every
    100 s) and from the environment (carol); the admin key; CORS for one origin; debug logs."""
    folder = tmp_path_factory.mktemp("keyed")
    lines = ["# test keys", f"alice:{hash_key(ALICE)}"]
    lines += [f"{name}:{hash_key(key)}:0.01:2" for name, key in LIMITED.items()]
    (folder / "keys.txt").write_text("\n".join(lines) + "\n")
    running = start_server(
        folder,
        api_keys_file=folder / "keys.txt",
        api_keys=f"carol:{hash_key(CAROL)}",
        admin_key=ADMIN,
        cors_origins=f"{ORIGIN}, https://other.example",
        log_level="DEBUG",
    )
    yield running
    running.stop()


def test_serving_routes_need_a_valid_key(keyed) -> None:
    for response in (
        post(keyed, "/v1/correct", TEXT),
        post(keyed, "/v1/correct", TEXT, headers=bearer("alice-wrong")),
        post(keyed, "/v1/correct", TEXT, headers={"Authorization": f"Basic {ALICE}"}),
        post(keyed, "/v1/correct", TEXT, headers={"X-Api-Key": hash_key(ALICE)}),  # the stored hash is no key
        post(keyed, "/v1/generate", {"text": "i saw a apple"}),
        httpx.get(keyed.url + "/v1/stats"),
        httpx.get(keyed.url + "/v1/experiments"),
        httpx.get(keyed.url + "/nowhere"),  # deny by default: a key before anything else
    ):
        assert response.status_code == 401, response.request.url
        error = response.json()["error"]
        assert error["reason"] == "unauthorized" and error["request_id"] == response.headers["x-request-id"]
        assert response.headers["www-authenticate"].startswith("Bearer")
    for headers in (bearer(ALICE), {"X-Api-Key": ALICE}, bearer(CAROL), bearer(ADMIN)):
        response = post(keyed, "/v1/correct", TEXT, headers=headers)
        assert response.status_code == 200 and response.json()["text"] == "I saw an apple yesterday."
    assert post(keyed, "/v1/generate", {"text": "i saw a apple"}, headers={"X-Api-Key": ALICE}).status_code == 200
    assert httpx.get(keyed.url + "/v1/stats", headers=bearer(ALICE)).status_code == 200
    metrics = httpx.get(keyed.url + "/metrics").text
    assert metric(metrics, "gecserve_request_duration_seconds_count", outcome="unauthorized", route="correct") == 4


@pytest.mark.parametrize("path", OPEN)
def test_probes_metrics_docs_and_start_up_calls_stay_open(keyed, path: str) -> None:
    assert httpx.get(keyed.url + path).status_code == 200


def test_grpc_needs_a_key_in_its_metadata(keyed) -> None:
    request = pb.CorrectRequest(text=TEXT["text"])
    for metadata in (None, (("authorization", "Bearer nope"),), (("authorization", ALICE),)):
        error = grpc_error(keyed, "Correct", request, metadata=metadata)
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED and "unauthorized" in error.details()
        assert len(dict(error.trailing_metadata())["x-request-id"]) == 32
    assert grpc_error(keyed, "Generate", pb.GenerateRequest(text="a")).code() == grpc.StatusCode.UNAUTHENTICATED
    for metadata in ((("authorization", f"Bearer {ALICE}"),), (("x-api-key", CAROL),)):
        reply, _ = grpc_call(keyed, "Correct", request, metadata=metadata)
        assert reply.text == "I saw an apple yesterday."
    reply, _ = grpc_call(keyed, "Generate", pb.GenerateRequest(text="i saw a apple"), (("x-api-key", ALICE),))
    assert reply.sequences

    async def health() -> int:
        async with grpc.aio.insecure_channel(keyed.grpc_target) as channel:
            return (await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)).status

    assert asyncio.run(health()) == health_pb2.HealthCheckResponse.SERVING  # health stays open


def test_languagetool_check_takes_its_api_key_field_and_answers_in_its_style(keyed) -> None:
    url = keyed.url + "/v2/check"
    form = {"text": "i saw a apple yesterday.", "language": "en-US"}
    for response in (httpx.post(url, data=form), httpx.post(url, data={**form, "apiKey": "nope"})):
        assert response.status_code == 401 and response.text.startswith("Error: ")
        assert response.headers["content-type"].startswith("text/plain")
    for request in (
        {"data": {**form, "apiKey": ALICE, "username": "writer"}},
        {"data": form, "headers": bearer(CAROL)},
        {"data": form, "headers": {"X-Api-Key": ALICE}},
    ):
        response = httpx.post(url, timeout=60, **request)
        assert response.status_code == 200 and response.json()["matches"]
    frank = {**form, "apiKey": LIMITED["frank"]}
    assert [httpx.post(url, data=frank, timeout=60).status_code for _ in range(2)] == [200, 200]
    refused = httpx.post(url, data=frank)
    assert refused.status_code == 429 and refused.text.startswith("Error: ") and "frank" in refused.text
    assert 1 <= int(refused.headers["retry-after"]) <= 100


def test_a_key_over_its_limit_gets_429_with_retry_after(keyed) -> None:
    dave = {"X-Api-Key": LIMITED["dave"]}
    assert [post(keyed, "/v1/correct", TEXT, headers=dave).status_code for _ in range(2)] == [200, 200]
    refused = post(keyed, "/v1/correct", TEXT, headers=dave)
    assert refused.status_code == 429
    assert refused.json()["error"]["reason"] == "rate_limited" and "dave" in refused.json()["error"]["message"]
    assert 95 <= int(refused.headers["retry-after"]) <= 100  # a token every 100 s, from the bucket's state
    assert post(keyed, "/v1/correct", TEXT, headers=bearer(ALICE)).status_code == 200  # others are not held
    metrics = httpx.get(keyed.url + "/metrics").text
    assert metric(metrics, "gecserve_rate_limited_total", key="dave") == 1
    assert metric(metrics, "gecserve_request_duration_seconds_count", outcome="rate_limited", route="correct") == 1


def test_http_and_grpc_draw_on_the_same_bucket(keyed) -> None:
    erin = LIMITED["erin"]
    assert post(keyed, "/v1/correct", TEXT, headers=bearer(erin)).status_code == 200
    grpc_call(keyed, "Correct", pb.CorrectRequest(text="a"), metadata=(("authorization", f"Bearer {erin}"),))
    error = grpc_error(keyed, "Correct", pb.CorrectRequest(text="a"), (("x-api-key", erin), ("x-request-id", "r-9")))
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "rate_limited" in error.details()
    trailing = dict(error.trailing_metadata())
    assert 95 <= int(trailing["retry-after"]) <= 100 and trailing["x-request-id"] == "r-9"
    assert post(keyed, "/v1/correct", TEXT, headers=bearer(erin)).status_code == 429


def test_every_state_changing_route_needs_the_admin_key(keyed) -> None:
    """Every route of the schema that is not a GET, apart from those writers call: the three that correct text,
    feedback, and their own words."""
    serving = {"/v1/correct", "/v1/generate", "/v2/check", "/v1/feedback"}
    serving |= {"/v1/words", "/v1/words/{word}", "/v2/words/add", "/v2/words/delete"}
    spec = httpx.get(keyed.url + "/openapi.json").json()
    changing = [
        (method, path.replace("{name}", "ab"))
        for path, methods in spec["paths"].items()
        for method in methods
        if method not in ("get", "head") and path not in serving
    ]
    assert len(changing) >= 3
    for method, path in changing:
        with_api_key = httpx.request(method, keyed.url + path, json={}, headers={"X-Api-Key": ALICE})
        assert with_api_key.status_code == 401, (method, path)
        assert with_api_key.json()["error"]["message"].endswith("'Authorization: Bearer <admin key>'")
        wrong = httpx.request(method, keyed.url + path, json={}, headers=bearer(ALICE + "x"))
        assert wrong.status_code == 401
        admitted = httpx.request(method, keyed.url + path, json={}, headers=bearer(ADMIN))
        assert admitted.status_code in (404, 422), (method, path)  # past the guard: no experiment "ab", no body


def test_the_schema_declares_401_and_429_on_every_guarded_route_and_only_there(keyed) -> None:
    spec = httpx.get(keyed.url + "/openapi.json").json()
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            declared = {"401", "429"} & set(operation["responses"])
            if path in OPEN_PATHS:
                assert not declared, (method, path)
            else:
                assert declared == {"401", "429"}, (method, path)


def test_cors_preflight_and_answers_for_the_configured_origins(keyed) -> None:
    preflight = {
        "Origin": ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, x-request-id",
    }
    allowed = httpx.options(keyed.url + "/v1/correct", headers=preflight)  # no key: browsers send none here
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ORIGIN
    assert {"authorization", "content-type", "x-request-id"} <= {
        h.strip().lower() for h in allowed.headers["access-control-allow-headers"].split(",")
    }
    assert "POST" in allowed.headers["access-control-allow-methods"]
    refused = httpx.options(keyed.url + "/v1/correct", headers={**preflight, "Origin": "https://evil.example"})
    assert refused.status_code == 400 and "access-control-allow-origin" not in refused.headers
    answer = post(keyed, "/v1/correct", TEXT, headers={"Origin": ORIGIN, **bearer(ALICE)})
    assert answer.headers["access-control-allow-origin"] == ORIGIN
    assert "x-request-id" in answer.headers["access-control-expose-headers"].lower()
    unauthorized = post(keyed, "/v1/correct", TEXT, headers={"Origin": ORIGIN})  # the page can read why
    assert unauthorized.status_code == 401 and unauthorized.headers["access-control-allow-origin"] == ORIGIN


def test_request_ids_are_echoed_and_logged_and_keys_never_are(keyed) -> None:
    refused = post(keyed, "/v1/correct", TEXT, headers={"X-Api-Key": "alice-not-quite", "X-Request-Id": "req-42"})
    assert refused.headers["x-request-id"] == "req-42" and refused.json()["error"]["request_id"] == "req-42"
    made = post(keyed, "/v1/correct", TEXT, headers={**bearer(ALICE), "X-Request-Id": "bad id <x>"})
    assert made.status_code == 200 and len(made.headers["x-request-id"]) == 32
    httpx.post(keyed.url + "/v2/check", data={"text": "a", "language": "en", "apiKey": CAROL})
    grpc_call(keyed, "Correct", pb.CorrectRequest(text="a"), metadata=(("authorization", f"Bearer {ALICE}"),))
    logs = [json.loads(line) for line in keyed.log().splitlines() if line.startswith("{")]
    refusals = [line for line in logs if line.get("request_id") == "req-42"]
    assert [(line["msg"], line.get("reason", line.get("outcome"))) for line in refusals] == [
        ("access refused", "unknown_key"),
        ("request", "unauthorized"),
    ]
    text = keyed.log()
    for secret in (ALICE, CAROL, ADMIN, "alice-not-quite", *LIMITED.values()):
        assert secret not in text


def test_two_replicas_share_one_bucket_through_redis(tmp_path, redis_prefix: str) -> None:
    key = "shared-Hq5vK2mX8pR4"
    shared = {
        "api_keys": f"team:{hash_key(key)}",
        "rate_limit_per_s": 0.01,
        "rate_limit_burst": 5,
        "redis_url": REDIS_URL,
        "redis_prefix": redis_prefix,
    }
    first, second = start_server(tmp_path / "a", **shared), start_server(tmp_path / "b", **shared)
    try:
        statuses = [
            post(server, "/v1/correct", {"text": "a"}, headers={"X-Api-Key": key}).status_code
            for _ in range(6)
            for server in (first, second)
        ]
        assert statuses.count(200) == 5 and statuses.count(429) == 7  # one bucket of 5, not 5 per replica
        assert statuses[:5] == [200] * 5
        refused = sum(
            metric(httpx.get(s.url + "/metrics").text, "gecserve_rate_limited_total", key="team")
            for s in (first, second)
        )
        assert refused == 7
    finally:
        first.stop()
        second.stop()


def test_a_redis_that_is_down_limits_per_replica_and_never_holds_a_request(tmp_path, redis_prefix: str) -> None:
    key = "lonely-Vb6nM3qT9wE2"
    down = f"redis://127.0.0.1:{free_port()}/0"
    server = start_server(
        tmp_path, api_keys=f"solo:{hash_key(key)}", rate_limit_per_s=0.01, rate_limit_burst=3, redis_url=down
    )
    try:
        answers = [post(server, "/v1/correct", {"text": "a"}, headers={"X-Api-Key": key}) for _ in range(4)]
        assert [a.status_code for a in answers] == [200, 200, 200, 429]
        assert all(a.elapsed.total_seconds() < HELD_S for a in answers)  # answered, not held on Redis
        metrics = httpx.get(server.url + "/metrics").text
        assert metric(metrics, "gecserve_rate_limit_errors_total") >= 1
        assert "redis rate limiter unreachable" in server.log()
    finally:
        server.stop()
