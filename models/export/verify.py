"""Checks an exported folder against the PyTorch model it came from.

Logits: ORT encoder + decoder (one full pass, and an incremental pass through the cache)
against the PyTorch forward. Greedy: the engine's greedy output against ``transformers``
``generate(num_beams=1)`` on the same source ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from transformers import GenerationConfig

from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest


@dataclass
class LogitsCheck:
    max_abs_diff_full: float
    max_abs_diff_incremental: float

    @property
    def worst(self) -> float:
        return max(self.max_abs_diff_full, self.max_abs_diff_incremental)


def _padded(rows: list[list[int]], pad: int) -> tuple[np.ndarray, np.ndarray]:
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    mask = np.zeros_like(ids)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return ids, mask


def check_logits(
    model: torch.nn.Module, engine: Engine, sources: list[list[int]], targets: list[list[int]]
) -> LogitsCheck:
    """Max |ORT - PyTorch| logits over a batch, full pass and split into two passes."""
    m = engine.manifest
    enc_rows = [m.source_prefix_ids + s + m.source_suffix_ids for s in sources]
    ids, mask = _padded(enc_rows, m.pad_token_id)
    dec_rows = [m.decoder_prefix_ids + t for t in targets]
    width = min(len(r) for r in dec_rows)
    dec = np.array([r[:width] for r in dec_rows], dtype=np.int64)
    with torch.no_grad():
        reference = model(
            input_ids=torch.from_numpy(ids),
            attention_mask=torch.from_numpy(mask),
            decoder_input_ids=torch.from_numpy(dec),
        ).logits.numpy()
    state = engine.model.start([s for s in sources])
    full = state.step(dec)
    split = max(1, width // 2)
    state = engine.model.start([s for s in sources])
    first = state.step(dec[:, :split])
    second = state.step(dec[:, split:]) if split < width else first[:, :0]
    incremental = np.concatenate([first, second], axis=1)
    return LogitsCheck(float(np.abs(full - reference).max()), float(np.abs(incremental - reference).max()))


def generation_config(manifest: ModelManifest, max_new_tokens: int, **options: object) -> GenerationConfig:
    """A ``transformers`` config that decodes like the engine: same special tokens, no extras.

    ``max_new_tokens`` is the engine's (content tokens plus ``</s>``); ``generate`` also counts a
    forced BOS, so it gets one more when the model has one.
    """
    prefix = manifest.decoder_prefix_ids
    return GenerationConfig(
        decoder_start_token_id=prefix[0],
        forced_bos_token_id=prefix[1] if len(prefix) > 1 else None,
        eos_token_id=manifest.eos_token_id,
        pad_token_id=manifest.pad_token_id,
        bos_token_id=None,
        max_new_tokens=max_new_tokens + len(prefix) - 1,
        no_repeat_ngram_size=0,
        repetition_penalty=1.0,
        min_length=0,
        forced_eos_token_id=None,
        **options,
    )


@contextmanager
def installed(model: torch.nn.Module, config: GenerationConfig) -> Iterator[None]:
    """Make ``config`` the model's own generation config for a while.

    ``generate(generation_config=...)`` fills the options a passed config leaves unset
    (``forced_eos_token_id``, ``no_repeat_ngram_size``, ...) from the model's config, and those
    are exactly what must stay off when comparing with the engine.
    """
    saved, model.generation_config = model.generation_config, config
    try:
        yield
    finally:
        model.generation_config = saved


def content(row: list[int], manifest: ModelManifest) -> list[int]:
    """A generated row without the decoder prefix and from ``</s>`` on."""
    row = row[len(manifest.decoder_prefix_ids) :]
    return row[: row.index(manifest.eos_token_id)] if manifest.eos_token_id in row else row


def hf_greedy(model: torch.nn.Module, engine: Engine, sources: list[list[int]], max_new_tokens: int) -> list[list[int]]:
    """``transformers`` greedy outputs as content ids (prefix and ``</s>`` removed)."""
    m = engine.manifest
    outputs = []
    with installed(model, generation_config(m, max_new_tokens, num_beams=1, do_sample=False)):
        for source in sources:  # one at a time: batching in HF pads, which is not what we compare
            ids = torch.tensor([m.source_prefix_ids + source + m.source_suffix_ids])
            with torch.no_grad():
                generated = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids))
            outputs.append(content(generated[0].tolist(), m))
    return outputs


def greedy_agreement(
    model: torch.nn.Module, engine: Engine, sources: list[list[int]], max_new_tokens: int = 48
) -> tuple[int, int, list[int]]:
    """(identical, total, indices that differ) of engine greedy vs ``transformers`` greedy."""
    reference = hf_greedy(model, engine, sources, max_new_tokens)
    ours = engine.generate(sources, "greedy", DecodeParams(max_new_tokens=max_new_tokens))
    differ = [i for i, (a, b) in enumerate(zip(reference, ours, strict=True)) if a != b.tokens]
    return len(sources) - len(differ), len(sources), differ
