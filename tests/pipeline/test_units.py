"""Units: paragraphs to model inputs and corrected units back to edits of the original."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from service.pipeline.units import assemble, plan_units
from service.text.script import editable


def encode(text: str) -> list[int]:
    return [ord(c) for c in text]  # one token per character: easy to reason about


def test_units_cover_the_sentences_with_their_offsets() -> None:
    paragraph = "First one.  Second\u00a0one!\nThird"
    units = plan_units(paragraph, encode, max_tokens=100)
    assert [u.normalized.source for u in units] == ["First one.", "Second\u00a0one!", "Third"]
    assert [u.start for u in units] == [0, 12, 24]
    assert units[1].normalized.text == "Second one!"  # the model sees a plain space
    assert [u.sentence for u in units] == [0, 1, 2]


def test_long_sentences_are_split_and_share_their_index() -> None:
    paragraph = "word " * 30 + "end."
    units = plan_units(paragraph, encode, max_tokens=40)
    assert len(units) > 1
    assert all(len(u.tokens) <= 40 for u in units)
    assert {u.sentence for u in units} == {0}


def test_assemble_gives_edits_and_text() -> None:
    paragraph = "i saw a apple.  It was red"
    units = plan_units(paragraph, encode, 100)
    corrected, edits = assemble(paragraph, units, ["I saw an apple.", "It was red."])
    assert corrected == "I saw an apple.  It was red."
    assert [(e.original, e.replacement, e.sentence) for e in edits] == [("i", "I", 0), ("a", "an", 0), ("", ".", 1)]
    assert len({e.id for e in edits}) == len(edits)


def test_alternatives_come_from_other_hypotheses_at_the_same_span() -> None:
    paragraph = "He go home."
    units = plan_units(paragraph, encode, 100)
    _, edits = assemble(paragraph, units, ["He goes home."], [["He went home.", "He goes home.", "He go home!"]])
    (edit,) = edits
    assert edit.replacement == "goes" and edit.alternatives == ["went"]


def test_edit_ids_are_stable_across_positions() -> None:
    a = assemble("He go.", plan_units("He go.", encode, 100), ["He goes."])[1]
    b = assemble("Hello there. He go.", plan_units("Hello there. He go.", encode, 100), ["Hello there.", "He goes."])[1]
    assert a[0].id == b[0].id and a[0].start != b[0].start


def _units_replaced(paragraph: str, units, corrected_units: list[str]) -> str:
    rebuilt, last = [], 0
    for unit, text in zip(units, corrected_units, strict=True):
        rebuilt.append(paragraph[last : unit.start])
        rebuilt.append(text)
        last = unit.start + len(unit.normalized.source)
    rebuilt.append(paragraph[last:])
    return "".join(rebuilt)


# Characters every edit may touch: ASCII letters, digits, punctuation and blanks.
EDITABLE_TEXT = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)


@settings(max_examples=200, deadline=None)
@given(EDITABLE_TEXT, st.data())
def test_assembled_text_equals_units_replaced(paragraph: str, data) -> None:
    units = plan_units(paragraph, encode, 30)
    corrected_units = [data.draw(EDITABLE_TEXT.filter(lambda t: len(t) <= 20)) for _ in units]
    corrected, edits = assemble(paragraph, units, corrected_units)
    # Units whose normalised text differs from the source keep their source where unedited.
    if all(u.normalized.text == u.normalized.source for u in units):
        assert corrected == _units_replaced(paragraph, units, corrected_units)
    assert all(paragraph[e.start : e.end] == e.original for e in edits)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.data())
def test_characters_the_model_cannot_write_are_never_edited(paragraph: str, data) -> None:
    """Any Unicode in, any output from the model: edits rebuild the text, and an edit never touches or
    writes a character outside what the model reads (so such characters come back as they were)."""
    units = plan_units(paragraph, encode, 30)
    corrected_units = [data.draw(st.text(max_size=20)) for _ in units]
    corrected, edits = assemble(paragraph, units, corrected_units)
    out, last = [], 0
    for edit in edits:
        assert paragraph[edit.start : edit.end] == edit.original
        assert editable(edit.original) and editable(edit.replacement)
        out += [paragraph[last : edit.start], edit.replacement]
        last = edit.end
    assert "".join([*out, paragraph[last:]]) == corrected
    kept = [c for c in paragraph if not editable(c)]
    assert [c for c in corrected if not editable(c)] == kept
