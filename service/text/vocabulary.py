"""A vocabulary of real English words, far beyond the spelling stage's: what the service never takes for a misspelling
and never lets the model replace by an unrelated word without the confidence to do so.

The words are ``wordfreq``'s large English list (321k words with their frequencies, from Wikipedia, subtitles, news,
books, the web and more: technical, legal, scientific and business vocabulary, British and American spellings,
names, and the inflections of each as they are used). Being in that list is not enough: web text holds the common
misspellings too ("freind", "recieve", "untill"). A listed word is known unless a word one edit from it
(``Speller.neighbours``, the spelling stage's dictionary) is ``MISSPELLING_ZIPF_GAP`` or more more frequent on the
Zipf scale (log10 of uses per billion words): "freind" (2.1) beside "friend" (5.4) is a misspelling; "config" (2.9),
with no such neighbour, and "docs" (3.5), in the spelling stage's own dictionary, are words. Two edits away, the gap is
``FAR_MISSPELLING_ZIPF_GAP``: "tommorow" (2.3) beside "tomorrow" (5.2) is a misspelling, "subtree" (2.0) beside "subtle"
(4.1) a word.

A word the list lacks is still known when it is made of known parts, as jargon and neologisms are: a common prefix
and a known word ("deduplicate", "subpath", "sublessee"), a known word and a common suffix ("tokenizer",
"rebalanced"), or two well-known words of ``COMPOUND_MIN_LETTERS`` letters or more ("webhook", "greenlist") that are
not two words often seen together, run into one ("allday" is "all day").
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import wordfreq

MISSPELLING_ZIPF_GAP = 1.5
FAR_MISSPELLING_ZIPF_GAP = 2.5  # the same, for a word two edits away ("dissapointed", "tommorow")
COMPOUND_MIN_LETTERS = 3  # each part of a compound of two words
COMPOUND_MIN_ZIPF = 3.5  # each part of a compound is a well-used word ("lifestile" is no "life" + "stile")
BASE_MIN_ZIPF = 2.5  # the known word a prefix or a suffix is added to
NEIGHBOUR_MAX_ZIPF = 3.0  # an unlisted word one edit from a word this common is a misspelling of it
PREFIXES = (
    "anti", "auto", "bi", "co", "counter", "cross", "cyber", "de", "dis", "eco", "geo", "hyper", "inter", "intra",
    "macro", "meta", "micro", "mis", "multi", "nano", "neo", "non", "over", "post", "pre", "pro", "pseudo", "re",
    "self", "semi", "sub", "super", "trans", "tri", "ultra", "un", "under", "up",
)  # fmt: skip
SUFFIXES = (
    "s", "es", "ed", "d", "ing", "er", "ers", "r", "rs", "able", "ible", "ly", "ness", "less", "ful", "ize", "ise",
    "ized", "ised", "izer", "iser", "ization", "isation", "ee", "ees", "ment", "ments", "ship", "ism", "ist", "ists",
    "ity", "al", "ic", "wise",
)  # fmt: skip


def zipf(word: str) -> float:
    """How common ``word`` (lowercased) is: log10 of its uses per billion words in ``wordfreq``'s large English list;
    0 for a word it lacks."""
    return _zipf(word.lower())


@functools.lru_cache(maxsize=65536)
def _zipf(lower: str) -> float:
    return wordfreq.zipf_frequency(lower, "en", wordlist="large")


Neighbours = Callable[[str], Iterable[tuple[str, int]]]
"""The closest known words to a word, one or two edits away, with their distance (``spelling.Speller.neighbours``)."""

Splits = Callable[[str], bool]
"""Whether a word is two frequent words seen together, written as one ("aswell", "infact": ``Speller.splits``)."""


class Vocabulary:
    """Which words are real English words (``knows``). ``dictionary``: the spelling stage's own words, each known;
    ``neighbours``: its closest words, which tell a listed misspelling from a word; ``splits``: whether a listed word
    is two words run together ("aswell"), a misspelling too."""

    def __init__(self, dictionary: Callable[[str], bool], neighbours: Neighbours, splits: Splits | None = None) -> None:
        self.dictionary = dictionary
        self.neighbours = neighbours
        self.splits = splits
        self._known = functools.lru_cache(maxsize=65536)(self._find)
        self._listed = functools.lru_cache(maxsize=65536)(self._listed_word)  # a derived word's parts recur

    def knows(self, word: str) -> bool:
        """Whether ``word`` (any case) is a real English word: never a misspelling (the module docstring)."""
        lower = word.lower()
        return lower.isalpha() and self._known(lower)

    def _find(self, lower: str) -> bool:
        if self.dictionary(lower):
            return True
        if _zipf(lower) > 0:
            return self._listed(lower)
        near = max((_zipf(other) for other, distance in self.neighbours(lower) if distance == 1), default=0.0)
        run_together = self.splits is not None and self.splits(lower)  # "allday" is "all day", not a compound
        return near < NEIGHBOUR_MAX_ZIPF and not run_together and self._derived(lower)

    def _listed_word(self, lower: str) -> bool:
        """A listed word that is no misspelling: neither run together nor far less common than a close word."""
        frequency = _zipf(lower)
        if self.splits is not None and self.splits(lower):
            return False
        gaps = {1: MISSPELLING_ZIPF_GAP, 2: FAR_MISSPELLING_ZIPF_GAP}
        return all(_zipf(other) < frequency + gaps[distance] for other, distance in self.neighbours(lower))

    def _word(self, part: str, floor: float) -> bool:
        """A part of a derived word: a listed word at least ``floor`` common (or in the spelling stage's
        dictionary)."""
        if len(part) < 3:
            return False
        return self.dictionary(part) or (_zipf(part) >= floor and self._listed(part))

    def _derived(self, lower: str) -> bool:
        for prefix in PREFIXES:
            if lower.startswith(prefix) and self._word(lower[len(prefix) :], BASE_MIN_ZIPF):
                return True
        for suffix in SUFFIXES:
            base = lower[: -len(suffix)]
            if lower.endswith(suffix) and (self._word(base, BASE_MIN_ZIPF) or self._word(base + "e", BASE_MIN_ZIPF)):
                return True
        for cut in range(COMPOUND_MIN_LETTERS, len(lower) - COMPOUND_MIN_LETTERS + 1):
            first, second = lower[:cut], lower[cut:]
            if self._word(first, COMPOUND_MIN_ZIPF) and self._word(second, COMPOUND_MIN_ZIPF):
                return True
        return False
