"""Paragraphs to model units and back.

A unit is one sentence (or one piece of a sentence longer than the model's maximum) as the
model sees it: normalised text, the spelling stage's word replacements on it, the text the
model reads (both together), its token ids, and where it sits in the original paragraph. A
unit the model cannot read (``service.text.script``) is not decoded (nor spelled): its text is
its output. ``assemble`` turns the model's corrected unit texts into typed edits on the
original paragraph and the corrected paragraph, keeping only edits of characters the model
reads: the diff of the normalised text and the model's output is the only source of edits, so
a spelling replacement is an edit only where the model's output keeps it, and is typed
``spelling`` when it comes out as the stage made it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from service.text.classify import classify
from service.text.edits import Edit, apply_edits, extract_edits, map_edits
from service.text.normalize import Normalized, normalize
from service.text.script import editable, protected_spans, reads_as_english
from service.text.segment import split_long, split_sentences


@dataclass(frozen=True)
class Unit:
    """One model input: a sentence or a piece of a long one."""

    sentence: int  # sentence index in the paragraph (pieces of one long sentence share it)
    start: int  # code-point offset of the unit in the paragraph
    normalized: Normalized
    spelling: tuple[Edit, ...]  # the spelling stage's replacements, on ``normalized.text`` offsets
    text: str  # what the model reads: ``normalized.text`` with ``spelling`` applied
    tokens: list[int]  # of ``text``
    readable: bool  # ``normalized.text`` reads as English (``service.text.script.reads_as_english``)

    @property
    def decoded_by_model(self) -> bool:
        """False for text the model cannot read (it passes through unchanged)."""
        return self.readable and bool(self.tokens)


@dataclass(frozen=True)
class TypedEdit:
    """An edit of the original paragraph (code-point offsets) with its id, category and alternatives."""

    id: str
    start: int
    end: int
    original: str
    replacement: str
    sentence: int
    type: str
    alternatives: list[str] = field(default_factory=list)


Spell = Callable[[str], list[Edit]]
"""The spelling stage: word replacements on a normalised text (``service.text.spelling.Speller.corrections``)."""


def plan_units(
    paragraph: str, encode: Callable[[str], list[int]], max_tokens: int, spell: Spell | None = None
) -> list[Unit]:
    """Split a paragraph into sentences, normalise, spell (when ``spell`` is given) and tokenize each, and split
    any over ``max_tokens``."""
    units: list[Unit] = []
    for index, sentence in enumerate(split_sentences(paragraph)):
        unit = _unit(index, sentence.start, normalize(sentence.text), encode, spell)
        if len(unit.tokens) <= max_tokens:
            units.append(unit)
            continue
        for piece in split_long(sentence, lambda text: len(encode(normalize(text).text)), max_tokens):
            piece_unit = _unit(index, piece.start, normalize(piece.text), encode, spell)
            units.append(replace(piece_unit, tokens=piece_unit.tokens[:max_tokens]))
    return units


def _unit(
    index: int, start: int, normalized: Normalized, encode: Callable[[str], list[int]], spell: Spell | None
) -> Unit:
    readable = reads_as_english(normalized.text)
    spelling = spell(normalized.text) if spell is not None and readable else []
    text = apply_edits(normalized.text, spelling)
    return Unit(index, start, normalized, tuple(spelling), text, encode(text), readable)


def _edit_id(unit: Unit, edit: Edit) -> str:
    """Stable while the sentence is unchanged: a hash of the sentence text and the edit within it."""
    key = f"{unit.normalized.text}\x00{edit.start - unit.start}\x00{edit.original}\x00{edit.replacement}"
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def _mapped(unit: Unit, corrected: str, protected: Sequence[tuple[int, int]]) -> list[tuple[Edit, bool]]:
    """The unit's edits on paragraph offsets, each with whether it is one the spelling stage made, without
    those touching characters the model cannot read or the ``protected`` spans of the paragraph
    (special-token spellings)."""
    edits = extract_edits(unit.normalized.text, corrected)
    spelled = [edit in unit.spelling for edit in edits]
    mapped = map_edits(edits, unit.normalized, unit.start)
    return [
        (edit, spell)
        for edit, spell in zip(mapped, spelled, strict=True)
        if editable(edit.original) and editable(edit.replacement) and not _touches(edit, protected)
    ]


def _touches(edit: Edit, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether ``edit`` changes or splits one of ``spans`` (an insertion at either end leaves it whole)."""
    return any(
        edit.start < end and edit.end > start if edit.start < edit.end else start < edit.start < end
        for start, end in spans
    )


def unit_edits(
    unit: Unit, corrected: str, alternatives: Sequence[str] = (), protected: Sequence[tuple[int, int]] = ()
) -> list[TypedEdit]:
    """Edits of one unit on paragraph offsets, none touching the ``protected`` spans of the paragraph;
    alternatives come from other hypotheses at the same span."""
    edits = _mapped(unit, corrected, protected)
    options: dict[tuple[int, int], list[str]] = {}
    for other in alternatives:
        for alt, _ in _mapped(unit, other, protected):
            options.setdefault((alt.start, alt.end), []).append(alt.replacement)
    typed = []
    for edit, spelled in edits:
        seen = {edit.replacement}
        alts = [r for r in options.get((edit.start, edit.end), []) if not (r in seen or seen.add(r))]
        typed.append(
            TypedEdit(
                _edit_id(unit, edit),
                edit.start,
                edit.end,
                edit.original,
                edit.replacement,
                unit.sentence,
                classify(edit, spelled),
                alts,
            )
        )
    return typed


def assemble(
    paragraph: str, units: Sequence[Unit], corrected: Sequence[str], alternatives: Sequence[Sequence[str]] | None = None
) -> tuple[str, list[TypedEdit]]:
    """The corrected paragraph and its edits, from each unit's corrected text."""
    edits: list[TypedEdit] = []
    protected = protected_spans(paragraph)  # of the paragraph: a long sentence's pieces may cut one
    for i, (unit, text) in enumerate(zip(units, corrected, strict=True)):
        edits.extend(unit_edits(unit, text, alternatives[i] if alternatives else (), protected))
    plain = [Edit(e.start, e.end, e.original, e.replacement) for e in edits]
    return apply_edits(paragraph, plain), edits
