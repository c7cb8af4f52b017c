"""An n-gram language model of English word sequences: counts under hashed keys, scored with stupid backoff.

Text is read as lowercased tokens: words (letters with inner apostrophes), numbers (all one token, ``<num>``) and
each other character, between ``<s>`` and ``</s>``. An n-gram of order 1 to ``order`` is kept under a 32-bit
fingerprint of its tokens (``fingerprints``), one sorted table per order with its counts, so the model is a few
numpy arrays (no dictionary of strings): a fingerprint that two n-grams share only adds their counts, and a
sentence's n-grams are looked up all at once (``FingerprintTables``: a directory by the fingerprints' top bits, so a
look-up reads two places rather than binary-searching a table the engine's run has pushed out of the caches).
``models.gec.language_model`` counts them in the monolingual data and the training targets.

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
MAX_BITS = 24  # a look-up directory of at most 16 M entries (64 MB)
DIRECTORY_CHUNK = 1 << 16


def _counted(token: str) -> str:
    """A token as the model counts it: lowercased, a number as ``<num>``."""
    return NUMBER if token[0].isdigit() else token.lower()


def tokens_with_spans(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """``text``'s tokens as the model counts them, between the sentence markers, and where each stands in ``text``
    (the markers at its two ends)."""
    tokens, spans = [START], [(0, 0)]
    for match in TOKEN.finditer(text):
        tokens.append(_counted(match.group()))
        spans.append(match.span())
    tokens.append(END)
    spans.append((len(text), len(text)))
    return tokens, spans


def tokens_of(text: str) -> list[str]:
    """``text``'s tokens as the model counts them, between the sentence markers (``tokens_with_spans`` without the
    spans, found without a match object each)."""
    return [START, *map(_counted, TOKEN.findall(text)), END]


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


class FingerprintTables:
    """Every order's sorted 32-bit fingerprints and their counts, end to end, and a directory of where each value of
    a fingerprint's top bits begins in its order's table: at least as many directory entries as fingerprints (up to
    ``2**MAX_BITS``), so a bucket holds about one, and at most ``width``. A look-up reads its bucket's two edges and
    the bucket, for every order and position of a batch at once (rather than binary-searching tables that the
    engine's run has pushed out of the caches)."""

    def __init__(self, tables: list[tuple[np.ndarray, np.ndarray]]) -> None:
        self.sizes = [len(keys) for keys, _ in tables]
        self.keys = np.concatenate([np.asarray(keys, dtype=np.uint32) for keys, _ in tables])
        self.counts = np.concatenate([np.asarray(counts, dtype=np.uint32) for _, counts in tables])
        bits = [min(MAX_BITS, max(1, (size - 1).bit_length())) for size in self.sizes]
        lengths = [(1 << width) + 1 for width in bits]  # each order's buckets and the end of its table
        self.edges = np.empty(sum(lengths), dtype=np.int32)
        self.directory_starts = np.cumsum([0, *lengths[:-1]])[:, None]
        self.shifts = np.array([32 - width for width in bits], dtype=np.uint32)[:, None]
        first = 0
        for size, width, start in zip(self.sizes, bits, self.directory_starts[:, 0], strict=True):
            keys = self.keys[first : first + size]
            for chunk in range(0, 1 << width, DIRECTORY_CHUNK):  # in chunks: no directory-sized temporary
                bounds = np.arange(chunk, min(chunk + DIRECTORY_CHUNK, 1 << width), dtype=np.uint32)
                found = np.searchsorted(keys, bounds << np.uint32(32 - width))
                self.edges[start + chunk : start + chunk + len(bounds)] = found + first
            first += size
            self.edges[start + (1 << width)] = first
        # the largest bucket (an order's end is the next order's first edge: no step between them)
        self.width = max(
            int(np.diff(self.edges[chunk : chunk + DIRECTORY_CHUNK + 1]).max())
            for chunk in range(0, len(self.edges) - 1, DIRECTORY_CHUNK)
        )

    def table(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The fingerprints of order ``n`` (1 to ``order``) and their counts."""
        first = sum(self.sizes[: n - 1])
        return self.keys[first : first + self.sizes[n - 1]], self.counts[first : first + self.sizes[n - 1]]

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.counts.nbytes + self.edges.nbytes

    def look_up(self, prints: np.ndarray) -> np.ndarray:
        """``prints`` is ``[order, length]`` (uint32), row ``n - 1`` fingerprints of order ``n``: the count of each,
        0 for one not in its order's table."""
        if not self.width:
            return np.zeros(prints.shape, dtype=np.uint32)
        flat = prints.ravel()
        bucket = ((prints >> self.shifts).astype(np.intp) + self.directory_starts).ravel()
        start, stop = self.edges[bucket], self.edges[bucket + 1]
        at = np.minimum(start, len(self.keys) - 1)
        first = self.keys[at]
        found = np.where((start < stop) & (first == flat), self.counts[at], 0)
        # a bucket's keys are sorted: only a key past its first one, in a bucket of more, is still to be looked for
        rest = np.flatnonzero((first < flat) & (stop - start > 1))
        if len(rest):
            window = start[rest, None] + np.arange(1, self.width)
            inside = window < stop[rest, None]
            window = np.where(inside, window, 0)
            matches = (self.keys[window] == flat[rest, None]) & inside
            rows, hit = np.arange(len(rest)), matches.argmax(axis=1)
            found[rest] = np.where(matches[rows, hit], self.counts[window[rows, hit]], 0)
        return found.reshape(prints.shape)


class NgramModel:
    """Counts of n-grams of orders 1 to ``order`` (``tables``, given as each order's sorted fingerprints and their
    counts); ``total`` is the number of tokens counted."""

    def __init__(self, tables: list[tuple[np.ndarray, np.ndarray]], total: int) -> None:
        self.tables = FingerprintTables(tables)
        self.order = len(tables)
        self.total = total

    @property
    def entries(self) -> int:
        return len(self.tables.keys)

    def counts(self, tokens: Sequence[str]) -> np.ndarray:
        """``[order, len(tokens)]``: the count of the n-gram of each order ending at each token (0 where unseen or
        where no n-gram of that order ends)."""
        return self._counts(token_keys(tokens))

    def _counts(self, keys: np.ndarray) -> np.ndarray:
        found = self.tables.look_up(fingerprints(keys, self.order).astype(np.uint32)).astype(np.float64)
        found[np.arange(len(keys)) < np.arange(self.order)[:, None]] = 0  # no n-gram of order n ends before n - 1
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
        windows: dict[tuple[int, int], int] = {}  # each unedited window once: the edits at a place share it
        edited_at: list[int] = []  # where each edit's window is in `sizes`
        unedited_at: list[int] = []  # where the unedited window it is compared with is
        for position, removed, inserted in edits:
            start = max(0, position - reach)
            after = sentence[position + removed : position + removed + reach]
            edited = [*sentence[start:position], *inserted, *after]
            edited_at.append(len(sizes))
            flat += edited
            sizes.append(len(edited))
            firsts.append(position - start)
            if (position, removed) not in windows:
                windows[position, removed] = len(sizes)
                unedited = sentence[start : position + removed + reach]
                flat += unedited
                sizes.append(len(unedited))
                firsts.append(position - start)
            unedited_at.append(windows[position, removed])
        lengths = np.array(sizes, dtype=np.int64)
        per_token = np.concatenate([[0.0], self._scores(np.array(flat, dtype=np.uint64))])
        starts = np.cumsum(lengths) - lengths
        scored = np.arange(len(per_token)) - np.repeat(starts, lengths) >= np.repeat(firsts, lengths)
        sums = np.add.reduceat(np.where(scored, per_token, 0.0), starts)
        return sums[edited_at] - sums[unedited_at]

    def save(self, path: Path) -> None:
        arrays: dict[str, np.ndarray] = {}
        for n in range(1, self.order + 1):
            arrays[f"keys{n}"], arrays[f"counts{n}"] = self.tables.table(n)
        with path.open("wb") as handle:
            # numpy's stub reads **arrays as possibly filling its allow_pickle: bool; every key is keysN or countsN
            np.savez_compressed(handle, total=np.array(self.total, dtype=np.int64), **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: Path) -> NgramModel:
        with np.load(path, allow_pickle=False) as data:
            order = sum(1 for name in data.files if name.startswith("keys"))
            tables = [(data[f"keys{n}"], data[f"counts{n}"]) for n in range(1, order + 1)]
            return cls(tables, int(data["total"]))
