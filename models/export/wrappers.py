"""PyTorch modules whose traced graphs become ``encoder.onnx`` and ``decoder.onnx``.

Encoder: ``input_ids, attention_mask [B,S]`` -> ``cross_kv [L,2,B,H,S,Dh]``: the encoder
states projected once into every decoder layer's cross-attention keys and values, so a
request pays for them once, not per decoding step.

Decoder: ``input_ids, position_ids [B,T]`` (T >= 1 new tokens, explicit positions),
``past_kv [L,2,B,H,P,Dh]`` with ``past_mask [B,P]`` (1 = a valid cached entry), ``cross_kv`` and
``encoder_mask [B,S]`` -> ``logits [B,T,V]`` and ``new_kv [L,2,B,H,T,Dh]`` (the keys/values of
the T new tokens only; the engine owns the cache). New tokens attend to the valid past and
causally to each other, so every sequence of a batch keeps its own cache length.

These wrappers serve the BART-like families; T5's, to the same contract, are in ``models/export/t5.py``.
"""

from __future__ import annotations

import torch
from torch import nn

from models.export.families import DecoderLayout, decoder_layout

NEG = -1e9


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """[B,T,D] -> [B,H,T,Dh]."""
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """[B,H,T,Dh] -> [B,T,D]."""
    b, h, t, dh = x.shape
    return x.transpose(1, 2).reshape(b, t, h * dh)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """Softmax attention of ``q`` over ``k``/``v``; ``bias`` holds the masks (and any position bias)."""
    scores = torch.matmul(q * scale if scale != 1.0 else q, k.transpose(-1, -2)) + bias
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def key_mask_bias(mask: torch.Tensor) -> torch.Tensor:
    """``[B,S]`` (1 = a real key) -> an additive bias ``[B,1,1,S]``."""
    return torch.where(mask.bool(), 0.0, NEG)[:, None, None, :]


def decoder_self_bias(past_mask: torch.Tensor, new: int) -> torch.Tensor:
    """The additive mask ``[B,1,T,P+T]`` of T new tokens: the valid past, and causally each other."""
    causal = torch.ones(new, new, dtype=torch.bool, device=past_mask.device).tril()
    visible = torch.cat(
        [past_mask.bool()[:, None, :].expand(-1, new, -1), causal[None].expand(past_mask.shape[0], -1, -1)], dim=-1
    )
    return torch.where(visible, 0.0, NEG)[:, None]


