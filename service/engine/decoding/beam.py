"""Beam search, batched: the rules of ``transformers`` 5.23 ``generate(num_beams=k, do_sample=False)``.

Each source holds ``k`` rows of one ``DecoderState`` (slots of a ``ContinuousDecoder``, so sources
join and leave between passes); the encoder runs once per source, the first pass feeds the first
of its rows, and after each pass every row takes its parent beam's cache. Per step and source
(``t`` = tokens generated so far including this step, ``L = t + len(decoder prefix) - 1``: a
forced BOS counts, as in HF):

- candidates score ``beam score + log_softmax(logits)``; the best ``2k`` of all ``k * V`` are kept,
  best first;
- a candidate "ends" when its token is ``</s>`` or ``t`` reaches ``max_new_tokens``; of the ends,
  only those among the best ``k`` candidates become finished hypotheses, scored
  ``sum log p / L ** length_penalty`` (``L`` counts the ``</s>``), and the finished list keeps its
  best ``k``;
- the best ``k`` candidates that did not end are the next running beams;
- nothing joins the finished list any more once the source is done: with ``early_stopping=True``
  as soon as ``k`` hypotheses are finished; otherwise once ``k`` are finished and the best running
  beam's score over ``L ** length_penalty`` (``early_stopping="never"`` with a positive penalty
  uses the maximum length instead of ``L``) is not above the worst finished score; always at
  ``max_new_tokens``.

The result's hypotheses are the best ``num_return_sequences`` finished ones, best first, scored
as HF's ``sequences_scores``. ``num_beams=1`` reproduces greedy decoding (what HF runs then).

``num_beam_groups > 1`` runs diverse beam search instead, a source's rows split into groups
(``service.engine.decoding.diverse``); both are one source's steps to ``BeamDecoder``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from service.engine.decoding.continuous import ContinuousDecoder
from service.engine.decoding.diverse import GroupSearch, check_group_params
from service.engine.decoding.params import DecodeParams, DecodeResult, Hypothesis
from service.engine.decoding.ranking import Finished, Rules, best, log_softmax
from service.engine.model import Seq2SeqModel, StopCheck


class Search(Protocol):
    """One source's beam search, as ``BeamDecoder`` drives it a pass at a time."""

    step: int  # tokens generated so far
    done: bool
    result: DecodeResult

    def feeds(self, index: int) -> bool:
        """Whether row ``index`` is decoded in the next pass (a row that is not idles)."""
        ...

    def advance(self, logits: np.ndarray) -> list[tuple[int, int]]:
        """One step from the logits of every row of the source: each continuing row's (parent row, token), by row."""
        ...

    def finish(self, count: int) -> DecodeResult:
        """The result once ``done``: the best ``count`` hypotheses."""
        ...


