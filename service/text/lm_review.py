"""The language model's review of a correction: it vetoes the model's edits that make the sentence much less likely,
and adds article and preposition edits that make it much more likely.

The review reads what the model read (a unit's text) and what it wrote, and scores sentences with the n-gram model
of ``ngrams``, all of a step's candidates at once:

- **Veto.** The model's edits (``edits.extract_edits``) are taken back one at a time while taking one back raises
  the sentence's score by more than ``veto_margin`` (log10), the one that raises it most first. An edit is judged
  with the others in place, so the parts of one change (a word moved is a deletion and an insertion) stand or fall
  together rather than leaving half of it.
- **Proposals.** Every article (a, an, the) and preposition of the result may become another of its set or go, and
  an article may come before a lowercase word that follows none: of these candidates, the one that scores highest
  is taken when it beats the sentence by more than ``propose_margin``, up to ``MAX_PROPOSALS`` times. A proposal
  is an edit like the model's: the unit's assembly keeps it off protected spans.

The margins were measured on the dev sets (``models.gec.compare_quality``). Beside the model, the review is a
precision step first: with the default margins it keeps more sentences that need no edit unchanged than the model
alone, and it adds a few edits the model missed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from service.text import guard
from service.text.edits import apply_edits, cased_like, extract_edits
from service.text.ngrams import NgramModel, token_key, tokens_with_spans

ARTICLES = ("a", "an", "the")
PREPOSITIONS = ("about", "at", "by", "for", "from", "in", "into", "of", "on", "to", "with")
VETO_MARGIN = 1.0
PROPOSE_MARGIN = 4.0
MAX_PROPOSALS = 2


class Proposal(NamedTuple):
    """One edit the review may add: on the text, replace ``text[start:end]`` by ``replacement``; on its tokens
    (``ngrams.tokens_with_spans``), remove ``removed`` at ``position`` and put ``inserted`` there. (A named tuple:
    a sentence has dozens, made for each review.)"""

    start: int
    end: int
    replacement: str
    position: int
    removed: int
    inserted: tuple[str, ...]

    def applied(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


def proposals(text: str, tokens: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[Proposal]:
    """Each article or preposition of ``text`` replaced by another of its set or removed (with the space after
    it), and an article put before each lowercase word that follows none."""
    found = []
    for position in range(1, len(tokens) - 1):
        token, (start, end) = tokens[position], spans[position]
        written = text[start:end]
        for group in (ARTICLES, PREPOSITIONS):
            if token in group:
                found += [
                    Proposal(start, end, cased_like(other, written), position, 1, (other,))
                    for other in group
                    if other != token
                ]
                gone = end + 1 if text[end : end + 1] == " " else end
                found.append(Proposal(start, gone, "", position, 1, ()))
        if written.isalpha() and written.islower() and token not in ARTICLES and tokens[position - 1] not in ARTICLES:
            found += [Proposal(start, start, article + " ", position, 0, (article,)) for article in ARTICLES]
    return found


@dataclass(frozen=True)
class Reviewed:
    """A reviewed correction, and how many of the model's edits were taken back and how many were added."""

    text: str
    vetoed: int = 0
    proposed: int = 0


@dataclass(frozen=True)
class LanguageModelReview:
    model: NgramModel
    veto_margin: float = VETO_MARGIN
    propose_margin: float = PROPOSE_MARGIN

    def review(self, source: str, corrected: str) -> Reviewed:
        """``corrected`` (the model's output for ``source``) with the edits the model vetoes dropped and its proposals
        added; an output the guard refuses (``guard.degenerate``) is left for it to drop."""
        if guard.degenerate(source, corrected) is not None:
            return Reviewed(corrected)
        kept, vetoed = self.veto(source, corrected)
        proposed, count = self.propose(kept)
        return Reviewed(proposed, vetoed, count)

    def veto(self, source: str, corrected: str) -> tuple[str, int]:
        """``corrected`` with the edits the model takes back undone, and how many."""
        edits = extract_edits(source, corrected)
        kept = list(edits)
        while kept:  # take back the edit whose removal raises the score most, while that beats the margin
            texts = [apply_edits(source, kept[:i] + kept[i + 1 :]) for i in range(len(kept))]
            scores = self.model.scores([apply_edits(source, kept), *texts])
            best = int(np.argmax(scores[1:]))
            if scores[1 + best] - scores[0] <= self.veto_margin:
                break
            del kept[best]
        return (corrected, 0) if len(kept) == len(edits) else (apply_edits(source, kept), len(edits) - len(kept))

    def propose(self, text: str) -> tuple[str, int]:
        """``text`` with the model's proposals made, and how many."""
        for made in range(MAX_PROPOSALS):
            tokens, spans = tokens_with_spans(text)
            candidates = proposals(text, tokens, spans)
            if not candidates:
                return text, made
            edits = [(c.position, c.removed, [token_key(word) for word in c.inserted]) for c in candidates]
            gains = self.model.deltas([token_key(token) for token in tokens], edits)
            best = int(np.argmax(gains))
            if gains[best] <= self.propose_margin:
                return text, made
            text = candidates[best].applied(text)
        return text, MAX_PROPOSALS
