"""Units: paragraphs to model inputs and corrected units back to edits of the original."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.text import guard
from service.text.classify import classify
from service.text.edits import Edit
from service.text.normalize import normalize
from service.text.protect import find_protected
from service.text.script import editable
from service.text.units import assemble, plan_units, with_rules
from tests.text import test_protect
from tests.text.char_codec import CHARS


def test_units_cover_the_sentences_with_their_offsets() -> None:
    paragraph = "First one.  Second\u00a0one!\nThird"
    units = plan_units(paragraph, CHARS, max_tokens=100)
    assert [u.normalized.source for u in units] == ["First one.", "Second\u00a0one!", "Third"]
    assert [u.start for u in units] == [0, 12, 24]
    assert units[1].normalized.text == "Second one!"  # the model sees a plain space
    assert [u.sentence for u in units] == [0, 1, 2]


def test_long_sentences_are_split_and_share_their_index() -> None:
    paragraph = "word " * 30 + "end."
    units = plan_units(paragraph, CHARS, max_tokens=40)
    assert len(units) > 1
    assert all(len(u.tokens) <= 40 for u in units)
    assert {u.sentence for u in units} == {0}


def test_assemble_gives_edits_and_text() -> None:
    paragraph = "i saw a apple.  It was red"
    units = plan_units(paragraph, CHARS, 100)
    assembled = assemble(paragraph, units, ["I saw an apple.", "It was red."])
    corrected, edits = assembled.text, assembled.edits
    assert corrected == "I saw an apple.  It was red."
    assert [(e.original, e.replacement, e.sentence) for e in edits] == [("i", "I", 0), ("a", "an", 0), ("", ".", 1)]
    assert len({e.id for e in edits}) == len(edits)


def test_letters_glued_onto_a_kept_span_are_dropped_and_punctuation_after_it_stands() -> None:
    paragraph = "They is happy <s> and we is sad."
    units = plan_units(paragraph, CHARS, 100)
    glued = assemble(paragraph, units, ["They are happy <s>ts and we are sad."])
    assert glued.text == "They are happy <s> and we are sad."
    punctuated = assemble(paragraph, units, ["They are happy <s>, and we are sad."])
    assert punctuated.text == "They are happy <s>, and we are sad."


def test_alternatives_come_from_other_hypotheses_at_the_same_span() -> None:
    paragraph = "He go home."
    units = plan_units(paragraph, CHARS, 100)
    edits = assemble(paragraph, units, ["He goes home."], [["He went home.", "He goes home.", "He go home!"]]).edits
    (edit,) = edits
    assert edit.replacement == "goes" and edit.alternatives == ["went"]


def test_edit_ids_are_stable_across_positions() -> None:
    a = assemble("He go.", plan_units("He go.", CHARS, 100), ["He goes."]).edits
    b = assemble(
        "Hello there. He go.", plan_units("Hello there. He go.", CHARS, 100), ["Hello there.", "He goes."]
    ).edits
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
# The same, with blanks the model sees as U+0020 (NBSP, thin space, ideographic space): normalisation
# changes the units that hold them, and an edit may still remove them.
SPACED_TEXT = st.text(
    alphabet=st.one_of(st.characters(min_codepoint=0x20, max_codepoint=0x7E), st.sampled_from("\u00a0\u2009\u3000")),
    max_size=80,
)


def _rebuilt(paragraph: str, edits) -> str:
    out, last = [], 0
    for edit in sorted(edits, key=lambda e: e.start):
        assert last <= edit.start and paragraph[edit.start : edit.end] == edit.original
        out += [paragraph[last : edit.start], edit.replacement]
        last = edit.end
    return "".join([*out, paragraph[last:]])


@settings(max_examples=300, deadline=None)
@given(SPACED_TEXT.filter(lambda text: not find_protected(text).spans), st.data())
def test_assembled_text_equals_units_replaced(paragraph: str, data) -> None:
    """Each unit's text becomes the model's output for it with the rule stage's edits (``with_rules``; up to the
    blanks the model sees as spaces, which stay as they were where unedited), or the rule stage's edits alone where
    the guard drops that output; a unit left alone keeps its source exactly. (Protected spans, which no edit touches:
    test_any_unicode.py and below.)"""
    units = plan_units(paragraph, CHARS, 30)
    corrected_units = [
        data.draw(st.one_of(st.just(unit.normalized.text), EDITABLE_TEXT.filter(lambda t: len(t) <= 20)))
        for unit in units
    ]
    assembled = assemble(paragraph, units, corrected_units)
    corrected, edits = assembled.text, assembled.edits
    outputs = [
        text if guard.degenerate(unit.text, text) is None else None
        for unit, text in zip(units, corrected_units, strict=True)
    ]
    assert len(assembled.dropped) == outputs.count(None)
    kept = [with_rules(unit, text, paragraph)[0] for unit, text in zip(units, outputs, strict=True)]
    assert _rebuilt(paragraph, edits) == corrected
    assert normalize(corrected).text == normalize(_units_replaced(paragraph, units, kept)).text
    for unit, text in zip(units, kept, strict=True):
        if text == unit.normalized.text:
            end = unit.start + len(unit.normalized.source)
            assert not [e for e in edits if e.start < end and e.end > unit.start], "an unchanged unit was edited"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.data())
def test_characters_the_model_cannot_write_are_never_edited(paragraph: str, data) -> None:
    """Any Unicode in, any output from the model: edits rebuild the text, and an edit never touches or
    writes a character outside what the model reads (so such characters come back as they were)."""
    units = plan_units(paragraph, CHARS, 30)
    corrected_units = [data.draw(st.text(max_size=20)) for _ in units]
    assembled = assemble(paragraph, units, corrected_units)
    corrected, edits = assembled.text, assembled.edits
    out, last = [], 0
    for edit in edits:
        assert paragraph[edit.start : edit.end] == edit.original
        assert editable(edit.original) and editable(edit.replacement)
        out += [paragraph[last : edit.start], edit.replacement]
        last = edit.end
    assert "".join([*out, paragraph[last:]]) == corrected
    kept = [c for c in paragraph if not editable(c)]
    assert [c for c in corrected if not editable(c)] == kept


def test_special_token_spellings_are_never_edited() -> None:
    """The model rewrites ``</s>`` (to ``_/s>``, say): that edit is dropped, the others are kept, and
    so is an insertion next to a spelling; one inside it is dropped."""
    paragraph = "I go to school </s> every days. They is <pad> happy.\n<s>We go home."
    units = plan_units(paragraph, CHARS, 100)
    outputs = ["I went to school _/s> every day.", "They are <pad> very happy.", "The <s>We went home."]
    assembled = assemble(paragraph, units, outputs)
    assert assembled.text == "I went to school </s> every day. They are <pad> very happy.\nThe <s>We went home."
    assert [(e.original, e.replacement) for e in assembled.edits] == [
        ("go", "went"),
        ("days", "day"),
        ("is", "are"),
        ("", "very "),
        ("", "The "),
        ("go", "went"),
    ]
    assert assemble("a <s> b", plan_units("a <s> b", CHARS, 100), ["a <xs> b"]).edits == []


def test_no_edit_touches_a_protected_span_and_none_is_glued_to_an_atom() -> None:
    """The model reads a placeholder for a URL and a number as written: an edit of either is dropped, and so is a
    word inserted next to the URL; the words around them are corrected."""
    paragraph = "Please visit https://example.com/a?b=1 if you has 2 question."
    (unit,) = plan_units(paragraph, CHARS, 100)
    assert unit.normalized.text == "Please visit NASA if you has 2 question."
    output = "Please visit the NASAs page if you have 3 questions."
    assembled = assemble(paragraph, [unit], [output])
    assert assembled.text == "Please visit https://example.com/a?b=1 if you have 2 questions."


def _spell(text: str) -> list[Edit]:
    """A stand-in spelling stage with the real contract: whole-word replacements on the text's offsets."""
    return [
        Edit(m.start(), m.end(), m.group(), "studies" if m.group() == "studys" else "the")
        for m in re.finditer(r"\bteh\b|\bstudys\b", text)
    ]


