"""The model's view of a sentence and its character map back to the original."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings

from service.text.normalize import Normalized, normalize, normalize_char, source_span
from tests.text.strategies import texts


def test_plain_text_is_unchanged() -> None:
    text = "I have just recieved the letter, which lets me know.\tOK"
    assert normalize(text) == Normalized(text, list(range(len(text) + 1)), text)


def test_odd_spaces_become_spaces() -> None:
    n = normalize("a\u00a0b\u202fc\u2009d\u3000e")
    assert n.text == "a b c d e"
    assert n.to_source == list(range(10))


def test_invisible_and_control_characters_are_removed() -> None:
    source = "\ufeffHel\u00adlo\u200b wor\x00ld\u200e\x07!"
    n = normalize(source)
    assert n.text == "Hello world!"
    assert [source[i] for i in n.to_source[:-1]] == list("Hello world!")
    assert n.to_source[-1] == len(source)


def test_tab_is_kept_and_line_breaks_become_spaces() -> None:
    assert normalize("a\tb\r\nc\u2028d").text == "a\tb  c d"


def test_joiners_and_variation_selectors_are_kept() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f"
    assert normalize(family).text == family


def test_nfc_only_where_one_to_one() -> None:
    assert normalize("\u212b \u2126 \uf900").text == "\u00c5 \u03a9 \u8c48"
    decomposed = "Cafe\u0301"
    assert normalize(decomposed).text == decomposed


def test_curly_quotes_are_kept() -> None:
    text = "\u201cIt\u2019s fine,\u201d she said \u2013 \u2018ok\u2019."
    assert normalize(text).text == text


def test_lone_surrogates_are_removed() -> None:
    assert normalize("a\ud800b").text == "ab"


def test_source_span() -> None:
    n = normalize("a\u200b\u00a0b\u200bc")
    assert n.text == "a bc"
    assert source_span(n, 0, 1) == (0, 1)
    assert source_span(n, 1, 3) == (2, 4)
    assert source_span(n, 3, 4) == (5, 6)
    assert source_span(n, 1, 1) == (2, 2)
    assert source_span(n, 4, 4) == (6, 6)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_map_is_exact_and_monotonic(text: str) -> None:
    n = normalize(text)
    assert n.source == text
    assert len(n.to_source) == len(n.text) + 1
    assert n.to_source[-1] == len(text)
    assert all(a < b for a, b in pairwise(n.to_source))
    for i, char in enumerate(n.text):
        assert normalize_char(text[n.to_source[i]]) == char
    kept = set(n.to_source)
    assert all(normalize_char(c) == "" for i, c in enumerate(text) if i not in kept)
    assert normalize(n.text).text == n.text
