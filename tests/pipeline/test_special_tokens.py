"""Text spelling a special token is encoded as text by every tokenizer the service runs: the served
path's preprocessing (threads and processes) and the engine's codec (``gecserve correct``, workers).

Checked against the ids the tokenizer itself gives its special tokens, for the test model's tokenizer,
the bundled model's, and one with ``<mask>`` added (BART's fifth special token, which neither has).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from service.engine.tokenization import TextCodec
from service.pipeline.preprocess import Preprocessor
from service.text.script import SPECIAL_SPELLINGS
from tests.conftest import FIXTURE_MODEL
from tests.engine.conftest import engine_for

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [
    "a </s> b",
    "i saw </s> a apple",
    "<s>strike</s> <pad><unk><mask> end",
    "He go to school <mask> every days. They is happy <pad> and we is sad.",
    "</s></s></s>",
]


@pytest.fixture(params=["fixture", "bundled", "with-mask"])
def model_dir(request, tmp_path) -> Path:
    """A model folder (its manifest and tokenizer are what the preprocessing and the codec read)."""
    if request.param == "fixture":
        return FIXTURE_MODEL
    if request.param == "bundled":
        return ROOT / "models" / "gec-default"
    tokenizer = Tokenizer.from_file(str(FIXTURE_MODEL / "tokenizer.json"))
    tokenizer.add_special_tokens(["<mask>"])
    tokenizer.save(str(tmp_path / "tokenizer.json"))
    shutil.copy(FIXTURE_MODEL / "manifest.json", tmp_path / "manifest.json")
    return tmp_path


@pytest.fixture()
def tokenizer_path(model_dir: Path) -> Path:
    return model_dir / "tokenizer.json"


def special_ids(path: Path) -> dict[str, int]:
    """The ids of the special-token spellings this tokenizer has, as it reports them."""
    tokenizer = Tokenizer.from_file(str(path))
    ids = {spelling: tokenizer.token_to_id(spelling) for spelling in SPECIAL_SPELLINGS}
    return {spelling: id_ for spelling, id_ in ids.items() if id_ is not None}


def test_the_tokenizers_have_the_special_tokens(tokenizer_path: Path) -> None:
    """Else the checks below would check nothing: the raw tokenizer does read these spellings as
    control tokens."""
    ids = special_ids(tokenizer_path)
    assert {"</s>", "<s>", "<pad>", "<unk>"} <= ids.keys()
    raw = Tokenizer.from_file(str(tokenizer_path)).encode("a </s> b <s> <pad> <unk> <mask>", add_special_tokens=False)
    assert set(ids.values()) <= set(raw.ids)


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_served_preprocessing_encodes_no_special_id(model_dir: Path, tokenizer_path: Path, mode: str) -> None:
    controls = set(special_ids(tokenizer_path).values())
    pre = Preprocessor(model_dir, mode=mode, pool_size=1, spelling=False)
    try:
        plans = asyncio.run(pre.plan(TEXTS))
    finally:
        pre.close()
    for text, units in zip(TEXTS, plans, strict=True):
        assert units, text
        for unit in units:
            assert not controls & set(unit.tokens), (text, unit.tokens)
            assert pre.codec.decode(unit.tokens) == unit.normalized.text


def test_engine_codec_encodes_no_special_id(tokenizer_path: Path) -> None:
    controls = set(special_ids(tokenizer_path).values())
    codec = TextCodec(tokenizer_path, controls)
    for text in TEXTS:
        ids = codec.encode(text)
        assert not controls & set(ids), (text, ids)
        assert codec.decode(ids) == text
    assert all(not controls & set(ids) for ids in codec.encode_batch(TEXTS))


def test_the_loaded_engine_encodes_no_special_id() -> None:
    """The codec a loaded engine uses (``gecserve correct``, ``gecserve worker``), with the manifest's ids."""
    engine = engine_for()
    controls = set(special_ids(FIXTURE_MODEL / "tokenizer.json").values())
    for text in TEXTS:
        ids = engine.codec.encode(text)
        assert not controls & set(ids)
        assert engine.codec.decode(ids) == text
