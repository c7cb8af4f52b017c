"""What the compose files and the Kubernetes manifests pass to gecserve exists in gecserve.

Every sub-command and flag is one the real argument parser of that sub-command accepts (read from
its ``--help``), every ``GECSERVE_*`` variable is a field of ``Settings``, every port is the one
the service listens on by default (``Settings``, the worker's ``--metrics-port`` as given), every
probe path is a route of the real HTTP app, and KEDA's streams and consumer group are the ones
the workers read (``StreamKeys`` for the shipped model).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from service import worker
from service.api import server
from service.api.http.app import create_app
from service.batching.streams import GROUP, StreamKeys
from service.config import Settings
from service.engine.manifest import ModelManifest
from service.experiments.arms import BACKENDS
from service.pipeline.queues import GENERATE_QUEUE
from service.wiring import Gateway
from tests.conftest import FIXTURE_MODEL
from tests.deploy.test_containers import ROOT
from tests.deploy.test_kubernetes import objects

SUBCOMMANDS = {"serve": server.main, "worker": worker.main}
SETTINGS = Settings()
PREFIX = Settings.model_config["env_prefix"]


def accepted_flags(subcommand: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    with pytest.raises(SystemExit):
        SUBCOMMANDS[subcommand](["--help"])
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", capsys.readouterr().out))


def gecserve_containers() -> Iterator[tuple[str, list[str], dict[str, str], dict[str, int], dict[str, Any]]]:
    """(where, args, environment, ports by name, container) for every gecserve container."""
    for path in ("docker-compose.yml", "docker-compose.gpu.yml"):
        services = yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))["services"]
        for name, service in services.items():
            if str(service.get("image", "")).startswith("gecserve:") and "command" in service:
                ports = {str(port): int(port) for port in service.get("expose", [])}
                yield f"{path}:{name}", service["command"], service.get("environment", {}), ports, service
    for overlay in ("overlays/cpu", "overlays/gpu"):
        for name, deployment in objects(overlay, "Deployment").items():
            for container in deployment["spec"]["template"]["spec"]["containers"]:
                if container["image"].startswith("gecserve:"):
                    env = {item["name"]: item.get("value") for item in container.get("env", [])}
                    ports = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
                    yield f"{overlay}:{name}", container["args"], env, ports, container


CONTAINERS = list(gecserve_containers())
IDS = [where for where, *_ in CONTAINERS]


def test_every_gecserve_service_is_seen() -> None:
    assert {where.split(":")[-1] for where in IDS} == {"gateway", "worker", "worker-v2"}
    assert len(IDS) == 9


@pytest.mark.parametrize(("where", "args", "env", "ports", "spec"), CONTAINERS, ids=IDS)
def test_flags_exist(where: str, args: list[str], env: dict, ports: dict, spec: dict, capsys) -> None:
    subcommand, *rest = args
    assert subcommand in SUBCOMMANDS, f"{where}: unknown sub-command {subcommand}"
    flags = {arg.split("=")[0] for arg in rest if arg.startswith("--")}
    unknown = flags - accepted_flags(subcommand, capsys)
    assert not unknown, f"{where}: gecserve {subcommand} has no {sorted(unknown)}"


@pytest.mark.parametrize(("where", "args", "env", "ports", "spec"), CONTAINERS, ids=IDS)
def test_environment_variables_are_settings(where: str, args: list, env: dict, ports: dict, spec: dict) -> None:
    fields = {f"{PREFIX}{name}".upper() for name in Settings.model_fields}
    assert set(env) <= fields, f"{where}: not settings: {sorted(set(env) - fields)}"
    for name, value in env.items():
        if value:  # the value parses as that setting
            Settings(**{name.removeprefix(PREFIX).lower(): value})


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


@pytest.mark.parametrize(("where", "args", "env", "ports", "spec"), CONTAINERS, ids=IDS)
def test_ports_are_the_service_ports(where: str, args: list, env: dict, ports: dict, spec: dict) -> None:
    if args[0] == "serve":
        assert sorted(ports.values()) == sorted([SETTINGS.http_port, SETTINGS.grpc_port]), where
    else:
        assert list(ports.values()) == [int(flag(args, "--metrics-port"))], where


@pytest.fixture(scope="module")
def routes() -> set[str]:
    """The HTTP API's paths, as its OpenAPI document lists them (routers included)."""
    app = create_app(Gateway(Settings(model_path=FIXTURE_MODEL)).pipeline)
    return set(app.openapi()["paths"])


