"""Where an output stands against its source, and the keep bias that leans each step towards copying it.

An output is *aligned* while it copies its source: the source token it is expected to copy next is the *draft
token*. A copied token moves the alignment one token on; any other token (an edit) loses it, and it is found again
once the output's last 1-3 tokens equal a source n-gram that occurs only once (``realign``). Aggressive decoding
drafts from this alignment, and the keep bias adds a constant to the draft token's logit before the argmax:
above 0 the output keeps more of its source (fewer edits, more precision), below 0 it edits more (more recall).
Greedy and aggressive decoding follow the same alignment, so with the same bias they give the same output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

MAX_ANCHOR = 3


def anchors_of(content: Sequence[int]) -> dict[tuple[int, ...], list[int]]:
    """Every 1-3 token n-gram of ``content`` with the positions just after its occurrences."""
    table: dict[tuple[int, ...], list[int]] = {}
    for n in range(1, MAX_ANCHOR + 1):
        for end in range(n, len(content) + 1):
            table.setdefault(tuple(content[end - n : end]), []).append(end)
    return table


def realign(output: Sequence[int], anchors: dict[tuple[int, ...], list[int]]) -> int | None:
    """Draft index just after a unique source n-gram equal to the output's last 1-3 tokens.

    Longer suffixes are tried first; None when no suffix has exactly one occurrence.
    """
    for n in range(min(MAX_ANCHOR, len(output)), 0, -1):
        ends = anchors.get(tuple(output[-n:]))
        if ends is not None and len(ends) == 1:
            return ends[0]
    return None


@dataclass
class Alignment:
    """An output's alignment with its source: ``draft`` is the source and ``</s>``, ``pointer`` the index of the
    draft token (None while the output is not aligned), ``keep_bias`` what the draft token's logit gains."""

    draft: list[int]
    keep_bias: float = 0.0
    pointer: int | None = 0
    anchors: dict[tuple[int, ...], list[int]] = field(init=False)

    def __post_init__(self) -> None:
        self.anchors = anchors_of(self.draft[:-1])

    def lean(self, scores: np.ndarray, count: int) -> None:
        """Add the keep bias to ``scores[k]`` (the logits of the k-th next output token, for ``k < count``) at the
        token the output copies if it stays aligned that far."""
        if self.keep_bias and self.pointer is not None:
            expected = self.draft[self.pointer : self.pointer + count]
            scores[np.arange(len(expected)), expected] += self.keep_bias

    def follow(self, output: Sequence[int]) -> None:
        """Move on after ``output`` gained its last token."""
        if self.pointer is not None and self.pointer < len(self.draft) and self.draft[self.pointer] == output[-1]:
            self.pointer += 1
        else:
            self.pointer = realign(output, self.anchors)
