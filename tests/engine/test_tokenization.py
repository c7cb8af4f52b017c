"""The engine's text codec: lossless, and text spelling a special token stays text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.conftest import engine_for


@pytest.mark.parametrize(
    "text",
    ["Use <s>strike</s> here", "<pad><unk></s><s>", "emoji 😀 tab\tCRLF\r\n  spaces", ""],
)
def test_special_token_spellings_are_text(text: str) -> None:
    codec = engine_for().codec
    ids = codec.encode(text)
    assert not set(ids) & codec.special_ids
    assert codec.decode(ids) == text
    assert codec.encode_batch([text, text]) == [ids, ids]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60))
def test_any_text_round_trips(text: str) -> None:
    codec = engine_for().codec
    assert codec.decode(codec.encode(text)) == text
