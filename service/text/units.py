"""Paragraphs to model units and back.

A unit is one sentence (or one piece of a sentence longer than the model's maximum) as the
model sees it: its view (``normalize.model_view``: normalised, markdown syntax and characters the
model cannot read left out, URLs, e-mail, code and the like read as one placeholder word), the
spelling stage's word replacements on it, the text the model reads (both together), its token ids,
where it sits in the original paragraph, the protected spans around it (``service.text.protect``) and
the words the model may not rewrite (names, terms: ``policy.fixed_words``). A unit the model cannot read
(``service.text.script``), or in another language (``service.text.language``), is not decoded (nor spelled): its
text is its output.

``assemble`` turns the model's corrected unit texts into typed edits on the original paragraph and
the corrected paragraph. An output the guard (``service.text.guard``) finds degenerate is dropped
whole (the sentence stays as written, and the reason is reported). Otherwise the diff of the view
and the output is the only source of edits, keeping only those of characters the model reads and
none that touches a protected span or rewrites a fixed word: so a spelling replacement is an edit only where the
model's output keeps it, and is typed ``spelling`` when it comes out as the stage made it. Each edit also has its
ERRANT category (``service.text.categories``; ``R:SPELL`` for the spelling stage's) and a message for the writer
(``service.text.messages``), both read with the paragraph around it, and its confidence (``service.text.confidence``,
from the model's token log-probabilities where the decoding recorded them); edits under the threshold of ``Scoring``
are held back, neither returned nor applied.

The rule stage (``service.text.grammar_rules``) reads every unit the model reads, beside the model: its edits that
no edit of the model touches join the model's output before the diff (``with_rules``), so an edit both make is one
edit, and each rule edit has its category, message and a confidence of at least its kind's measured precision as the
model's have. Where the guard drops the model's output, the rule edits alone are the unit's.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from service.text import guard
from service.text.categories import categorize, word_class
from service.text.classify import classify, plausible_alternative
from service.text.confidence import (
    UNCALIBRATED,
    Channel,
    ConfidenceModel,
    EditEvidence,
    TokenScores,
    unit_evidence,
)
from service.text.dialects import swaps_dialect
from service.text.edits import Edit, apply_edits, extract_edits, map_edits
from service.text.grammar_rules import RULE_KINDS, find_rule_edits
from service.text.messages import explain
from service.text.ngrams import NgramModel
from service.text.normalize import Normalized, model_view, source_span
from service.text.policy import fixed_words, required, rewrites_fixed
from service.text.protect import Kind, Span, find_protected
from service.text.script import editable, reads_as_english
from service.text.segment import Sentence, split_long, split_sentences

CONTEXT_CHARS = 120  # of the paragraph either side of an edit, read for its category and message
SPELLING_STAGE = "R:SPELL"  # the category of the spelling stage's edits
_SENTENCE_END = ".!?"  # what ends the text before a unit that starts a sentence


@dataclass(frozen=True)
class Unit:
    """One model input: a sentence or a piece of a long one."""

    sentence: int  # sentence index in the paragraph (pieces of one long sentence share it)
    start: int  # code-point offset of the unit in the paragraph
    normalized: Normalized  # the model's view of the unit (``normalize.model_view``)
    spelling: tuple[Edit, ...]  # the spelling stage's replacements, on ``normalized.text`` offsets
    text: str  # what the model reads: ``normalized.text`` with ``spelling`` applied
    tokens: list[int]  # of ``text``
    readable: bool  # English the model can read (``script.reads_as_english`` and ``language``)
    protected: tuple[Span, ...] = ()  # the paragraph's protected spans in or next to the unit's sentence
    # the words of ``normalized.text`` the model may not rewrite (names, jargon: ``policy.fixed_words``)
    fixed: tuple[tuple[int, int], ...] = ()

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
    category: str = "R:OTHER"  # ERRANT's operation and category (``service.text.categories``)
    message: str = ""  # what it tells the writer (``service.text.messages``)
    confidence: float = 1.0  # the probability that it is right (``service.text.confidence``)
    evidence: EditEvidence | None = None  # what its confidence was read from


Spell = Callable[[str], list[Edit]]
"""The spelling stage: word replacements on a normalised text (``service.text.spelling.Speller.corrections``)."""

English = Callable[[str, Sequence[tuple[int, int]]], list[bool]]
"""Which sentences of a paragraph are English (``service.text.language.LanguageIdentifier.english_sentences``)."""

Known = Callable[[str], bool]
"""Whether the model may rewrite a lowercase word: a real word, or a misspelling with a close candidate
(``service.text.spelling.Speller.may_rewrite``)."""


class Codec(Protocol):
    """What planning needs of the model's tokenizer (``engine.tokenization.TextCodec``)."""

    def encode(self, text: str) -> list[int]: ...

    def token_ends(self, text: str) -> list[int]: ...


