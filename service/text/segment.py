"""Sentence splitting of a paragraph into exact code-point spans, and cutting of over-long sentences.

Line breaks (``\\r\\n``, ``\\n``, ``\\r`` and the other ``str.splitlines`` breaks) always end a sentence. Inside a
line the cut points come from Bling Fire (``blingfire``; chosen over ``pysbd`` with ``tools/compare_segmenters.py``: on
learner essays slightly more accurate and about 25 times faster). The library only proposes cut positions: the spans
are always cut from the original string here, so offsets are exact whatever the library does with emoji, CJK,
combining marks or odd whitespace. Sentences never start or end with blank characters (whitespace, zero-width space,
word joiner, BOM); blank-only text yields no sentence.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import blingfire

from service.text.protect import Kind, Protection, Span
from service.text.script import unreadable_runs

# The breaks of str.splitlines; "\r\n" first so that it counts as one break.
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# Characters the native library must not see (NUL ends its C string, lone surrogates cannot be UTF-8 encoded);
# replaced one-for-one so that code-point offsets are unchanged.
_UNSAFE_FOR_LIBRARY = re.compile("[\x00\ud800-\udfff]")
_INVISIBLE_BLANKS = frozenset("\u200b\u2060\ufeff")
_BLANK_RUN = re.compile(r"\s{2,}")
# Punctuation after which split_long prefers to cut (when followed by a blank); CJK forms need no blank.
_CLAUSE_PUNCT = frozenset(",;:")
_CJK_CLAUSE_PUNCT = frozenset("，；：、")


@dataclass(frozen=True)
class Sentence:
    """A span ``[start, end)`` of the original paragraph, in code points; ``text == paragraph[start:end]``."""

    start: int
    end: int
    text: str


CutFinder = Callable[[str], Iterable[int]]
"""Proposes sentence ends (code-point offsets) inside one line of text."""


def is_blank(char: str) -> bool:
    """Whitespace, or an invisible character that never belongs at the edge of a sentence."""
    return char.isspace() or char in _INVISIBLE_BLANKS


def blingfire_cuts(line: str) -> list[int]:
    """Sentence ends proposed by Bling Fire for one line (no line breaks inside).

    Bling Fire stops cutting after a long blank run (a few hundred spaces, as a run of hidden emoji leaves): every
    blank run is read as one space, and the cuts mapped back.
    """
    safe = _UNSAFE_FOR_LIBRARY.sub("\ufffd", line)
    runs = list(_BLANK_RUN.finditer(safe))
    parts, position, removed = [], 0, 0
    past_run: list[int] = []  # the compact offset just past each run's one space
    removed_by: list[int] = []  # the characters removed up to there
    for run in runs:
        parts += [safe[position : run.start()], " "]
        past_run.append(run.start() - removed + 1)
        removed += run.end() - run.start() - 1
        removed_by.append(removed)
        position = run.end()
    parts.append(safe[position:])
    _, spans = blingfire.text_to_sentences_and_offsets("".join(parts))
    cuts = []
    for _, end in spans:
        index = bisect.bisect_right(past_run, end) - 1
        cuts.append(end + (removed_by[index] if index >= 0 else 0))
    return cuts


def split_sentences(paragraph: str, protection: Protection | None = None) -> list[Sentence]:
    """Split a paragraph into sentences with exact code-point offsets (see the module docstring).

    With ``protection`` (``service.text.protect``), sentences are split as the model reads the text: hidden markdown
    syntax and code lines count as blanks, so a sentence never starts or ends with them and a line of them alone is
    no sentence; no cut falls inside a masked or kept span (a URL's dots end no sentence); and
    every forced cut (markdown's table cells) ends one.
    """
    if protection is None or not (protection.spans or protection.cuts):
        return split_with(paragraph, blingfire_cuts)
    shown = _as_read(paragraph, protection.spans)
    sentences = _join_across(split_with(shown, _cuts_around_unreadable), protection.spans)
    sentences = [piece for sentence in sentences for piece in _cut_at(shown, sentence, protection.cuts)]
    return [Sentence(s.start, s.end, paragraph[s.start : s.end]) for s in sentences]


def _as_read(paragraph: str, spans: Sequence[Span]) -> str:
    """The paragraph with hidden markdown and code as blanks and masked spans as letters (the same length); runs
    of characters the model cannot read stay, so that a sentence of another script stays one sentence."""
    parts, position = [], 0
    for span in spans:
        if span.kind is Kind.KEEP or span.label == "unreadable":
            continue
        parts += [paragraph[position : span.start], (" " if span.kind is Kind.HIDE else "x") * (span.end - span.start)]
        position = span.end
    parts.append(paragraph[position:])
    return "".join(parts)


def _cuts_around_unreadable(line: str) -> set[int]:
    """Bling Fire's cuts of the line, and of the line with the runs the model cannot read as blanks: "a cat. 😀😀 She
    went" is two sentences as the model reads it, and "我喜欢猫。 We went" two as it is written."""
    cuts = set(blingfire_cuts(line))
    runs = unreadable_runs(line)
    if runs:
        blanked = list(line)
        for start, end in runs:
            blanked[start:end] = " " * (end - start)
        cuts.update(blingfire_cuts("".join(blanked)))
    return cuts


def _join_across(sentences: list[Sentence], spans: Sequence[Span]) -> list[Sentence]:
    """Consecutive sentences joined where the cut between them falls inside a masked or kept span."""
    inside = [(span.start, span.end) for span in spans if span.kind is not Kind.HIDE]
    joined: list[Sentence] = []
    for sentence in sentences:
        if joined:
            previous = joined[-1]
            at = bisect.bisect_right(inside, (previous.end, math.inf)) - 1
            if at >= 0 and inside[at][0] < previous.end and sentence.start < inside[at][1]:
                joined[-1] = Sentence(previous.start, sentence.end, "")
                continue
        joined.append(sentence)
    return joined


def _cut_at(shown: str, sentence: Sentence, cuts: Sequence[int]) -> list[Sentence]:
    """``sentence`` cut at every forced cut inside it, trimmed of blanks."""
    bounds = [sentence.start, *(c for c in cuts if sentence.start < c < sentence.end), sentence.end]
    pieces = []
    for start, end in pairwise(bounds):
        span = _trim(shown, start, end)
        if span is not None:
            pieces.append(Sentence(span[0], span[1], ""))
    return pieces


def split_with(paragraph: str, find_cuts: CutFinder) -> list[Sentence]:
    """Split on line breaks, then at the cuts ``find_cuts`` proposes inside each line; trim blanks, drop empties."""
    sentences: list[Sentence] = []
    for line_start, line_end in _line_spans(paragraph):
        line = paragraph[line_start:line_end]
        if all(is_blank(c) for c in line):
            continue
        cuts = sorted({c for c in find_cuts(line) if 0 < c < len(line)})
        bounds = [0, *cuts, len(line)]
        for start, end in pairwise(bounds):
            span = _trim(paragraph, line_start + start, line_start + end)
            if span is not None:
                sentences.append(Sentence(span[0], span[1], paragraph[span[0] : span[1]]))
    return sentences


def _line_spans(paragraph: str) -> list[tuple[int, int]]:
    spans = []
    start = 0
    for match in _LINE_BREAK.finditer(paragraph):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(paragraph)))
    return spans


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span without leading and trailing blanks, or None if nothing is left."""
    while start < end and is_blank(text[start]):
        start += 1
    while end > start and is_blank(text[end - 1]):
        end -= 1
    return (start, end) if start < end else None


TokenEnds = Callable[[str], Sequence[int]]
"""The end (a code-point offset in the text) of each of the tokens a text is encoded into, in order."""


def split_long(sentence: Sentence, token_ends: TokenEnds, max_tokens: int) -> list[Sentence]:
    """Cut a sentence into pieces of at most ``max_tokens`` tokens (by ``token_ends``).

    Each piece is as long as possible, cut preferably after ``,;:`` (followed by a blank; only if the piece keeps at
    least half the budget), else before a blank, else
    (last resort) between two characters of a word, never before a combining mark or joiner when avoidable. Pieces
    are ordered, non-overlapping spans of the original with the same offsets base as ``sentence``; only blanks lie
    between them. A single character that alone exceeds the budget is returned as its own piece.

    Linear in the sentence's length: the sentence is encoded once, which bounds how far each piece can reach, and
    each piece is then encoded only over that reach.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}")
    text = sentence.text
    ends = token_ends(text)
    if len(ends) <= max_tokens:
        return [sentence]

    def count(piece: str) -> int:
        return len(token_ends(piece))

    levels = _cut_levels(text)
    pieces: list[Sentence] = []
    start = _skip_blanks(text, 0)
    text_end = _strip_end(text, 0, len(text))
    while start < text_end:
        # The whole text's tokens bound the piece: the end of its max_tokens-th token past ``start``, and a little
        # more, since a piece encoded alone may tokenize its first word differently.
        first = bisect.bisect_right(ends, start)
        reach = ends[first + max_tokens - 1] if first + max_tokens - 1 < len(ends) else len(text)
        limit = min(text_end, reach + _REACH_SLACK)
        if limit == text_end and count(text[start:text_end]) <= max_tokens:
            end = text_end
        else:
            end = _best_cut(text, start, limit, levels, count, max_tokens)
        piece_end = _strip_end(text, start, end)
        pieces.append(Sentence(sentence.start + start, sentence.start + piece_end, text[start:piece_end]))
        start = _skip_blanks(text, end)
    return pieces


