"""One served model: its manifest, preprocessing, decoding queues (engines here, or workers' job streams) and
dispatcher, built by ``service.wiring``; its state (loading, ready, draining) and the requests using it. The model
repository (``service.repository``, below the pipeline) holds it as a model it serves (``Served``).

A request holds the model it was routed to for as long as it is served (``serving``), so that a model swapped
out or unloaded meanwhile finishes it: ``drain`` waits until no request holds the model, then finishes what its
queues hold and closes them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from service.engine.manifest import ModelManifest, level_keep_bias
from service.pipeline.dispatch import SentenceDispatcher
from service.pipeline.preprocess import Preprocessor
from service.pipeline.queues import DecodingQueues
from service.repository.repository import ModelState
from service.text.policy import LEVELS
from service.text.units import Scoring

__all__ = ["ServedModel", "served_quality"]

DRAIN_POLL_S = 0.02
QUALITY_SETS = ("jfleg_dev", "fce_dev")  # the dev sets of the manifest's served figures a listing shows


def served_quality(manifest: ModelManifest) -> dict[str, Any]:
    """What ``GET /v1/models`` says of a model's quality: each level as served (its confidence threshold, the keep
    bias the model decodes with), with the dev figures the manifest's ``quality`` measured there
    (``models.gec.calibrate``) where they were measured at that threshold and keep bias with the fit the model ships
    now, else none; the served keep bias of each level; and the ``default`` level's figures."""
    measured = manifest.extra.get("quality") or {}
    fit = manifest.files_sha256.get(manifest.confidence) if manifest.confidence is not None else None
    current = measured.get("confidence_sha256") == fit
    levels: dict[str, dict[str, Any]] = {}
    for level, threshold in LEVELS.items():
        served = {"threshold": threshold, "keep_bias": level_keep_bias(manifest, level)}
        figures = (measured.get("levels") or {}).get(level) or {}
        if current and all(figures.get(key) == value for key, value in served.items()):
            served |= {name: figures[name] for name in QUALITY_SETS if name in figures}
        levels[level] = served
    default = {name: levels["default"][name] for name in QUALITY_SETS if name in levels["default"]}
    return {"keep_bias": {level: served["keep_bias"] for level, served in levels.items()}, **default, "levels": levels}


@dataclass(eq=False)
class ServedModel:
    """A model being served under ``name`` (see the module docstring)."""

    name: str
    path: Path
    manifest: ModelManifest
    variant: str
    preprocessor: Preprocessor
    queues: DecodingQueues
    dispatcher: SentenceDispatcher
    # what loading it added to the resident set: its engines, and its preprocessing where no model loaded before
    # shares it (the first model also carries the language identifier); 0 for a gateway whose workers decode
    memory_bytes: int
    load_s: float  # seconds to load and warm up
    closing: Callable[[], Awaitable[None]] | None = None  # stops what runs beside its queues (the idle release)
    scoring: Scoring = field(
        default_factory=Scoring
    )  # how its edits get their confidence (``service.text.confidence``), none held back
    state: ModelState = ModelState.READY
    loaded_at: float = field(default_factory=time.time)
    active: int = 0  # requests holding it

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def max_new_tokens(self) -> int:
        """The longest generation the model allows (its positions, less the decoder prefix)."""
        return self.manifest.max_target_positions - len(self.manifest.decoder_prefix_ids)

    def scoring_at(self, threshold: float) -> Scoring:
        """How its answers' edits get their confidence, and which are kept at ``threshold``."""
        return replace(self.scoring, threshold=threshold)

    @contextmanager
    def serving(self) -> Iterator[ServedModel]:
        """Hold the model while a request uses it."""
        self.active += 1
        try:
            yield self
        finally:
            self.active -= 1

    async def drain(self, timeout: float) -> None:
        """Stop being offered (draining); wait up to ``timeout`` seconds for the requests holding it, then finish
        what its queues hold (in what is left of ``timeout``) and close every part."""
        self.state = ModelState.DRAINING
        loop = asyncio.get_running_loop()
        until = loop.time() + timeout
        while self.active and loop.time() < until:
            await asyncio.sleep(DRAIN_POLL_S)
        if self.closing is not None:
            await self.closing()
        await self.queues.stop(max(until - loop.time(), DRAIN_POLL_S))
        self.preprocessor.close()

    def describe(self, default: bool) -> dict[str, Any]:
        """What ``GET /v1/models`` says of it."""
        manifest = self.manifest
        return {
            "name": self.name,
            "version": manifest.version,
            "variant": self.variant,
            "default": default,
            "state": str(self.state),
            "path": str(self.path),
            "family": manifest.family,
            "parameters": manifest.architecture.get("parameters"),
            "quality": served_quality(manifest),
            "memory_mib": round(self.memory_bytes / 2**20, 1),
            "load_s": round(self.load_s, 3),
            "loaded_at": self.loaded_at,
            "active_requests": self.active,
            "decoding": self.queues.health(),
        }