def test_spelling_replacements_are_typed_spelling_where_the_model_keeps_them() -> None:
    """The model reads the spelled text; the edits are the diff of the original and the model's output, so a
    replacement it keeps is an edit of type spelling on the original offsets (past an NBSP and a zero-width space),
    and one it undoes is no edit."""
    paragraph = "I saw\u00a0\u200bteh cat. He studys teh maths."
    units = plan_units(paragraph, CHARS, 30, _spell)
    assert [u.text for u in units] == ["I saw the cat.", "He studies the maths."]
    assert all(u.tokens == CHARS.encode(u.text) for u in units)
    outputs = [units[0].text, "He studies teh maths."]  # the model undoes the second "the"
    assembled = assemble(paragraph, units, outputs)
    corrected, edits = assembled.text, assembled.edits
    assert corrected == "I saw\u00a0\u200bthe cat. He studies teh maths."
    assert [(e.original, e.replacement, e.type, paragraph[e.start : e.end]) for e in edits] == [
        ("teh", "the", "spelling", "teh"),
        ("studys", "studies", "spelling", "studys"),  # classify alone would call this grammar
    ]
    assert classify(Edit(0, 6, "studys", "studies")) == "grammar"


def test_text_the_model_cannot_read_is_not_spelled() -> None:
    units = plan_units("Привет teh мир.", CHARS, 30, _spell)
    assert units[0].text == units[0].normalized.text and not units[0].spelling


