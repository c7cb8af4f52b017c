"""The one table of arms: every decoding ``/v1/correct`` can run, by name.

A *backend* is a named decoding the engine offers (strategy and parameters). An *arm* is what a
request is served by: a backend, or an experiment's named arm that runs a backend with some of
its decoding knobs changed, on a model it names (``model``; none: the default model).
``options.backend``, the ``X-Gecserve-Arm`` header, gRPC metadata,
experiment files and ``GECSERVE_DEFAULT_BACKEND`` all resolve through ``BACKENDS`` and ``Arm``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from service.engine.decoding.params import DecodeParams
from service.engine.engine import takes_keep_bias

__all__ = ["ALTERNATIVES_BACKEND", "BACKENDS", "TUNABLE", "Arm", "Backend", "UnknownArmError"]


@dataclass(frozen=True)
class Backend:
    name: str
    strategy: str  # engine strategy (service.engine.engine.STRATEGIES)
    params: DecodeParams
    description: str
    exact: bool  # gives greedy decoding's output token for token


BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        Backend(
            "accelerated",
            "aggressive",
            DecodeParams(),
            "input-guided aggressive decoding: greedy's output with a fraction of the decoder passes",
            exact=True,
        ),
        Backend("autoregressive", "greedy", DecodeParams(), "greedy decoding, one token per pass (the baseline)", True),
        Backend(
            "beam",
            "beam",
            DecodeParams(num_beams=6, num_return_sequences=6),
            "beam search with 6 beams; its n-best list serves options.alternatives",
            exact=False,
        ),
        Backend(
            "diverse",
            "beam",
            DecodeParams(num_beams=6, num_return_sequences=6, num_beam_groups=3, diversity_penalty=2.0),
            "diverse beam search: 6 beams in 3 groups kept apart (diversity penalty 2); its n-best list offers "
            "options.alternatives that differ more than beam's",
            exact=False,
        ),
        Backend(
            "relaxed",
            "aggressive",
            DecodeParams(relaxed_top_k=2),
            "aggressive decoding that accepts a draft token within the model's top 2 (lossy, fewer passes)",
            exact=False,
        ),
    )
}

ALTERNATIVES_BACKEND = "beam"  # requests asking for alternatives need an n-best list

# Knobs an experiment arm may change, with what each must satisfy: its queue's batch size, its keep
# bias (``service.engine.decoding.alignment``), and decoding knobs (``DecodeParams`` fields).
TUNABLE: dict[str, str] = {
    "max_batch_size": "batching: sentences per batch in the arm's own queue (>= 1; default GECSERVE_MAX_BATCH_SIZE)",
    "keep_bias": "greedy and aggressive decoding: the bias for keeping the writer's words (-5..5; default: the "
    "model's, by the request's level); a request's options.keep_bias still overrides it",
    "max_draft": "aggressive decoding: draft tokens verified per pass (>= 1)",
    "pass_cost": "aggressive decoding: split a pass by block width where it saves more token positions (0 = off)",
    "num_beams": "beam search: beams kept (>= 1)",
    "length_penalty": "beam search: exponent of the length normalisation",
    "num_beam_groups": "beam search: groups of beams kept apart (diverse beam search; divides num_beams)",
    "diversity_penalty": "diverse beam search: the cost of a token an earlier group chose at the same step (> 0 "
    "exactly with groups)",
    "relaxed_top_k": "aggressive decoding: accept draft tokens within the top k (1 = exact)",
    "min_block": "aggressive decoding: draft tokens always accepted per pass (0 = exact)",
}

_NOT_DECODE_PARAMS = ("max_batch_size", "keep_bias")  # tunable, but not settings of the decoder


class UnknownArmError(ValueError):
    """A request or file named an arm that does not exist."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown arm {name!r}; choose one of {', '.join(known)}")


@dataclass(frozen=True)
class Arm:
    """A named way of serving a request: a backend plus changed decoding knobs (``overrides``), on the model it
    names (``model``; None: the model the request names, else the default)."""

    name: str
    backend: str
    overrides: tuple[tuple[str, Any], ...] = ()
    model: str | None = None

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise UnknownArmError(self.backend, sorted(BACKENDS))
        unknown = [key for key, _ in self.overrides if key not in TUNABLE]
        if unknown:
            raise ValueError(f"arm {self.name!r}: {', '.join(unknown)} cannot be tuned; tunable: {', '.join(TUNABLE)}")
        if self.keep_bias is not None and not takes_keep_bias(self.strategy):
            raise ValueError(f"arm {self.name!r}: {self.strategy} decoding takes no keep_bias")

    @classmethod
    def of_backend(cls, name: str) -> Arm:
        """The built-in arm that runs backend ``name`` as it is."""
        if name not in BACKENDS:
            raise UnknownArmError(name, sorted(BACKENDS))
        return cls(name, name)

    @property
    def strategy(self) -> str:
        return BACKENDS[self.backend].strategy

    @cached_property  # read for every request (its queue, its cache key); an arm does not change
    def params(self) -> DecodeParams:
        decoding = {key: value for key, value in self.overrides if key not in _NOT_DECODE_PARAMS}
        return replace(BACKENDS[self.backend].params, **decoding)

    @property
    def keep_bias(self) -> float | None:
        """The arm's own keep bias, or None for the model's (by the request's level)."""
        return dict(self.overrides).get("keep_bias")

    @property
    def max_batch_size(self) -> int | None:
        """The arm's own batch size, or None for the queue default (``GECSERVE_MAX_BATCH_SIZE``)."""
        return dict(self.overrides).get("max_batch_size")

    @property
    def queue(self) -> str:
        """The batching queue it runs in: its backend's, unless it changes the decoding or batching."""
        return self.name if self.overrides else self.backend

    @property
    def exact(self) -> bool:
        """Gives greedy decoding's output (what the shadow agreement of two exact arms expects: 100%)."""
        params = self.params
        return BACKENDS[self.backend].exact and params.relaxed_top_k <= 1 and params.min_block == 0
