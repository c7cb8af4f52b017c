"""Greedy decoding, batched: the autoregressive baseline, one token per row per pass."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.decoding.types import DecodeParams, DecodeResult, default_max_new_tokens, top_gap
from service.engine.model import Seq2SeqModel, StopCheck


def greedy(
    model: Seq2SeqModel, sources: Sequence[Sequence[int]], params: DecodeParams, stop: StopCheck | None = None
) -> list[DecodeResult]:
    """Decode every source greedily; rows leave the batch as they finish."""
    m = model.manifest
    prefix = np.array(m.decoder_prefix_ids, dtype=np.int64)
    results = [DecodeResult(tokens=[]) for _ in sources]
    limits = [
        params.max_new_tokens or default_max_new_tokens(len(s), m.max_target_positions, len(prefix)) for s in sources
    ]
    state = model.start(sources, stop)
    active = np.arange(len(sources))
    tokens = np.tile(prefix, (len(sources), 1))
    while len(active):
        last = state.step(tokens)[:, -1]
        chosen = last.argmax(-1)
        keep = []
        for i, row in enumerate(active):
            result = results[row]
            result.passes += 1
            result.accepted.append(1)
            if params.record_gaps:
                result.gaps.append(top_gap(last[i]))
            token = int(chosen[i])
            if token == m.eos_token_id:
                continue
            result.tokens.append(token)
            if len(result.tokens) >= limits[row]:
                result.finished = False
                continue
            keep.append(i)
        if len(keep) < len(active):
            keep_rows = np.array(keep, dtype=np.int64)
            state.select(keep_rows)
            active, chosen = active[keep_rows], chosen[keep_rows]
        tokens = chosen[:, None].astype(np.int64)
    return results