# -- forms kept as written, whatever the model writes over them -----------------------------------------------------

FRAME_WORDS = frozenset({"He", "home", "with", "and", "they", "happy", "so", "we", "left", "together", "it"})


def _rewriting(text: str) -> str:
    """A model that rewrites every word it reads but the frame's (its first letter's case swapped), drops every
    backslash and the blank before a colon, and corrects the frame's errors ("go", "was")."""

    def word(match: re.Match[str]) -> str:
        found = match.group()
        fixes = {"go": "goes", "was": "were"}
        return fixes.get(found, found if found in FRAME_WORDS else found[0].swapcase() + found[1:])

    return re.sub(r"[^\W\d_]+", word, text).replace("\\", "").replace(" :", ":")


def _corrected(paragraph: str) -> str:
    units = plan_units(paragraph, CHARS, 200)
    return assemble(paragraph, units, [_rewriting(unit.text) for unit in units]).text


FORMS = [
    *test_protect.WINDOWS_PATHS,
    *[f" {emoticon}" for emoticon in test_protect.EMOTICONS],
    *[
        f"{left}{quotation}{right}"
        for quotation in test_protect.FOREIGN_QUOTATIONS
        for left, right in test_protect.QUOTES
    ],
    *["[the changelog](https://example.com/changes)", "[our docs][1]", "[recieve *this* page](x.html)"],
]


@pytest.mark.parametrize("form", FORMS)
def test_every_form_kept_as_written_comes_out_whole_while_its_sentence_is_corrected(form: str) -> None:
    """A Windows path, an emoticon with the blank before it, a quotation in another language, a link's text."""
    corrected = _corrected(f"He go home with {form} and they was happy, so we left it.\n\n[1]: https://x.io")
    assert form in corrected and "He goes home" in corrected and "they were happy" in corrected, corrected


@pytest.mark.parametrize("item", test_protect.LIST_ITEMS)
@pytest.mark.parametrize("word", ["recieve", "Instal", "go"])
def test_a_list_item_s_first_word_comes_out_as_written(item: str, word: str) -> None:
    paragraph = "\n".join(item.format(f"{word} with it and they was happy") for _ in range(3))
    corrected = _corrected(paragraph)
    assert corrected.count(word) == 3 and corrected.count("they were happy") == 3, corrected


@settings(max_examples=100, deadline=None)
@given(test_protect.windows_paths, st.sampled_from(test_protect.EMOTICONS), test_protect.link_text.map(" ".join))
def test_generated_paths_emoticons_and_link_texts_come_out_whole(path: str, emoticon: str, words: str) -> None:
    paragraph = f"He go home with {path} and they was happy {emoticon} so we read [{words}](x.html) together."
    corrected = _corrected(paragraph)
    for form in (path, f" {emoticon}", f"[{words}](x.html)"):
        assert form in corrected, (form, corrected)
    assert "He goes home" in corrected


@pytest.mark.parametrize(
    ("paragraph", "output"),
    [
        ("His name is Peter, he is my friend.", "His name is Peter, He is my friend."),
        ("We came early and the room was empty.", "We came early and The room was empty."),
    ],
)
def test_a_function_word_inside_a_sentence_is_not_capitalised(paragraph: str, output: str) -> None:
    units = plan_units(paragraph, CHARS, 100)
    assert assemble(paragraph, units, [output]).edits == []


def test_a_capital_after_a_sentence_s_end_the_output_makes_stands() -> None:
    paragraph = "I want my money back, it was a bad evening."
    units = plan_units(paragraph, CHARS, 100)
    output = "I want my money back. It was a bad evening."
    assert assemble(paragraph, units, [output]).text == output


def test_a_capital_after_a_sentence_s_end_or_for_i_stands() -> None:
    paragraph = "He said: the end. so i left."
    units = plan_units(paragraph, CHARS, 100)
    assert assemble(paragraph, units, ["He said: The end. So I left."]).text == "He said: The end. So I left."
