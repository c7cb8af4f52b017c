"""The benchmarks' input: the engine tests' sentences, three times over, one a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.conftest import SENTENCES


@pytest.fixture()
def sentences(tmp_path: Path) -> Path:
    path = tmp_path / "input.txt"
    path.write_text("\n".join(s for s in SENTENCES * 3 if s) + "\n")
    return path
