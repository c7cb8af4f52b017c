"""The serving runtime stays apart from the load tooling: serving loads neither ``loadtest`` nor Locust."""

from __future__ import annotations

import subprocess
import sys


def test_the_runtime_imports_no_load_tooling() -> None:
    code = (
        "import sys, service.cli, service.api.server, service.worker; "
        "bad = [m for m in ('loadtest', 'locust', 'gevent', 'matplotlib') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
