"""Int8 quantisation of exported graphs with ONNX Runtime's own quantisers.

``dynamic``: ``quantize_dynamic`` with per-channel int8 weights; activations are quantised at
run time with one scale per tensor, so a token's result depends slightly on the other tokens
in its batch and block. ``rowwise``: ``MatMulNBits`` 8-bit weights with int8 compute
(accuracy level 4), which quantises activations per row block: a token's result does not
depend on its neighbours, which keeps aggressive decoding token-for-token equal to greedy.
``hybrid``: ``dynamic`` for the encoder (about twice as fast here; it runs once per batch, so
greedy and aggressive decoding of a batch still see the same encoder output) and ``rowwise`` for
the decoder (exact). The encoder output then depends slightly on the other sentences of the batch.
"""

from __future__ import annotations

import logging
from pathlib import Path

import onnx

METHODS = ("dynamic", "rowwise", "hybrid")


def method_for(part: str, method: str) -> str:
    """The quantiser used for one graph (``encoder`` or ``decoder``) under ``method``."""
    if method == "hybrid":
        return "dynamic" if part == "encoder" else "rowwise"
    return method


def quantize_int8(source: Path, target: Path, method: str = "dynamic") -> Path:
    """Write an int8 copy of the fp32 graph ``source`` to ``target``."""
    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    if method == "dynamic":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(
            str(source),
            str(target),
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Gemm"],
        )
    elif method == "rowwise":
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        quantizer = MatMulNBitsQuantizer(
            onnx.load(str(source)), bits=8, block_size=32, is_symmetric=True, accuracy_level=4
        )
        quantizer.process()
        quantizer.model.save_model_to_file(str(target), use_external_data_format=False)
    else:
        raise ValueError(f"unknown quantisation method {method!r}; known: {', '.join(METHODS)}")
    return target
