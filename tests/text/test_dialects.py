"""English dialects: the variant list's classes, the dialect stage's suggestions, and the model's dialect swaps
dropped (``service.text.dialects``, ``service.text.variants``, ``service.text.units``)."""

from __future__ import annotations

import pytest
from breame.data.spelling_constants import BRITISH_ENGLISH_SPELLINGS
from hypothesis import given, settings
from hypothesis import strategies as st

from service.text.dialects import (
    CODES,
    DIALECT_CODE,
    DIALECTS,
    SURE,
    UNSURE,
    UnknownDialectError,
    dialect_of,
    replacements,
    swaps_dialect,
)
from service.text.policy import LEVELS
from service.text.rules import rule_of
from service.text.units import assemble, plan_units
from service.text.variants import suggest_variants
from tests.text.char_codec import CHARS

US, GB, CA, AU = (DIALECTS[code.casefold()] for code in ("en-US", "en-GB", "en-CA", "en-AU"))
PAIRS = sorted(BRITISH_ENGLISH_SPELLINGS.items())


def _suggested(paragraph: str, code: str | None, threshold: float = LEVELS["default"]) -> list[tuple[str, str]]:
    units = plan_units(paragraph, CHARS, 200)
    assembled = assemble(paragraph, units, [unit.text for unit in units])
    result = suggest_variants(paragraph, units, assembled, dialect_of(code), threshold)
    return [(edit.original, edit.replacement) for edit in result.edits]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("en-US", [("colour", "color"), ("organise", "organize"), ("centre", "center"), ("travelled", "traveled")]),
        ("en-GB", [("color", "colour"), ("center", "centre"), ("traveled", "travelled"), ("analyze", "analyse")]),
        ("en-CA", [("color", "colour"), ("organise", "organize"), ("center", "centre"), ("analyse", "analyze")]),
        ("en-AU", [("color", "colour"), ("organize", "organise"), ("programme", "program"), ("defense", "defence")]),
    ],
)
def test_each_dialect_suggests_its_spellings(code: str, expected: list[tuple[str, str]]) -> None:
    table = replacements(DIALECTS[code.casefold()])
    for original, replacement in expected:
        assert table[original] == (replacement, SURE)


def test_canadian_spells_our_re_and_ll_british_and_ize_american() -> None:
    table = replacements(CA)
    assert {"colour", "centre", "travelled", "organize", "analyze", "program"}.isdisjoint(table)
    assert "tire" not in table and "tyre" not in table  # a pair of no regular class: both stand in Canada


def test_spellings_british_english_also_writes_are_picky_only() -> None:
    table = replacements(GB)
    assert table["organize"] == ("organise", UNSURE)  # Oxford spelling
    assert table["program"] == ("programme", UNSURE)  # a computer program
    assert table["license"] == ("licence", UNSURE)  # the verb
    assert LEVELS["picky"] <= UNSURE < LEVELS["default"] <= SURE and LEVELS["safe"] <= SURE


def test_no_dialect_suggests_its_own_spelling() -> None:
    for dialect in DIALECTS.values():
        table = replacements(dialect)
        assert not {spelling for spelling, _ in table.values()} & table.keys()


def test_the_default_suggests_nothing() -> None:
    assert _suggested("The color of the centre is grey.", None) == []


def test_a_sentence_is_corrected_to_the_dialect_named() -> None:
    paragraph = "Colour is my favorite topic. We analyze the center of town."
    assert _suggested(paragraph, "en-GB") == [
        ("favorite", "favourite"),
        ("analyze", "analyse"),
        ("center", "centre"),
    ]
    assert _suggested(paragraph, "en-US") == [("Colour", "Color")]


def test_names_and_joined_words_are_left_alone() -> None:
    assert _suggested("We met at the Lincoln Center and the Labor office.", "en-GB") == []
    assert _suggested("The co-color and color-coded things.", "en-GB") == []
    assert _suggested("COLOR", "en-GB") == []


def test_protected_spans_are_left_alone() -> None:
    assert _suggested("Set `color = 1` and see https://example.com/color today.", "en-GB") == []


