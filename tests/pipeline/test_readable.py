"""Units and edits around text the model cannot read: such units are not decoded, and no edit touches
such characters, whatever the model writes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from service.pipeline.units import assemble, plan_units
from service.text.script import editable


def encode(text: str) -> list[int]:
    return [ord(c) for c in text]


def test_units_the_model_cannot_read_are_not_decoded() -> None:
    units = plan_units("I saw a apple. 我喜欢猫。 😀😀. We go home.", encode, 100)
    assert [u.decoded_by_model for u in units] == [True, False, False, True]
    assert not plan_units("   ", encode, 100)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.data())
def test_no_edit_touches_or_writes_what_the_model_cannot_read(paragraph: str, data) -> None:
    units = plan_units(paragraph, encode, 30)
    outputs = [data.draw(st.text(max_size=30)) for _ in units]
    corrected, edits = assemble(paragraph, units, outputs)
    assert all(editable(e.original) and editable(e.replacement) for e in edits)
    unreadable = [c for c in paragraph if not editable(c)]
    assert [c for c in corrected if not editable(c)] == unreadable
