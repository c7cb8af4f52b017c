"""The root logger as it was before each test that configures logging (added handlers removed and closed)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)
