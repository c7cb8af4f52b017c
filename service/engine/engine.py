"""The engine facade: one model variant, every decoding strategy, text in and text out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from service.engine.decoding.aggressive import AggressiveDecoder
from service.engine.decoding.beam import BeamDecoder
from service.engine.decoding.continuous import ContinuousDecoder
from service.engine.decoding.greedy import GreedyDecoder
from service.engine.decoding.params import DecodeParams, DecodeResult, Hypothesis, empty_result
from service.engine.decoding.sampling import SampleDecoder
from service.engine.manifest import ModelManifest, level_keep_bias
from service.engine.model import DecodingStoppedError, InputTooLongError, Seq2SeqModel, StopCheck
from service.engine.runtime import RuntimeOptions

# Every strategy's decoder: a batch that sources join and leave between passes (iteration-level
# batching); a closed batch is its ``run``.
STRATEGIES: dict[str, type[ContinuousDecoder[Any]]] = {
    "greedy": GreedyDecoder,
    "aggressive": AggressiveDecoder,
    "beam": BeamDecoder,
    "sample": SampleDecoder,
}

__all__ = [
    "STRATEGIES",
    "DecodeParams",
    "DecodeResult",
    "DecodingStoppedError",
    "Engine",
    "Hypothesis",
    "InputTooLongError",
    "StopCheck",
    "keep_bias_for",
    "takes_keep_bias",
]


def takes_keep_bias(strategy: str) -> bool:
    """Whether ``strategy`` decodes with a keep bias (``decoding.alignment``): greedy and aggressive decoding."""
    return STRATEGIES[strategy].takes_keep_bias


def keep_bias_for(manifest: ModelManifest, strategy: str, level: str, *chosen: float | None) -> float:
    """The keep bias ``strategy`` decodes with on the model of ``manifest`` at ``level``: 0 for a strategy that takes
    none, else the first of ``chosen`` that is given (a request's own, then an arm's), else the model's for ``level``
    (``level_keep_bias``, which ``/device/model.json`` hands the browser's engine)."""
    if not takes_keep_bias(strategy):
        return 0.0
    return next((bias for bias in chosen if bias is not None), level_keep_bias(manifest, level))


class Engine:
    """Runs decoding strategies over batches of token-id sources.

    Empty sources give empty outputs without touching the model; sources longer than the
    model's maximum raise ``InputTooLongError`` (split them first).
    """

    def __init__(
        self,
        model_dir: Path | str,
        variant: str | None = None,
        options: RuntimeOptions | None = None,
        cache: str = "compact",
    ) -> None:
        self.model = Seq2SeqModel(Path(model_dir), variant, options, cache)
        self.manifest = self.model.manifest
        self.codec = self.model.codec

    @property
    def max_source_tokens(self) -> int:
        return self.manifest.max_source_content

    def generate(
        self,
        sources: Sequence[Sequence[int]],
        strategy: str = "aggressive",
        params: DecodeParams | None = None,
        stop: StopCheck | None = None,
        keep_biases: Sequence[float] | None = None,
    ) -> list[DecodeResult]:
        """Decode ``sources``, each with its keep bias (``decoding.alignment``; None: 0 for all); ``stop`` is asked
        before every decoder pass and abandons the batch (``DecodingStoppedError``) when it returns True."""
        decoder = self.decoder(strategy, params, stop)  # bad settings raise even if every source is empty
        for source in sources:
            self.check_length(source)
        results: list[DecodeResult] = [empty_result() for _ in sources]
        work = [i for i, s in enumerate(sources) if len(s) > 0]
        if work:
            biases = None if keep_biases is None else [keep_biases[i] for i in work]
            decoded = decoder.run([list(sources[i]) for i in work], biases)
            for i, result in zip(work, decoded, strict=True):
                results[i] = result
        return results

    def check_length(self, source: Sequence[int]) -> None:
        """Raise ``InputTooLongError`` for a source longer than the model reads (split it first)."""
        if len(source) > self.max_source_tokens:
            raise InputTooLongError(
                f"source of {len(source)} tokens is longer than the model maximum {self.max_source_tokens}"
            )

    def decoder(
        self, strategy: str, params: DecodeParams | None = None, stop: StopCheck | None = None
    ) -> ContinuousDecoder[Any]:
        """A decoder that sources join between passes (``ValueError`` for settings it refuses).
        Unlike ``generate``, it neither skips empty sources nor checks lengths: its caller does."""
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(sorted(STRATEGIES))}")
        return STRATEGIES[strategy](self.model, params or DecodeParams(), stop)

    def release_memory(self) -> None:
        """Give back what the sessions' memory arenas hold beyond the runs in flight (see ``Seq2SeqModel``)."""
        self.model.release_memory()

    def correct(
        self, texts: Sequence[str], strategy: str = "aggressive", params: DecodeParams | None = None
    ) -> list[str]:
        """Texts in, corrected texts out (each text must fit the model's maximum length)."""
        results = self.generate(self.codec.encode_batch(list(texts)), strategy, params)
        return [self.codec.decode(r.tokens) for r in results]