class EncoderExport(nn.Module):
    """Encoder plus the cross-attention K/V projections of every decoder layer.

    The encoder forward is written out here (not HF's module) so the traced graph has no
    shape-specialised mask or position code in it.
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        encoder = model.get_encoder()
        self.family = decoder_layout(model).family
        self.embed_tokens = encoder.embed_tokens
        scale_in_module = hasattr(encoder.embed_tokens, "embed_scale")
        self.extra_embed_scale = 1.0 if scale_in_module else float(getattr(encoder, "embed_scale", 1.0))
        self.positions = encoder.embed_positions
        self.position_offset = int(getattr(encoder.embed_positions, "offset", 0))
        self.layernorm_embedding = getattr(encoder, "layernorm_embedding", None)
        self.final_layer_norm = getattr(encoder, "layer_norm", None)
        self.pre = self.family == "mbart"
        self.layers = encoder.layers
        self.decoder_layers = decoder_layout(model).layers
        self.heads = model.config.encoder_attention_heads
        self.decoder_heads = model.config.decoder_attention_heads
        self.scale = (model.config.d_model // self.heads) ** -0.5

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        if self.extra_embed_scale != 1.0:
            h = h * self.extra_embed_scale
        positions = torch.cumsum(torch.ones_like(input_ids), dim=1) - 1
        h = h + nn.functional.embedding(positions + self.position_offset, self.positions.weight)
        if self.layernorm_embedding is not None:
            h = self.layernorm_embedding(h)
        bias = key_mask_bias(attention_mask)
        for layer in self.layers:
            attn = layer.self_attn
            residual = h
            x = layer.self_attn_layer_norm(h) if self.pre else h
            q, k, v = (split_heads(proj(x), self.heads) for proj in (attn.q_proj, attn.k_proj, attn.v_proj))
            h = residual + attn.out_proj(merge_heads(attend(q, k, v, bias, self.scale)))
            if not self.pre:
                h = layer.self_attn_layer_norm(h)
            residual = h
            x = layer.final_layer_norm(h) if self.pre else h
            h = residual + layer.fc2(layer.activation_fn(layer.fc1(x)))
            if not self.pre:
                h = layer.final_layer_norm(h)
        if self.final_layer_norm is not None:
            h = self.final_layer_norm(h)
        per_layer = []
        for layer in self.decoder_layers:
            cross = layer.encoder_attn
            per_layer.append(
                torch.stack(
                    [split_heads(cross.k_proj(h), self.decoder_heads), split_heads(cross.v_proj(h), self.decoder_heads)]
                )
            )
        return torch.stack(per_layer)


class DecoderExport(nn.Module):
    """One decoder pass over T new tokens with an external, per-sequence cache."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.spec: DecoderLayout = decoder_layout(model)
        self.heads = model.config.decoder_attention_heads
        self.head_dim = model.config.d_model // self.heads
        self.scale = self.head_dim**-0.5
        # Registered so they are part of this module (and traced), not of the spec.
        self.layers = self.spec.layers
        self.embed_tokens = self.spec.embed_tokens
        self.positions = self.spec.positions
        self.layernorm_embedding = self.spec.layernorm_embedding
        self.final_layer_norm = self.spec.final_layer_norm
        self.lm_head = self.spec.lm_head
        bias = self.spec.final_logits_bias
        self.register_buffer("logits_bias", bias.detach().clone() if bias is not None else None)

    def _embed(self, input_ids: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        if self.spec.extra_embed_scale != 1.0:
            h = h * self.spec.extra_embed_scale
        h = h + nn.functional.embedding(position_ids + self.spec.position_offset, self.positions.weight)
        if self.layernorm_embedding is not None:
            h = self.layernorm_embedding(h)
        return h

    def forward(
        self,
        input_ids: torch.Tensor,
        position_ids: torch.Tensor,
        past_kv: torch.Tensor,
        past_mask: torch.Tensor,
        cross_kv: torch.Tensor,
        encoder_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self_bias = decoder_self_bias(past_mask, input_ids.shape[1])  # [B,1,T,P+T]
        cross_bias = key_mask_bias(encoder_mask)  # [B,1,1,S]
        pre = self.spec.pre_layer_norm

        h = self._embed(input_ids, position_ids)
        new_kv = []
        for index, layer in enumerate(self.layers):
            attn = layer.self_attn
            residual = h
            x = layer.self_attn_layer_norm(h) if pre else h
            k_new, v_new = split_heads(attn.k_proj(x), self.heads), split_heads(attn.v_proj(x), self.heads)
            new_kv.append(torch.stack([k_new, v_new]))
            k = torch.cat([past_kv[index, 0], k_new], dim=2)
            v = torch.cat([past_kv[index, 1], v_new], dim=2)
            x = attn.out_proj(merge_heads(attend(split_heads(attn.q_proj(x), self.heads), k, v, self_bias, self.scale)))
            h = residual + x
            if not pre:
                h = layer.self_attn_layer_norm(h)

            cross = layer.encoder_attn
            residual = h
            x = layer.encoder_attn_layer_norm(h) if pre else h
            x = attend(
                split_heads(cross.q_proj(x), self.heads), cross_kv[index, 0], cross_kv[index, 1], cross_bias, self.scale
            )
            h = residual + cross.out_proj(merge_heads(x))
            if not pre:
                h = layer.encoder_attn_layer_norm(h)

            residual = h
            x = layer.final_layer_norm(h) if pre else h
            h = residual + layer.fc2(layer.activation_fn(layer.fc1(x)))
            if not pre:
                h = layer.final_layer_norm(h)
        if self.final_layer_norm is not None:
            h = self.final_layer_norm(h)
        logits = self.lm_head(h)
        if self.logits_bias is not None:
            logits = logits + self.logits_bias
        return logits, torch.stack(new_kv)
