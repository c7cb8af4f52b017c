"""Paragraphs of any Unicode through the text layer as the service runs it: units planned with the real
tokenizer, whatever the model writes, edits in both offset units.

The strategy (``hostile_texts``) over-weights what breaks text handling: lone surrogates, combining
marks, right-to-left script and bidi controls, zero-width characters, NUL and other controls, emoji
ZWJ sequences, mixed CR/LF/CRLF line breaks and special-token spellings, among English words. The
offsets an API answers are checked by cutting the original text itself (its code points, or its
UTF-16 code units with lone surrogates as JavaScript holds them), not by the service's own
``apply_edits``.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from service.engine.tokenization import TextCodec
from service.text.grammar_rules import find_rule_edits
from service.text.offsets import Utf16Index
from service.text.protect import find_protected
from service.text.script import SPECIAL_SPELLINGS, editable
from service.text.units import TypedEdit, Unit, assemble, plan_units
from tests.conftest import FIXTURE_MODEL
from tests.text.strategies import hostile_pieces, hostile_texts

CODEC = TextCodec(FIXTURE_MODEL / "tokenizer.json", set())
MAX_TOKENS = 24  # small, so that long sentences are split into pieces too


def plan(paragraph: str) -> list[Unit]:
    return plan_units(paragraph, CODEC, MAX_TOKENS)


def utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def rebuilt_utf16(paragraph: str, edits: Sequence[TypedEdit]) -> bytes:
    """``paragraph``'s UTF-16 code units with ``edits`` applied at the UTF-16 offsets an API answers,
    each edit's ``original`` checked against the code units there. Compared as code units: two lone
    surrogates that meet are one astral character to a UTF-16 editor, and so they are here."""
    index, data = Utf16Index(paragraph), utf16(paragraph)
    out, last = [], 0
    for edit in sorted(edits, key=lambda e: e.start):
        offset, length = index.span(edit.start, edit.end)
        assert last <= offset and offset + length <= len(data) // 2, "edits overlap or leave the text"
        assert data[2 * offset : 2 * (offset + length)] == utf16(edit.original)
        out += [data[2 * last : 2 * offset], utf16(edit.replacement)]
        last = offset + length
    return b"".join([*out, data[2 * last :]])


def rebuilt_codepoints(paragraph: str, edits: Sequence[TypedEdit]) -> str:
    """``paragraph`` with ``edits`` applied at their code-point offsets, each ``original`` checked."""
    out, last = [], 0
    for edit in sorted(edits, key=lambda e: e.start):
        assert last <= edit.start <= edit.end <= len(paragraph), "edits overlap or leave the text"
        assert paragraph[edit.start : edit.end] == edit.original
        out += [paragraph[last : edit.start], edit.replacement]
        last = edit.end
    return "".join([*out, paragraph[last:]])


@settings(max_examples=400, deadline=None)
@given(hostile_texts)
def test_text_the_model_leaves_alone_comes_back_byte_identical(paragraph: str) -> None:
    """The model gives back the tokens it was given: the paragraph comes back byte for byte (lone
    surrogates, controls and line breaks as they were), with no edit. (A sentence the rule stage corrects, such as
    one of five words or more starting with "i", is not left alone: ``tests/text/test_grammar_rules.py``.)"""
    units = plan(paragraph)
    assume(not any(find_rule_edits(unit.normalized.text) for unit in units if unit.decoded_by_model))
    echoed = [CODEC.decode(unit.tokens) if unit.decoded_by_model else unit.normalized.text for unit in units]
    assembled = assemble(paragraph, units, echoed)
    corrected, edits = assembled.text, assembled.edits
    assert edits == []
    assert utf16(corrected) == utf16(paragraph)


@st.composite
def model_outputs(draw: st.DrawFn, units: Sequence[Unit]) -> list[str]:
    """What a model may write for each unit: its input, its input with pieces changed, or anything."""
    outputs = []
    for unit in units:
        text = unit.normalized.text
        kind = draw(st.sampled_from(["same", "edited", "anything"]))
        if kind == "edited" and text:
            for _ in range(draw(st.integers(1, 3))):
                at = draw(st.integers(0, len(text)))
                cut = draw(st.integers(0, min(3, len(text) - at)))
                text = text[:at] + draw(st.one_of(st.just(""), hostile_pieces)) + text[at + cut :]
        elif kind == "anything":
            text = draw(hostile_texts)
        outputs.append(text)
    return outputs


@settings(max_examples=400, deadline=None)
@given(hostile_texts, st.data())
def test_edits_rebuild_the_corrected_text_in_both_offset_units(paragraph: str, data) -> None:
    """Whatever the model writes: the edits, at their code-point offsets and at their UTF-16 offsets,
    turn the paragraph into the corrected text; no edit touches a character the model cannot read
    or a special-token spelling, so those come back in order."""
    units = plan(paragraph)
    assembled = assemble(paragraph, units, data.draw(model_outputs(units)))
    corrected, edits = assembled.text, assembled.edits
    assert rebuilt_codepoints(paragraph, edits) == corrected
    assert rebuilt_utf16(paragraph, edits) == utf16(corrected)
    assert all(editable(e.original) and editable(e.replacement) for e in edits)
    assert [c for c in corrected if not editable(c)] == [c for c in paragraph if not editable(c)]
    for span in find_protected(paragraph).spans:
        assert not [e for e in edits if e.start < span.end and e.end > span.start], "a protected span was edited"
    for spelling in SPECIAL_SPELLINGS:
        assert corrected.count(spelling) >= paragraph.count(spelling)
