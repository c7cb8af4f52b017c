"""The spelling stage's ranking of what a misspelled word was meant to be: a noisy channel over the words around it.

    score = CHANNEL_WEIGHT * log P(typed | intended) + log P(intended | word before) + log P(word after | intended)

P(typed | intended) is the learners' letter edits (``letter_edits``); the rest is the bigram model of ``word_pairs``.
The intended text may be two words ("alot" for "a lot"): each word follows the one before it, and the missing space
costs ``SPLIT_COST`` in the channel. ``models.gec.spelling_model`` builds both parts at packaging and saves them in
one ``.npz`` file shipped beside the model (``spelling_model`` in its manifest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

from service.text.letter_edits import LetterEdits
from service.text.word_pairs import WordPairs

# Measured on JFLEG and FCE dev (models.gec.compare_spelling): the channel at half the weight of the context, and a
# missing space as unlikely as two uncommon letter edits.
CHANNEL_WEIGHT = 0.5
SPLIT_COST = -12.0


@dataclass(frozen=True)
class Ranker:
    pairs: WordPairs
    edits: LetterEdits

    def score(self, typed: Sequence[str], intended: Sequence[str], before: str, after: str) -> float:
        """How likely ``intended`` (one or two words) was meant where ``typed`` (the same words, run together or
        misspelled) stands between ``before`` and ``after``."""
        channel = SPLIT_COST * (len(intended) - 1)
        channel += sum(self.edits.log_prob(t, i) for t, i in zip(typed, intended, strict=True) if t != i)
        context = self.pairs.log_prob(intended[0], before) + self.pairs.log_prob(after, intended[-1])
        context += sum(self.pairs.log_prob(word, previous) for previous, word in pairwise(intended))
        return CHANNEL_WEIGHT * channel + context

    def save(self, path: Path) -> None:
        errors, contexts = self.edits.errors, self.edits.contexts
        with path.open("wb") as handle:
            np.savez_compressed(
                handle,
                pair_keys=self.pairs.keys,
                pair_counts=self.pairs.counts,
                total=np.array(self.pairs.total, dtype=np.int64),
                edit_keys=np.array(sorted(errors), dtype=str),
                edit_counts=np.array([errors[k] for k in sorted(errors)], dtype=np.int64),
                context_keys=np.array(sorted(contexts), dtype=str),
                context_counts=np.array([contexts[k] for k in sorted(contexts)], dtype=np.int64),
            )

    @classmethod
    def load(cls, path: Path) -> Ranker:
        with np.load(path, allow_pickle=False) as data:
            pairs = WordPairs(data["pair_keys"], data["pair_counts"], int(data["total"]))
            errors = dict(zip(data["edit_keys"].tolist(), data["edit_counts"].tolist(), strict=True))
            contexts = dict(zip(data["context_keys"].tolist(), data["context_counts"].tolist(), strict=True))
        return cls(pairs, LetterEdits(errors, contexts))
