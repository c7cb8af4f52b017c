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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.engine.decoding.continuous import ContinuousDecoder
from service.engine.decoding.types import DecodeParams, DecodeResult, Hypothesis
from service.engine.model import Seq2SeqModel, StopCheck


@dataclass
class _Finished:
    score: float
    tokens: list[int]
    eos: bool  # ended at </s> (False: cut by the length limit)


@dataclass
class _Source:
    limit: int
    beams: list[list[int]]  # running beams' content tokens, best first
    scores: np.ndarray  # their summed log-probabilities
    finished: list[_Finished] = field(default_factory=list)  # best first, at most num_beams
    step: int = 0  # tokens generated so far
    done: bool = False
    result: DecodeResult = field(default_factory=lambda: DecodeResult(tokens=[]))


@dataclass
class _Beam:
    """One row of a source: its ``index``-th running beam (rows past the running beams idle)."""

    source: _Source
    index: int
    feed: list[int]  # tokens for the next pass: the decoder prefix, then the beam's last token

    @property
    def result(self) -> DecodeResult:
        return self.source.result


@dataclass(frozen=True)
class _Rules:
    num_beams: int
    length_penalty: float
    early_stopping: bool | str
    eos: int
    offset: int  # decoder prefix tokens that HF counts as generated (a forced BOS)


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


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities over the last axis, in float64."""
    x = logits.astype(np.float64)
    x -= x.max(axis=-1, keepdims=True)
    logp: np.ndarray = x - np.log(np.exp(x).sum(axis=-1, keepdims=True))
    return logp


def _best(scores: np.ndarray, count: int) -> np.ndarray:
    """Indices of the ``count`` highest scores, best first (ties: lower index first)."""
    count = min(count, len(scores))
    top = np.argpartition(-scores, count - 1)[:count]
    return top[np.lexsort((top, -scores[top]))]


def _add_finished(source: _Source, new: list[_Finished], keep: int) -> None:
    merged = source.finished + new
    order = sorted(range(len(merged)), key=lambda i: -merged[i].score)  # stable: older first on ties
    source.finished = [merged[i] for i in order[:keep]]


def _is_done(source: _Source, rules: _Rules, step: int) -> bool:
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


def _advance(source: _Source, candidates: np.ndarray, vocab: int, step: int, rules: _Rules) -> np.ndarray:
    """One step of one source; returns the chosen candidates (parent * vocab + token) to continue."""
    k = rules.num_beams
    top = _best(candidates, 2 * k)
    parents, tokens = top // vocab, top % vocab
    ends = (tokens == rules.eos) | (step >= source.limit)
    length = (step + rules.offset) ** rules.length_penalty
    new = [
        _Finished(
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


def _finish(source: _Source, count: int) -> DecodeResult:
    result = source.result
    result.hypotheses = [Hypothesis(f.tokens, f.score) for f in source.finished[:count]]
    result.tokens = list(source.finished[0].tokens)
    result.finished = source.finished[0].eos
    return result


class BeamDecoder(ContinuousDecoder[_Beam]):
    """Each pass extends every source's running beams by one token and keeps the best ``k``."""

    def __init__(self, model: Seq2SeqModel, params: DecodeParams, stop: StopCheck | None = None) -> None:
        check_beam_params(params)
        super().__init__(model, params, stop)
        m = self.manifest
        self.rules = _Rules(
            num_beams=params.num_beams,
            length_penalty=params.length_penalty,
            early_stopping=True if params.num_beams == 1 else params.early_stopping,
            eos=m.eos_token_id,
            offset=len(m.decoder_prefix_ids) - 1,
        )

    def new_rows(self, source: Sequence[int], keep_bias: float) -> list[_Beam]:
        state = _Source(limit=self.limit(source), beams=[[]], scores=np.zeros(1))
        prefix = list(self.manifest.decoder_prefix_ids)
        return [_Beam(state, index, prefix) for index in range(self.params.num_beams)]

    def advance(self) -> list[int]:
        busy = sorted(self.busy(), key=lambda item: item[1].index)
        if not busy:
            return []
        sources: dict[int, list[int]] = {}  # id(source) -> its slots, by beam index
        for slot, row in busy:
            sources.setdefault(id(row.source), []).append(slot)
        last = self.last_logits([(slot, row.feed) for slot, row in busy if row.index < len(row.source.scores)])
        parents = np.arange(len(self.rows))
        done: list[int] = []
        for slots in sources.values():
            first = self.rows[slots[0]]
            assert first is not None
            source = first.source
            logp = log_softmax(last[slots[: len(source.scores)]])
            source.step += 1
            source.result.passes += 1
            source.result.accepted.append(1)
            candidates = (logp + source.scores[:, None]).ravel()
            chosen = _advance(source, candidates, logp.shape[-1], source.step, self.rules)
            if source.done:
                _finish(source, self.params.num_return_sequences)
                done.extend(slots)
                continue
            vocab = logp.shape[-1]
            for slot, parent, token in zip(slots, chosen // vocab, chosen % vocab, strict=False):
                parents[slot] = slots[parent]
                beam = self.rows[slot]
                assert beam is not None
                beam.feed = [int(token)]
        self.state.inherit(parents)
        return done