def plan_units(
    paragraph: str,
    codec: Codec,
    max_tokens: int,
    spell: Spell | None = None,
    english: English | None = None,
    known: Known | None = None,
) -> list[Unit]:
    """Find the protected spans, split the paragraph into sentences, take each one's view, spell it (when ``spell``
    is given) and tokenize it, and cut any over ``max_tokens`` into pieces. A sentence is read when its letters are
    mostly Latin (``script.reads_as_english``) and ``english``, asked about those only, says it is English. Where
    ``known`` tells real words, each unit's words the model may not rewrite are found (``policy.fixed_words``).
    Linear in the paragraph's length."""
    protection = find_protected(paragraph)
    spans = protection.spans
    span_ends = [span.end for span in spans]
    sentences = split_sentences(paragraph, protection)
    near = [tuple(_near(spans, span_ends, s.start, s.end)) for s in sentences]
    readable = [reads_as_english(_prose(s.text, around, s.start)) for s, around in zip(sentences, near, strict=True)]
    latin = [i for i, ok in enumerate(readable) if ok]
    if english is not None and latin:
        verdicts = english(_prose(paragraph, spans), [(sentences[i].start, sentences[i].end) for i in latin])
        for i, verdict in zip(latin, verdicts, strict=True):
            readable[i] = verdict
    units: list[Unit] = []
    for index, sentence in enumerate(sentences):
        view = model_view(paragraph, sentence.start, sentence.end, near[index])
        tokens = codec.encode(view.text)
        if len(tokens) <= max_tokens:
            units.append(_unit(index, sentence.start, view, codec, spell, known, readable[index], near[index], tokens))
            continue
        whole = Sentence(0, len(view.text), view.text)
        for piece in split_long(whole, codec.token_ends, max_tokens):
            piece_view, offset = _piece(view, piece.start, piece.end)
            unit = _unit(index, sentence.start + offset, piece_view, codec, spell, known, readable[index], near[index])
            units.append(replace(unit, tokens=unit.tokens[:max_tokens]))
    return units


def _near(spans: Sequence[Span], ends: Sequence[int], start: int, end: int) -> list[Span]:
    """The spans in ``[start, end]`` or touching it (``ends``: each span's end, for the search)."""
    found = []
    for span in spans[bisect.bisect_left(ends, start) :]:
        if span.start > end:
            break
        found.append(span)
    return found


def _prose(text: str, spans: Sequence[Span], offset: int = 0) -> str:
    """``text`` (at ``offset`` in the paragraph) with the masked and kept spans blanked: what language and script
    are judged on (the same length)."""
    parts, position = [], 0
    for span in spans:
        a, b = max(span.start - offset, position), min(span.end - offset, len(text))
        if span.kind is Kind.HIDE or a >= b:
            continue
        parts += [text[position:a], " " * (b - a)]
        position = b
    parts.append(text[position:])
    return "".join(parts)


