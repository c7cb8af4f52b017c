"""Cutting over-long sentences into pieces that fit the model."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.text.segment import Sentence, is_blank, split_long
from tests.text.strategies import texts


def words(text: str) -> list[int]:
    """One token per word: where each word ends."""
    return [m.end() for m in re.finditer(r"\S+", text)]


def utf8_bytes(text: str) -> list[int]:
    """Like a byte-level tokenizer without merges: one token per UTF-8 byte (a character's bytes share its end)."""
    return [i + 1 for i, char in enumerate(text) for _ in char.encode("utf-8", "surrogatepass")]


def chars(text: str) -> list[int]:
    return list(range(1, len(text) + 1))


def sentence_at(offset: int, text: str) -> Sentence:
    return Sentence(offset, offset + len(text), text)


def texts_of(pieces: list[Sentence]) -> list[str]:
    return [p.text for p in pieces]


def check_pieces(sentence: Sentence, pieces: list[Sentence]) -> None:
    previous = sentence.start
    for piece in pieces:
        assert piece.text == sentence.text[piece.start - sentence.start : piece.end - sentence.start]
        assert piece.text and not is_blank(piece.text[0]) and not is_blank(piece.text[-1])
        gap = sentence.text[previous - sentence.start : piece.start - sentence.start]
        assert all(is_blank(c) for c in gap)
        previous = piece.end
    assert all(is_blank(c) for c in sentence.text[previous - sentence.start :])


def test_sentence_that_fits_is_returned_as_is() -> None:
    sentence = sentence_at(7, "I went home.")
    assert split_long(sentence, words, 3) == [sentence]


def test_prefers_cutting_after_clause_punctuation() -> None:
    sentence = sentence_at(100, "When I arrived at the station, the train had left; I waited for an hour: nobody came")
    pieces = split_long(sentence, words, 8)
    assert texts_of(pieces) == [
        "When I arrived at the station,",
        "the train had left;",
        "I waited for an hour: nobody came",
    ]
    assert [(p.start, p.end) for p in pieces] == [(100, 130), (131, 150), (151, 184)]
    check_pieces(sentence, pieces)


def test_punctuation_cut_needs_half_the_budget() -> None:
    sentence = sentence_at(0, "Yes, I think that we should all go to the beach tomorrow")
    assert texts_of(split_long(sentence, words, 6)) == ["Yes, I think that we should", "all go to the beach tomorrow"]


def test_falls_back_to_whitespace() -> None:
    sentence = sentence_at(0, "one two three four five six seven")
    assert texts_of(split_long(sentence, words, 3)) == ["one two three", "four five six", "seven"]


def test_cuts_inside_a_word_only_as_last_resort() -> None:
    sentence = sentence_at(5, "ab abcdefghij cd")
    pieces = split_long(sentence, utf8_bytes, 4)
    assert texts_of(pieces) == ["ab", "abcd", "efgh", "ij", "cd"]
    check_pieces(sentence, pieces)


def test_no_cut_before_combining_marks_or_inside_emoji_sequences() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert texts_of(split_long(sentence_at(0, "ab" + family), chars, 5)) == ["ab", family]
    sentence = sentence_at(0, "e\u0301e\u0301e\u0301")
    assert texts_of(split_long(sentence, chars, 3)) == ["e\u0301", "e\u0301", "e\u0301"]
    # Without any allowed cut, the last resort is any character boundary.
    assert texts_of(split_long(sentence_at(0, family), chars, 4)) == [family[:4], family[4:]]


def test_cjk_clause_punctuation() -> None:
    sentence = sentence_at(0, "\u65e5\u672c\u8a9e\uff0c\u6b21\u306e\u6587\u3002")
    pieces = split_long(sentence, chars, 6)
    assert texts_of(pieces) == ["\u65e5\u672c\u8a9e\uff0c", "\u6b21\u306e\u6587\u3002"]


def test_character_over_budget_is_its_own_piece() -> None:
    sentence = sentence_at(0, "a\U0001f600b")
    assert texts_of(split_long(sentence, utf8_bytes, 2)) == ["a", "\U0001f600", "b"]


def test_budget_must_be_positive() -> None:
    with pytest.raises(ValueError):
        split_long(sentence_at(0, "a b"), words, 0)


@settings(max_examples=200, deadline=None)
@given(texts, st.integers(1, 12), st.integers(0, 50))
def test_pieces_fit_and_are_exact_spans(text: str, max_tokens: int, offset: int) -> None:
    sentence = sentence_at(offset, text)
    pieces = split_long(sentence, utf8_bytes, max_tokens)
    if len(utf8_bytes(text)) <= max_tokens:
        assert pieces == [sentence]
    else:
        check_pieces(sentence, pieces)
        assert all(len(utf8_bytes(p.text)) <= max_tokens or len(p.text) == 1 for p in pieces)


@pytest.mark.parametrize("unit", ["a", "ab ", "\U0001f600", "word, ", "x" * 40 + " "])
def test_each_character_is_encoded_a_bounded_number_of_times(unit: str) -> None:
    """Linear time: the sentence is encoded once, then each piece only over the reach the whole encoding allows,
    so the characters encoded in all stay within a constant factor of the sentence's length, however long."""
    encoded = 0

    def counting(text: str) -> list[int]:
        nonlocal encoded
        encoded += len(text)
        return utf8_bytes(text)

    for size in (2_000, 20_000):
        encoded = 0
        text = (unit * size)[:size]
        check_pieces(sentence_at(0, text), split_long(sentence_at(0, text), counting, 64))
        assert encoded <= 16 * size
