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

import re
from dataclasses import dataclass

import numpy as np

from service.text import guard
from service.text.edits import apply_edits, extract_edits
from service.text.ngrams import NgramModel

ARTICLES = ("a", "an", "the")
PREPOSITIONS = ("about", "at", "by", "for", "from", "in", "into", "of", "on", "to", "with")
VETO_MARGIN = 1.0
PROPOSE_MARGIN = 4.0
MAX_PROPOSALS = 2
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")


def proposals(text: str) -> list[str]:
    """``text`` with each article or preposition replaced by another of its set or removed, and with an article put
    before each lowercase word that follows none: one edit each."""
    words = list(_WORD.finditer(text))
    found = []
    for index, word in enumerate(words):
        start, end, lower = word.start(), word.end(), word.group().lower()
        for group in (ARTICLES, PREPOSITIONS):
            if lower in group:
                found += [text[:start] + _cased(other, word.group()) + text[end:] for other in group if other != lower]
                gone = end + 1 if text[end : end + 1] == " " else end
                found.append(text[:start] + text[gone:])
        before = words[index - 1].group().lower() if index else ""
        if word.group().islower() and lower not in ARTICLES and before not in ARTICLES:
            found += [text[:start] + article + " " + text[start:] for article in ARTICLES]
    return found


def _cased(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


@dataclass(frozen=True)
class LanguageModelReview:
    model: NgramModel
    veto_margin: float = VETO_MARGIN
    propose_margin: float = PROPOSE_MARGIN

    def review(self, source: str, corrected: str) -> str:
        """``corrected`` (the model's output for ``source``) with the edits the model vetoes dropped and its proposals
        added; an output the guard refuses (``guard.degenerate``) is left for it to drop."""
        if guard.degenerate(source, corrected) is not None:
            return corrected
        return self.propose(self.veto(source, corrected))

    def veto(self, source: str, corrected: str) -> str:
        kept = extract_edits(source, corrected)
        while kept:  # take back the edit whose removal raises the score most, while that beats the margin
            texts = [apply_edits(source, kept[:i] + kept[i + 1 :]) for i in range(len(kept))]
            scores = self.model.scores([apply_edits(source, kept), *texts])
            best = int(np.argmax(scores[1:]))
            if scores[1 + best] - scores[0] <= self.veto_margin:
                break
            del kept[best]
        return apply_edits(source, kept)

    def propose(self, text: str) -> str:
        for _ in range(MAX_PROPOSALS):
            candidates = proposals(text)
            if not candidates:
                break
            scores = self.model.scores([text, *candidates])
            best = int(np.argmax(scores[1:]))
            if scores[1 + best] - scores[0] <= self.propose_margin:
                break
            text = candidates[best]
        return text
