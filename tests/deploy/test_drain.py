"""Kubernetes stops a gateway without losing requests: a preStop sleep while it leaves the Service's endpoints,
then SIGTERM and the drain, all within the grace period (which counts from the preStop hook on)."""

from __future__ import annotations

import pytest

from service.config import Settings
from tests.deploy.test_kubernetes import objects


@pytest.mark.parametrize("kustomization", ["overlays/cpu", "overlays/gpu"])
def test_the_gateway_sleeps_before_sigterm_and_has_time_to_drain(kustomization: str) -> None:
    pod = objects(kustomization, "Deployment")["gateway"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep" and len(command) == 2  # coreutils' sleep: in both images' base
    pre_stop = float(command[1])
    assert pre_stop >= 5, "the endpoints and proxies need a few seconds to let the pod go"
    env = {item["name"]: item.get("value") for item in container.get("env", [])}
    defaults = Settings.model_fields
    drain = float(env.get("GECSERVE_DRAIN_TIMEOUT_S") or defaults["drain_timeout_s"].default)
    delay = float(env.get("GECSERVE_SHUTDOWN_DELAY_S") or defaults["shutdown_delay_s"].default)
    assert pod["terminationGracePeriodSeconds"] > pre_stop + delay + drain