def _piece(view: Normalized, start: int, end: int) -> tuple[Normalized, int]:
    """The view of ``view.text[start:end]``, and where its source starts in ``view.source``."""
    source_start, source_end = source_span(view, start, end)
    to_source = [position - source_start for position in view.to_source[start:end]]
    return Normalized(
        view.text[start:end], [*to_source, source_end - source_start], view.source[source_start:source_end]
    ), source_start


def _unit(
    index: int,
    start: int,
    normalized: Normalized,
    codec: Codec,
    spell: Spell | None,
    known: Known | None,
    readable: bool,
    protected: tuple[Span, ...],
    tokens: list[int] | None = None,
) -> Unit:
    """The unit of ``normalized``; ``tokens``: its text's, where already encoded (they stand unless spelled)."""
    spelling = spell(normalized.text) if spell is not None and readable else []
    text = apply_edits(normalized.text, spelling)
    if spelling or tokens is None:
        tokens = codec.encode(text)
    fixed = fixed_words(normalized.text, known, [(e.start, e.end) for e in spelling]) if readable and known else []
    return Unit(index, start, normalized, tuple(spelling), text, tokens, readable, protected, tuple(fixed))


Key = tuple[int, int, str]
"""An edit of a unit's view as merged: its start, end and replacement."""


def with_rules(
    unit: Unit, corrected: str | None, paragraph: str, held: frozenset[Key] = frozenset()
) -> tuple[str, dict[Key, float]]:
    """``corrected`` (the model's output for ``unit``; None: the guard dropped it) with the rule stage's edits
    (``service.text.grammar_rules``) that no edit of the model touches, and the confidence of each rule edit by its
    key on the unit's view. Where the model changes a word a rule read, the model's edit stands and the rule's is
    dropped, unless the model's edit is one of ``held`` (the threshold holds it back), or changes the very word the
    rule changes where the rule's kind is ``over_model``: then the rule's edit stands and the model's is left out.
    Where both make the same edit, it is one edit. Text the model does not read gets no rule edit."""
    view = unit.normalized.text
    output = view if corrected is None else corrected
    if not unit.decoded_by_model:
        return output, {}
    before = unit.start  # the paragraph's last character before the unit, spaces aside (no copy of the paragraph)
    while before and paragraph[before - 1].isspace():
        before -= 1
    rules = find_rule_edits(view, not before or paragraph[before - 1] in _SENTENCE_END)
    if not rules:  # most sentences: the model's output is not diffed here as well as by the assembly
        return output, {}
    model_edits = extract_edits(view, output)
    made = {_key(e) for e in model_edits}
    taken: list[Edit] = []
    confidences: dict[Key, float] = {}
    for rule in rules:
        kind = RULE_KINDS[rule.kind]
        own = extract_edits(view, apply_edits(view, [Edit(rule.start, rule.end, rule.original, rule.replacement)]))
        keys = {_key(e) for e in own}
        if keys <= made:
            confidences.update(dict.fromkeys(keys, kind.confidence))
            continue
        start, end = min(e.start for e in own), max(e.end for e in own)
        lo, hi = min(rule.context[0], start), max(rule.context[1], end)
        read = [e for e in model_edits if _overlaps(e, lo, hi)]
        overruled = {_key(e) for e in read if e.start < end and e.end > start} if kind.over_model else set()
        if any(_key(e) not in held | overruled for e in read) or any(_overlaps(e, start, end) for e in taken):
            continue  # the model changed what the rule read; or another rule's edit touches this one
        model_edits = [e for e in model_edits if e not in read]
        taken += own
        confidences.update(dict.fromkeys(keys, kind.confidence))
    if not taken:
        return output, confidences
    return apply_edits(view, sorted([*model_edits, *taken], key=lambda e: (e.start, e.end))), confidences


def _key(edit: Edit) -> Key:
    return edit.start, edit.end, edit.replacement


def _overlaps(edit: Edit, start: int, end: int) -> bool:
    """Whether ``edit`` changes or inserts into ``[start, end]`` (an insertion at either end counts)."""
    return edit.start <= end and edit.end >= start


