"""Int8 quantisation of exported graphs with ONNX Runtime's own quantisers.

``dynamic``: ``quantize_dynamic`` with per-channel int8 weights; activations are quantised at
run time with one scale per tensor, so a token's result depends slightly on the other tokens
in its batch and block. ``rowwise``: ``MatMulNBits`` 8-bit weights with int8 compute
(accuracy level 4), which quantises activations per row block: a token's result does not
depend on its neighbours, which keeps aggressive decoding token-for-token equal to greedy (on
an AVX2-only CPU it measured no faster than fp32: no integer GEMM kernel there).
``hybrid``: ``dynamic`` for the encoder (faster than ``rowwise``; it runs once per batch, so
greedy and aggressive decoding of a batch still see the same encoder output) and ``rowwise`` for
the decoder (exact). The encoder output then depends slightly on the other sentences of the batch.
``static``: per-channel int8 weights and activation scales fixed from calibration feeds
(``models/export/calibration.py``), so a token's integer arithmetic depends on nothing else in
its pass or batch (exact, like ``rowwise``) while running ONNX Runtime's integer GEMM (as fast as
``dynamic``). Only weight MatMuls are quantised; their outputs stay float.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import onnx

METHODS = ("static", "rowwise", "dynamic", "hybrid")


def method_for(part: str, method: str) -> str:
    """The quantiser used for one graph (``encoder`` or ``decoder``) under ``method``."""
    if method == "hybrid":
        return "dynamic" if part == "encoder" else "rowwise"
    return method


def weight_matmuls(graph: onnx.ModelProto) -> list[str]:
    """Names of the MatMul nodes whose right-hand side is a stored weight."""
    weights = {init.name for init in graph.graph.initializer}
    return [node.name for node in graph.graph.node if node.op_type == "MatMul" and node.input[1] in weights]


def _quantize_static(source: Path, target: Path, calibration: Iterable[dict[str, np.ndarray]]) -> None:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds = iter(calibration)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser's "consider pre-processing" advice, once per graph
    try:
        quantize_static(
            str(source),
            str(target),
            Reader(),
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=["MatMul"],
            nodes_to_quantize=weight_matmuls(onnx.load(str(source))),
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            calibrate_method=CalibrationMethod.MinMax,
            # Float outputs: ORT fuses each quantised MatMul into MatMulIntegerToFloat.
            extra_options={"OpTypesToExcludeOutputQuantization": ["MatMul"]},
        )
    finally:
        root.setLevel(level)


def quantize_int8(
    source: Path, target: Path, method: str = "dynamic", calibration: Iterable[dict[str, np.ndarray]] | None = None
) -> Path:
    """Write an int8 copy of the fp32 graph ``source`` to ``target``.

    ``calibration`` (feeds of this graph) is required by ``static`` and ignored by the others.
    """
    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    if method == "static":
        if calibration is None:
            raise ValueError("static quantisation needs calibration feeds")
        _quantize_static(source, target, calibration)
    elif method == "dynamic":
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
