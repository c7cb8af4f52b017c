"""Trace the export wrappers into ``encoder.onnx`` and ``decoder.onnx`` (fp32)."""

from __future__ import annotations

import warnings
from pathlib import Path

import torch
from torch import nn

from models.export.families import architecture
from models.export.t5 import T5DecoderExport, T5EncoderExport
from models.export.wrappers import DecoderExport, EncoderExport

OPSET = 17


def _wrappers(model: nn.Module) -> tuple[nn.Module, nn.Module]:
    """The encoder and decoder export modules of ``model``'s family."""
    if model.config.model_type == "t5":
        return T5EncoderExport(model).eval(), T5DecoderExport(model).eval()
    return EncoderExport(model).eval(), DecoderExport(model).eval()


def _sample_inputs(model: nn.Module) -> tuple[dict, dict]:
    shape = architecture(model.config)
    layers, heads = shape["decoder_layers"], shape["decoder_attention_heads"]
    head_dim = shape.get("head_dim", shape["d_model"] // heads)
    batch, src, past, new = 2, 7, 3, 4
    enc = {
        "input_ids": torch.full((batch, src), 5, dtype=torch.long),
        "attention_mask": torch.ones(batch, src, dtype=torch.long),
    }
    dec = {
        "input_ids": torch.full((batch, new), 5, dtype=torch.long),
        "position_ids": torch.arange(past, past + new).expand(batch, new).contiguous(),
        "past_kv": torch.zeros(layers, 2, batch, heads, past, head_dim),
        "past_mask": torch.ones(batch, past, dtype=torch.long),
        "cross_kv": torch.zeros(layers, 2, batch, heads, src, head_dim),
        "encoder_mask": torch.ones(batch, src, dtype=torch.long),
    }
    return enc, dec


def export_graphs(model: nn.Module, out_dir: Path) -> tuple[Path, Path]:
    """Write fp32 ``encoder.onnx`` and ``decoder.onnx`` for ``model`` into ``out_dir``."""
    model = model.eval()
    enc_inputs, dec_inputs = _sample_inputs(model)
    encoder, decoder = _wrappers(model)
    encoder_path, decoder_path = out_dir / "encoder.onnx", out_dir / "decoder.onnx"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            encoder,
            tuple(enc_inputs.values()),
            str(encoder_path),
            input_names=list(enc_inputs),
            output_names=["cross_kv"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "source"},
                "attention_mask": {0: "batch", 1: "source"},
                "cross_kv": {2: "batch", 4: "source"},
            },
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
        torch.onnx.export(
            decoder,
            tuple(dec_inputs.values()),
            str(decoder_path),
            input_names=list(dec_inputs),
            output_names=["logits", "new_kv"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "new"},
                "position_ids": {0: "batch", 1: "new"},
                "past_kv": {2: "batch", 4: "past"},
                "past_mask": {0: "batch", 1: "past"},
                "cross_kv": {2: "batch", 4: "source"},
                "encoder_mask": {0: "batch", 1: "source"},
                "logits": {0: "batch", 1: "new"},
                "new_kv": {2: "batch", 4: "new"},
            },
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
    model.eval()
    return encoder_path, decoder_path
