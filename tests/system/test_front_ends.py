"""The process layout with real processes (``gecserve serve --front-ends 2``): a supervisor, two front ends on
the same ports, an engine process fed over ZeroMQ. Answers equal one process's over HTTP and gRPC, metrics merged
across processes, a killed front end restarted while its sibling serves, a killed engine failing only its
in-flight requests (503) and coming back, the models fixed (loading and unloading refused with 409), and SIGTERM
draining every front end."""

from __future__ import annotations

import signal
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import psutil
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from tests.system.clients import grpc_call, metric, post
from tests.system.server import RunningServer, start_server
from tests.system.test_http import TEXTS
from tests.system.test_scaleout import sentences

pytestmark = [pytest.mark.slow, pytest.mark.server]

ADMIN_KEY = "layout-admin"


@pytest.fixture(scope="module")
def layout(tmp_path_factory) -> RunningServer:
    running = start_server(
        tmp_path_factory.mktemp("front-ends"), front_ends=2, cache_size=0, admin_key=ADMIN_KEY, ready_timeout_s=90
    )
    yield running
    running.stop()


def children(layout: RunningServer, role: str) -> list[psutil.Process]:
    """The supervisor's live processes of ``role``: ``serve`` (front ends) or ``engine``."""
    found = []
    for child in psutil.Process(layout.process.pid).children():
        try:
            if role in child.cmdline()[3:4] and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


def replaced(layout: RunningServer, role: str, gone: int, timeout: float = 60) -> list[psutil.Process]:
    """The processes of ``role`` once none is ``gone`` and as many run as before, and every front end answers."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        now = children(layout, role)
        if len(now) == (2 if role == "serve" else 1) and gone not in {child.pid for child in now}:
            return now
        time.sleep(0.2)
    raise AssertionError(f"no {role} process replaced pid {gone} within {timeout} s")


def statuses_under_load(layout: RunningServer, texts: list[str], during) -> list[int | str]:
    """Each text corrected by 8 clients at once while ``during()`` runs, 0.5 s in: each answer's status, or the
    error's name."""

    def one(text: str) -> int | str:
        try:
            return httpx.post(layout.url + "/v1/correct", json={"text": text}, timeout=30).status_code
        except httpx.TransportError as error:
            return type(error).__name__

    with ThreadPoolExecutor(8) as pool:
        answers = [pool.submit(one, text) for text in texts]
        time.sleep(0.5)
        during()
        return [answer.result() for answer in answers]


def test_answers_equal_one_process_answers(server, layout) -> None:
    health = httpx.get(layout.url + "/readyz").json()
    assert health["ready"] and health["decoding"]["transport"] == "engine process"
    texts = [*sentences(12, seed=5), *TEXTS]
    for payload in (
        {"texts": texts},
        {"texts": texts[:4], "options": {"backend": "autoregressive"}},
        {"text": texts[0], "options": {"alternatives": 3}},
    ):
        here, there = post(server, "/v1/correct", payload).json(), post(layout, "/v1/correct", payload).json()
        assert there.get("results", there.get("edits")) == here.get("results", here.get("edits"))
    payload = {"text": texts[1], "num_return_sequences": 3, "num_beams": 4}
    here, there = post(server, "/v1/generate", payload).json(), post(layout, "/v1/generate", payload).json()
    assert [s["text"] for s in there["sequences"]] == [s["text"] for s in here["sequences"]]
    assert post(layout, "/v1/generate", {"text": "a b", "num_return_sequences": 4, "num_beams": 2}).status_code == 422
    for _ in range(4):  # the kernel spreads gRPC connections among the front ends
        reply, _ = grpc_call(layout, "Correct", pb.CorrectRequest(texts=TEXTS))
        expected, _ = grpc_call(server, "Correct", pb.CorrectRequest(texts=TEXTS))
        assert reply.results == expected.results


