"""Threads and processes plan the same units, with the engine's own codec, spelled where the model has a vocabulary."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from service.engine.manifest import ModelManifest
from service.engine.model import Seq2SeqModel
from service.pipeline.preprocess import Preprocessor, shared_speller
from service.text.spelling import spelling_files
from tests.conftest import FIXTURE_MODEL, SPELLING_CORPUS, copy_with_vocabulary

TEXTS = ["i saw a apple. The cat likes teh old car", "", "Tom found an owl.\nNew line here!", "word " * 200]
# Text that spells special tokens, and Unicode the byte-level tokenizer must take as it is.
TRICKY = [
    "<s>Tom</s> found <pad> an <unk> owl.<mask>",
    "</s></s> <s> done",
    "Cafe\u0301 naïve 😀👩‍👩‍👧 中文 \u200b\u00a0x\u2028y ﬁne 𝒜 \U0001f1eb\U0001f1f7",
]


def _plan(model: Path, mode: str, texts: list[str], spelling: bool = True) -> list:
    pre = Preprocessor(model, mode=mode, pool_size=2)
    try:

        async def run() -> list:
            await pre.start()
            return await pre.plan(texts, spelling)

        return asyncio.run(run())
    finally:
        pre.close()


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_modes_agree_with_the_synchronous_plan(mode: str) -> None:
    planned = _plan(FIXTURE_MODEL, mode, TEXTS)
    pre = Preprocessor(FIXTURE_MODEL, mode="thread")
    try:
        assert planned == pre.plan_sync(TEXTS)
        assert all(len(u.tokens) <= pre.max_tokens for units in planned for u in units)
    finally:
        pre.close()


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_served_preprocessing_and_the_engines_codec_give_the_same_ids(mode: str) -> None:
    """One tokenizer: what the service sends the model is what the engine's codec (used by `gecserve correct` and
    `eval`) makes of the same text; text that spells a special token stays text."""
    engine_codec = Seq2SeqModel(FIXTURE_MODEL, "int8").codec
    special = engine_codec.special_ids
    for units in _plan(FIXTURE_MODEL, mode, TRICKY):
        for unit in units:
            assert unit.tokens == engine_codec.encode(unit.text)
            assert not special & set(unit.tokens)
            assert engine_codec.decode(unit.tokens) == unit.text


def test_a_model_without_a_vocabulary_is_served_without_spelling(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="service.pipeline.preprocess"):
        pre = Preprocessor(FIXTURE_MODEL)
    try:
        assert not pre.spells
        assert "no vocabulary" in caplog.text
        asyncio.run(pre.start())
        assert pre.speller is None
        assert all(not u.spelling for u in pre.plan_sync(["Tom found an honset owl."])[0])
    finally:
        pre.close()


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_a_model_with_a_vocabulary_is_spelled_unless_asked_not_to(spelling_model_dir: Path, mode: str) -> None:
    text = ["Tom found an honset owl. The zorbling cat."]
    (units,) = _plan(spelling_model_dir, mode, text)
    assert [u.text for u in units] == ["Tom found an honest owl.", "The zorbling cat."]  # zorbling: in the vocabulary
    (plain,) = _plan(spelling_model_dir, mode, text, spelling=False)
    assert [u.text for u in plain] == ["Tom found an honset owl.", "The zorbling cat."]
    off = Preprocessor(spelling_model_dir, spelling=False)
    assert not off.spells
    off.close()


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="thread"):
        Preprocessor(FIXTURE_MODEL, mode="fibre")


def test_models_with_the_same_spelling_files_share_one_speller(tmp_path) -> None:
    first = copy_with_vocabulary(FIXTURE_MODEL, tmp_path / "first")
    second = copy_with_vocabulary(FIXTURE_MODEL, tmp_path / "second")
    other = copy_with_vocabulary(FIXTURE_MODEL, tmp_path / "other", corpus=SPELLING_CORPUS + " Zebras zebras.")
    files = [spelling_files(folder, ModelManifest.load(folder)) for folder in (first, second, other)]
    spellers = [shared_speller(*pair) for pair in files]
    assert spellers[0] is spellers[1] and spellers[2] is not spellers[0]
