"""Ancestral sampling, batched: temperature, top-k and top-p (nucleus) as ``transformers`` 5.23 applies them.

Per step the logits are divided by ``temperature`` (skipped at 1.0), then everything below the
``top_k``-th largest value is dropped (``top_k=0``: off; ties with the k-th are kept), then the
nucleus filter drops, from the least likely token up, every token whose cumulative probability
is <= ``1 - top_p`` (the most likely token always stays; ``top_p=1``: off); the next token is
drawn from the softmax of what is left. ``temperature`` 0 or ``top_k=1`` is greedy decoding; a
temperature between 0 and ``MIN_TEMPERATURE`` is refused (dividing logits by a subnormal number
overflows them to infinity, and below 0.01 sampling is greedy decoding in all but name).

Each source yields ``num_return_sequences`` samples, in draw order; ``tokens`` is the first.
A sample's score is its log-probability under the unmodified model (sum of ``log_softmax`` of
the raw logits over its tokens, ``</s>`` included when it ended there).

Each sample is a row of a ``ContinuousDecoder`` (sources join and leave between passes).
Reproducibility: each source draws from its own ``numpy.random.Generator`` seeded with
``SeedSequence([seed, *source tokens])``, and only its own rows use it, in sample order; so a
source's samples depend on the seed and its tokens only, never on where it sits in a batch, on
the other sources, or on when it joined (the service batches sentences of different requests
together). Without a seed, each source draws one from the OS.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.engine.decoding.continuous import ContinuousDecoder
from service.engine.decoding.params import DecodeParams, DecodeResult, Hypothesis
from service.engine.decoding.ranking import log_softmax
from service.engine.model import Seq2SeqModel, StopCheck


@dataclass
class _Source:
    rng: np.random.Generator
    samples: list[_Sample] = field(default_factory=list)  # in draw order
    running: int = 0  # samples still decoding
    result: DecodeResult = field(default_factory=lambda: DecodeResult(tokens=[]))


@dataclass
class _Sample:
    """One row: a source's ``index``-th sample."""

    source: _Source
    index: int
    limit: int
    feed: list[int]  # tokens for the next pass: the decoder prefix, then the last token
    tokens: list[int] = field(default_factory=list)
    score: float = 0.0
    finished: bool = True

    @property
    def result(self) -> DecodeResult:
        return self.source.result


MIN_TEMPERATURE = 0.01
MAX_TEMPERATURE = 10.0


def check_sampling_params(params: DecodeParams) -> None:
    """Raise ``ValueError`` for settings that have no meaning."""
    if not (params.temperature == 0.0 or MIN_TEMPERATURE <= params.temperature <= MAX_TEMPERATURE):
        raise ValueError(
            f"temperature must be 0 (greedy) or between {MIN_TEMPERATURE:g} and {MAX_TEMPERATURE:g},"
            f" got {params.temperature}"
        )
    if params.num_return_sequences < 1:
        raise ValueError(f"num_return_sequences must be >= 1, got {params.num_return_sequences}")
    if params.top_k < 0:
        raise ValueError(f"top_k must be >= 0 (0: off), got {params.top_k}")
    if not 0.0 < params.top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {params.top_p}")
    if params.seed is not None and params.seed < 0:
        raise ValueError(f"seed must be >= 0, got {params.seed}")


def is_greedy(params: DecodeParams) -> bool:
    """Settings under which sampling always takes the most likely token."""
    return params.temperature == 0.0 or params.top_k == 1


def warp(logits: np.ndarray, params: DecodeParams) -> np.ndarray:
    """Temperature, then top-k, then top-p over ``logits [R,V]``; dropped tokens become -inf."""
    x = logits.astype(np.float64)
    if params.temperature != 1.0:
        x = x / params.temperature
    if params.top_k > 0:
        k = min(params.top_k, x.shape[-1])
        kth = np.partition(x, -k, axis=-1)[:, -k, None]
        x = np.where(x < kth, -np.inf, x)
    if params.top_p < 1.0:
        order = np.argsort(x, axis=-1, kind="stable")
        ascending = np.take_along_axis(x, order, axis=-1)
        cumulative = np.exp(log_softmax(ascending)).cumsum(axis=-1)
        drop = cumulative <= 1.0 - params.top_p
        drop[:, -1] = False
        np.put_along_axis(drop, order, drop.copy(), axis=-1)
        x = np.where(drop, -np.inf, x)
    return x


def draw(scores: np.ndarray, rng: np.random.Generator) -> int:
    """One token from the softmax of ``scores [V]`` (-inf: never drawn)."""
    cumulative = np.exp(scores - scores.max()).cumsum()
    return min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")), len(scores) - 1)


def _generator(params: DecodeParams, source: Sequence[int]) -> np.random.Generator:
    seed = params.seed if params.seed is not None else secrets.randbits(63)
    return np.random.default_rng(np.random.SeedSequence([seed, *source]))


def _choose(logits: np.ndarray, rngs: list[np.random.Generator], params: DecodeParams) -> list[int]:
    """The next token of each row; rows are drawn in order, row ``r`` from ``rngs[r]``."""
    if is_greedy(params):
        return [int(t) for t in logits.argmax(-1)]
    scores = warp(logits, params)
    return [draw(scores[r], rng) for r, rng in enumerate(rngs)]


def _conclude(source: _Source) -> None:
    """Fill the source's result from its samples (all finished)."""
    result = source.result
    first = source.samples[0]
    result.tokens, result.finished = list(first.tokens), first.finished
    result.hypotheses = [Hypothesis(list(s.tokens), s.score) for s in source.samples]


class SampleDecoder(ContinuousDecoder[_Sample]):
    """Each pass draws the next token of every sample; a source is done when all its samples are."""

    def __init__(self, model: Seq2SeqModel, params: DecodeParams, stop: StopCheck | None = None) -> None:
        check_sampling_params(params)
        super().__init__(model, params, stop)

    def new_rows(self, source: Sequence[int], keep_bias: float) -> list[_Sample]:
        state = _Source(_generator(self.params, source), running=self.params.num_return_sequences)
        prefix = list(self.manifest.decoder_prefix_ids)
        state.samples = [_Sample(state, index, self.limit(source), prefix) for index in range(state.running)]
        return list(state.samples)

    def advance(self) -> list[int]:
        busy = sorted(self.busy(), key=lambda item: item[1].index)  # each source's samples in draw order
        if not busy:
            return []
        logits = self.last_logits([(slot, row.feed) for slot, row in busy])[[slot for slot, _ in busy]]
        logp = log_softmax(logits)
        chosen = _choose(logits, [row.source.rng for _, row in busy], self.params)
        for source in {id(row.source): row.source for _, row in busy}.values():
            source.result.passes += 1
            source.result.accepted.append(1)
        done = []
        for r, ((slot, row), token) in enumerate(zip(busy, chosen, strict=True)):
            row.score += float(logp[r, token])
            if token != self.manifest.eos_token_id:
                row.tokens.append(token)
                row.feed = [token]
                if len(row.tokens) < row.limit:
                    continue
                row.finished = False
            done.append(slot)
            row.source.running -= 1
            if not row.source.running:
                _conclude(row.source)
        return done
