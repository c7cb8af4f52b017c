"""Input-guided aggressive decoding (Ge et al., 2022), batched, with per-row cache rollback.

The draft is the source itself. One pass feeds a row's pending token plus the rest of its
draft; the longest prefix where the model's argmax equals the draft is accepted, plus the
model's own token at the first mismatch (its inputs were all correct, so it is what greedy
would produce). After a mismatch the row decodes one token per pass until its last 1-3
output tokens match a unique n-gram of the source, then drafts again from just after it.
Every accepted token is the argmax given exactly the greedy prefix, so the output is
token-for-token the greedy output.

Relaxed verification (Stern et al., 2018) is opt-in: ``relaxed_top_k`` accepts a draft token
that is within the model's top-k, ``min_block`` always accepts that many draft tokens. Both
trade exactness for fewer passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.engine.decoding.types import DecodeParams, DecodeResult, default_max_new_tokens, top_gap
from service.engine.model import Seq2SeqModel, StopCheck

MAX_ANCHOR = 3


@dataclass
class _Row:
    draft: list[int]  # source content + </s>
    anchors: dict[tuple[int, ...], list[int]]  # n-gram of the source -> end positions
    limit: int
    pending: list[int]  # tokens whose keys/values are not in the cache yet
    pointer: int | None = 0  # next draft index when aligned, else None
    result: DecodeResult = field(default_factory=lambda: DecodeResult(tokens=[]))


def _anchors(content: Sequence[int]) -> dict[tuple[int, ...], list[int]]:
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


def _accepts(params: DecodeParams, position_logits: np.ndarray, argmax: int, token: int, index: int) -> bool:
    if token == argmax or index < params.min_block:
        return True
    if params.relaxed_top_k > 1:
        kth = np.partition(position_logits, -params.relaxed_top_k)[-params.relaxed_top_k]
        return bool(position_logits[token] >= kth)
    return False


def aggressive(
    model: Seq2SeqModel, sources: Sequence[Sequence[int]], params: DecodeParams, stop: StopCheck | None = None
) -> list[DecodeResult]:
    """Decode every source with input-guided aggressive decoding."""
    m = model.manifest
    eos, pad = m.eos_token_id, m.pad_token_id
    prefix = list(m.decoder_prefix_ids)
    rows = [
        _Row(
            draft=[*s, eos],
            anchors=_anchors(s),
            limit=params.max_new_tokens or default_max_new_tokens(len(s), m.max_target_positions, len(prefix)),
            pending=list(prefix),
        )
        for s in sources
    ]
    state = model.start(sources, stop)
    active = list(range(len(rows)))
    while active:
        blocks = []
        for index in active:
            row = rows[index]
            room = row.limit - len(row.result.tokens) - 1  # leave room for the model's own token
            drafted = [] if row.pointer is None else row.draft[row.pointer : row.pointer + min(room, params.max_draft)]
            blocks.append(row.pending + drafted)
        width = max(len(b) for b in blocks)
        tokens = np.full((len(blocks), width), pad, dtype=np.int64)
        counts = np.array([len(b) for b in blocks], dtype=np.int64)
        for i, block in enumerate(blocks):
            tokens[i, : len(block)] = block
        before = state.lengths.copy()
        logits = state.step(tokens, counts)
        chosen = logits.argmax(-1)

        keep, lengths = [], np.zeros(len(active), dtype=np.int64)
        for i, index in enumerate(active):
            row, result = rows[index], rows[index].result
            base = len(row.pending) - 1
            drafted = blocks[i][len(row.pending) :]
            matched = 0
            while matched < len(drafted) and _accepts(
                params, logits[i, base + matched], int(chosen[i, base + matched]), drafted[matched], matched
            ):
                matched += 1
            gained = [*drafted[:matched], int(chosen[i, base + matched])]
            if params.record_gaps:
                result.gaps.extend(top_gap(logits[i, base + k]) for k in range(len(gained)))
            result.passes += 1
            lengths[i] = before[i] + len(row.pending) + matched
            done = False
            if eos in gained:
                gained = gained[: gained.index(eos)]
                done = True
            result.tokens.extend(gained)
            result.accepted.append(len(gained) + (1 if done else 0))
            if not done and len(result.tokens) >= row.limit:
                result.finished, done = False, True
            if done:
                continue
            keep.append(i)
            row.pending = [result.tokens[-1]]
            if row.pointer is not None and matched == len(drafted):
                row.pointer += matched
                if row.pointer < len(row.draft) and row.draft[row.pointer] == result.tokens[-1]:
                    row.pointer += 1
                    continue
            row.pointer = realign(result.tokens, row.anchors)
        state.truncate(lengths)
        if len(keep) < len(active):
            keep_rows = np.array(keep, dtype=np.int64)
            state.select(keep_rows)
            active = [active[i] for i in keep]
    return [row.result for row in rows]