def edit_id(unit: Unit, edit: Edit) -> str:
    """Stable while the sentence is unchanged: a hash of the sentence text and the edit within it."""
    key = f"{unit.normalized.text}\x00{edit.start - unit.start}\x00{edit.original}\x00{edit.replacement}"
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def _mapped(unit: Unit, corrected: str) -> list[tuple[Edit, Edit, bool]]:
    """The unit's edits, each on the unit's view and on paragraph offsets, with whether it is one the spelling stage
    made, without those touching characters the model cannot read, a protected span, or a word the model may not
    rewrite (``Unit.fixed``): an edit of several words that rewrites one is taken word for word, so that the words
    beside it are still corrected ("expresse themself" -> "express themselves" keeps "themselves")."""
    edits: list[Edit] = []
    shift = 0  # where the output stands against the view, before each edit
    for edit in extract_edits(unit.normalized.text, corrected):
        capital = _capitalises_mid_sentence(corrected[: edit.start + shift], edit)
        shift += len(edit.replacement) - len(edit.original)
        if capital:
            continue
        edits += [edit] if _may_change(unit, edit) else [p for p in _word_for_word(edit) if _may_change(unit, p)]
    mapped = map_edits(edits, unit.normalized, unit.start)
    return [
        (edit, on_paragraph, edit in unit.spelling)
        for edit, on_paragraph in zip(edits, mapped, strict=True)
        if editable(on_paragraph.original)
        and editable(on_paragraph.replacement)
        and not _touches(on_paragraph, unit.protected)
    ]


def _may_change(unit: Unit, edit: Edit) -> bool:
    """Whether ``edit`` (on the unit's view) keeps the writer's dialect (``dialects.swaps_dialect``), and is the
    spelling stage's or rewrites none of the unit's fixed words."""
    if swaps_dialect(edit.original, edit.replacement):
        return False
    fixed = unit.fixed
    return edit in unit.spelling or not rewrites_fixed(edit.start, edit.end, edit.original, edit.replacement, fixed)


_FUNCTION_CLASSES = frozenset({"PRON", "DET", "ADP", "AUX", "CCONJ", "SCONJ", "PART"})
_OPENS_A_SENTENCE = frozenset('.!?:"\u201c\u201d')  # what a capital may follow


def _capitalises_mid_sentence(output_before: str, edit: Edit) -> bool:
    """Whether ``edit`` only capitalises a function word (not "i") inside a sentence of the output (whose text before
    the edit is ``output_before``): the second clause of a comma splice stays in lowercase ("his name is Peter, he
    is" did become "Peter, He is"), while "back, it" -> "back. It" stands."""
    original, replacement = edit.original, edit.replacement
    if original.lower() != replacement.lower() or not (original[:1].islower() and replacement[:1].isupper()):
        return False
    before = output_before.rstrip()
    first = original.split(" ")[0].lower()
    return (
        bool(before) and before[-1] not in _OPENS_A_SENTENCE and first != "i" and word_class(first) in _FUNCTION_CLASSES
    )


def _word_for_word(edit: Edit) -> list[Edit]:
    """``edit`` as one edit a word where both sides have as many words, separated alike; else ``edit`` alone."""
    old, new = edit.original.split(" "), edit.replacement.split(" ")
    if len(old) < 2 or len(old) != len(new):
        return [edit]
    parts, position = [], edit.start
    for before, after in zip(old, new, strict=True):
        if before != after:
            parts.append(Edit(position, position + len(before), before, after))
        position += len(before) + 1
    return parts


def _touches(edit: Edit, spans: Sequence[Span]) -> bool:
    """Whether ``edit`` changes or splits one of ``spans`` (an insertion at either end leaves it whole), glues a
    letter or digit onto one ("<s>" -> "<s>ts"), or, for a glued span, ends where it starts or starts where it ends."""
    for span in spans:
        if span.glued and edit.start <= span.end and edit.end >= span.start:
            return True
        if (edit.start == span.end and edit.replacement[:1].isalnum()) or (
            edit.end == span.start and edit.replacement[-1:].isalnum()
        ):
            return True
        if edit.start < edit.end and edit.start < span.end and edit.end > span.start:
            return True
        if edit.start == edit.end and span.start < edit.start < span.end:
            return True
    return False


