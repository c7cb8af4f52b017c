"""Every shipped model version serves beside the others: one server per model folder, all running at once, each
answering HTTP and gRPC with its own name and version (what the model-version A/B compares)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtest.spawn import start_server as spawn_server
from service.api.proto import gecserve_pb2 as pb
from service.engine.manifest import ModelManifest
from tests.api.clients import grpc_call, post
from tests.api.server import ROOT, RunningServer
from tests.conftest import SHIPPED_MODELS

pytestmark = [pytest.mark.slow, pytest.mark.server]

TEXT = "She go to school every days. The results are shown in Table 2."


@pytest.fixture(scope="module")
def servers(tmp_path_factory) -> Iterator[dict[Path, RunningServer]]:
    running: dict[Path, RunningServer] = {}
    try:
        for model in SHIPPED_MODELS:
            running[model] = spawn_server(model, tmp_path_factory.mktemp(model.name), cwd=ROOT, cache_size=0)
        yield running
    finally:
        for server in running.values():
            server.stop()


def test_more_than_one_version_ships() -> None:
    versions = [ModelManifest.load(model).version for model in SHIPPED_MODELS]
    assert len(versions) >= 2 and len(set(versions)) == len(versions)


def test_each_version_corrects_and_names_itself(servers: dict[Path, RunningServer]) -> None:
    for model, server in servers.items():
        manifest = ModelManifest.load(model)
        response = post(server, "/v1/correct", {"text": TEXT})
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["model"] == {"name": manifest.name, "version": manifest.version}
        assert "every day." in answer["text"] and "go to" not in answer["text"], model.name
        assert answer["text"].endswith("The results are shown in Table 2.")
        reply, _ = grpc_call(server, "Correct", pb.CorrectRequest(text=TEXT))
        assert reply.text == answer["text"]
        assert (reply.model.name, reply.model.version) == (manifest.name, manifest.version)
