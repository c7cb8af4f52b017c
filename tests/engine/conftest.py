"""Engines over the tiny model, cached per (variant, cache layout)."""

from __future__ import annotations

import functools

import pytest

from service.engine.engine import Engine
from tests.conftest import FIXTURE_MODEL


@functools.cache
def engine_for(variant: str = "int8", cache: str = "compact") -> Engine:
    return Engine(FIXTURE_MODEL, variant=variant, cache=cache)


@pytest.fixture(scope="session")
def engine() -> Engine:
    return engine_for()


SENTENCES = [
    "i saw a apple yesterday",
    "The cat likes teh old car.",
    "Tom found an honest owl.",
    "We visited a island last week.",
    "My friend my friend bought a umbrella",
    "She painted the red house. i took the the dog.",
    "Completely unrelated text that the tiny model never saw!",
    "A",
    "",
]
