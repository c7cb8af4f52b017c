"""An n-gram language model of English word sequences: counts under hashed keys, scored with stupid backoff.

Text is read as lowercased tokens: words (letters with inner apostrophes), numbers (all one token, ``<num>``) and
each other character, between ``<s>`` and ``</s>``. An n-gram of order 1 to ``order`` is kept under a 32-bit
fingerprint of its tokens (``fingerprints``), one sorted table per order with its counts, so the model is a few
numpy arrays (no dictionary of strings): a fingerprint that two n-grams share only adds their counts, and a
sentence's n-grams are looked up all at once with ``searchsorted``. ``models.gec.language_model`` counts them in
the monolingual data and the training targets.

The score of a token given the tokens before it is stupid backoff (Brants et al., 2007): the count of the longest
n-gram ending in it that was seen, over the count of its context, times 0.4 for each order backed off; a token
never seen at all scores as if seen half a time. Scores are log10 and sum over a sentence; they are not
normalised probabilities, only comparable between sentences, which is what ``lm_review`` needs.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*|[0-9]+(?:[.,][0-9]+)*|[^\sa-z0-9]", re.IGNORECASE)
START, END, NUMBER = "<s>", "</s>", "<num>"
BACKOFF = math.log10(0.4)
_MULTIPLIER = np.uint64(1099511628211)  # FNV's 64-bit prime: the rolling hash of an n-gram's token keys
_MIX = np.uint64(0x9E3779B97F4A7C15)  # spreads the rolling hash before its top 32 bits become the fingerprint


def tokens_with_spans(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """``text``'s tokens as the model counts them, between the sentence markers, and where each stands in ``text``
    (the markers at its two ends)."""
    tokens, spans = [START], [(0, 0)]
    for match in TOKEN.finditer(text):
        token = match.group().lower()
        tokens.append(NUMBER if token[0].isdigit() else token)
        spans.append(match.span())
    tokens.append(END)
    spans.append((len(text), len(text)))
    return tokens, spans


def tokens_of(text: str) -> list[str]:
    """``text``'s tokens as the model counts them, between the sentence markers."""
    return tokens_with_spans(text)[0]


@functools.lru_cache(maxsize=1 << 16)
def token_key(token: str) -> int:
    """A token's 32-bit key (CRC-32)."""
    return zlib.crc32(token.encode())


def token_keys(tokens: Sequence[str]) -> np.ndarray:
    """Each token's 32-bit key (CRC-32), as uint64."""
    return np.fromiter((token_key(t) for t in tokens), dtype=np.uint64, count=len(tokens))


def fingerprints(keys: np.ndarray, order: int) -> np.ndarray:
    """``[order, len(keys)]``: row ``n - 1`` holds the fingerprint of the n-gram ending at each position (positions
    before ``n - 1`` hold garbage: no n-gram of that order ends there)."""
    rolling = np.zeros((order, len(keys)), dtype=np.uint64)
    rolling[0] = keys
    for n in range(1, order):
        rolling[n, n:] = rolling[n - 1, n - 1 : -1] * _MULTIPLIER + keys[n:]
    return (rolling * _MIX) >> np.uint64(32)


