"""Concurrency, overload, deadlines and graceful shutdown against real servers."""

from __future__ import annotations

import asyncio
import re
import signal
import time

import httpx
import pytest

from models.fixture import clean_sentence, corrupt
from tests.api.server import start_server


def _paragraphs(count: int, sentences: int, seed: int = 0) -> list[str]:
    import random

    rng = random.Random(seed)
    return [" ".join(corrupt(clean_sentence(rng), rng) + "." for _ in range(sentences)) for _ in range(count)]


def _metric_sum_count(metrics: str, name: str, backend: str) -> tuple[float, float]:
    total = re.search(rf'{name}_sum\{{backend="{backend}"\}} ([0-9.e+]+)', metrics)
    count = re.search(rf'{name}_count\{{backend="{backend}"\}} ([0-9.e+]+)', metrics)
    return float(total.group(1)), float(count.group(1))


async def _post_all(url: str, payloads: list[dict]) -> list[httpx.Response]:
    async with httpx.AsyncClient(timeout=60) as client:
        return await asyncio.gather(*(client.post(url, json=p) for p in payloads))


def test_concurrent_requests_batch_together_and_get_their_own_results(tmp_path) -> None:
    server = start_server(tmp_path, max_wait_ms=5, cache_size=0)
    try:
        texts = _paragraphs(48, 2, seed=1)
        sequential = [
            httpx.post(server.url + "/v1/correct", json={"text": t}, timeout=30).json()["text"] for t in texts[:12]
        ]
        responses = asyncio.run(_post_all(server.url + "/v1/correct", [{"text": t} for t in texts]))
        assert all(r.status_code == 200 for r in responses)
        assert [r.json()["text"] for r in responses[:12]] == sequential
        for text, response in zip(texts, responses, strict=True):
            body = response.json()
            assert body["text"].lower().startswith(text.split()[0].lower()[:1])
        metrics = httpx.get(server.url + "/metrics").text
        rows, batches = _metric_sum_count(metrics, "gecserve_batch_size", "accelerated")
        assert rows / batches > 1.5, f"mean batch size {rows / batches:.2f}: batches did not form"
    finally:
        assert server.stop() == 0


def test_overload_gives_503_with_retry_after(tmp_path) -> None:
    """A queue of 8 sentences holds one 6-sentence request: the first is served, most others refused."""
    server = start_server(tmp_path, max_queue=8, max_batch_size=2, cache_size=0)
    try:
        payloads = [{"texts": _paragraphs(3, 2, seed=i)} for i in range(16)]
        responses = asyncio.run(_post_all(server.url + "/v1/correct", payloads))
        statuses = [r.status_code for r in responses]
        assert 503 in statuses and 200 in statuses, statuses
        rejected = next(r for r in responses if r.status_code == 503)
        assert int(rejected.headers["retry-after"]) >= 1
        assert rejected.json()["error"]["reason"] == "overloaded"
        # The queue stays bounded and the server keeps serving afterwards.
        assert httpx.post(server.url + "/v1/correct", json={"text": "Tom found an owl."}).status_code == 200
        # A request larger than the whole queue can never be admitted: 413, not an endless 503.
        too_big = httpx.post(server.url + "/v1/correct", json={"texts": _paragraphs(5, 2, seed=99)}, timeout=30)
        assert too_big.status_code == 413 and "queue" in too_big.json()["error"]["message"]
    finally:
        server.stop()


def test_request_over_its_deadline_gets_504_and_queued_jobs_are_dropped(tmp_path) -> None:
    # ~18k characters decoded one sentence per batch: far past 0.1 s even on a fast quiet machine.
    server = start_server(tmp_path, request_timeout_s=0.1, max_batch_size=1, max_queue=1024, cache_size=0)
    try:
        big = {"text": " ".join(_paragraphs(1, 400, seed=3))}
        response = httpx.post(server.url + "/v1/correct", json=big, timeout=30)
        assert response.status_code == 504
        assert response.json()["error"]["reason"] == "deadline"
        time.sleep(0.5)
        metrics = httpx.get(server.url + "/metrics").text
        dropped = re.search(r'gecserve_rejections_total\{backend="accelerated",reason="deadline"\} ([0-9.]+)', metrics)
        assert dropped and float(dropped.group(1)) > 0, "queued jobs past their deadline are dropped, not decoded"
        fast = httpx.post(server.url + "/v1/correct", json={"text": "Tom found an owl."}, timeout=30)
        assert fast.status_code == 200
    finally:
        server.stop()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_graceful_shutdown_finishes_in_flight_requests(tmp_path, sig) -> None:
    # ~500 sentences decoded one at a time: seconds of work still in flight when the signal lands.
    server = start_server(
        tmp_path, max_batch_size=1, max_queue=4096, cache_size=0, request_timeout_s=120, drain_timeout_s=120
    )
    payloads = [{"text": p} for p in _paragraphs(16, 30, seed=5)]

    def admitted() -> float:
        metrics = httpx.get(server.url + "/metrics", timeout=5).text
        found = re.search(r'gecserve_requests_in_progress\{route="/v1/correct"\} ([0-9.]+)', metrics)
        return float(found.group(1)) if found else 0.0

    async def scenario() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=60) as client:
            tasks = [asyncio.create_task(client.post(server.url + "/v1/correct", json=p)) for p in payloads]
            deadline = time.monotonic() + 30
            # Every request is admitted: answered, or in flight on the server. Answers are counted
            # before the gauge is read, so a request finishing in between is missed, never counted twice.
            while sum(t.done() for t in tasks) + await asyncio.to_thread(admitted) < len(payloads):
                assert time.monotonic() < deadline, "requests were not admitted"
                await asyncio.sleep(0.01)
            assert not all(t.done() for t in tasks), "nothing left in flight to drain"
            server.process.send_signal(sig)
            return await asyncio.gather(*tasks, return_exceptions=True)

    results = asyncio.run(scenario())
    assert server.process.wait(30) == 0, server.log()
    statuses = [repr(getattr(r, "status_code", r)) for r in results]
    assert statuses == ["200"] * len(payloads), statuses
    with pytest.raises(httpx.TransportError):
        httpx.post(server.url + "/v1/correct", json={"text": "late"}, timeout=2)
