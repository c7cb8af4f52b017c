"""What differs between the encoder-decoder families the exporter supports.

BART and mBART use learned positions (offset 2), Marian sinusoidal ones; mBART normalises
before each sub-layer and after the last, BART and Marian after each sub-layer. These three
share the wrappers of ``models/export/wrappers.py``.

T5 (``models/export/t5.py``) has no position embeddings: a bucketed relative position bias, made
in the first layer of each stack and added to every layer's attention scores (bidirectional in
the encoder, causal in the decoder); an RMS norm without bias before each sub-layer and after
the last; unscaled attention; a ReLU (T5) or gated-GELU (T5 v1.1, FLAN) feed-forward; a decoder
that starts from the pad token; and, where the output embedding is the input one (T5, not v1.1),
the decoder output scaled by ``d_model ** -0.5`` before ``lm_head``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch import nn

BART_LIKE = ("bart", "mbart", "marian")
SUPPORTED = (*BART_LIKE, "t5")
T5_POSITIONS = 512  # T5's training length: relative positions set no hard limit, the manifest needs one


@dataclass(frozen=True)
class DecoderLayout:
    """The parts of a BART-like decoder the export wrapper needs, taken from a loaded HF model."""

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


def unsupported(config: Any) -> str | None:
    """Why a checkpoint with this config cannot be exported, or None when it can."""
    family = config.model_type
    if family not in SUPPORTED:
        return f"model type {family!r} is not supported; supported: {', '.join(SUPPORTED)}"
    return None


def architecture(config: Any) -> dict[str, Any]:
    """The manifest's ``architecture`` (without the parameter count) of a supported config."""
    if config.model_type == "t5":
        return {
            "d_model": config.d_model,
            "encoder_layers": config.num_layers,
            "decoder_layers": config.num_decoder_layers,
            "encoder_attention_heads": config.num_heads,
            "decoder_attention_heads": config.num_heads,
            "encoder_ffn_dim": config.d_ff,
            "decoder_ffn_dim": config.d_ff,
            "vocab_size": config.vocab_size,
            "activation": config.feed_forward_proj,
            "head_dim": config.d_kv,
            "relative_attention_num_buckets": config.relative_attention_num_buckets,
            "relative_attention_max_distance": config.relative_attention_max_distance,
        }
    return {
        "d_model": config.d_model,
        "encoder_layers": config.encoder_layers,
        "decoder_layers": config.decoder_layers,
        "encoder_attention_heads": config.encoder_attention_heads,
        "decoder_attention_heads": config.decoder_attention_heads,
        "encoder_ffn_dim": config.encoder_ffn_dim,
        "decoder_ffn_dim": config.decoder_ffn_dim,
        "vocab_size": config.vocab_size,
        "activation": config.activation_function,
    }


def max_positions(config: Any) -> int:
    """The longest source and target the manifest allows."""
    if config.model_type == "t5":
        return int(getattr(config, "n_positions", None) or T5_POSITIONS)
    return int(config.max_position_embeddings)


def default_decoder_start(config: Any) -> int | None:
    """The decoder start token when neither the config nor the generation config names one."""
    return int(config.pad_token_id) if config.model_type == "t5" else None


def decoder_layout(model: nn.Module) -> DecoderLayout:
    """Inspect a ``*ForConditionalGeneration`` model of a BART-like family."""
    family = model.config.model_type
    if family not in BART_LIKE:
        raise ValueError(f"model type {family!r} is not BART-like; these are: {', '.join(BART_LIKE)}")
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
