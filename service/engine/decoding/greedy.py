"""Greedy decoding, batched: the autoregressive baseline, one token per row per pass.

With a keep bias, each row follows its alignment with the source (``alignment``) and the token it would copy
next gains the bias before the argmax: the same rule aggressive decoding verifies its drafts with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from service.engine.decoding.alignment import Alignment
from service.engine.decoding.continuous import ContinuousDecoder
from service.engine.decoding.params import DecodeResult, token_logprobs, top_gap


@dataclass
class _Row:
    limit: int
    feed: list[int]  # tokens for the next pass: the decoder prefix, then the last token
    result: DecodeResult
    align: Alignment | None  # followed only with a keep bias


class GreedyDecoder(ContinuousDecoder[_Row]):
    """Each pass feeds every row its last token and appends the argmax."""

    takes_keep_bias = True

    def new_rows(self, source: Sequence[int], keep_bias: float) -> list[_Row]:
        align = Alignment([*source, self.manifest.eos_token_id], keep_bias) if keep_bias else None
        return [_Row(self.limit(source), list(self.manifest.decoder_prefix_ids), DecodeResult(tokens=[]), align)]

    def advance(self) -> list[int]:
        busy = self.busy()
        if not busy:
            return []
        last = self.last_logits([(slot, row.feed) for slot, row in busy])
        for slot, row in busy:
            if row.align is not None:
                row.align.lean(last[slot : slot + 1], 1)
        chosen = last.argmax(-1)
        done = []
        for slot, row in busy:
            result = row.result
            result.passes += 1
            result.accepted.append(1)
            if self.params.record_gaps:
                result.gaps.append(top_gap(last[slot]))
            token = int(chosen[slot])
            if token == self.manifest.eos_token_id:
                done.append(slot)
                continue
            result.tokens.append(token)
            result.logprobs += token_logprobs(last[slot : slot + 1], [token])
            row.feed = [token]
            if row.align is not None:
                row.align.follow(result.tokens)
            if len(result.tokens) >= row.limit:
                result.finished = False
                done.append(slot)
        return done
