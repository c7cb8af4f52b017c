"""How learners misspell: the probability of a typed word given the word meant, from the letter edits between them.

An edit is one step of the optimal string alignment (``classify.osa_distance``) that turns the intended word into the
typed one, keyed with the letter before it (Kernighan, Church and Gale's channel model): ``del:xy`` ("xy" typed as
"x"), ``ins:xy`` (``y`` typed after "x"), ``sub:xy`` (``x`` typed as ``y``), ``swap:xy`` ("xy" typed as "yx"). ``#``
marks the start of the word. A dropped or added doubled letter is keyed on the letter itself (``del:ll``,
``ins:ll``): "totaly" for "totally" is one of the most common learner errors. The probability of an edit is how often
learners made it (``errors``, counted in the training pairs by ``models.gec.spelling_model``) over how often they had
the chance (``contexts``: the letters and letter pairs of the words they meant).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

START = "#"


def edit_operations(typed: str, intended: str) -> list[str]:
    """The letter edits that turn ``intended`` into ``typed`` (one optimal alignment), keyed as in the docstring."""
    a, b = START + intended, START + typed
    rows, cols = len(a), len(b)
    d = [[i if j == 0 else j if i == 0 else 0 for j in range(cols)] for i in range(rows)]
    for i in range(1, rows):
        for j in range(1, cols):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i] != b[j]))
            if i > 1 and j > 1 and a[i] == b[j - 1] and a[i - 1] == b[j]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    edits: list[str] = []
    i, j = rows - 1, cols - 1
    while i > 0 or j > 0:
        swapped = i > 1 and j > 1 and a[i] != b[j] and a[i] == b[j - 1] and a[i - 1] == b[j]
        if swapped and d[i][j] == d[i - 2][j - 2] + 1:
            edits.append(f"swap:{a[i - 1]}{a[i]}")
            i, j = i - 2, j - 2
        elif i > 0 and j > 0 and d[i][j] == d[i - 1][j - 1] + (a[i] != b[j]):
            if a[i] != b[j]:
                edits.append(f"sub:{a[i]}{b[j]}")
            i, j = i - 1, j - 1
        elif i > 0 and d[i][j] == d[i - 1][j] + 1:
            doubled = i + 1 < rows and a[i + 1] == a[i]
            edits.append(f"del:{a[i] if doubled else a[i - 1]}{a[i]}")
            i -= 1
        else:
            doubled = b[j - 1] == b[j] or (j + 1 < cols and b[j + 1] == b[j])
            edits.append(f"ins:{b[j] if doubled else a[i]}{b[j]}")
            j -= 1
    return edits


def context(edit: str) -> str:
    """What the edit needs in the intended word: the letter pair (deletions, swaps) or the letter (the others)."""
    kind, letters = edit.split(":")
    return letters if kind in ("del", "swap") else letters[0]


def contexts_of(words: Mapping[str, int]) -> dict[str, int]:
    """The letters and letter pairs (``#`` at the start) of ``words``, each counted as often as its word."""
    counts: dict[str, int] = {}
    for word, count in words.items():
        marked = START + word
        for i, letter in enumerate(marked):
            counts[letter] = counts.get(letter, 0) + count
            if i:
                pair = marked[i - 1 : i + 1]
                counts[pair] = counts.get(pair, 0) + count
    return counts


class LetterEdits:
    """P(typed | intended) as the product of its edits' probabilities (add-a-half smoothed)."""

    def __init__(self, errors: Mapping[str, int], contexts: Mapping[str, int]) -> None:
        self.errors = errors
        self.contexts = contexts

    def log_prob(self, typed: str, intended: str) -> float:
        return sum(
            math.log((self.errors.get(edit, 0) + 0.5) / (self.contexts.get(context(edit), 0) + 1.0))
            for edit in edit_operations(typed, intended)
        )
