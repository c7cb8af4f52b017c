"""The batching and observability packages stay free of model code and web frameworks."""

from __future__ import annotations

import subprocess
import sys


def test_no_model_or_framework_imports() -> None:
    code = (
        "import sys, service.batching, service.observability; "
        "bad = [m for m in ('onnxruntime', 'service.engine', 'fastapi', 'grpc', 'torch') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
