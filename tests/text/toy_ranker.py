"""A ranking built by the real builder from made-up counts: frequent enough for splits, with telling contexts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from models.gec.spelling_model import word_pairs
from service.text.letter_edits import LetterEdits, contexts_of
from service.text.ranking import Ranker
from service.text.word_pairs import END, START

WORDS = Counter(
    {START: 9000, END: 9000, "a": 9000, "lot": 2000, "of": 8000, "the": 9000, "people": 3000, "which": 3000,
     "with": 4000, "is": 6000, "her": 3000, "house": 1500, "went": 1500, "i": 5000, "weather": 1200,
     "related": 1500, "total": 3000, "totally": 1000, "different": 2000}
)  # fmt: skip
PAIRS = Counter(
    {("a", "lot"): 900, ("lot", "of"): 800, ("of", "the"): 1000, ("which", "is"): 1000, ("house", "which"): 200,
     ("went", "with"): 300, ("with", "her"): 500, ("weather", "related"): 50, ("totally", "different"): 300}
)  # fmt: skip


def toy_ranker(errors: Mapping[str, int] | None = None, pairs: Counter[tuple[str, str]] = PAIRS) -> Ranker:
    letters = {w: 1000 * n for w, n in WORDS.items() if w.isalpha()}  # as many chances as in a real corpus
    return Ranker(word_pairs(WORDS, pairs, 1), LetterEdits(errors or {}, contexts_of(letters)))
