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
from dataclasses import dataclass
from functools import cached_property

import numpy as np

MAX_ANCHOR = 3
MAX_GUESS = 3  # output tokens after a lost alignment that aggressive decoding still drafts a guess for


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
    draft token (None while the output is not aligned), ``keep_bias`` what the draft token's logit gains; ``lost``
    remembers where the alignment was last lost: the draft token the output did not copy and how long the output
    was before it."""

    draft: list[int]
    keep_bias: float = 0.0
    pointer: int | None = 0
    lost: tuple[int, int] | None = None

    @cached_property
    def anchors(self) -> dict[tuple[int, ...], list[int]]:
        """The draft's n-gram table (``anchors_of``), made the first time the output is realigned: most
        outputs never leave their source."""
        return anchors_of(self.draft[:-1])

    def lean(self, scores: np.ndarray, count: int) -> None:
        """Add the keep bias to ``scores[k]`` (the logits of the k-th next output token, for ``k < count``) at the
        token the output copies if it stays aligned that far."""
        if self.keep_bias and self.pointer is not None:
            expected = self.draft[self.pointer : self.pointer + count]
            scores[np.arange(len(expected)), expected] += self.keep_bias

    def lean_along(self, scores: np.ndarray, pointers: Sequence[int | None]) -> None:
        """Add the keep bias to ``scores[k]`` at the draft token of ``pointers[k]`` (``pointers_along``)."""
        if self.keep_bias:
            for k, pointer in enumerate(pointers):
                if pointer is not None and pointer < len(self.draft):
                    scores[k, self.draft[pointer]] += self.keep_bias

    def follow(self, output: Sequence[int]) -> None:
        """Move on after ``output`` gained its last token."""
        if self.pointer is not None and self.pointer < len(self.draft) and self.draft[self.pointer] == output[-1]:
            self.pointer += 1
            return
        if self.pointer is not None:
            self.lost = (self.pointer, len(output) - 1)
        self.pointer = realign(output, self.anchors)

    def guess(self, output: Sequence[int]) -> int | None:
        """Where the source likely goes on while the output is not aligned, for aggressive decoding to draft
        from, for the ``MAX_GUESS`` tokens after the loss (None past them): just after the output's last token
        if that copies one of the three draft tokens from the one the output did not copy (a word left out or
        put in), else just after the draft token the output replaced."""
        if self.lost is None:
            return None
        index, length = self.lost
        if len(output) - length > MAX_GUESS:
            return None
        guess = index + 1
        for near in range(index, min(index + 3, len(self.draft))):
            if output and self.draft[near] == output[-1]:
                guess = near + 1
                break
        return guess if guess < len(self.draft) else None

    def pointers_along(self, output: Sequence[int], tokens: Sequence[int]) -> list[int | None]:
        """The pointer this alignment would have before each of ``len(tokens) + 1`` next tokens of ``output``,
        were ``tokens`` its next ones: what ``follow`` makes of them, without moving this alignment."""
        probe = Alignment(self.draft, self.keep_bias, self.pointer, self.lost)
        probe.__dict__["anchors"] = self.anchors  # the same table, not made again
        pointers = [probe.pointer]
        extended = list(output)
        for token in tokens:
            extended.append(token)
            probe.follow(extended)
            pointers.append(probe.pointer)
        return pointers