@pytest.mark.parametrize("overlay", ["overlays/cpu", "overlays/gpu"])
def test_probes_hit_real_routes_on_real_ports(overlay: str, routes: set[str]) -> None:
    for name, deployment in objects(overlay, "Deployment").items():
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            ports = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
            for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                get = container.get(probe, {}).get("httpGet")
                if get is None:
                    continue
                assert get["port"] in ports, f"{name} {probe}: no port {get['port']}"
                if container["args"][0] == "serve":
                    assert get["path"] in routes and get["path"] in ("/healthz", "/readyz"), f"{name} {probe}"
                else:
                    assert get["path"] == "/metrics", f"{name} {probe}"
    gateway = objects(overlay, "Deployment")["gateway"]["spec"]["template"]["spec"]["containers"][0]
    assert gateway["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert "/metrics" in routes


def test_services_and_monitors_point_at_named_ports() -> None:
    services = objects("overlays/cpu", "Service")
    assert {p["name"]: p["port"] for p in services["gateway"]["spec"]["ports"]} == {
        "http": SETTINGS.http_port,
        "grpc": SETTINGS.grpc_port,
    }
    (monitor,) = objects("monitoring", "ServiceMonitor").values()
    named = {p["name"] for service in services.values() for p in service["spec"]["ports"]}
    assert {endpoint["port"] for endpoint in monitor["spec"]["endpoints"]} <= named
    assert {endpoint["path"] for endpoint in monitor["spec"]["endpoints"]} == {"/metrics"}


def dockerfile_gpu_model() -> tuple[str, str, str]:
    """(name, version, variant) of the model the gpu image exports (Dockerfile's gpu-model stage)."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    name, version = re.search(r"--name (\S+) --version (\S+)", text).groups()
    assert "--quantize" not in text
    return name, version, "fp32"


@pytest.mark.parametrize("overlay", ["overlays/cpu", "overlays/gpu"])
def test_keda_scales_on_the_streams_the_workers_read(overlay: str) -> None:
    manifest = ModelManifest.load(ROOT / "models" / "gec-default")
    if overlay.endswith("gpu"):
        name, version, variant = dockerfile_gpu_model()
    else:
        name, version, variant = manifest.name, manifest.version, manifest.default_variant
    assert (name, version) == (manifest.name, manifest.version)
    keys = StreamKeys.for_model(SETTINGS.redis_prefix, name, version, variant)
    triggers = objects(overlay, "ScaledObject")["worker"]["spec"]["triggers"]
    assert {t["type"] for t in triggers} == {"redis-streams"}
    assert {t["metadata"]["consumerGroup"] for t in triggers} == {GROUP}
    wanted = {keys.jobs(queue) for queue in [*BACKENDS, GENERATE_QUEUE]}
    assert {t["metadata"]["stream"] for t in triggers} == wanted
    redis = objects(overlay, "Service")["redis"]
    address = f"{redis['metadata']['name']}.{redis['metadata']['namespace']}.svc.cluster.local:6379"
    assert {t["metadata"]["address"] for t in triggers} == {address}


@pytest.mark.parametrize("overlay", ["overlays/cpu", "overlays/gpu"])
def test_keda_scales_version_2_s_workers_on_version_2_s_streams(overlay: str) -> None:
    manifest = ModelManifest.load(ROOT / "models" / "gec-v2")
    keys = StreamKeys.for_model(SETTINGS.redis_prefix, manifest.name, manifest.version, manifest.default_variant)
    triggers = objects(overlay, "ScaledObject")["worker-v2"]["spec"]["triggers"]
    assert {t["metadata"]["stream"] for t in triggers} == {keys.jobs(queue) for queue in [*BACKENDS, GENERATE_QUEUE]}
    assert {t["metadata"]["consumerGroup"] for t in triggers} == {GROUP}


def test_the_images_model_path_is_baked_in() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "COPY models/gec-default models/gec-default" in text
    assert "GECSERVE_MODEL_PATH=/app/models/gec-default\n" in text
    assert Path(ROOT / "models" / "gec-default" / "manifest.json").is_file()
