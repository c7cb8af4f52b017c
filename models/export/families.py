"""What differs between the encoder-decoder families the exporter supports.

BART and mBART use learned positions (offset 2), Marian sinusoidal ones; mBART normalises
before each sub-layer and after the last, BART and Marian after each sub-layer.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

SUPPORTED = ("bart", "mbart", "marian")


@dataclass(frozen=True)
class DecoderLayout:
    """The parts of a decoder the export wrapper needs, taken from a loaded HF model."""

    family: str
    embed_tokens: nn.Module
    extra_embed_scale: float
    positions: nn.Embedding
    position_offset: int
    layernorm_embedding: nn.Module | None
    pre_layer_norm: bool
    final_layer_norm: nn.Module | None
    layers: nn.ModuleList
    lm_head: nn.Linear
    final_logits_bias: object  # tensor [1, V] or None


def decoder_layout(model: nn.Module) -> DecoderLayout:
    """Inspect a ``*ForConditionalGeneration`` model of a supported family."""
    family = model.config.model_type
    if family not in SUPPORTED:
        raise ValueError(f"model type {family!r} is not supported; supported: {', '.join(SUPPORTED)}")
    decoder = model.get_decoder()
    embed = decoder.embed_tokens
    scale_in_module = hasattr(embed, "embed_scale")
    return DecoderLayout(
        family=family,
        embed_tokens=embed,
        extra_embed_scale=1.0 if scale_in_module else float(getattr(decoder, "embed_scale", 1.0)),
        positions=decoder.embed_positions,
        position_offset=int(getattr(decoder.embed_positions, "offset", 0)),
        layernorm_embedding=getattr(decoder, "layernorm_embedding", None),
        pre_layer_norm=family == "mbart",
        final_layer_norm=getattr(decoder, "layer_norm", None),
        layers=decoder.layers,
        lm_head=model.lm_head,
        final_logits_bias=getattr(model, "final_logits_bias", None),
    )
