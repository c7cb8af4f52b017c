"""Diverse beam search (Vijayakumar et al. 2016): ``transformers`` 4.55 ``generate(num_beams=k,
num_beam_groups=g, diversity_penalty=λ)``, its ``_group_beam_search`` with ``BeamSearchScorer`` (transformers 5 moved
it out of the library, to the Hub recipe ``transformers-community/group-beam-search``).

A source's ``k`` rows form ``g`` groups of ``s = k / g`` beams (group ``j``: rows ``j*s`` to ``(j+1)*s - 1``), each
a beam search of ``s`` beams, run one group after the other within a step. Group ``j`` scores a candidate
``beam score + log_softmax(logits) - λ * n``, ``n`` the rows of groups ``0..j-1`` that chose the same token at this
step (Hamming diversity); the penalty stays in the beam's score, so in its hypothesis's score too. With ``t`` and
``L`` as in ``service.engine.decoding.beam``, per step and group:

- at the start the first beam of each group scores 0 and the others -1e9 (a group does not start with copies);
- the best ``2s`` of the group's ``s * V`` candidates are ranked: a ``</s>`` among the best ``s`` becomes one of the
  group's finished hypotheses, scored ``sum / L ** length_penalty`` (the group keeps its best ``s``; once full, a
  newcomer must beat the worst), and the first ``s`` that are not ``</s>`` are the group's next beams;
- the group is done once it holds ``s`` hypotheses and either ``early_stopping`` is True, or the best candidate's
  score over ``L ** length_penalty`` (``"never"`` with a positive penalty: the longest ``L``) is not above its worst;
  a done group takes nothing more, and its rows count as choosing ``<pad>`` for the groups after it;
- the search ends when every group is done, or at ``max_new_tokens``, where each group not done takes its running
  beams as hypotheses (cut by the limit).

The result's hypotheses are the best ``num_return_sequences`` of all the groups' (on a tie, the later one first).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from service.engine.decoding.params import DecodeParams, DecodeResult, Hypothesis
from service.engine.decoding.ranking import Finished, Rules, best, log_softmax

UNREACHED = -1e9  # the starting score of a group's beams but its first


def check_group_params(params: DecodeParams) -> None:
    """Raise ``ValueError`` for group settings ``transformers`` would also refuse (and a penalty without groups)."""
    groups, penalty = params.num_beam_groups, params.diversity_penalty
    if groups < 1 or params.num_beams % groups:
        raise ValueError(
            f"num_beam_groups must be >= 1 and divide num_beams ({params.num_beams}) into equal groups, got {groups}"
        )
    if not math.isfinite(penalty) or penalty < 0.0:
        raise ValueError(f"diversity_penalty must be a finite number >= 0, got {penalty}")
    if groups > 1 and penalty == 0.0:
        raise ValueError("diversity_penalty must be above 0 with num_beam_groups > 1 (else the groups are copies)")
    if groups == 1 and penalty > 0.0:
        raise ValueError("diversity_penalty needs num_beam_groups > 1 (one group has no other group to differ from)")


@dataclass
class _Group:
    """One group's finished hypotheses (``transformers``' ``BeamHypotheses``)."""

    size: int
    hypotheses: list[Finished] = field(default_factory=list)  # in arrival order, at most ``size``
    worst: float = 1e9
    done: bool = False

    def add(self, hypothesis: Finished) -> None:
        if len(self.hypotheses) < self.size or hypothesis.score > self.worst:
            self.hypotheses.append(hypothesis)
            if len(self.hypotheses) > self.size:
                order = sorted(range(len(self.hypotheses)), key=lambda i: (self.hypotheses[i].score, i))
                self.worst = self.hypotheses[order[1]].score
                del self.hypotheses[order[0]]
            else:
                self.worst = min(hypothesis.score, self.worst)

    def finished_by(self, best_score: float, step: int, limit: int, rules: Rules) -> bool:
        """Whether no running beam can still beat the worst hypothesis (``best_score``: the best candidate's)."""
        if len(self.hypotheses) < self.size:
            return False
        if rules.early_stopping is True:
            return True
        longest = rules.early_stopping == "never" and rules.length_penalty > 0.0
        length = (limit if longest else step) + rules.offset
        bound: float = best_score / length**rules.length_penalty  # the most a running beam can still score
        return self.worst >= bound


class GroupSearch:
    """One source's diverse beam search (the ``Search`` that ``BeamDecoder`` drives)."""

    def __init__(self, rules: Rules, limit: int, params: DecodeParams, pad: int) -> None:
        self.rules, self.limit, self.pad = rules, limit, pad
        self.size = rules.num_beams // params.num_beam_groups
        self.penalty = params.diversity_penalty
        self.groups = [_Group(self.size) for _ in range(params.num_beam_groups)]
        self.beams: list[list[int]] = [[] for _ in range(rules.num_beams)]  # each row's content tokens
        self.scores = np.full(rules.num_beams, UNREACHED)
        self.scores[:: self.size] = 0.0
        self.step = 0
        self.done = False
        self.result = DecodeResult(tokens=[])

    def feeds(self, index: int) -> bool:
        return not self.groups[index // self.size].done

    def advance(self, logits: np.ndarray) -> list[tuple[int, int]]:
        rows = self.rules.num_beams
        chosen = np.full(rows, self.pad)  # each row's token this step, as the later groups count them
        moves = [(row, self.pad) for row in range(rows)]
        beams, scores = list(self.beams), self.scores.copy()
        for index, group in enumerate(self.groups):
            if group.done:
                continue
            start = index * self.size
            logp = log_softmax(logits[start : start + self.size])
            if start:
                logp = logp - self.penalty * np.bincount(chosen[:start], minlength=logp.shape[-1])
            candidates = (logp + self.scores[start : start + self.size, None]).ravel()
            top = best(candidates, 2 * self.size)
            self._rank(group, start, candidates, top, logp.shape[-1], (moves, beams, scores, chosen))
        self.beams, self.scores = beams, scores
        if self.step >= self.limit:
            length = (self.step + self.rules.offset) ** self.rules.length_penalty
            for index, group in enumerate(self.groups):
                for row in range(index * self.size, (index + 1) * self.size):
                    if not group.done:
                        group.add(Finished(float(scores[row]) / length, list(beams[row]), False))
        self.done = self.step >= self.limit or all(group.done for group in self.groups)
        return moves

    def _rank(
        self,
        group: _Group,
        start: int,
        candidates: np.ndarray,
        top: np.ndarray,
        vocab: int,
        out: tuple[list[tuple[int, int]], list[list[int]], np.ndarray, np.ndarray],
    ) -> None:
        """The group's hypotheses and next beams from its ranked candidates ``top``, into ``out`` (moves, beams,
        scores, chosen tokens: the next step's, by row)."""
        moves, beams, scores, chosen = out
        length = (self.step + self.rules.offset) ** self.rules.length_penalty
        taken = 0
        for rank, candidate in enumerate(top):
            parent, token = start + int(candidate) // vocab, int(candidate) % vocab
            if token == self.rules.eos:
                if rank < self.size:
                    group.add(Finished(float(candidates[candidate]) / length, list(self.beams[parent]), True))
                continue
            row = start + taken
            moves[row], beams[row] = (parent, token), [*self.beams[parent], token]
            scores[row], chosen[row] = candidates[candidate], token
            taken += 1
            if taken == self.size:
                break
        group.done = group.finished_by(float(candidates[top[0]]), self.step, self.limit, self.rules)

    def finish(self, count: int) -> DecodeResult:
        pool = sorted((h for group in self.groups for h in group.hypotheses), key=lambda h: h.score)[::-1]
        result = self.result
        result.hypotheses = [Hypothesis(h.tokens, h.score) for h in pool[:count]]
        result.tokens = list(pool[0].tokens)
        result.finished = pool[0].eos
        return result
