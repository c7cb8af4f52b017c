"""The batching and observability packages stay free of model code and web frameworks."""

from __future__ import annotations

from tests.conftest import modules_loaded


def test_no_model_or_framework_imports() -> None:
    heavy = ("onnxruntime", "service.engine", "fastapi", "grpc", "torch")
    assert modules_loaded("service.batching, service.observability", heavy) == []