def explained(paragraph: str, edit: Edit, spelled: bool = False) -> tuple[str, str]:
    """The ERRANT code and the message of ``edit`` of ``paragraph`` (read with up to ``CONTEXT_CHARS`` either side);
    ``spelled``: the spelling stage made it (``R:SPELL``)."""
    before = paragraph[max(0, edit.start - CONTEXT_CHARS) : edit.start]
    after = paragraph[edit.end : edit.end + CONTEXT_CHARS]
    code = SPELLING_STAGE if spelled else categorize(edit.original, edit.replacement, before, after)
    return code, explain(code, edit.original, edit.replacement, before, after)


@dataclass(frozen=True)
class Scoring:
    """How ``assemble`` gives each edit its confidence and which it keeps: ``model`` combines the evidence, ``lm``
    scores sentences with and without each edit, ``channel`` tells how likely learners make a misspelling, and edits
    under ``threshold`` times their class's multiplier (``policy.required``) are held back."""

    model: ConfidenceModel = UNCALIBRATED
    lm: NgramModel | None = None
    channel: Channel | None = None
    threshold: float = 0.0


def unit_edits(
    unit: Unit,
    corrected: str | None,
    paragraph: str,
    alternatives: Sequence[str] = (),
    scores: TokenScores | None = None,
    scoring: Scoring = Scoring(),
) -> list[TypedEdit]:
    """Edits of one unit of ``paragraph`` on its offsets, the model's (``corrected``; None where the guard dropped
    it) and the rule stage's (``with_rules``), none touching a protected span, each with its category, message (read
    with up to ``CONTEXT_CHARS`` of the paragraph either side) and confidence (from ``scores``, the model's output
    and its tokens' log-probabilities, where known; a rule edit's is at least its kind's); alternatives come from
    the other hypotheses the guard accepts, at the same span, where plausible (``classify.plausible_alternative``).
    The caller checks ``corrected`` with the guard first. A rule's edit that a model edit under the threshold
    overrode stands instead of it (``with_rules``' ``held``)."""
    merged, ruled = with_rules(unit, corrected, paragraph)
    found = _typed_edits(unit, merged, ruled, paragraph, alternatives, scores, scoring)
    held = frozenset(_key(view) for view, edit in found if not passes(edit, scoring.threshold))
    if corrected is None or not held:
        return [edit for _, edit in found]
    again, ruled = with_rules(unit, corrected, paragraph, held)
    if again != merged:
        found = _typed_edits(unit, again, ruled, paragraph, alternatives, scores, scoring)
    return [edit for _, edit in found]


def _typed_edits(
    unit: Unit,
    corrected: str,
    ruled: dict[Key, float],
    paragraph: str,
    alternatives: Sequence[str],
    scores: TokenScores | None,
    scoring: Scoring,
) -> list[tuple[Edit, TypedEdit]]:
    """The edits of ``unit`` whose view ``corrected`` becomes (the model's output merged with the rule stage's, whose
    confidences ``ruled`` holds), each on the unit's view and typed on the paragraph's offsets (``unit_edits``)."""
    edits = _mapped(unit, corrected)
    options: dict[tuple[int, int], list[str]] = {}
    for other in alternatives:
        if guard.degenerate(unit.text, other) is None:
            for _, alt, _ in _mapped(unit, other):
                options.setdefault((alt.start, alt.end), []).append(alt.replacement)
    explanations = [explained(paragraph, on_paragraph, spelled) for _, on_paragraph, spelled in edits]
    evidence = unit_evidence(
        unit.normalized.text,
        corrected,
        [edit for edit, _, _ in edits],
        [code for code, _ in explanations],
        [spelled for _, _, spelled in edits],
        scores,
        scoring.lm,
        scoring.channel,
    )
    confidences = _moves_together(
        [edit for edit, _, _ in edits],
        [
            max(scoring.model.confidence(edit, known), ruled.get(_key(edit), 0.0))
            for (edit, _, _), known in zip(edits, evidence, strict=True)
        ],
    )
    typed = []
    for (view, edit, spelled), (code, message), known, confidence in zip(
        edits, explanations, evidence, confidences, strict=True
    ):
        seen = {edit.replacement}
        alts = [
            r
            for r in options.get((edit.start, edit.end), [])
            if not (r in seen or seen.add(r)) and plausible_alternative(edit.original, edit.replacement, r)
        ]
        typed.append(
            (
                view,
                TypedEdit(
                    edit_id(unit, edit),
                    edit.start,
                    edit.end,
                    edit.original,
                    edit.replacement,
                    unit.sentence,
                    classify(edit, spelled),
                    alts,
                    code,
                    message,
                    confidence,
                    known,
                ),
            )
        )
    return typed


