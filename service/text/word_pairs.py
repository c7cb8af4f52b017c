"""Which words go together: counts of words and of adjacent word pairs, and the bigram probability they give.

Words are lowercased runs of ASCII letters, with their apostrophes (``don't``); ``<s>`` and ``</s>`` stand for the
start and the end of a sentence. Counts are kept as two sorted numpy arrays (a few MB for the bundled model, where a
dict would hold tens): a 64-bit key per word or pair (the CRC-32 of each word; a single word pairs with ``""``) and its
count. ``models.gec.spelling_model`` counts them in the training targets and the monolingual data.
"""

from __future__ import annotations

import math
import re
import zlib

import numpy as np

WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")
START, END = "<s>", "</s>"
SMOOTHING = 100.0  # how many pair observations the word's own frequency counts for (interpolation with the unigram)


def words_of(text: str) -> list[str]:
    """``text``'s words as counted (``text`` lowercased), between the sentence markers."""
    return [START, *WORD.findall(text.lower()), END]


def pair_key(first: str, second: str = "") -> int:
    """The key of a word pair, or of a word alone (``second`` empty)."""
    return (zlib.crc32(first.encode()) << 32) | zlib.crc32(second.encode())


class WordPairs:
    """Counts of words and pairs under their ``pair_key``; ``total`` is the number of words counted."""

    def __init__(self, keys: np.ndarray, counts: np.ndarray, total: int) -> None:
        order = np.argsort(keys)
        self.keys = np.ascontiguousarray(keys[order], dtype=np.uint64)
        self.counts = np.ascontiguousarray(counts[order], dtype=np.uint32)
        self.total = total

    def count(self, first: str, second: str = "") -> int:
        key = np.uint64(pair_key(first, second))
        i = int(np.searchsorted(self.keys, key))
        return int(self.counts[i]) if i < len(self.keys) and self.keys[i] == key else 0

    def unigram(self, word: str) -> float:
        """P(word), add-a-half smoothed."""
        return (self.count(word) + 0.5) / self.total

    def log_prob(self, word: str, before: str) -> float:
        """log P(word | the word before it): the pair's count interpolated with P(word) (Dirichlet smoothing)."""
        return math.log((self.count(before, word) + SMOOTHING * self.unigram(word)) / (self.count(before) + SMOOTHING))
