"""One function per learner error type: ``(tokens, rng) -> tokens | None``, by family in submodules.

Each function looks for the places in a tokenized sentence where its error could plausibly be
made, picks one at random (never a token an earlier edit produced), and returns a new token list
with the error applied, or ``None`` when the sentence offers no such place. The input list is
never modified. Patterns follow what learners actually write (W&I+LOCNESS, FCE): "discuss about",
"he go", "has went", "informations", "I am agree", "can also" -> "also can", missing commas, ...

``ERROR_FUNCTIONS`` names them all; the word lists they draw on are in :mod:`models.gec.noise.words`,
their shared helpers in :mod:`.common` (sampling, token access) and :mod:`.context` (grammar tests).
"""

from __future__ import annotations

from models.gec.noise.errors.common import ErrorFn, T, Tokens
from models.gec.noise.errors.confusions import confusion, word_choice
from models.gec.noise.errors.contractions import contraction
from models.gec.noise.errors.determiners import det_extra, det_missing, det_wrong
from models.gec.noise.errors.misspelling import misspell, spelling
from models.gec.noise.errors.morphology import adj_form, morph
from models.gec.noise.errors.nouns import noun_number
from models.gec.noise.errors.orthography import capitalisation, spacing
from models.gec.noise.errors.prepositions import prep_extra, prep_missing, prep_wrong
from models.gec.noise.errors.pronouns import pronoun_missing, pronoun_wrong
from models.gec.noise.errors.punctuation import punct_extra, punct_missing, punct_wrong
from models.gec.noise.errors.verbs import verb_form, verb_sva, verb_tense
from models.gec.noise.errors.word_edits import extra_word, missing_word, repeated_word, word_order

ERROR_FUNCTIONS: dict[str, ErrorFn] = {
    "det_missing": det_missing,
    "det_extra": det_extra,
    "det_wrong": det_wrong,
    "prep_missing": prep_missing,
    "prep_extra": prep_extra,
    "prep_wrong": prep_wrong,
    "verb_sva": verb_sva,
    "verb_form": verb_form,
    "verb_tense": verb_tense,
    "noun_number": noun_number,
    "pronoun_wrong": pronoun_wrong,
    "pronoun_missing": pronoun_missing,
    "spelling": spelling,
    "confusion": confusion,
    "word_choice": word_choice,
    "morph": morph,
    "adj_form": adj_form,
    "punct_missing": punct_missing,
    "punct_extra": punct_extra,
    "punct_wrong": punct_wrong,
    "capitalisation": capitalisation,
    "spacing": spacing,
    "missing_word": missing_word,
    "extra_word": extra_word,
    "repeated_word": repeated_word,
    "word_order": word_order,
    "contraction": contraction,
}
"""Every error type the generator knows, by name."""

__all__ = [
    "ERROR_FUNCTIONS",
    "ErrorFn",
    "T",
    "Tokens",
    "adj_form",
    "capitalisation",
    "confusion",
    "contraction",
    "det_extra",
    "det_missing",
    "det_wrong",
    "extra_word",
    "missing_word",
    "misspell",
    "morph",
    "noun_number",
    "prep_extra",
    "prep_missing",
    "prep_wrong",
    "pronoun_missing",
    "pronoun_wrong",
    "punct_extra",
    "punct_missing",
    "punct_wrong",
    "repeated_word",
    "spacing",
    "spelling",
    "verb_form",
    "verb_sva",
    "verb_tense",
    "word_choice",
    "word_order",
]
