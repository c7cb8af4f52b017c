"""Model presets of the default GEC model: a deep encoder and a shallow decoder.

The decoder pass is what aggressive decoding repeats, so it is kept cheap (2 layers); the
encoder, run once per sentence, carries most of the capacity (Shallow Aggressive Decoding).
"""

from __future__ import annotations

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
    config_class = MBartConfig if pre_norm else BartConfig
    return config_class(
        vocab_size=vocab_size,
        d_model=p["d_model"],
        encoder_layers=p["encoder_layers"],
        decoder_layers=p["decoder_layers"],
        encoder_attention_heads=p["heads"],
        decoder_attention_heads=p["heads"],
        encoder_ffn_dim=p["ffn"],
        decoder_ffn_dim=p["ffn"],
        max_position_embeddings=max_positions,
        dropout=dropout,
        attention_dropout=0.0,
        activation_dropout=0.0,
        activation_function="gelu",
        scale_embedding=False,
        bos_token_id=BOS_ID,
        pad_token_id=PAD_ID,
        eos_token_id=EOS_ID,
        decoder_start_token_id=BOS_ID,
        forced_bos_token_id=None,
        forced_eos_token_id=None,
        tie_word_embeddings=True,
    )
