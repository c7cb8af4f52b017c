"""Units and edits around text the model cannot read: such units are not decoded, and no edit touches
such characters, whatever the model writes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from service.text.edits import Edit
from service.text.language import language_identifier
from service.text.script import editable
from service.text.units import assemble, plan_units
from tests.text.char_codec import CHARS


def test_units_the_model_cannot_read_are_not_decoded() -> None:
    units = plan_units("I saw a apple. 我喜欢猫。 😀😀. We go home.", CHARS, 100)
    assert [u.decoded_by_model for u in units] == [True, False, False, True]
    assert not plan_units("   ", CHARS, 100)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.data())
def test_no_edit_touches_or_writes_what_the_model_cannot_read(paragraph: str, data) -> None:
    units = plan_units(paragraph, CHARS, 30)
    outputs = [data.draw(st.text(max_size=30)) for _ in units]
    assembled = assemble(paragraph, units, outputs)
    corrected, edits = assembled.text, assembled.edits
    assert all(editable(e.original) and editable(e.replacement) for e in edits)
    unreadable = [c for c in paragraph if not editable(c)]
    assert [c for c in corrected if not editable(c)] == unreadable


def test_sentences_in_another_language_are_not_decoded_nor_spelled() -> None:
    """The language identifier's verdicts decide: a paragraph that mixes languages has its foreign sentences left
    out, and the spelling stage does not touch them either."""
    paragraph = "I like this song very much. Ich habe heute leider keine Zeit für dich. She go home every day."
    english = language_identifier().english_sentences
    units = plan_units(paragraph, CHARS, 100, lambda text: [Edit(0, 1, text[0], "X")], english)
    assert [(u.normalized.text, u.decoded_by_model) for u in units] == [
        ("I like this song very much.", True),
        ("Ich habe heute leider keine Zeit für dich.", False),
        ("She go home every day.", True),
    ]
    assert [bool(u.spelling) for u in units] == [True, False, True]
