"""Shared fixtures: the tiny test model exported by the real exporter."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURE_MODEL = Path(__file__).parent / "fixtures" / "tiny-gec"


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    return FIXTURE_MODEL
