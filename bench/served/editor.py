"""What a simulated editor sends: paragraphs of learner text typed a sentence at a time, then revised.

An editor picks a paragraph of 1 to ``max_sentences`` consecutive sentences of learner text (FCE dev
and JFLEG dev; never a test set), sends it as it grows (the first sentence, then the first two, and
so on), then resends it up to ``revisions`` times, each time with one small change: a typo made in
one sentence, or one made before put right. A resend repeats every sentence but one, so the
server's sentence cache serves the rest; with ``cache_bust`` every sentence of every send starts
with a number never sent before (an extra word for the model), so none can be served from a cache.
What an editor does with the suggestions it gets, when told (``accept_rates``): it accepts each with the
probability of the arm that made it.
"""

from __future__ import annotations

import itertools
import os
import random
import re
from collections.abc import Iterable
from pathlib import Path

# JFLEG is released tokenized ("live , we ca n't"): joined back the way the text was typed.
_DETOKENIZE = [
    (re.compile(r" ([.,!?;:%)\]}])"), r"\1"),
    (re.compile(r"([(\[{$]) "), r"\1"),
    (re.compile(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", re.IGNORECASE), r"\1"),
    (re.compile(r"\s+"), " "),
]
_WORD = re.compile(r"[A-Za-z]{4,}")


def detokenize(line: str) -> str:
    """A tokenized line (spaces around punctuation and clitics) as running text."""
    for pattern, replacement in _DETOKENIZE:
        line = pattern.sub(replacement, line)
    return line.strip()


def learner_sentences(paths: Iterable[Path]) -> list[str]:
    """The non-empty lines of ``paths`` in order, detokenized where a file is tokenized (a ``.src``
    file without ``.detok`` in its name)."""
    sentences: list[str] = []
    for path in paths:
        tokenized = path.suffix == ".src" and ".detok" not in path.name
        for line in path.read_text(encoding="utf-8").splitlines():
            text = detokenize(line) if tokenized else line.strip()
            if text:
                sentences.append(text)
    if not sentences:
        raise ValueError(f"no sentences in {[str(p) for p in paths]}")
    return sentences


def make_typo(sentence: str, rng: random.Random) -> str:
    """``sentence`` with two adjacent letters of one word of 4+ letters swapped (unchanged when it has
    no such word, or the swapped letters are equal)."""
    words = list(_WORD.finditer(sentence))
    if not words:
        return sentence
    word = rng.choice(words)
    at = rng.randrange(word.start() + 1, word.end() - 2)  # inner letters: the word stays recognisable
    return sentence[:at] + sentence[at + 1] + sentence[at] + sentence[at + 2 :]


# Unique across processes and runs: a random base per process, then a counter.
_NONCES = itertools.count(int.from_bytes(os.urandom(4), "big") * 1000)


class Editor:
    """One simulated editor's texts, in the order it sends them (``next_text``)."""

    def __init__(
        self,
        corpus: list[str],
        rng: random.Random,
        max_sentences: int = 6,
        revisions: int = 2,
        cache_bust: bool = False,
    ) -> None:
        if max_sentences < 1 or revisions < 0:
            raise ValueError("max_sentences must be at least 1 and revisions at least 0")
        self.corpus, self.rng = corpus, rng
        self.max_sentences, self.revisions, self.cache_bust = max_sentences, revisions, cache_bust
        self.original: list[str] = []
        self.current: list[str] = []
        self.typed = 0
        self.revisions_left = 0

    def _new_paragraph(self) -> None:
        start = self.rng.randrange(len(self.corpus))
        length = self.rng.randint(1, self.max_sentences)
        self.original = [self.corpus[(start + k) % len(self.corpus)] for k in range(length)]
        self.current = list(self.original)
        self.typed = 1
        self.revisions_left = self.rng.randint(0, self.revisions)

    def _revise(self) -> None:
        k = self.rng.randrange(len(self.current))
        if self.current[k] != self.original[k]:
            self.current[k] = self.original[k]  # the typo put right
        else:
            self.current[k] = make_typo(self.original[k], self.rng)
        self.revisions_left -= 1

    def next_text(self) -> str:
        """The paragraph as it stands at this send: one more sentence typed, one small change, or the
        first sentence of a new paragraph."""
        if self.typed == 0 or (self.typed == len(self.current) and self.revisions_left == 0):
            self._new_paragraph()
        elif self.typed < len(self.current):
            self.typed += 1
        else:
            self._revise()
        sentences = self.current[: self.typed]
        if self.cache_bust:
            sentences = [f"{next(_NONCES)} {s}" for s in sentences]
        return " ".join(sentences)


def accept_rates(option: str) -> dict[str, float]:
    """``--accept-rate``'s probabilities by arm (``ValueError`` naming an entry that is not ``arm=p``, 0..1)."""
    rates = {}
    for entry in filter(None, (part.strip() for part in option.split(","))):
        arm, separator, value = entry.partition("=")
        if not separator or not 0 <= float(value) <= 1:
            raise ValueError(f"--accept-rate: {entry!r} is not arm=probability (0..1)")
        rates[arm.strip()] = float(value)
    return rates
