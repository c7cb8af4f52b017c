"""A model folder loaded into ONNX Runtime: tokenizer, encoder and decoder sessions.

``DecoderState`` is the one decoder-step interface every decoding strategy is written
against: feed T >= 1 new tokens per row, get logits, then roll rows back, drop or reorder them.

Each session's CPU memory arena keeps what it allocates for reuse, so after one large batch (a
16-beam ``/v1/generate`` decodes 512 rows at once) it holds that batch's peak. ONNX Runtime gives
an arena's free regions back only at the end of a run made with ``SHRINK_ARENAS``;
``Seq2SeqModel.release_memory`` makes such a run of each session over one token. (Without the
arena, every tensor over malloc's mmap threshold is mapped and faulted in afresh on every pass:
the overload drill's 16-beam generate took 10.5-12.4 s instead of 8.5-9.4 s.)

The decoder graph takes the self-attention cache and the cross-attention keys/values one input per layer
and kind (``layer_inputs``: ``past_key_0``, ``cross_value_1``, ...; ``models/export/lean.py`` makes the
exported graphs so), fed as views of the ``[layers, 2, batch, heads, length, head size]`` arrays held
here: no copy on the way in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort

from service.engine.binding import DeviceInputs, run_bound
from service.engine.kv_cache import CACHES
from service.engine.manifest import ModelManifest
from service.engine.runtime import RuntimeOptions, create_inference_session
from service.engine.tokenization import TextCodec

LAYER_INPUTS = {"past_kv": "past", "cross_kv": "cross"}  # exported whole -> per-layer input prefix
KINDS = ("key", "value")

SHRINK_ARENAS = ort.RunOptions()
SHRINK_ARENAS.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

StopCheck = Callable[[], bool]
"""Asked before every decoder pass: True abandons the batch (its callers are past their deadlines)."""


def pad_rows(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` as one ``[B, T]`` array padded with ``pad_id`` to the longest, and each row's length."""
    counts = np.array([len(row) for row in rows], dtype=np.int64)
    tokens = np.full((len(rows), int(counts.max(initial=0))), pad_id, dtype=np.int64)
    for i, row in enumerate(rows):
        tokens[i, : len(row)] = row
    return tokens, counts


def layer_input(prefix: str, layer: int, kind: int) -> str:
    """The decoder input holding one layer's keys (``kind`` 0) or values (1): ``past_key_0``, ``cross_value_1``."""
    return f"{prefix}_{KINDS[kind]}_{layer}"


def layer_inputs(prefix: str, kv: np.ndarray) -> dict[str, np.ndarray]:
    """``kv [layers, 2, ...]`` as the decoder's per-layer inputs: views, no copy of a contiguous array."""
    return {layer_input(prefix, layer, kind): kv[layer, kind] for layer in range(kv.shape[0]) for kind in (0, 1)}


class InputTooLongError(ValueError):
    """A source is longer than the model's maximum; the caller must split it first."""


class DecodingStoppedError(RuntimeError):
    """The batch was abandoned between decoder passes because its ``StopCheck`` said so."""


