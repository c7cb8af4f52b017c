"""Models loaded, swapped and unloaded at run time, against a real server on the tiny model: a model takes traffic
once it is warm, a swap of the default model under a steady 20 requests a second answers every request with
200, an unload finishes the model's work first, and every refusal (a broken folder, the limits, the default,
no admin key) says why while the models already running keep serving."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.conftest import FIXTURE_MODEL
from tests.system.clients import in_progress, post, wait_for
from tests.system.server import RunningServer, start_server

pytestmark = [pytest.mark.slow, pytest.mark.server]

ADMIN = {"Authorization": "Bearer repo-admin"}
TEXT = "i saw a apple yesterday."


def versioned(tmp: Path, version: str) -> Path:
    """The tiny model copied to ``tmp`` with another version in its manifest."""
    out = tmp / f"tiny-{version}"
    shutil.copytree(FIXTURE_MODEL, out)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "version": version}))
    return out


@pytest.fixture
def server(tmp_path) -> Iterator[RunningServer]:
    running = start_server(tmp_path / "logs", admin_key="repo-admin", max_models=2, cache_size=0, drain_timeout_s=10)
    yield running
    running.stop()


def load(server: RunningServer, name: str, path: Path, **extra: object) -> httpx.Response:
    body = {"name": name, "path": str(path), **extra}
    return httpx.post(f"{server.url}/v1/models", json=body, headers=ADMIN, timeout=60)


def listing(server: RunningServer) -> dict[str, dict]:
    """The listed models by name (a model being swapped out is listed after its replacement, as draining)."""
    listed: dict[str, dict] = {}
    for entry in httpx.get(f"{server.url}/v1/models").json()["models"]:
        listed.setdefault(entry["name"], entry)
    return listed


def test_a_model_loaded_at_run_time_serves_requests_that_name_it_and_unloads(server: RunningServer, tmp_path) -> None:
    default = next(iter(listing(server)))
    loaded = load(server, "second", versioned(tmp_path, "7"))
    assert loaded.status_code == 201, loaded.text
    assert loaded.json()["state"] == "ready" and loaded.json()["version"] == "7"
    assert set(listing(server)) == {default, "second"}
    answer = post(server, "/v1/correct", {"text": TEXT, "model": "second"}).json()
    assert answer["model"] == {"name": "second", "version": "7"}
    assert post(server, "/v1/correct", {"text": TEXT}).json()["model"]["name"] == default

    with ThreadPoolExecutor(8) as pool:  # an unload finishes what the model holds first
        pending = [
            pool.submit(post, server, "/v1/correct", {"text": f"{TEXT} {i}", "model": "second"}) for i in range(8)
        ]
        # the requests reach the model before it is taken out of service (or some have been answered already)
        wait_for(lambda: in_progress(server) >= 1 or any(f.done() for f in pending), every=0.01, what="requests in")
        gone = httpx.delete(f"{server.url}/v1/models/second", headers=ADMIN, timeout=60)
        statuses = [future.result().status_code for future in pending]
    assert gone.status_code == 200, gone.text
    assert set(statuses) <= {200, 400} and statuses.count(200) >= 1  # served, or refused as no longer served
    assert set(listing(server)) == {default}
    after = post(server, "/v1/correct", {"text": TEXT, "model": "second"})
    assert after.status_code == 400 and after.json()["error"]["reason"] == "unknown_model"


def test_refusals_name_the_fault_and_the_running_models_keep_serving(server: RunningServer, tmp_path) -> None:
    default = next(iter(listing(server)))
    missing = versioned(tmp_path, "8")
    (missing / "decoder.int8.onnx").unlink()
    refused = load(server, "broken", missing)
    assert refused.status_code == 400 and refused.json()["error"]["reason"] == "bad_model"
    assert "decoder.int8.onnx" in refused.json()["error"]["message"]

    corrupt = versioned(tmp_path, "9")
    (corrupt / "encoder.int8.onnx").write_bytes(b"not a graph")
    refused = load(server, "broken", corrupt)
    assert refused.status_code == 400 and "encoder.int8.onnx" in refused.json()["error"]["message"]

    assert load(server, "nowhere", tmp_path / "nothing-here").json()["error"]["reason"] == "bad_model"
    for unreadable in ("x" * 300, "a\u0000b", "Z\u0351\u0300" * 100):  # a name too long, a NUL, combining marks
        refused = load(server, "nowhere", tmp_path / unreadable)
        assert refused.status_code == 400 and refused.json()["error"]["reason"] == "bad_model"
    assert set(listing(server)) == {default}

    assert load(server, "second", versioned(tmp_path, "10")).status_code == 201
    over = load(server, "third", versioned(tmp_path, "11"))  # GECSERVE_MAX_MODELS=2
    assert over.status_code == 409 and over.json()["error"]["reason"] == "model_limit"
    assert "GECSERVE_MAX_MODELS" in over.json()["error"]["message"]

    default_unload = httpx.delete(f"{server.url}/v1/models/{default}", headers=ADMIN)
    assert default_unload.status_code == 409 and "default" in default_unload.json()["error"]["message"]
    assert httpx.delete(f"{server.url}/v1/models/ghost", headers=ADMIN).status_code == 404
    assert httpx.delete(f"{server.url}/v1/models/second").status_code == 401
    assert post(server, "/v1/correct", {"text": TEXT}).status_code == 200
    assert post(server, "/v1/correct", {"text": TEXT, "model": "second"}).status_code == 200


def test_a_load_over_the_memory_budget_is_refused(tmp_path) -> None:
    server = start_server(tmp_path / "logs", admin_key="repo-admin", model_memory_mb=1)
    try:
        over = load(server, "second", versioned(tmp_path, "12"))
        assert over.status_code == 409 and "GECSERVE_MODEL_MEMORY_MB" in over.json()["error"]["message"]
        assert post(server, "/v1/correct", {"text": TEXT}).status_code == 200
    finally:
        server.stop()


def test_swapping_the_default_model_under_steady_load_loses_no_request(server: RunningServer, tmp_path) -> None:
    """20 requests a second; after 2 s the default model is swapped for another version under its name, and the
    requests go on for a second after the swap has answered (however long the load took on a busy machine): every
    answer is 200, the old version's first and the new one's for every request sent after the swap answered."""
    default = next(iter(listing(server)))
    replacement = versioned(tmp_path, "swapped")
    answers: list[tuple[int, int, str]] = []  # (when it was sent, status, version)
    lock = threading.Lock()

    def one(i: int) -> None:
        response = post(server, "/v1/correct", {"text": f"She go to school every days {i}."})
        version = response.json()["model"]["version"] if response.status_code == 200 else ""
        with lock:
            answers.append((i, response.status_code, version))

    with ThreadPoolExecutor(16) as pool:
        start = time.monotonic()
        swap, swapped_at, sent = None, None, 0
        while swapped_at is None or sent < swapped_at + 20:  # 20 a second, paced from the start
            time.sleep(max(0.0, start + sent / 20 - time.monotonic()))
            if swap is not None and swapped_at is None and swap.done():
                swapped_at = sent  # the requests from this one on were sent after the swap answered
            pool.submit(one, sent)
            if sent == 40:
                swap = pool.submit(load, server, default, replacement)
            sent += 1
            assert sent < 20 * 120, "the swap did not answer in two minutes"
        swapped = swap.result()
    assert swapped.status_code == 201, swapped.text
    assert [status for _, status, _ in answers if status != 200] == []
    assert len(answers) == sent
    versions = [version for _, _, version in sorted(answers)]
    assert versions[0] != "swapped" and set(versions[swapped_at:]) == {"swapped"}
    assert listing(server)[default]["version"] == "swapped"
    models = lambda: httpx.get(f"{server.url}/v1/models").json()["models"]  # noqa: E731
    wait_for(lambda: [entry["state"] for entry in models()] == ["ready"], 30, what="the old model drained")
