"""Parameters and results shared by all decoding strategies, and their JSON form (for a worker)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class DecodeParams:
    """Knobs of every strategy; each strategy reads the ones it knows.

    ``max_new_tokens`` counts generated tokens including the final ``</s>`` (as Hugging Face
    ``generate`` does); None means ``2 * source length + 10``, capped by the model's maximum.
    Relaxed verification (``relaxed_top_k > 1`` or ``min_block > 0``) is lossy and off by
    default.
    """

    max_new_tokens: int | None = None
    # beam search
    num_beams: int = 4
    num_return_sequences: int = 1
    length_penalty: float = 1.0
    early_stopping: bool | str = False  # True, False or "never" (as in transformers)
    # diverse beam search (``decoding.diverse``): the beams split into this many groups, each group's candidates
    # penalised by diversity_penalty per beam of an earlier group that chose the same token at the same step
    num_beam_groups: int = 1
    diversity_penalty: float = 0.0
    # sampling
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None
    # aggressive decoding. A verify pass costs about one token's FLOPs per draft token; on CPU,
    # where passes are FLOP-bound, drafting past a likely mismatch is wasted work: 16 measured
    # fastest on the default model (README benchmarks). On a GPU a longer draft is nearly free.
    max_draft: int = 16
    # aggressive decoding: tokens drafted from a guess of where the source goes on while the output is not aligned
    # (``Alignment.guess``); 0 drafts nothing then.
    max_guess: int = 16
    relaxed_top_k: int = 1
    # aggressive decoding: a pass costs about this many token positions besides its rows x width;
    # rows are split into two passes (narrow blocks apart from long drafts) where that saves more.
    # 0: one padded pass. None: the device's default, 16 on a CPU (measured: README, Tuning), 0 on
    # a GPU, where padding is nearly free.
    pass_cost: float | None = None
    min_block: int = 0
    # diagnostics: record the top-1 minus top-2 logit of every generated token
    record_gaps: bool = False


@dataclass
class Hypothesis:
    """One of several outputs for a source (beam search n-best, samples)."""

    tokens: list[int]
    score: float


@dataclass
class DecodeResult:
    """The output of one source: content tokens without the decoder prefix and ``</s>``."""

    tokens: list[int]
    finished: bool = True  # reached </s> (False: stopped at the length limit)
    passes: int = 0  # decoder passes this sequence took part in
    accepted: list[int] = field(default_factory=list)  # tokens gained in each pass
    hypotheses: list[Hypothesis] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)
    # greedy and aggressive decoding: the log-probability of each token of ``tokens`` where it was chosen, under the
    # distribution it was chosen from (the keep bias included): what a correction's confidence reads
    logprobs: list[float] = field(default_factory=list)

    @property
    def tokens_per_pass(self) -> float:
        return sum(self.accepted) / max(1, len(self.accepted))

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "finished": self.finished,
            "passes": self.passes,
            "accepted": self.accepted,
            "hypotheses": [[h.tokens, h.score] for h in self.hypotheses],
            "gaps": self.gaps,
            "logprobs": self.logprobs,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DecodeResult:
        return cls(
            tokens=list(data["tokens"]),
            finished=bool(data["finished"]),
            passes=int(data["passes"]),
            accepted=list(data["accepted"]),
            hypotheses=[Hypothesis(list(tokens), float(score)) for tokens, score in data["hypotheses"]],
            gaps=list(data["gaps"]),
            logprobs=list(data.get("logprobs", ())),
        )


def empty_result() -> DecodeResult:
    """What every strategy gives an empty source, without running the model: no tokens, one empty hypothesis."""
    return DecodeResult(tokens=[], hypotheses=[Hypothesis([], 0.0)])


def decoding_to_json(strategy: str, params: DecodeParams) -> dict[str, Any]:
    """A strategy and its parameters as JSON-ready data."""
    return {"strategy": strategy, "params": asdict(params)}


def decoding_from_json(data: dict[str, Any]) -> tuple[str, DecodeParams]:
    """``decoding_to_json`` read back (``TypeError`` for an unknown parameter)."""
    return str(data["strategy"]), DecodeParams(**data["params"])


def default_max_new_tokens(source_length: int, max_target_positions: int, prefix_length: int) -> int:
    """The length budget used when a request gives none."""
    return max(1, min(max_target_positions - prefix_length, 2 * source_length + 10))


def token_logprobs(positions: np.ndarray, tokens: Sequence[int]) -> list[float]:
    """The log-probability of each of ``tokens`` under the logits of its position (``positions``: one row of logits
    a token; a stable log-softmax, all positions at once)."""
    top = positions.max(-1, keepdims=True)
    norm = top[:, 0] + np.log(np.exp(positions - top).sum(-1))
    logprobs: list[float] = (positions[np.arange(len(tokens)), list(tokens)] - norm).tolist()
    return logprobs


def top_gap(row_logits: np.ndarray) -> float:
    """Top-1 minus top-2 logit of one position (how close the argmax was to flipping)."""
    top2 = np.partition(row_logits, -2)[-2:]
    return float(abs(top2[1] - top2[0]))
