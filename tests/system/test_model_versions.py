"""Every shipped model version serves beside the others in one service: each listed by ``GET /v1/models`` with its
manifest's figures, each answering HTTP and gRPC with its own name and version when a request names it, and an
experiment between two versions whose every answer names the model its arm runs on, with a shadow that compares
them (what the model-version A/B decides)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from bench.served.spawn import start_server as spawn_server
from service.api.grpc.proto import gecserve_pb2 as pb
from service.engine.manifest import ModelManifest, level_keep_bias
from tests.conftest import SHIPPED_MODELS
from tests.system.clients import grpc_call, post, wait_for
from tests.system.server import ROOT, RunningServer

pytestmark = [pytest.mark.slow, pytest.mark.server]

TEXT = "She go to school every days. The results are shown in Table 2."
ADMIN = {"Authorization": "Bearer model-admin"}


def served_name(model: Path) -> str:
    """The name each version is served under, as ``deploy/experiments/model-versions.yaml`` names them."""
    return f"gec-v{ModelManifest.load(model).version}"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[RunningServer]:
    listed = ",".join(f"{served_name(model)}={model}" for model in SHIPPED_MODELS)
    running = spawn_server(
        SHIPPED_MODELS[0], tmp_path_factory.mktemp("versions"), cwd=ROOT, cache_size=0, models=listed,
        admin_key="model-admin",
    )  # fmt: skip
    yield running
    running.stop()


def test_more_than_one_version_ships() -> None:
    versions = [ModelManifest.load(model).version for model in SHIPPED_MODELS]
    assert len(versions) >= 2 and len(set(versions)) == len(versions)


def test_every_version_is_listed_with_its_figures(server: RunningServer) -> None:
    listing = httpx.get(f"{server.url}/v1/models").json()
    by_name = {entry["name"]: entry for entry in listing["models"]}
    assert set(by_name) == {served_name(model) for model in SHIPPED_MODELS}
    assert listing["default"] == served_name(SHIPPED_MODELS[0])
    for model in SHIPPED_MODELS:
        entry, manifest = by_name[served_name(model)], ModelManifest.load(model)
        assert entry["state"] == "ready" and entry["version"] == manifest.version
        assert entry["variant"] == manifest.default_variant and entry["parameters"] > 0
        served = manifest.extra["quality"]["levels"]  # the figures of each level as served, at its keep bias
        assert entry["quality"]["fce_dev"]["gleu"] == served["default"]["fce_dev"]["gleu"]
        for level, listed in entry["quality"]["levels"].items():
            assert listed["jfleg_dev"] == served[level]["jfleg_dev"] and listed["fce_dev"] == served[level]["fce_dev"]
            assert listed["keep_bias"] == entry["quality"]["keep_bias"][level] == level_keep_bias(manifest, level)
        assert entry["memory_mib"] > 5 and entry["load_s"] > 0


def test_each_version_corrects_and_names_itself(server: RunningServer) -> None:
    for model in SHIPPED_MODELS:
        name, version = served_name(model), ModelManifest.load(model).version
        response = post(server, "/v1/correct", {"text": TEXT, "model": name})
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["model"] == {"name": name, "version": version}
        assert "every day." in answer["text"] and "go to" not in answer["text"], model.name
        assert answer["text"].endswith("The results are shown in Table 2.")
        reply, _ = grpc_call(server, "Correct", pb.CorrectRequest(text=TEXT, model=name))
        assert reply.text == answer["text"]
        assert (reply.model.name, reply.model.version) == (name, version)


def test_an_experiment_between_two_versions_names_each_arm_s_model(server: RunningServer) -> None:
    new, old = (served_name(model) for model in SHIPPED_MODELS[:2])
    definition = {
        "name": "versions",
        "control": "old",
        "arms": [
            {"name": "old", "model": old, "backend": "accelerated", "weight": 1},
            {"name": "new", "model": new, "backend": "accelerated", "weight": 1},
        ],
        "shadow": {"arm": "old", "sample_rate": 1.0},
    }
    started = httpx.post(f"{server.url}/v1/experiments?replace=true", json=definition, headers=ADMIN)
    assert started.status_code == 201, started.text
    try:
        served: dict[str, set[str]] = {}
        for user in range(24):
            body = {"text": f"He have {user} informations about it.", "client": {"user_id": f"writer-{user}"}}
            answer = post(server, "/v1/correct", body).json()
            served.setdefault(answer["arm"], set()).add(answer["model"]["name"])
        assert served == {"old": {old}, "new": {new}}

        def compared() -> dict:
            report = httpx.get(f"{server.url}/v1/experiments/versions").json()
            return {(p["served"], p["shadow"]): p for p in report["shadow"]["pairs"]}

        wait_for(lambda: ("new", "old") in compared(), 30, what="a shadow comparison")
        pair = compared()[("new", "old")]
        assert pair["compared"] > 0 and pair["expected"] is None  # two models: no agreement is promised
        report = httpx.get(f"{server.url}/v1/experiments/versions").json()
        assert {arm["name"]: arm["model"] for arm in report["arms"]} == {"old": old, "new": new}
        refused = httpx.delete(f"{server.url}/v1/models/{old}", headers=ADMIN)
        assert refused.status_code == 409 and "versions" in refused.json()["error"]["message"]
    finally:
        httpx.post(f"{server.url}/v1/experiments/versions/stop", headers=ADMIN)


def test_the_shipped_model_version_experiment_starts_on_the_shipped_models(server: RunningServer) -> None:
    definition = yaml.safe_load((ROOT / "deploy" / "experiments" / "model-versions.yaml").read_text())
    started = httpx.post(f"{server.url}/v1/experiments?replace=true", json=definition, headers=ADMIN)
    assert started.status_code == 201, started.text
    try:
        answer = post(server, "/v1/correct", {"text": TEXT, "client": {"user_id": "writer"}}).json()
        arms = {arm["name"]: arm["model"] for arm in definition["arms"]}
        assert answer["experiment"] == "model-versions" and answer["model"]["name"] == arms[answer["arm"]]
    finally:
        httpx.post(f"{server.url}/v1/experiments/model-versions/stop", headers=ADMIN)


def test_an_experiment_naming_a_model_not_served_is_refused(server: RunningServer) -> None:
    definition = {
        "name": "ghost",
        "arms": [
            {"name": "a", "model": "v99", "weight": 1, "backend": "accelerated"},
            {"name": "accelerated", "weight": 1},
        ],
    }
    refused = httpx.post(f"{server.url}/v1/experiments?replace=true", json=definition, headers=ADMIN)
    assert refused.status_code == 400 and refused.json()["error"]["reason"] == "unknown_model"
    assert "v99" in refused.json()["error"]["message"]
    unknown = post(server, "/v1/correct", {"text": TEXT, "model": "v99"})
    assert unknown.status_code == 400 and unknown.json()["error"]["reason"] == "unknown_model"
