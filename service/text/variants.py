"""The dialect stage: with a dialect named, the words of a paragraph spelled in another dialect's way, as edits.

``suggest_variants`` adds to a paragraph's correction (``units.Assembled``) an edit for each word of a unit the
model reads (English, readable) that the dialect spells otherwise (``dialects.replacements``): "color" ->
"colour" in British English. It leaves alone a word in a protected span (code, a URL, a quotation), one an edit
of the correction already touches, and a capitalised word inside a sentence (a name: the Labor Party); the
caller drops those of the writer's own words afterwards (``pipeline.keep_own_words``). Each edit's confidence is
the list's (``dialects.SURE`` or ``UNSURE``); those under the request's threshold are held back, as the model's
are. The case of the word is kept ("Colour" -> "Color").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from service.text.dialects import DIALECT_CODE, Dialect, replacements
from service.text.edits import Edit, apply_edits, cased_like
from service.text.messages import explain_dialect
from service.text.units import Assembled, TypedEdit, Unit, edit_id

_WORD = re.compile(r"(?<![\w'’-])[A-Za-z]+(?![\w-])")
_FIRST = re.compile(r"[^A-Za-z]*")  # what may stand before a sentence's first word


def suggest_variants(
    paragraph: str, units: Sequence[Unit], assembled: Assembled, dialect: Dialect | None, threshold: float
) -> Assembled:
    """``assembled`` with the suggestions of ``dialect`` for ``paragraph``'s ``units`` (none without a dialect),
    those under ``threshold`` held back, and its text corrected with them."""
    if dialect is None:
        return assembled
    table = replacements(dialect)
    taken = [(edit.start, edit.end) for edit in assembled.edits]
    found = [
        edit
        for unit in units
        if unit.readable
        for edit in _unit_variants(unit, table, dialect)
        if not any(start < edit.end and edit.start < end for start, end in taken)
    ]
    if not found:
        return assembled
    kept = [edit for edit in found if edit.confidence >= threshold]
    held = [edit for edit in found if edit.confidence < threshold]
    edits = sorted([*assembled.edits, *kept], key=lambda edit: edit.start)
    text = apply_edits(paragraph, [Edit(e.start, e.end, e.original, e.replacement) for e in edits])
    return Assembled(text, edits, assembled.dropped, [*assembled.held, *held])


def _unit_variants(unit: Unit, table: dict[str, tuple[str, float]], dialect: Dialect) -> list[TypedEdit]:
    """The suggestions for one unit's words, on paragraph offsets."""
    source = unit.normalized.source
    first = _FIRST.match(source).end()  # type: ignore[union-attr]
    edits = []
    for match in _WORD.finditer(source):
        word = match.group()
        found = table.get(word.lower())
        if found is None or not _cased_as_common_word(word, match.start() == first):
            continue
        start, end = unit.start + match.start(), unit.start + match.end()
        if any(span.start < end and start < span.end for span in unit.protected):
            continue
        replacement = cased_like(found[0], word)
        edits.append(
            TypedEdit(
                id=edit_id(unit, Edit(start, end, word, replacement)),
                start=start,
                end=end,
                original=word,
                replacement=replacement,
                sentence=unit.sentence,
                type="spelling",
                category=DIALECT_CODE,
                message=explain_dialect(word, replacement, dialect.name),
                confidence=found[1],
            )
        )
    return edits


def _cased_as_common_word(word: str, starts_sentence: bool) -> bool:
    """Lowercase, or capitalised at the start of its sentence: not a name, not an acronym."""
    return word.islower() or (starts_sentence and word[0].isupper() and word[1:].islower())
