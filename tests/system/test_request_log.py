"""One INFO line per request on a real server's stderr (logger ``gecserve.requests``): every route that reaches
the pipeline, over HTTP, gRPC and LanguageTool's API, and the requests refused on their way there; with the
request id, what served it, how it ended and how long it took, and never the text."""

from __future__ import annotations

import json
import socket

import grpc
import httpx
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from tests.system.clients import grpc_call, grpc_error, wait_for
from tests.system.server import RunningServer

pytestmark = pytest.mark.server

TEXT = "The secretary go to Lisbon every days."  # never in a log line
JSON = {"content-type": "application/json"}


def request_lines(server: RunningServer) -> dict[str, list[dict]]:
    """The server's request log lines, by request id."""
    lines: dict[str, list[dict]] = {}
    for line in server.log().splitlines():
        if line.startswith("{") and (entry := json.loads(line))["logger"] == "gecserve.requests":
            lines.setdefault(entry.get("request_id", ""), []).append(entry)
    return lines


def logged(server: RunningServer, request_id: str) -> dict:
    """The one line of ``request_id`` (waited for: the server writes it as the answer goes out)."""
    wait_for(lambda: request_id in request_lines(server), timeout=30)
    (line,) = request_lines(server)[request_id]
    return line


def post(
    server: RunningServer, path: str, request_id: str, headers: dict | None = None, **kwargs: object
) -> httpx.Response:
    return httpx.post(server.url + path, headers={"X-Request-Id": request_id, **(headers or {})}, timeout=60, **kwargs)


@pytest.mark.parametrize(
    ("path", "body", "route", "outcome", "status", "arm", "sentences"),
    [
        ("/v1/correct", {"json": {"text": TEXT}}, "correct", "ok", 200, "accelerated", 1),
        ("/v1/correct", {"json": {"texts": [TEXT, TEXT]}}, "correct", "ok", 200, "accelerated", 2),
        ("/v1/generate", {"json": {"text": TEXT}}, "generate", "ok", 200, "generate", 1),
        ("/v2/check", {"data": {"text": TEXT, "language": "en-US"}}, "lt_check", "ok", 200, "accelerated", 1),
        (
            "/v1/correct",
            {"json": {"text": TEXT, "options": {"backend": "x"}}},
            "correct",
            "unknown_arm",
            400,
            "none",
            0,
        ),
        ("/v1/correct", {"json": {"text": TEXT, "offset_unit": "bytes"}}, "correct", "invalid", 422, "none", 0),
        ("/v1/correct", {"content": "[" * 100_000, "headers": JSON}, "correct", "invalid", 422, "none", 0),
        ("/v1/correct", {"json": {"text": TEXT * 600}}, "correct", "too_large", 413, "none", 0),
        ("/v2/check", {"data": {"text": TEXT, "language": "xx"}}, "lt_check", "bad_request", 400, "none", 0),
    ],
    ids=["correct", "texts", "generate", "lt", "unknown-arm", "invalid", "deep-json", "too-large", "lt-refused"],
)
def test_each_http_request_is_logged_once(
    server: RunningServer,
    request: pytest.FixtureRequest,
    path: str,
    body: dict,
    route: str,
    outcome: str,
    status: int,
    arm: str,
    sentences: int,
) -> None:
    request_id = f"log-{request.node.callspec.id}"
    answer = post(server, path, request_id, **body)
    assert answer.status_code == status
    line = logged(server, request_id)
    assert line["level"] == "info" and line["msg"] == "request" and line["latency_ms"] >= 0
    assert {k: line[k] for k in ("api", "route", "outcome", "status", "arm", "experiment", "sentences")} == {
        "api": "http",
        "route": route,
        "outcome": outcome,
        "status": status,
        "arm": arm,
        "experiment": "none",
        "sentences": sentences,
    }
    assert "Lisbon" not in server.log()


def test_grpc_calls_are_logged_once(server: RunningServer) -> None:
    grpc_call(server, "Correct", pb.CorrectRequest(text=TEXT), metadata=[("x-request-id", "log-grpc-ok")])
    error = grpc_error(
        server,
        "Correct",
        pb.CorrectRequest(text=TEXT, offset_unit="bytes"),
        metadata=[("x-request-id", "log-grpc-bad")],
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    ok, bad = logged(server, "log-grpc-ok"), logged(server, "log-grpc-bad")
    assert (ok["api"], ok["route"], ok["outcome"], ok["status"], ok["arm"], ok["sentences"]) == (
        "grpc",
        "correct",
        "ok",
        200,
        "accelerated",
        1,
    )
    assert (bad["api"], bad["outcome"], bad["status"]) == ("grpc", "invalid", 422)
    assert "Lisbon" not in server.log()


def test_routes_outside_the_pipeline_are_not_logged(server: RunningServer) -> None:
    for path in ("/healthz", "/readyz", "/metrics", "/v1/stats"):
        assert httpx.get(server.url + path, headers={"X-Request-Id": f"log-{path[1:]}"}, timeout=10).status_code == 200
    post(server, "/v1/correct", "log-after-probes", json={"text": TEXT})
    logged(server, "log-after-probes")  # written in order: the probes' lines would be there by now
    assert not {f"log-{p}" for p in ("healthz", "readyz", "metrics", "v1/stats")} & request_lines(server).keys()


def test_uvicorns_own_messages_are_json_lines_too(server: RunningServer) -> None:
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as connection:
        connection.sendall(b"\x16\x03\x01 a TLS hello on the plain port\r\n\r\n")
        assert connection.recv(64).startswith(b"HTTP/1.1 400")
    wait_for(lambda: "Invalid HTTP request" in server.log(), timeout=30)
    (line,) = [line for line in server.log().splitlines() if "Invalid HTTP request" in line]
    entry = json.loads(line)
    assert (entry["logger"], entry["level"]) == ("uvicorn.error", "warning")
