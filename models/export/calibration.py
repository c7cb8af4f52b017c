"""Calibration feeds for static int8: what the fp32 graphs are fed while they decode sample text.

Static quantisation fixes every activation scale ahead of time from these feeds. At run time a
token's integer arithmetic then depends on its own values only, never on the other tokens of
its pass or batch: aggressive decoding (many tokens per pass) stays equal to greedy (one), and a
sentence decodes the same alone or batched.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from service.engine.engine import Engine
from service.engine.runtime import RuntimeOptions

Feed = dict[str, np.ndarray]


class FeedRecorder:
    """An ORT session stand-in that keeps a copy of every feed it runs."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.feeds: list[Feed] = []

    def run(self, names: Any, feeds: Feed, *args: Any) -> Any:
        self.feeds.append({name: np.array(value) for name, value in feeds.items()})
        return self.session.run(names, feeds, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


def _evenly(feeds: list[Feed], limit: int) -> list[Feed]:
    if len(feeds) <= limit:
        return feeds
    picks = np.linspace(0, len(feeds) - 1, limit).round().astype(int)
    return [feeds[i] for i in picks]


def record_feeds(
    model_dir: Path, texts: Sequence[str], variant: str = "fp32", batch_size: int = 8, max_feeds: int = 256
) -> dict[str, list[Feed]]:
    """Encoder and decoder feeds of ``variant`` decoding ``texts`` (greedy and aggressive batches
    alternate, so one-token steps and many-token verify passes are both seen).

    At most ``max_feeds`` per graph, spread evenly over the run (decoder feeds carry the cache,
    so keeping all of a long run would hold gigabytes).
    """
    engine = Engine(model_dir, variant=variant, options=RuntimeOptions(provider="cpu", io_binding="off"))
    encoder, decoder = FeedRecorder(engine.model.encoder), FeedRecorder(engine.model.decoder)
    engine.model.encoder, engine.model.decoder = encoder, decoder
    limit = engine.max_source_tokens
    sources = [ids[:limit] for ids in engine.codec.encode_batch(list(texts)) if ids]
    for number, start in enumerate(range(0, len(sources), batch_size)):
        engine.generate(sources[start : start + batch_size], "aggressive" if number % 2 else "greedy")
    return {"encoder": _evenly(encoder.feeds, max_feeds), "decoder": _evenly(decoder.feeds, max_feeds)}