@dataclass
class _Source:
    rules: Rules
    limit: int
    beams: list[list[int]]  # running beams' content tokens, best first
    scores: np.ndarray  # their summed log-probabilities
    finished: list[Finished] = field(default_factory=list)  # best first, at most num_beams
    step: int = 0  # tokens generated so far
    done: bool = False
    result: DecodeResult = field(default_factory=lambda: DecodeResult(tokens=[]))

    def feeds(self, index: int) -> bool:
        return index < len(self.scores)

    def advance(self, logits: np.ndarray) -> list[tuple[int, int]]:
        logp = log_softmax(logits[: len(self.scores)])
        vocab = logp.shape[-1]
        chosen = _advance(self, (logp + self.scores[:, None]).ravel(), vocab, self.step, self.rules)
        return [(int(parent), int(token)) for parent, token in zip(chosen // vocab, chosen % vocab, strict=True)]

    def finish(self, count: int) -> DecodeResult:
        result = self.result
        result.hypotheses = [Hypothesis(f.tokens, f.score) for f in self.finished[:count]]
        result.tokens = list(self.finished[0].tokens)
        result.finished = self.finished[0].eos
        return result


@dataclass
class _Beam:
    """One row of a source: its ``index``-th beam (rows the search does not feed idle)."""

    source: Search
    index: int
    feed: list[int]  # tokens for the next pass: the decoder prefix, then the beam's last token

    @property
    def result(self) -> DecodeResult:
        return self.source.result


def check_beam_params(params: DecodeParams) -> None:
    """Raise ``ValueError`` for beam settings ``transformers`` would also refuse."""
    if params.num_beams < 1:
        raise ValueError(f"num_beams must be >= 1, got {params.num_beams}")
    if not 1 <= params.num_return_sequences <= params.num_beams:
        raise ValueError(
            f"num_return_sequences must be between 1 and num_beams ({params.num_beams}), "
            f"got {params.num_return_sequences}"
        )
    if params.early_stopping not in (True, False, "never"):
        raise ValueError(f"early_stopping must be True, False or 'never', got {params.early_stopping!r}")
    check_group_params(params)


def _add_finished(source: _Source, new: list[Finished], keep: int) -> None:
    merged = source.finished + new
    order = sorted(range(len(merged)), key=lambda i: -merged[i].score)  # stable: older first on ties
    source.finished = [merged[i] for i in order[:keep]]


def _is_done(source: _Source, rules: Rules, step: int) -> bool:
    if step >= source.limit:
        return True
    if len(source.finished) < rules.num_beams:
        return False
    if rules.early_stopping is True:
        return True
    if rules.early_stopping == "never" and rules.length_penalty > 0.0:
        length = source.limit + rules.offset
    else:
        length = step + rules.offset
    best_possible = float(source.scores[0]) / length**rules.length_penalty
    return not best_possible > source.finished[-1].score


def _advance(source: _Source, candidates: np.ndarray, vocab: int, step: int, rules: Rules) -> np.ndarray:
    """One step of one source; returns the chosen candidates (parent * vocab + token) to continue."""
    k = rules.num_beams
    top = best(candidates, 2 * k)
    parents, tokens = top // vocab, top % vocab
    ends = (tokens == rules.eos) | (step >= source.limit)
    length = (step + rules.offset) ** rules.length_penalty
    new = [
        Finished(
            float(candidates[top[j]]) / length,
            source.beams[parents[j]] + ([] if tokens[j] == rules.eos else [int(tokens[j])]),
            bool(tokens[j] == rules.eos),
        )
        for j in range(min(k, len(top)))
        if ends[j]
    ]
    _add_finished(source, new, k)
    chosen: np.ndarray = top[~ends][:k]
    source.beams = [source.beams[p] + [int(t)] for p, t in zip(chosen // vocab, chosen % vocab, strict=True)]
    source.scores = candidates[chosen]
    source.done = _is_done(source, rules, step)
    return chosen


class BeamDecoder(ContinuousDecoder[_Beam]):
    """Each pass extends every source's running beams by one token and keeps the best ``k`` (per group, with
    ``num_beam_groups > 1``)."""

    def __init__(self, model: Seq2SeqModel, params: DecodeParams, stop: StopCheck | None = None) -> None:
        check_beam_params(params)
        super().__init__(model, params, stop)
        m = self.manifest
        self.rules = Rules(
            num_beams=params.num_beams,
            length_penalty=params.length_penalty,
            early_stopping=True if params.num_beams == 1 else params.early_stopping,
            eos=m.eos_token_id,
            offset=len(m.decoder_prefix_ids) - 1,
        )

    def new_rows(self, source: Sequence[int], keep_bias: float) -> list[_Beam]:
        limit = self.limit(source)
        state: Search
        if self.params.num_beam_groups > 1:
            state = GroupSearch(self.rules, limit, self.params, self.manifest.pad_token_id)
        else:
            state = _Source(self.rules, limit, beams=[[]], scores=np.zeros(1))
        prefix = list(self.manifest.decoder_prefix_ids)
        return [_Beam(state, index, prefix) for index in range(self.params.num_beams)]

    def advance(self) -> list[int]:
        busy = sorted(self.busy(), key=lambda item: item[1].index)
        if not busy:
            return []
        sources: dict[int, list[int]] = {}  # id(source) -> its slots, by beam index
        for slot, row in busy:
            sources.setdefault(id(row.source), []).append(slot)
        last = self.last_logits([(slot, row.feed) for slot, row in busy if row.source.feeds(row.index)])
        parents = np.arange(len(self.rows))
        done: list[int] = []
        for slots in sources.values():
            first = self.rows[slots[0]]
            assert first is not None
            source = first.source
            source.step += 1
            source.result.passes += 1
            source.result.accepted.append(1)
            moves = source.advance(last[slots])
            if source.done:
                source.finish(self.params.num_return_sequences)
                done.extend(slots)
                continue
            for slot, (parent, token) in zip(slots, moves, strict=False):
                parents[slot] = slots[parent]
                beam = self.rows[slot]
                assert beam is not None
                beam.feed = [token]
        self.state.inherit(parents)
        return done