class Seq2SeqModel:
    """Encoder and decoder sessions of one model variant."""

    def __init__(
        self,
        model_dir: Path,
        variant: str | None = None,
        options: RuntimeOptions | None = None,
        cache: str = "compact",
    ) -> None:
        self.model_dir = Path(model_dir)
        self.manifest = ModelManifest.load(self.model_dir)
        self.variant = variant or self.manifest.default_variant
        if self.variant not in self.manifest.variants:
            raise ValueError(f"variant {self.variant!r} not in {sorted(self.manifest.variants)}")
        self.options = options or RuntimeOptions()
        files = self.manifest.variants[self.variant]
        self.encoder = create_inference_session(self.model_dir / files["encoder"], self.options)
        self.decoder = create_inference_session(self.model_dir / files["decoder"], self.options)
        whole = sorted(LAYER_INPUTS.keys() & {value.name for value in self.decoder.get_inputs()})
        if whole:
            raise ValueError(
                f"{files['decoder']} takes {', '.join(whole)} whole, as graphs exported before 2026-11-27 did: "
                f"rewrite it with python -m models.export.lean {model_dir}"
            )
        self.codec, _ = TextCodec.for_model(self.model_dir, self.manifest)
        self.cache_kind = cache
        # Resolved once: asking ORT for its providers on every batch would be wasted work.
        self.io_device: str | None = self.options.device if self.options.binds_io else None
        self.on_gpu = self.options.uses_cuda

    @property
    def binds_io(self) -> bool:
        return self.io_device is not None

    def encode(
        self, sources: Sequence[Sequence[int]], run_options: ort.RunOptions | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Run the encoder on content ids; returns ``cross_kv`` and the encoder mask."""
        m = self.manifest
        rows = [list(m.source_prefix_ids) + list(s) + list(m.source_suffix_ids) for s in sources]
        longest = max(len(r) for r in rows)
        if longest > m.max_source_positions:
            raise InputTooLongError(
                f"source of {longest} tokens is longer than the model maximum {m.max_source_positions}"
            )
        ids, lengths = pad_rows(rows, m.pad_token_id)
        mask = (np.arange(longest)[None, :] < lengths[:, None]).astype(np.int64)
        (cross_kv,) = self.encoder.run(None, {"input_ids": ids, "attention_mask": mask}, run_options)
        return cross_kv, mask

    def release_memory(self) -> None:
        """Shrink both sessions' CPU arenas to what runs in flight hold: one single-token encoder
        and decoder pass made with ``SHRINK_ARENAS`` (about 1 ms)."""
        token = [[self.manifest.eos_token_id]]
        cross_kv, mask = self.encode(token, SHRINK_ARENAS)
        DecoderState(self, cross_kv, mask).step(np.array(token), run_options=SHRINK_ARENAS)

    def start(self, sources: Sequence[Sequence[int]], stop: StopCheck | None = None) -> DecoderState:
        """Encode ``sources`` and return an empty decoder state over them; ``stop`` is asked before each pass."""
        if stop is not None and stop():
            raise DecodingStoppedError("stopped before encoding")
        cross_kv, mask = self.encode(sources)
        return DecoderState(self, cross_kv, mask, stop)

    def empty_state(self, stop: StopCheck | None = None) -> DecoderState:
        """A decoder state of no rows, for ``join`` to fill; ``stop`` is asked before each pass."""
        m = self.manifest
        cross_kv = np.zeros((m.decoder_layers, 2, 0, m.decoder_heads, 0, m.head_dim), dtype=np.float32)
        return DecoderState(self, cross_kv, np.zeros((0, 0), dtype=np.int64), stop)

    def join(
        self, state: DecoderState, slots: np.ndarray, sources: Sequence[Sequence[int]], owners: np.ndarray
    ) -> None:
        """Encode ``sources`` (one encoder run) into rows ``slots`` of ``state``, slot ``i`` taking
        source ``owners[i]`` (a source of several rows is encoded once; see ``DecoderState.place``)."""
        cross_kv, mask = self.encode(sources)
        if not np.array_equal(owners, np.arange(len(sources))):  # a source of several rows: copies of its row
            cross_kv, mask = cross_kv[:, :, owners], mask[owners]
        state.place(slots, cross_kv, mask)


class DecoderState:
    """The decoding state of a batch: cross-attention inputs and a per-row KV cache."""

    def __init__(
        self, model: Seq2SeqModel, cross_kv: np.ndarray, encoder_mask: np.ndarray, stop: StopCheck | None = None
    ) -> None:
        m = model.manifest
        self.stop = stop
        self.session = model.decoder
        self.cross_kv = cross_kv
        self.encoder_mask = encoder_mask
        self.device_inputs: DeviceInputs | None = None
        if model.io_device is not None:
            self.device_inputs = DeviceInputs(model.io_device, model.options.device_id)
            self._upload()
        self.cache = CACHES[model.cache_kind](m.decoder_layers, len(encoder_mask), m.decoder_heads, m.head_dim)
        self.passes = 0
        self.max_position = m.max_target_positions - 1

    @property
    def batch(self) -> int:
        return len(self.encoder_mask)

    @property
    def lengths(self) -> np.ndarray:
        return self.cache.lengths

    def step(
        self,
        tokens: np.ndarray,
        counts: np.ndarray | None = None,
        rows: np.ndarray | None = None,
        run_options: ort.RunOptions | None = None,
    ) -> np.ndarray:
        """Feed ``tokens [B,T]`` to every row, or to ``rows`` only (then B = ``len(rows)``); row b's
        first ``counts[b]`` tokens are real (rest padding).

        Returns ``logits [B,T,V]``; the real tokens' keys/values join the cache. Raises
        ``DecodingStoppedError`` instead when the state's ``stop`` check says so.
        """
        if self.stop is not None and self.stop():
            raise DecodingStoppedError(f"stopped after {self.passes} decoder passes")
        batch, width = tokens.shape
        if counts is None:
            counts = np.full(batch, width, dtype=np.int64)
        past_kv, past_mask = self.cache.view(rows)
        lengths = self.cache.lengths if rows is None else self.cache.lengths[rows]
        # Padding after a short row's real tokens may run past the last position; its outputs
        # are never used, so clamping keeps it inside the position table.
        positions = np.minimum(lengths[:, None] + np.arange(width)[None, :], self.max_position)
        feeds = {
            "input_ids": tokens.astype(np.int64, copy=False),
            "position_ids": positions,
            "past_mask": past_mask,
            **layer_inputs("past", past_kv),
        }
        if self.device_inputs is not None and rows is None:
            logits, new_kv = run_bound(self.session, feeds, self.device_inputs, ("logits", "new_kv"), run_options)
        else:
            feeds.update(layer_inputs("cross", self.cross_kv if rows is None else self.cross_kv[:, :, rows]))
            feeds["encoder_mask"] = self.encoder_mask if rows is None else self.encoder_mask[rows]
            logits, new_kv = self.session.run(None, feeds, run_options)
        self.cache.append(new_kv, counts, rows)
        self.passes += 1
        return logits

    def truncate(self, lengths: np.ndarray) -> None:
        """Roll each row's cache back to its first ``lengths[b]`` tokens."""
        self.cache.truncate(lengths)

    def select(self, rows: np.ndarray) -> None:
        """Keep (and reorder to) the given rows."""
        self.cross_kv = self.cross_kv[:, :, rows]
        self.encoder_mask = self.encoder_mask[rows]
        self.cache.select(rows)
        if self.device_inputs is not None:
            self._upload()

    def inherit(self, parents: np.ndarray) -> None:
        """Row ``i``'s cache becomes row ``parents[i]``'s (beams taking their parent's); the
        cross-attention inputs stay, so ``parents[i]`` must read the same source as row ``i``."""
        if not np.array_equal(parents, np.arange(self.batch)):
            self.cache.select(parents)

    def fit_sources(self, rows: np.ndarray) -> None:
        """Cut the source axis down to the longest source of ``rows`` (the rows still decoding) once
        it is under 3/4 of the axis: every pass reads the cross-attention keys/values whole."""
        needed = int(self.encoder_mask[rows].sum(axis=1).max(initial=1))
        if needed * 4 >= self.encoder_mask.shape[1] * 3:
            return
        self.cross_kv = np.ascontiguousarray(self.cross_kv[:, :, :, :, :needed])
        self.encoder_mask = np.ascontiguousarray(self.encoder_mask[:, :needed])
        if self.device_inputs is not None:
            self._upload()

    def place(self, slots: np.ndarray, cross_kv: np.ndarray, encoder_mask: np.ndarray) -> None:
        """Put encoded sources into rows ``slots``, whose caches start empty: a slot below ``batch``
        is a row reused in place, the others are new rows after the existing ones (in order). Only a
        source longer than the batch's, or new rows, make the per-batch arrays be copied."""
        rows, columns = self.encoder_mask.shape
        extra = int((slots >= rows).sum())
        if not rows and np.array_equal(slots, np.arange(len(slots))):  # an empty state takes the arrays as they are
            self.cross_kv, self.encoder_mask = cross_kv, encoder_mask
            self.cache.add_rows(extra)
            if self.device_inputs is not None:
                self._upload()
            return
        source = max(columns, encoder_mask.shape[1])
        if extra or source > columns:  # one copy into arrays of the new size
            grown = np.zeros(
                (*self.cross_kv.shape[:2], rows + extra, *self.cross_kv.shape[3:4], source, self.cross_kv.shape[5]),
                dtype=cross_kv.dtype,
            )
            grown[:, :, :rows, :, :columns] = self.cross_kv
            mask = np.zeros((rows + extra, source), dtype=np.int64)
            mask[:rows, :columns] = self.encoder_mask
            self.cross_kv, self.encoder_mask = grown, mask
            self.cache.add_rows(extra)
        width = encoder_mask.shape[1]
        self.cross_kv[:, :, slots, :, :width] = cross_kv
        self.cross_kv[:, :, slots, :, width:] = 0
        self.encoder_mask[slots] = 0
        self.encoder_mask[slots, :width] = encoder_mask
        self.cache.empty(slots)
        if self.device_inputs is not None:
            self._upload()

    def _upload(self) -> None:
        """Put the per-batch decoder inputs on the device (once per batch and per row change)."""
        assert self.device_inputs is not None
        for name, array in layer_inputs("cross", self.cross_kv).items():
            self.device_inputs.put(name, array)
        self.device_inputs.put("encoder_mask", self.encoder_mask)