def _moves_together(edits: Sequence[Edit], confidences: Sequence[float]) -> list[float]:
    """``confidences`` with the parts of one move sharing the lowest: a deletion and an insertion of the same word
    in one sentence are a word moved, kept or held back together (half a move loses the word)."""
    moved: dict[str, list[int]] = {}
    for i, edit in enumerate(edits):
        for word in {*edit.original.lower().split(), *edit.replacement.lower().split()}:
            moved.setdefault(word, []).append(i)
    result = list(confidences)
    for word, indices in moved.items():
        deleted = [i for i in indices if word in edits[i].original.lower().split()]
        inserted = [i for i in indices if word in edits[i].replacement.lower().split()]
        if deleted and inserted and set(deleted) != set(inserted):
            lowest = min(result[i] for i in indices)
            for i in indices:
                result[i] = min(result[i], lowest)
    return result


@dataclass
class Assembled:
    """A paragraph's correction: the corrected text, its edits, why outputs were dropped (one reason of
    ``guard.REASONS`` per unit whose output the guard refused), and the edits held back (under the threshold:
    neither shown nor applied)."""

    text: str
    edits: list[TypedEdit]
    dropped: list[str]
    held: list[TypedEdit] = field(default_factory=list)


def assemble(
    paragraph: str,
    units: Sequence[Unit],
    corrected: Sequence[str],
    alternatives: Sequence[Sequence[str]] | None = None,
    scores: Sequence[TokenScores | None] | None = None,
    scoring: Scoring = Scoring(),
) -> Assembled:
    """The corrected paragraph and its edits, from each unit's corrected text and the rule stage's edits (outputs
    the guard refuses are dropped: their units keep only the rule stage's edits); ``scores``: each unit's model
    output with its tokens' log-probabilities, where known. Edits under ``scoring``'s threshold are held back."""
    edits: list[TypedEdit] = []
    dropped: list[str] = []
    for i, (unit, text) in enumerate(zip(units, corrected, strict=True)):
        reason = guard.degenerate(unit.text, text)
        if reason is not None:  # the model's output is dropped; the rule stage's edits stand
            dropped.append(reason)
            edits.extend(unit_edits(unit, None, paragraph, scoring=scoring))
            continue
        found = unit_edits(
            unit, text, paragraph, alternatives[i] if alternatives else (), scores[i] if scores else None, scoring
        )
        edits.extend(found)
    kept = [e for e in edits if passes(e, scoring.threshold)]
    held = [e for e in edits if not passes(e, scoring.threshold)]
    plain = [Edit(e.start, e.end, e.original, e.replacement) for e in kept]
    return Assembled(apply_edits(paragraph, plain), kept, dropped, held)


def passes(edit: TypedEdit, threshold: float) -> bool:
    """Whether ``edit``'s confidence reaches ``threshold`` times its lexical class's multiplier."""
    return threshold <= 0 or (
        edit.evidence is not None and edit.confidence >= required(edit.evidence.lexical, threshold)
    )