class NgramModel:
    """Counts of n-grams of orders 1 to ``order``: ``tables[n - 1]`` is ``(sorted fingerprints, counts)``;
    ``total`` is the number of tokens counted."""

    def __init__(self, tables: list[tuple[np.ndarray, np.ndarray]], total: int) -> None:
        self.tables = [
            (np.ascontiguousarray(k, dtype=np.uint32), np.ascontiguousarray(c, dtype=np.uint32)) for k, c in tables
        ]
        self.order = len(tables)
        self.total = total

    @property
    def entries(self) -> int:
        return sum(len(keys) for keys, _ in self.tables)

    def counts(self, tokens: Sequence[str]) -> np.ndarray:
        """``[order, len(tokens)]``: the count of the n-gram of each order ending at each token (0 where unseen or
        where no n-gram of that order ends)."""
        return self._counts(token_keys(tokens))

    def _counts(self, keys: np.ndarray) -> np.ndarray:
        prints = fingerprints(keys, self.order).astype(np.uint32)
        found = np.zeros(prints.shape, dtype=np.float64)
        for n, (table, counts) in enumerate(self.tables):
            if not len(table):
                continue
            # each distinct n-gram once, in order: a batch of candidates repeats most of its n-grams
            distinct, where = np.unique(prints[n, n:], return_inverse=True)
            at = np.minimum(np.searchsorted(table, distinct), len(table) - 1)
            found[n, n:] = np.where(table[at] == distinct, counts[at], 0)[where]
        return found

    def token_scores(self, tokens: Sequence[str]) -> np.ndarray:
        """The log10 stupid-backoff score of each token after the first (``<s>``) given those before it."""
        return self._scores(token_keys(tokens))

    def _scores(self, keys: np.ndarray) -> np.ndarray:
        found = self._counts(keys)
        scores = np.log10((found[0, 1:] + 0.5) / self.total) + BACKOFF * (self.order - 1)
        settled = np.zeros(len(keys) - 1, dtype=bool)
        for n in range(self.order - 1, 0, -1):  # the longest n-gram seen wins
            seen = ~settled & (found[n, 1:] > 0) & (found[n - 1, :-1] > 0)
            ratio = np.log10(np.where(seen, found[n, 1:], 1) / np.where(seen, found[n - 1, :-1], 1))
            scores = np.where(seen, ratio + BACKOFF * (self.order - 1 - n), scores)
            settled |= seen
        return scores

    def score(self, text: str) -> float:
        """The log10 score of ``text`` as a sentence."""
        return float(self.token_scores(tokens_of(text)).sum())

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """The log10 score of each of ``texts`` as a sentence, looked up together: their tokens in one sequence,
        where a token's n-grams reach back past its ``<s>`` only into the sentence before's end, never seen."""
        tokenized = [tokens_of(text) for text in texts]
        lengths = np.array([len(tokens) for tokens in tokenized], dtype=np.int64)
        per_token = np.concatenate([[0.0], self.token_scores([t for tokens in tokenized for t in tokens])])
        starts = np.cumsum(lengths) - lengths
        per_token[starts] = 0.0  # each <s>: nothing to score
        return np.add.reduceat(per_token, starts)

    def deltas(self, keys: Sequence[int], edits: Sequence[tuple[int, int, Sequence[int]]]) -> np.ndarray:
        """How much each edit of a sentence (its token ``keys``, ``<s>`` and ``</s>`` included) changes its score:
        an edit ``(position, removed, inserted)`` removes that many tokens at ``position`` (>= 1) and puts the keys
        ``inserted`` there. Only the tokens whose n-grams the edit reaches are scored, each in a window holding
        their whole context, all windows at once (built as lists: an edit's windows are a few keys, and a sentence
        has dozens of edits to judge)."""
        reach = self.order - 1
        sentence = [int(key) for key in keys]
        flat: list[int] = []
        sizes: list[int] = []
        firsts: list[int] = []
        for position, removed, inserted in edits:
            start = max(0, position - reach)
            after = sentence[position + removed : position + removed + reach]
            edited = [*sentence[start:position], *inserted, *after]
            unedited = sentence[start : position + removed + reach]
            flat += edited
            flat += unedited
            sizes += (len(edited), len(unedited))
            firsts += (position - start, position - start)
        lengths = np.array(sizes, dtype=np.int64)
        per_token = np.concatenate([[0.0], self._scores(np.array(flat, dtype=np.uint64))])
        starts = np.cumsum(lengths) - lengths
        scored = np.arange(len(per_token)) - np.repeat(starts, lengths) >= np.repeat(firsts, lengths)
        sums = np.add.reduceat(np.where(scored, per_token, 0.0), starts)
        return sums[0::2] - sums[1::2]

    def save(self, path: Path) -> None:
        arrays = {f"keys{n + 1}": keys for n, (keys, _) in enumerate(self.tables)}
        arrays |= {f"counts{n + 1}": counts for n, (_, counts) in enumerate(self.tables)}
        with path.open("wb") as handle:
            np.savez_compressed(handle, total=np.array(self.total, dtype=np.int64), **arrays)

    @classmethod
    def load(cls, path: Path) -> NgramModel:
        with np.load(path, allow_pickle=False) as data:
            order = sum(1 for name in data.files if name.startswith("keys"))
            tables = [(data[f"keys{n}"], data[f"counts{n}"]) for n in range(1, order + 1)]
            return cls(tables, int(data["total"]))
