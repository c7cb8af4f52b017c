"""Model presets of the default GEC model: a deep encoder and a shallow decoder.

The decoder pass is what aggressive decoding repeats, so it is kept cheap (2 layers); the
encoder, run once per sentence, carries most of the capacity (Shallow Aggressive Decoding).
"""

from __future__ import annotations

from collections.abc import Mapping

from transformers import BartConfig, MBartConfig

from models.gec.tokenizer import BOS_ID, EOS_ID, PAD_ID

PRESETS: dict[str, dict[str, int]] = {
    # CPU recipe: about 9M parameters, trains in ~2.5 h on 2 cores.
    "small": {"d_model": 256, "encoder_layers": 6, "decoder_layers": 2, "heads": 4, "ffn": 1024},
    # GPU recipe: about 21M parameters.
    "base": {"d_model": 384, "encoder_layers": 8, "decoder_layers": 2, "heads": 6, "ffn": 1536},
    # Test fixture: tiny and fast.
    "tiny": {"d_model": 64, "encoder_layers": 2, "decoder_layers": 1, "heads": 2, "ffn": 128},
}


def bart_config(
    preset: str, vocab_size: int, max_positions: int = 256, dropout: float = 0.1, pre_norm: bool = False
) -> BartConfig:
    """A BART-family config for ``preset`` with the project's special-token convention.

    The decoder starts from ``<s>`` and targets end with ``</s>``; no forced BOS. ``pre_norm``
    gives the mBART layout (layer norm before each sub-layer), which trains from scratch with a
    short warm-up where post-norm BART stalls.
    """
    p = PRESETS[preset]
    shape = {"d_model": p["d_model"], "encoder_layers": p["encoder_layers"], "decoder_layers": p["decoder_layers"]}
    shape |= {f"{side}_attention_heads": p["heads"] for side in ("encoder", "decoder")}
    shape |= {f"{side}_ffn_dim": p["ffn"] for side in ("encoder", "decoder")}
    return config_for(shape, vocab_size, max_positions, pre_norm, dropout=dropout)


def config_for(
    shape: Mapping[str, int],
    vocab_size: int,
    max_positions: int,
    pre_norm: bool,
    dropout: float = 0.0,
    activation: str = "gelu",
    special: tuple[int, int, int] = (BOS_ID, PAD_ID, EOS_ID),
) -> BartConfig:
    """The config of a project model: ``shape`` holds ``d_model``, ``{encoder,decoder}_layers``,
    ``{encoder,decoder}_attention_heads`` and ``{encoder,decoder}_ffn_dim``; ``special`` is
    (decoder start = BOS, pad, EOS). No embedding scale, tied embeddings, no forced tokens."""
    bos, pad, eos = special
    config_class = MBartConfig if pre_norm else BartConfig
    return config_class(
        vocab_size=vocab_size,
        **shape,
        max_position_embeddings=max_positions,
        dropout=dropout,
        attention_dropout=0.0,
        activation_dropout=0.0,
        activation_function=activation,
        scale_embedding=False,
        bos_token_id=bos,
        pad_token_id=pad,
        eos_token_id=eos,
        decoder_start_token_id=bos,
        forced_bos_token_id=None,
        forced_eos_token_id=None,
        tie_word_embeddings=True,
    )
