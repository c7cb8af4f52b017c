"""The guard on what the model writes: a degenerate output is dropped and its sentence left as written.

A small model fed text unlike its training data can loop ("Squ Squ Squ ...", "about about about"), grow far
beyond its source, or write something unrelated to it. Each rule compares the output with the text the model
read, in words and punctuation marks (``\\w+`` or one other non-blank character):

* ``repetition``: the output repeats an n-gram (n up to 4) more times in a row than the source ever does, by
  ``REPEAT_EXCESS`` or more;
* ``length``: the output has more than ``GROWTH_FACTOR`` times the source's words plus ``LENGTH_SLACK``, or fewer
  than the source's words over ``GROWTH_FACTOR`` less ``LENGTH_SLACK``;
* ``overlap``: a source of at least ``OVERLAP_MIN_WORDS`` words of which the output keeps less than
  ``MIN_OVERLAP`` (in order, as ``difflib`` matches them), or an output of which less than that comes from the
  source.

The thresholds sit beyond every human correction of the dev sets (JFLEG dev's four references, FCE dev's one:
``tests/text/test_guard.py`` checks that none is dropped); the README gives what each rule drops of the model's
outputs there.
"""

from __future__ import annotations

import difflib
import re

__all__ = ["REASONS", "degenerate"]

REPEAT_EXCESS = 2
MAX_NGRAM = 4
GROWTH_FACTOR = 2.0
LENGTH_SLACK = 4
OVERLAP_MIN_WORDS = 4
MIN_OVERLAP = 0.1
REASONS = ("repetition", "length", "overlap")

_WORD = re.compile(r"\w+|[^\w\s]")


def _longest_repeat(words: list[str]) -> int:
    """The most times any n-gram (n <= ``MAX_NGRAM``) occurs in a row."""
    best = 1
    for n in range(1, MAX_NGRAM + 1):
        i = 0
        while i <= len(words) - 2 * n:
            times = 1
            while words[i + times * n : i + (times + 1) * n] == words[i : i + n]:
                times += 1
            best = max(best, times)
            i += max(1, (times - 1) * n)  # a run found is not counted again from inside it
    return best


def degenerate(source: str, output: str) -> str | None:
    """The rule ``output`` breaks as a correction of ``source`` (one of ``REASONS``), or None."""
    if output == source:
        return None
    a, b = _WORD.findall(source), _WORD.findall(output)
    if _longest_repeat(b) - _longest_repeat(a) >= REPEAT_EXCESS:
        return "repetition"
    if len(b) > GROWTH_FACTOR * len(a) + LENGTH_SLACK or len(b) < len(a) / GROWTH_FACTOR - LENGTH_SLACK:
        return "length"
    if len(a) >= OVERLAP_MIN_WORDS:
        kept = sum(block.size for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
        if kept < MIN_OVERLAP * len(a) or kept < MIN_OVERLAP * len(b):
            return "overlap"
    return None
