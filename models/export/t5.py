"""T5's export wrappers: ``T5ForConditionalGeneration`` to the graph contract of ``models/export/wrappers.py``.

T5 has no position embeddings. Each stack's first layer holds a bias per head for every bucket of
relative positions (key position minus query position), which every layer of the stack adds to its
self-attention scores; cross-attention has none. The encoder's buckets are bidirectional, the
decoder's causal.

Decoder positions: a query's is its ``position_ids`` entry, which the engine sets to the row's cache
length plus its offset among the new tokens, so one pass over a draft of T tokens (aggressive decoding's
verification) gets the bias of T one-token passes. A new key's position is its query's; a cached key's
is the number of valid entries before it in ``past_mask``: both cache layouts of ``service/engine/kv_cache.py``
keep a row's valid entries in position order from 0 (the masked layout's holes do not count).

Buckets: HF computes a bucket with a float logarithm, whose rounding at bucket edges could differ
between PyTorch and ONNX Runtime. Past ``reach`` tokens every bucket is the last one of its side, so
the bias of every relative position in ``[-reach, reach]`` is computed here once, by HF's own
bucket function, and the graphs look it up for the clamped relative position.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from models.export.wrappers import attend, decoder_self_bias, key_mask_bias, merge_heads, split_heads


def scales_output(config: Any) -> bool:
    """Whether the decoder output is scaled by ``d_model ** -0.5`` before ``lm_head`` (T5 with its output
    embedding tied to the input one; not T5 v1.1 or FLAN). ``transformers`` 5 names the setting
    ``scale_decoder_outputs``; earlier versions read ``tie_word_embeddings``."""
    return bool(getattr(config, "scale_decoder_outputs", config.tie_word_embeddings))


class RelativeBias(nn.Module):
    """A stack's relative position bias as a table over the relative positions ``[-reach, reach]``."""

    def __init__(self, attention: nn.Module, bidirectional: bool) -> None:
        super().__init__()
        buckets, distance = attention.relative_attention_num_buckets, attention.relative_attention_max_distance
        self.reach = max(distance, buckets)

        def bucket(relative: torch.Tensor) -> torch.Tensor:
            return attention._relative_position_bucket(relative, bidirectional, buckets, distance)

        near = bucket(torch.arange(-self.reach, self.reach + 1))
        far = torch.arange(self.reach, 8 * self.reach + 1)
        if not (bool((bucket(far) == near[-1]).all()) and bool((bucket(-far) == near[0]).all())):
            raise ValueError(f"relative position buckets still change past {self.reach} tokens")
        self.register_buffer("table", attention.relative_attention_bias.weight.detach()[near].clone())  # [2R+1,H]

    def forward(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        """``[B,T]`` query and ``[B,K]`` key positions -> the bias ``[B,H,T,K]``."""
        relative = key_positions[:, None, :] - query_positions[:, :, None]
        index = torch.clamp(relative, -self.reach, self.reach) + self.reach
        return nn.functional.embedding(index, self.table).permute(0, 3, 1, 2)


def _self_attention(
    sublayer: nn.Module, h: torch.Tensor, bias: torch.Tensor, heads: int, past: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """A ``T5LayerSelfAttention`` (RMS norm, unscaled attention, residual) over ``past [2,B,H,P,Dh]`` and
    ``h``'s own tokens; returns the new ``h`` and the keys/values of ``h``'s tokens ``[2,B,H,T,Dh]``."""
    attention = sublayer.SelfAttention
    x = sublayer.layer_norm(h)
    keys, values = split_heads(attention.k(x), heads), split_heads(attention.v(x), heads)
    new = torch.stack([keys, values])
    if past is not None:
        keys, values = torch.cat([past[0], keys], dim=2), torch.cat([past[1], values], dim=2)
    x = attend(split_heads(attention.q(x), heads), keys, values, bias)
    return h + attention.o(merge_heads(x)), new


class T5EncoderExport(nn.Module):
    """The encoder stack plus the cross-attention keys/values of every decoder layer (``cross_kv``)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        encoder, decoder = model.get_encoder(), model.get_decoder()
        self.heads = model.config.num_heads
        self.embed_tokens = encoder.embed_tokens
        self.blocks = encoder.block
        self.final_layer_norm = encoder.final_layer_norm
        self.position_bias = RelativeBias(encoder.block[0].layer[0].SelfAttention, bidirectional=True)
        self.cross = nn.ModuleList(block.layer[1].EncDecAttention for block in decoder.block)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        positions = torch.cumsum(torch.ones_like(input_ids[:1]), dim=1) - 1  # [1,S]: sources are right-padded
        bias = self.position_bias(positions, positions) + key_mask_bias(attention_mask)  # [B,H,S,S]
        h = self.embed_tokens(input_ids)
        for block in self.blocks:
            h, _ = _self_attention(block.layer[0], h, bias, self.heads)
            h = block.layer[-1](h)  # T5LayerFF: RMS norm, feed-forward, residual
        h = self.final_layer_norm(h)
        return torch.stack(
            [torch.stack([split_heads(a.k(h), self.heads), split_heads(a.v(h), self.heads)]) for a in self.cross]
        )


class T5DecoderExport(nn.Module):
    """One decoder pass over T new tokens with an external, per-sequence cache."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        decoder = model.get_decoder()
        self.heads = model.config.num_heads
        self.embed_tokens = decoder.embed_tokens
        self.blocks = decoder.block
        self.final_layer_norm = decoder.final_layer_norm
        self.position_bias = RelativeBias(decoder.block[0].layer[0].SelfAttention, bidirectional=False)
        self.lm_head = model.lm_head
        self.output_scale = model.config.d_model**-0.5 if scales_output(model.config) else 1.0

    def forward(
        self,
        input_ids: torch.Tensor,
        position_ids: torch.Tensor,
        past_kv: torch.Tensor,
        past_mask: torch.Tensor,
        cross_kv: torch.Tensor,
        encoder_mask: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        key_positions = torch.cat([torch.cumsum(past_mask, dim=1) - 1, position_ids], dim=1)  # [B,P+T]
        self_bias = self.position_bias(position_ids, key_positions) + decoder_self_bias(past_mask, input_ids.shape[1])
        cross_bias = key_mask_bias(encoder_mask)
        h = self.embed_tokens(input_ids)
        new_kv = []
        for index, block in enumerate(self.blocks):
            h, kv = _self_attention(block.layer[0], h, self_bias, self.heads, past_kv[index])
            new_kv.append(kv)
            cross = block.layer[1]
            x = attend(
                split_heads(cross.EncDecAttention.q(cross.layer_norm(h)), self.heads),
                cross_kv[index, 0],
                cross_kv[index, 1],
                cross_bias,
            )
            h = h + cross.EncDecAttention.o(merge_heads(x))
            h = block.layer[-1](h)
        h = self.final_layer_norm(h)
        if self.output_scale != 1.0:
            h = h * self.output_scale
        return self.lm_head(h), torch.stack(new_kv)
