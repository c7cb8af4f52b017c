"""``gecserve serve`` and ``gecserve worker`` with settings that cannot work: one line on stderr naming the setting
(its flag when given as one, else its environment variable) and the problem, exit status 2, no traceback, and
nothing started (the commands run as subprocesses, as a shell or a container runs them)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_MODEL, REDIS_URL
from tests.system.server import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.server]  # a process each

TIMEOUT_S = 60  # a bound on a command that should stop at once, not a speed limit


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else listens on."""
    with socket.create_server(("0.0.0.0", 0)) as sock:
        yield sock.getsockname()[1]


def run(command: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GECSERVE_")}
    environment.update({"GECSERVE_MODEL_PATH": str(FIXTURE_MODEL), "GECSERVE_MODEL_VARIANT": "int8", **env})
    return subprocess.run(
        [sys.executable, "-m", "service.cli", command, *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def one_line(result: subprocess.CompletedProcess[str], command: str) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"gecserve {command}: ")
    return line


@pytest.mark.parametrize(
    ("command", "args", "env", "expected"),
    [
        ("serve", ["--model", "/no/such/model"], {}, "--model: /no/such/model: no such folder"),
        ("worker", ["--model", "/no/such/model"], {}, "--model: /no/such/model: no such folder"),
        ("serve", [], {"GECSERVE_MODEL_PATH": "{tmp}"}, "GECSERVE_MODEL_PATH: {tmp} is not a model folder"),
        ("worker", [], {"GECSERVE_MODEL_PATH": "{tmp}"}, "GECSERVE_MODEL_PATH: {tmp} is not a model folder"),
        ("serve", [], {"GECSERVE_MODEL_VARIANT": "fp16"}, "GECSERVE_MODEL_VARIANT: the model at "),
        ("serve", [], {"GECSERVE_MAX_BATCH_SIZE": "0"}, 'GECSERVE_MAX_BATCH_SIZE="0": Input should be greater than'),
        ("worker", [], {"GECSERVE_MAX_BATCH_SIZE": "0"}, 'GECSERVE_MAX_BATCH_SIZE="0": Input should be greater than'),
        ("serve", [], {"GECSERVE_HTTP_PORT": "abc"}, 'GECSERVE_HTTP_PORT="abc": Input should be a valid integer'),
        (
            "serve",
            [],
            {"GECSERVE_PROVIDER": "tpu"},
            "GECSERVE_PROVIDER=\"tpu\": Input should be 'auto', 'cpu' or 'cuda'",
        ),
    ],
    ids=[
        "serve-no-model",
        "worker-no-model",
        "serve-no-manifest",
        "worker-no-manifest",
        "serve-no-variant",
        "serve-batch-size-0",
        "worker-batch-size-0",
        "serve-port-abc",
        "serve-provider",
    ],
)
def test_a_bad_setting_is_one_line_and_status_2(
    tmp_path: Path, command: str, args: list[str], env: dict[str, str], expected: str
) -> None:
    env = {name: value.format(tmp=tmp_path) for name, value in env.items()}
    args = [*args, "--redis", REDIS_URL] if command == "worker" else args
    line = one_line(run(command, args, env), command)
    assert expected.format(tmp=tmp_path) in line


def test_serve_names_a_busy_http_port(busy_port: int) -> None:
    line = one_line(run("serve", [], {"GECSERVE_HTTP_PORT": str(busy_port)}), "serve")
    assert line == f"gecserve serve: GECSERVE_HTTP_PORT: cannot listen on 0.0.0.0:{busy_port}: Address already in use"


def test_serve_names_a_busy_grpc_port_by_its_flag(busy_port: int) -> None:
    line = one_line(run("serve", ["--http-port", "0", "--grpc-port", str(busy_port)], {}), "serve")
    assert line == f"gecserve serve: --grpc-port: cannot listen on 0.0.0.0:{busy_port}: Address already in use"


def test_serve_names_every_setting_that_does_not_validate() -> None:
    env = {"GECSERVE_HTTP_PORT": "70000", "GECSERVE_LOG_LEVEL": "loud"}
    line = one_line(run("serve", ["--redis", "localhost:6379"], env), "serve")
    assert 'GECSERVE_HTTP_PORT="70000": Input should be less than or equal to 65535' in line
    assert 'GECSERVE_LOG_LEVEL="loud": not a log level' in line
    assert '--redis="localhost:6379": Redis URL must specify one of the following schemes' in line


def test_worker_names_a_busy_metrics_port(busy_port: int) -> None:
    line = one_line(run("worker", ["--redis", REDIS_URL, "--metrics-port", str(busy_port)], {}), "worker")
    assert line == f"gecserve worker: --metrics-port: cannot listen on 0.0.0.0:{busy_port}: Address already in use"