_REACH_SLACK = 16


def _strip_end(text: str, start: int, end: int) -> int:
    while end > start and is_blank(text[end - 1]):
        end -= 1
    return end


def _skip_blanks(text: str, pos: int) -> int:
    while pos < len(text) and is_blank(text[pos]):
        pos += 1
    return pos


def _cut_levels(text: str) -> list[list[int]]:
    """Candidate cut positions by preference: after clause punctuation, before blanks, between characters."""
    after_punct, before_blank, inside = [], [], []
    for i in range(1, len(text)):
        prev, char = text[i - 1], text[i]
        if (prev in _CLAUSE_PUNCT and is_blank(char)) or (prev in _CJK_CLAUSE_PUNCT and not is_blank(char)):
            after_punct.append(i)
        if is_blank(char) and not is_blank(prev):
            before_blank.append(i)
        if _may_cut_between(prev, char):
            inside.append(i)
    return [after_punct, before_blank, inside, list(range(1, len(text)))]


def _may_cut_between(prev: str, char: str) -> bool:
    """False inside a grapheme-like cluster: before a mark, joiner or variation selector, or after a joiner."""
    if prev == "\u200d" or char == "\u200d":
        return False
    if unicodedata.category(char).startswith("M"):
        return False
    return not ("\ufe00" <= char <= "\ufe0f" or "\U0001f3fb" <= char <= "\U0001f3ff")


def _best_cut(
    text: str, start: int, limit: int, levels: list[list[int]], count_tokens: Callable[[str], int], max_tokens: int
) -> int:
    """The furthest cut up to ``limit`` whose piece fits, at the most preferred level that has one; else one
    character.

    A cut after punctuation is taken only if its piece uses at least half the budget (no tiny "However," pieces).
    """
    for level, cuts in enumerate(levels):
        candidates = cuts[bisect.bisect_right(cuts, start) : bisect.bisect_right(cuts, limit)]
        found = _furthest_fitting(text, start, candidates, count_tokens, max_tokens)
        if found is None:
            continue
        if level > 0 or 2 * count_tokens(text[start : _strip_end(text, start, found)]) >= max_tokens:
            return found
    return start + 1


def _furthest_fitting(
    text: str, start: int, candidates: list[int], count_tokens: Callable[[str], int], max_tokens: int
) -> int | None:
    """Binary search (token counts of prefixes grow with length); the result is always checked to fit."""
    lo, hi, best = 0, len(candidates) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        end = _strip_end(text, start, candidates[mid])
        if end > start and count_tokens(text[start:end]) <= max_tokens:
            best, lo = candidates[mid], mid + 1
        else:
            hi = mid - 1
    return best
