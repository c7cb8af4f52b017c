"""The byte-level BPE tokenizer: any text round-trips exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.gec.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID, train_tokenizer

CORPUS = [
    "She goes to school every day.",
    "I have recieved your letter, which lets me know that I won.",
    "\"Quoted\" text, 'single quotes', and “curly” ones — with dashes.",
    "Numbers 1,234.56 and dates 13th June 2000.",
] * 50

ODD = [
    "Tabs\tand  double  spaces",
    "  leading and trailing  ",
    "CRLF line\r\nends",
    "emoji 😀👍🏽 and flags 🇬🇧",
    "CJK 日本語 한국어 and combining e\u0301",
    "zero\u200bwidth and nbsp\u00a0here",
    "",
    "HTML <s>struck</s> and <pad> <unk> spelled out",
]


@pytest.fixture(scope="module")
def tokenizer():
    trained = train_tokenizer(CORPUS, vocab_size=400, min_frequency=2)
    trained.encode_special_tokens = True  # as the service's TextCodec reads text: "<s>" is text
    return trained


def test_special_tokens_have_barts_ids(tokenizer) -> None:
    ids = [tokenizer.token_to_id(t) for t in ("<s>", "<pad>", "</s>", "<unk>")]
    assert ids == [BOS_ID, PAD_ID, EOS_ID, UNK_ID]
    assert tokenizer.get_vocab_size() <= 400


def test_merges_are_learned(tokenizer) -> None:
    assert len(tokenizer.encode("She goes to school every day.").ids) < len("She goes to school every day.")


@pytest.mark.parametrize("text", ODD)
def test_odd_text_round_trips(tokenizer, text: str) -> None:
    assert tokenizer.decode(tokenizer.encode(text).ids) == text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=80))
def test_any_text_round_trips(tokenizer, text: str) -> None:
    ids = tokenizer.encode(text).ids
    assert UNK_ID not in ids
    assert tokenizer.decode(ids) == text