def test_metrics_are_merged_across_processes(layout) -> None:
    for text in sentences(30, seed=6):
        assert post(layout, "/v1/correct", {"text": text}).status_code == 200
    scrapes = [httpx.get(layout.url + "/metrics").text for _ in range(6)]
    front_ends = {child.pid for child in children(layout, "serve")}
    for scrape in scrapes:  # whichever front end answers shows every process's counts
        assert metric(scrape, "gecserve_request_duration_seconds_count", route="correct") >= 30
        assert metric(scrape, "gecserve_batch_size_count") > 0  # observed by the engine process
        lag_pids = {
            line.split('pid="')[1].split('"')[0] for line in scrape.splitlines() if "event_loop_lag_seconds{" in line
        }
        assert front_ends <= {int(pid) for pid in lag_pids}


def test_the_models_are_those_it_started_with(layout) -> None:
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    served = httpx.get(layout.url + "/v1/models").json()["models"]
    for answer in (
        httpx.post(layout.url + "/v1/models", json={"name": "other", "path": served[0]["path"]}, headers=admin),
        httpx.delete(layout.url + f"/v1/models/{served[0]['name']}", headers=admin),
    ):
        assert answer.status_code == 409, answer.text
        assert answer.json()["error"]["reason"] == "conflict"
        assert "--front-ends" in answer.json()["error"]["message"]
    names = [model["name"] for model in served]
    assert [model["name"] for model in httpx.get(layout.url + "/v1/models").json()["models"]] == names


def test_a_killed_front_end_is_restarted_and_its_sibling_serves(layout) -> None:
    victim = children(layout, "serve")[0].pid
    answers = statuses_under_load(layout, sentences(300, seed=7), lambda: psutil.Process(victim).kill())
    lost = [status for status in answers if status != 200]
    assert all(isinstance(status, str) for status in lost), lost  # a dropped connection, never an error answer
    assert len(lost) <= 8, lost  # only the killed front end's own requests in flight
    replaced(layout, "serve", victim)
    assert all(post(layout, "/v1/correct", {"text": text}).status_code == 200 for text in sentences(10, seed=8))
    assert f'pid="{victim}"' not in httpx.get(layout.url + "/metrics").text  # a dead process's gauges leave with it


def test_a_killed_engine_fails_its_in_flight_requests_with_503_and_comes_back(layout) -> None:
    victim = children(layout, "engine")[0].pid
    answers = statuses_under_load(layout, sentences(300, seed=9), lambda: psutil.Process(victim).kill())
    assert set(answers) <= {200, 503}, answers
    assert 503 in answers and answers.count(200) > 0
    replaced(layout, "engine", victim)
    until = time.monotonic() + 60
    while time.monotonic() < until and not all(httpx.get(layout.url + "/readyz").status_code == 200 for _ in range(6)):
        time.sleep(0.2)
    assert all(post(layout, "/v1/correct", {"text": text}).status_code == 200 for text in sentences(10, seed=10))


def test_sigterm_drains_every_front_end_then_the_engine(layout) -> None:
    processes = [psutil.Process(layout.process.pid), *children(layout, "serve"), *children(layout, "engine")]
    paragraphs = [" ".join(sentences(6, seed=seed)) for seed in range(64)]

    def slow() -> httpx.Response:
        return httpx.post(layout.url + "/v1/correct", json={"texts": paragraphs}, timeout=60)

    with ThreadPoolExecutor(6) as pool:  # spread over both front ends by the kernel
        answers = [pool.submit(slow) for _ in range(6)]
        time.sleep(0.3)
        assert not any(answer.done() for answer in answers), "answered before SIGTERM: nothing would be in flight"
        layout.process.send_signal(signal.SIGTERM)
        finished = [answer.result() for answer in answers]
    assert [answer.status_code for answer in finished] == [200] * 6
    assert all(len(answer.json()["results"]) == len(paragraphs) for answer in finished)
    assert layout.process.wait(60) == 0
    _, alive = psutil.wait_procs(processes, timeout=10)
    assert not alive
    with pytest.raises(httpx.TransportError):
        httpx.get(layout.url + "/readyz", timeout=2)
