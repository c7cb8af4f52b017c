"""LanguageTool's annotated text: the plain text, and plain spans mapped back to the original with markup."""

from __future__ import annotations

import pytest

from service.text.annotation import AnnotatedText, AnnotationError, parse_data

BOLD = parse_data({"annotation": [{"text": "A "}, {"markup": "<b>"}, {"text": "tset"}, {"markup": "</b>"}]})


def test_plain_and_original_text() -> None:
    data = {"annotation": [{"text": "A "}, {"markup": "<p>", "interpretAs": "\n\n"}, {"text": "b"}, {"markup": "<br>"}]}
    annotated = parse_data(data)
    assert (annotated.plain, annotated.original) == ("A \n\nb", "A <p>b<br>")
    assert parse_data({"text": "x <b>"}) == AnnotatedText.of_text("x <b>")


@pytest.mark.parametrize(
    ("plain_span", "original_span"),
    [
        ((2, 6), (5, 9)),  # "tset": after the markup before it, before the markup after it
        ((0, 1), (0, 1)),
        ((6, 6), (9, 9)),  # an insertion at the end of "tset" goes before "</b>"
        ((2, 2), (2, 2)),  # an insertion after "A " goes before "<b>"
        ((0, 6), (0, 9)),  # a span across markup takes it in
    ],
)
def test_spans_map_back_around_markup(plain_span: tuple[int, int], original_span: tuple[int, int]) -> None:
    assert BOLD.plain == "A tset"
    assert BOLD.original_span(*plain_span) == original_span
    start, end = original_span
    if plain_span[0] < plain_span[1] and plain_span != (0, 6):
        assert BOLD.original[start:end] == BOLD.plain[plain_span[0] : plain_span[1]]


def test_positions_inside_interpreted_markup_take_the_whole_markup() -> None:
    annotated = parse_data({"annotation": [{"text": "a"}, {"markup": "<p>", "interpretAs": "\n\n"}, {"text": "b"}]})
    assert annotated.original_span(3, 4) == (4, 5)  # "b"
    assert annotated.original_span(1, 2) == (1, 4)  # the first interpreted newline: "<p>"


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"text": "a", "annotation": []},
        {},
        {"annotation": "a"},
        {"annotation": ["a"]},
        {"annotation": [{"text": "a", "markup": "b"}]},
        {"annotation": [{"text": "a", "interpretAs": "b"}]},
        {"annotation": [{"markup": 1}]},
        {"text": None},
    ],
)
def test_malformed_data_is_refused(data: object) -> None:
    with pytest.raises(AnnotationError):
        parse_data(data)
