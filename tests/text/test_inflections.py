"""Irregular verbs written as if regular: the forms read as their verb's past and participle, the participle after
"have" or "be"; no form is one of the table's own words (the speller on every form: ``test_spelling.py``)."""

from __future__ import annotations

import pytest

from service.text.inflections import VerbForms, _table, irregular_forms

FORMS = sorted(_table())


@pytest.mark.parametrize(
    ("typed", "past", "participle"),
    [
        ("runned", "ran", "run"),
        ("ranned", "ran", "run"),
        ("eated", "ate", "eaten"),
        ("ated", "ate", "eaten"),
        ("buyed", "bought", "bought"),
        ("teached", "taught", "taught"),
        ("goed", "went", "gone"),
        ("wented", "went", "gone"),
        ("swimmed", "swam", "swum"),
        ("forgetted", "forgot", "forgotten"),
        ("taked", "took", "taken"),
        ("flyed", None, None),  # "fly" is "flied" as English spells -ed: "flyed" is not its form
    ],
)
def test_regular_looking_forms_read_as_the_verb(typed: str, past: str | None, participle: str | None) -> None:
    assert irregular_forms(typed) == (VerbForms(past, participle) if past else None)


@pytest.mark.parametrize("before", ["have", "has", "had", "was", "been", "is", "got", "i've", "he's", "they're"])
def test_the_participle_after_have_or_be(before: str) -> None:
    assert irregular_forms("eated").after(before) == "eaten"


@pytest.mark.parametrize("before", ["i", "he", "they", "and", "never", "<s>"])
def test_the_past_elsewhere(before: str) -> None:
    assert irregular_forms("eated").after(before) == "ate"


def test_no_form_is_a_base_or_a_past_of_the_table_and_none_is_shared() -> None:
    """A form two verbs share (none now) would be left out, and no form is one of the table's own words."""
    forms = {(verb.past, verb.participle) for verb in _table().values()}
    words = {word for pair in forms for word in pair}
    assert not words & set(FORMS)
    assert all(form.endswith("d") for form in FORMS)
