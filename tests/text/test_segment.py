"""Sentence splitting: exact offsets, line breaks, blanks, realistic learner paragraphs."""

from __future__ import annotations

from hypothesis import given, settings

from service.text.protect import find_protected
from service.text.segment import Sentence, is_blank, split_sentences, split_with
from tests.text.strategies import texts

LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def texts_of(paragraph: str) -> list[str]:
    return [s.text for s in split_sentences(paragraph)]


def check_invariants(paragraph: str, sentences: list[Sentence]) -> None:
    previous_end = 0
    for s in sentences:
        assert s.text == paragraph[s.start : s.end]
        assert s.text and not is_blank(s.text[0]) and not is_blank(s.text[-1])
        assert not any(c in LINE_BREAKS for c in s.text)
        assert previous_end <= s.start < s.end
        previous_end = s.end
    covered = {i for s in sentences for i in range(s.start, s.end)}
    assert all(is_blank(c) for i, c in enumerate(paragraph) if i not in covered)


def test_learner_paragraph() -> None:
    lines = [
        "I have just recieved the letter, which lets me know that I have won the first prize.",
        "I am proud of winning it and would like to say how thankful I am.",
        "I hope everything around you is alright.",
        "So I'm now writing to let you know how grateful it was.",
    ]
    paragraph = " ".join(lines)
    sentences = split_sentences(paragraph)
    assert [s.text for s in sentences] == lines
    check_invariants(paragraph, sentences)


def test_fragments_and_exclamations() -> None:
    assert texts_of("Dear Kim, Hello! I hope everything around you is alright.") == [
        "Dear Kim, Hello!",
        "I hope everything around you is alright.",
    ]


def test_blank_text_has_no_sentence() -> None:
    for paragraph in ("", " ", "\t\t", "\r\n\r\n", "  \n \u00a0 \u2028", "\u200b\ufeff "):
        assert split_sentences(paragraph) == []


def test_line_breaks_end_sentences() -> None:
    paragraph = "Dear Ms Helen Ryan\r\nCompetition Organiser\rThanks\nBye\u2028Love,\r\n\r\n  Anna  "
    assert texts_of(paragraph) == ["Dear Ms Helen Ryan", "Competition Organiser", "Thanks", "Bye", "Love,", "Anna"]
    check_invariants(paragraph, split_sentences(paragraph))


def test_crlf_counts_as_one_break() -> None:
    sentences = split_sentences("One.\r\nTwo.")
    assert [(s.start, s.end, s.text) for s in sentences] == [(0, 4, "One."), (6, 10, "Two.")]


def test_offsets_with_emoji_cjk_combining_tabs_and_spaces() -> None:
    paragraph = "I love \U0001f600 emoji.   Cafe\u0301 is nice.\t\tWe like \u65e5\u672c \U0001f1eb\U0001f1f7. Great!"
    sentences = split_sentences(paragraph)
    assert [s.text for s in sentences] == [
        "I love \U0001f600 emoji.",
        "Cafe\u0301 is nice.",
        "We like \u65e5\u672c \U0001f1eb\U0001f1f7.",
        "Great!",
    ]
    assert [(s.start, s.end) for s in sentences] == [(0, 15), (18, 32), (34, 48), (49, 55)]
    check_invariants(paragraph, sentences)


def test_cjk_sentences_without_spaces() -> None:
    assert texts_of("\u65e5\u672c\u8a9e\u3067\u3059\u3002\u6b21\u306e\u6587\u3002") == [
        "\u65e5\u672c\u8a9e\u3067\u3059\u3002",
        "\u6b21\u306e\u6587\u3002",
    ]


def test_nul_and_lone_surrogate_are_safe() -> None:
    paragraph = "Bad\x00 byte here. And a \ud800 surrogate. End"
    sentences = split_sentences(paragraph)
    assert [s.text for s in sentences] == ["Bad\x00 byte here.", "And a \ud800 surrogate.", "End"]
    check_invariants(paragraph, sentences)


def test_offsets_are_exact_whatever_the_cut_finder_says() -> None:
    paragraph = "ab  cd\r\nef"
    sentences = split_with(paragraph, lambda line: [-5, 3, 3, 1, 99, len(line)])
    assert [s.text for s in sentences] == ["a", "b", "cd", "e", "f"]
    check_invariants(paragraph, sentences)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_sentences_are_exact_trimmed_spans_covering_all_text(paragraph: str) -> None:
    check_invariants(paragraph, split_sentences(paragraph))


def protected_texts(paragraph: str) -> list[str]:
    return [s.text for s in split_sentences(paragraph, find_protected(paragraph))]


def test_no_sentence_ends_inside_a_url_an_address_or_a_number() -> None:
    paragraph = "Visit www.example.com/a.b. Then mail x.y@example.co.uk. It costs $1.50. Done."
    assert protected_texts(paragraph) == [
        "Visit www.example.com/a.b.",
        "Then mail x.y@example.co.uk.",
        "It costs $1.50.",
        "Done.",
    ]


def test_hidden_syntax_starts_and_ends_no_sentence() -> None:
    assert protected_texts("## Installation ##\n- **Save** it\n```\ncode\n```") == ["Installation", "Save** it"]


def test_table_cells_are_sentences_of_their_own() -> None:
    assert protected_texts("| Name | Age |\n|---|---|\n| Bob | twenty |") == ["Name", "Age", "Bob", "twenty"]


def test_a_run_the_model_cannot_read_ends_a_sentence_and_stays_in_the_next() -> None:
    """Bling Fire sees "cat. 😀😀 She" as one sentence, and "猫。 We" as two: both are cut."""
    emoji = "\U0001f600" * 400
    assert protected_texts(f"He have a cat. {emoji} She go home.") == ["He have a cat.", f"{emoji} She go home."]
    assert protected_texts("I like it. 我喜欢猫很多。 We go.") == ["I like it.", "我喜欢猫很多。", "We go."]
    assert protected_texts("Привет teh мир.") == ["Привет teh мир."]


@settings(max_examples=300, deadline=None)
@given(texts)
def test_sentences_with_protection_are_exact_trimmed_spans(paragraph: str) -> None:
    sentences = split_sentences(paragraph, find_protected(paragraph))
    previous_end = 0
    for s in sentences:
        assert s.text == paragraph[s.start : s.end] and previous_end <= s.start < s.end
        previous_end = s.end