def test_the_threshold_holds_back_unsure_suggestions() -> None:
    assert _suggested("Run the program.", "en-GB") == []
    assert _suggested("Run the program.", "en-GB", LEVELS["picky"]) == [("program", "programme")]
    assert _suggested("The color.", "en-GB", LEVELS["safe"]) == [("color", "colour")]


def test_a_suggestion_carries_its_category_rule_message_and_confidence() -> None:
    paragraph = "The color."
    units = plan_units(paragraph, CHARS, 200)
    result = suggest_variants(paragraph, units, assemble(paragraph, units, ["The color."]), GB, 0.22)
    (edit,) = result.edits
    assert (edit.category, edit.type, edit.confidence) == (DIALECT_CODE, "spelling", SURE)
    assert edit.message == "'color' → 'colour': the British English spelling."
    assert rule_of(edit.category).id == "GEC_SPELL_DIALECT"
    assert result.text == "The colour."


def test_model_edits_come_first_and_are_not_overlapped() -> None:
    paragraph = "She like the color."
    units = plan_units(paragraph, CHARS, 200)
    result = suggest_variants(paragraph, units, assemble(paragraph, units, ["She likes the color."]), GB, 0.22)
    assert [(e.original, e.replacement) for e in result.edits] == [("like", "likes"), ("color", "colour")]
    assert result.text == "She likes the colour."


def test_unknown_codes_name_those_served() -> None:
    with pytest.raises(UnknownDialectError, match="en-US, en-GB, en-CA, en-AU"):
        dialect_of("de-DE")
    assert dialect_of("EN-gb") is GB and dialect_of(None) is None
    assert CODES == ("en-US", "en-GB", "en-CA", "en-AU")


@pytest.mark.parametrize(
    ("source", "output", "expected"),
    [
        ("The colour is nice.", "The color is nice.", "The colour is nice."),
        ("The color is nice.", "The colour is nice.", "The color is nice."),
        ("We organised it.", "We organized it.", "We organised it."),
        ("The colour are nice.", "The color is nice.", "The colour is nice."),  # the agreement stands
        ("She travelled far.", "She traveled far.", "She travelled far."),
    ],
)
def test_the_models_dialect_swaps_are_dropped(source: str, output: str, expected: str) -> None:
    units = plan_units(source, CHARS, 200)
    assert assemble(source, units, [output]).text == expected


@settings(max_examples=200, deadline=None)
@given(pair=st.sampled_from(PAIRS), british_first=st.booleans(), prefix=st.sampled_from(["", "The ", "A big "]))
def test_no_dialect_swap_survives_assembly(pair: tuple[str, str], british_first: bool, prefix: str) -> None:
    written, swapped = pair if british_first else pair[::-1]
    source, output = f"{prefix}{written} here.", f"{prefix}{swapped} here."
    assert swaps_dialect(written, swapped)
    units = plan_units(source, CHARS, 200)
    assert assemble(source, units, [output]).text == source


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.sampled_from([w for pair in PAIRS[::7] for w in pair] + ["the", "a", "is", "of"]), max_size=12),
    code=st.sampled_from(CODES),
)
def test_a_dialects_suggestions_leave_nothing_to_suggest(words: list[str], code: str) -> None:
    """Applying a dialect's suggestions (every level) gives a text it suggests nothing more in, and never a word it
    would change back. The sentence starts with a capital: the rule stage capitalises a lowercase first word, and the
    dialect stage leaves a word another edit changes (its variant is suggested once that edit is taken)."""
    sentence = " ".join(words)
    paragraph = sentence[:1].upper() + sentence[1:] + "."
    units = plan_units(paragraph, CHARS, 500)
    dialect = dialect_of(code)
    result = suggest_variants(paragraph, units, assemble(paragraph, units, [u.text for u in units]), dialect, 0.0)
    again = plan_units(result.text, CHARS, 500)
    assert (
        suggest_variants(result.text, again, assemble(result.text, again, [u.text for u in again]), dialect, 0.0).edits
        == []
    )
