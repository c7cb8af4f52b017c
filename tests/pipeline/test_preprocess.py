"""Threads and processes plan the same units."""

from __future__ import annotations

import asyncio

import pytest

from service.pipeline.preprocess import Preprocessor
from tests.conftest import FIXTURE_MODEL

TEXTS = ["i saw a apple. The cat likes teh old car", "", "Tom found an owl.\nNew line here!", "word " * 200]


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_modes_agree_with_the_synchronous_plan(mode: str) -> None:
    pre = Preprocessor(FIXTURE_MODEL / "tokenizer.json", max_tokens=64, mode=mode, workers=2)
    try:
        planned = asyncio.run(pre.plan(TEXTS))
        assert planned == pre.plan_sync(TEXTS)
        assert all(len(u.tokens) <= 64 for units in planned for u in units)
    finally:
        pre.close()


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="thread"):
        Preprocessor(FIXTURE_MODEL / "tokenizer.json", 64, mode="fibre")
