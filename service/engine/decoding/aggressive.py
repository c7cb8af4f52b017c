"""Input-guided aggressive decoding (Ge et al., 2022), batched, with per-row cache rollback.

The draft is the source itself. One pass feeds a row's pending token plus the rest of its
draft; the longest prefix where the model's argmax equals the draft is accepted, plus the
model's own token at the first mismatch (its inputs were all correct, so it is what greedy
would produce). After a mismatch the row decodes one token per pass until its last 1-3
output tokens match a unique n-gram of the source, then drafts again from just after it
(``alignment``). Every accepted token is the argmax given exactly the greedy prefix, so the output
is token-for-token the greedy output; with a keep bias, greedy's output under the same bias.

Relaxed verification (Stern et al., 2018) is opt-in: ``relaxed_top_k`` accepts a draft token
that is within the model's top-k, ``min_block`` always accepts that many draft tokens. Both
trade exactness for fewer passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.engine.decoding.alignment import Alignment
from service.engine.decoding.continuous import ContinuousDecoder
from service.engine.decoding.params import DecodeParams, DecodeResult, token_logprobs, top_gap
from service.engine.model import pad_rows

CPU_PASS_COST = 16.0  # DecodeParams.pass_cost on a CPU, measured (README, Tuning)


@dataclass
class _Row:
    align: Alignment  # the draft: the source and </s>, where the output stands in it, the keep bias
    limit: int
    pending: list[int]  # tokens whose keys/values are not in the cache yet
    result: DecodeResult = field(default_factory=lambda: DecodeResult(tokens=[]))


def _accepts(params: DecodeParams, position_logits: np.ndarray, argmax: int, token: int, index: int) -> bool:
    if token == argmax or index < params.min_block:
        return True
    if params.relaxed_top_k > 1:
        kth = np.partition(position_logits, -params.relaxed_top_k)[-params.relaxed_top_k]
        return bool(position_logits[token] >= kth)
    return False


def split_blocks(widths: Sequence[int], pass_cost: float) -> list[list[int]]:
    """Rows grouped for one pass each, so that narrow blocks are not padded to the widest.

    A pass costs about ``pass_cost`` token positions on top of its rows times its width; the
    rows are split at the width that minimises that cost (at most two groups: rows decoding a
    token or two apart from rows verifying drafts), or kept together when a split saves less.
    """
    order = sorted(range(len(widths)), key=lambda i: widths[i])
    best_cost: float = len(order) * widths[order[-1]]
    best_split = len(order)
    for split in range(1, len(order)):
        narrow, wide = widths[order[split - 1]], widths[order[-1]]
        cost = pass_cost + split * narrow + (len(order) - split) * wide
        if cost < best_cost:
            best_cost, best_split = cost, split
    groups = [order[:best_split], order[best_split:]]
    return [sorted(group) for group in groups if group]


class AggressiveDecoder(ContinuousDecoder[_Row]):
    """Each pass verifies every row's draft and keeps the longest prefix greedy would produce."""

    takes_keep_bias = True

    def new_rows(self, source: Sequence[int], keep_bias: float) -> list[_Row]:
        m = self.manifest
        align = Alignment([*source, m.eos_token_id], keep_bias)
        return [_Row(align, self.limit(source), list(m.decoder_prefix_ids))]

    def advance(self) -> list[int]:
        params, m = self.params, self.manifest
        busy = self.busy()
        if not busy:
            return []
        busy_rows = dict(busy)
        blocks: list[list[int]] = [[] for _ in self.rows]  # free slots: nothing
        guessed: dict[int, list[int | None]] = {}  # slot -> the pointers along a guessed draft
        for slot, row in busy:
            room = row.limit - len(row.result.tokens) - 1  # leave room for the model's own token
            pointer = row.align.pointer
            if pointer is None and params.max_guess and (guess := row.align.guess(row.result.tokens)) is not None:
                drafted = row.align.draft[guess : guess + min(room, params.max_guess)]
                guessed[slot] = row.align.pointers_along(row.result.tokens, drafted)
            else:
                drafted = [] if pointer is None else row.align.draft[pointer : pointer + min(room, params.max_draft)]
            blocks[slot] = row.pending + drafted
        before = self.state.lengths.copy()
        logits: dict[int, np.ndarray] = {}
        chosen: dict[int, np.ndarray] = {}  # each row's argmax at every position, one argmax per pass
        for group in self._groups(blocks, busy):
            tokens, counts = pad_rows([blocks[slot] for slot in group], m.pad_token_id)
            rows = None if len(group) == len(self.rows) else np.array(group, dtype=np.int64)
            out = self.state.step(tokens, counts, rows)
            for j, slot in enumerate(group):
                fed = busy_rows.get(slot)
                if fed is None:
                    continue
                # the keep bias at the positions predicting the draft and the token after it, as greedy decoding
                # would lean them were the draft its output
                if slot in guessed:
                    fed.align.lean_along(out[j, len(fed.pending) - 1 :], guessed[slot])
                else:
                    fed.align.lean(out[j, len(fed.pending) - 1 :], len(blocks[slot]) - len(fed.pending) + 1)
            best = out.argmax(-1)
            for j, slot in enumerate(group):
                logits[slot], chosen[slot] = out[j], best[j]

        done, lengths = [], before.copy()
        for slot, row in busy:
            result, scores, argmax = row.result, logits[slot], chosen[slot]
            base = len(row.pending) - 1
            drafted = blocks[slot][len(row.pending) :]
            matched = 0
            while matched < len(drafted) and _accepts(
                params, scores[base + matched], int(argmax[base + matched]), drafted[matched], matched
            ):
                matched += 1
            gained = [*drafted[:matched], int(argmax[base + matched])]
            if params.record_gaps:
                result.gaps.extend(top_gap(scores[base + k]) for k in range(len(gained)))
            result.logprobs += token_logprobs(scores[base : base + len(gained)], gained)
            result.passes += 1
            lengths[slot] = before[slot] + len(row.pending) + matched
            finished = False
            if m.eos_token_id in gained:
                gained = gained[: gained.index(m.eos_token_id)]
                del result.logprobs[len(result.tokens) + len(gained) :]
                finished = True
            result.tokens.extend(gained)
            result.accepted.append(len(gained) + (1 if finished else 0))
            if not finished and len(result.tokens) >= row.limit:
                result.finished, finished = False, True
            if finished:
                done.append(slot)
                continue
            row.pending = [result.tokens[-1]]
            if slot in guessed:  # the alignment follows each token gained, as greedy decoding's does
                start = len(result.tokens) - len(gained)
                for end in range(start + 1, len(result.tokens) + 1):
                    row.align.follow(result.tokens[:end])
                continue
            if row.align.pointer is not None:
                row.align.pointer += matched  # at the draft token the model's own token is checked against
            row.align.follow(result.tokens)
        self.state.truncate(lengths)
        return done

    def _groups(self, blocks: list[list[int]], busy: list[tuple[int, _Row]]) -> list[list[int]]:
        """The slots fed by each pass: all of them in one pass (free ones padded), or with a
        ``pass_cost`` the busy ones split by block width (``split_blocks``)."""
        cost = self.params.pass_cost
        if cost is None:
            cost = 0.0 if self.model.on_gpu else CPU_PASS_COST
        if not cost:
            return [list(range(len(self.rows)))]
        slots = [slot for slot, _ in busy]
        groups = split_blocks([len(blocks[slot]) for slot in slots], cost)
        return [[slots[i] for i in group] for group in groups]
