"""Rebuild the Hugging Face checkpoint of a model folder this project built (BART or mBART).

    python -m models.gec.unpack --model models/gec-default --out runs/gec-default-hf

The shipped folder holds only int8 graphs; this writes their weights back as a ``transformers``
checkpoint (linear weights dequantised, everything else exact), so a fresh clone can run the
CTranslate2 peer of ``gecserve bench decoding`` on the same weights, or re-export the model with
another int8 method, without the training run. Reads fp32 ``MatMul`` weights, ``MatMulNBits``
(``rowwise``) and ``DequantizeLinear`` -> ``MatMul`` (``static``, ``dynamic`` QDQ) graphs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper
from transformers import BartConfig, BartForConditionalGeneration, MBartForConditionalGeneration

from models.gec.architecture import config_for
from service.engine.manifest import ModelManifest
from service.engine.tokenization import TOKENIZER_CONFIG


def _matmulnbits_weight(node: onnx.NodeProto, arrays: dict[str, np.ndarray]) -> np.ndarray:
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    k, n, bits, block = attrs["K"], attrs["N"], attrs["bits"], attrs["block_size"]
    if bits != 8:
        raise ValueError(f"{node.name}: only 8-bit MatMulNBits is read, not {bits}-bit")
    packed = arrays[node.input[1]].astype(np.float32).reshape(n, -1, block)
    scales = arrays[node.input[2]].astype(np.float32).reshape(n, -1, 1)
    zero = 2.0 ** (bits - 1)
    if len(node.input) > 3 and node.input[3]:
        zero = arrays[node.input[3]].astype(np.float32).reshape(n, -1, 1)
    return ((packed - zero) * scales).reshape(n, -1)[:, :k].T


def _dequantized(node: onnx.NodeProto, arrays: dict[str, np.ndarray]) -> np.ndarray:
    values = arrays[node.input[0]].astype(np.float32)
    scale = arrays[node.input[1]].astype(np.float32)
    zero = arrays[node.input[2]].astype(np.float32) if len(node.input) > 2 and node.input[2] else 0.0
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
    if np.ndim(scale) == 1 and scale.size > 1:  # per channel along ``axis``
        shape = [1] * values.ndim
        shape[axis] = -1
        scale, zero = scale.reshape(shape), np.reshape(zero, shape) if np.ndim(zero) else zero
    return (values - zero) * scale


def graph_weights(path: Path) -> dict[str, np.ndarray]:
    """The graph's named parameters: stored tensors by name, linear weights as ``<layer>.weight``
    ``[out, in]`` (named after the bias their output is added to; an unbiased one is skipped)."""
    graph = onnx.load(str(path)).graph
    arrays = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    producers = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    params = {name: array for name, array in arrays.items() if not name.startswith(("onnx::", "/")) and "." in name}
    for node in graph.node:
        if node.op_type == "MatMulNBits":
            weight = _matmulnbits_weight(node, arrays)
        elif node.op_type == "MatMul" and node.input[1] in arrays:
            weight = arrays[node.input[1]]
        elif node.op_type == "MatMul" and getattr(producers.get(node.input[1]), "op_type", "") == "DequantizeLinear":
            weight = _dequantized(producers[node.input[1]], arrays)
        else:
            continue
        biases = [
            name
            for add in consumers.get(node.output[0], [])
            if add.op_type == "Add"
            for name in add.input
            if name.endswith(".bias") and name in arrays
        ]
        if biases:
            params[biases[0][: -len(".bias")] + ".weight"] = np.ascontiguousarray(weight.T)
    return {name: array for name, array in params.items() if not name.endswith("_quantized")}


SHAPE_KEYS = (
    "d_model",
    "encoder_layers",
    "decoder_layers",
    "encoder_attention_heads",
    "decoder_attention_heads",
    "encoder_ffn_dim",
    "decoder_ffn_dim",
)


def _config(manifest: ModelManifest) -> BartConfig:
    a = manifest.architecture
    return config_for(
        {key: a[key] for key in SHAPE_KEYS},
        a["vocab_size"],
        manifest.max_source_positions,
        pre_norm=manifest.family == "mbart",
        activation=a["activation"],
        special=(manifest.decoder_prefix_ids[0], manifest.pad_token_id, manifest.eos_token_id),
    )


def _state_dict(model_dir: Path, manifest: ModelManifest) -> dict[str, torch.Tensor]:
    files = manifest.variants[manifest.default_variant]
    state: dict[str, np.ndarray] = {}
    for part in ("encoder", "decoder"):
        for name, array in graph_weights(model_dir / files[part]).items():
            if name == "embed_tokens.weight":
                state["model.shared.weight"] = array
            elif name == "logits_bias":
                state["final_logits_bias"] = array.reshape(1, -1)
            elif name.startswith("decoder_layers."):  # cross-attention K/V, computed by the encoder graph
                state["model.decoder.layers." + name[len("decoder_layers.") :]] = array
            else:
                name = name.replace("positions.", "embed_positions.", 1) if name.startswith("positions.") else name
                name = name.replace("final_layer_norm.", "layer_norm.", 1) if name.startswith("final_") else name
                state[f"model.{part}.{name}"] = array
    # A lean graph (models/export/lean.py) has dropped the add of an all-zero final_logits_bias.
    state.setdefault("final_logits_bias", np.zeros((1, manifest.architecture["vocab_size"]), dtype=np.float32))
    return {name: torch.from_numpy(np.array(array, dtype=np.float32)) for name, array in state.items()}


def unpack(model_dir: Path, out: Path) -> Path:
    """Write ``model_dir``'s weights as a ``transformers`` checkpoint (with its tokenizer) to ``out``."""
    manifest = ModelManifest.load(model_dir)
    if manifest.family not in ("bart", "mbart"):
        raise ValueError(f"unpack reads this project's BART/mBART models, not {manifest.family!r}")
    model_class = MBartForConditionalGeneration if manifest.family == "mbart" else BartForConditionalGeneration
    model = model_class(_config(manifest)).eval()
    missing, unexpected = model.load_state_dict(_state_dict(model_dir, manifest), strict=False)
    tied = ("lm_head.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight")
    missing = [name for name in missing if name not in (*tied, "final_logits_bias")]
    if missing or unexpected:
        raise ValueError(f"graph weights do not fill the model: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    shutil.copyfile(model_dir / manifest.tokenizer, out / "tokenizer.json")
    (out / "tokenizer_config.json").write_text(json.dumps(TOKENIZER_CONFIG, indent=2), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=Path("models/gec-default"))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    print(unpack(args.model, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
