"""Code-point to UTF-16 code-unit offsets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from service.text.edits import Edit, extract_edits
from service.text.offsets import Utf16Index, utf16_length, utf16_offsets
from tests.text.strategies import pairs


def utf16_units(text: str) -> bytes:
    return text.encode("utf-16-le")


def test_bmp_text_is_identity() -> None:
    convert = utf16_offsets("caf\u00e9 \u65e5\u672c \u00a0x")
    assert [convert(i) for i in range(10)] == list(range(10))


def test_astral_characters_take_two_units() -> None:
    text = "a\U0001f600b\U0001f1eb\U0001f1f7c"
    index = Utf16Index(text)
    assert [index(i) for i in range(len(text) + 1)] == [0, 1, 3, 4, 6, 8, 9]
    assert index.span(1, 2) == (1, 2)
    assert index.edit_span(Edit(3, 5, "\U0001f1eb\U0001f1f7", "")) == (4, 4)
    assert utf16_length(text) == 9


def test_lone_surrogate_is_one_unit() -> None:
    index = Utf16Index("\ud800\U0001f600")
    assert [index(i) for i in range(3)] == [0, 1, 3]


def test_out_of_range_offsets_raise() -> None:
    index = Utf16Index("ab")
    with pytest.raises(IndexError):
        index(3)
    with pytest.raises(IndexError):
        index(-1)


@settings(max_examples=300, deadline=None)
@given(pairs)
def test_utf16_spans_select_and_apply_edits(pair: tuple[str, str]) -> None:
    source, corrected = pair
    edits = extract_edits(source, corrected)
    index = Utf16Index(source)
    units = utf16_units(source)
    result, position = [], 0
    for edit in edits:
        offset, length = index.edit_span(edit)
        assert units[2 * offset : 2 * (offset + length)].decode("utf-16-le") == edit.original
        result += [units[2 * position : 2 * offset], utf16_units(edit.replacement)]
        position = offset + length
    result.append(units[2 * position :])
    assert b"".join(result).decode("utf-16-le") == corrected
    assert index(len(source)) == utf16_length(source)
