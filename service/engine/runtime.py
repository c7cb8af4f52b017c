"""How ONNX Runtime runs a model's graphs (``RuntimeOptions``: execution providers, threads, spinning, IO
binding, optimisation), and the inference sessions made under them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import onnxruntime as ort


@dataclass(frozen=True)
class RuntimeOptions:
    """How to run a graph.

    ``provider``: ``auto`` (CUDA when onnxruntime-gpu sees a device, else CPU), ``cpu`` or
    ``cuda``. ``intra_op_threads`` 0 lets ORT choose. Spinning keeps idle threads busy-waiting
    between ops: it helps when a core is free for each thread, and on a small shared machine
    it makes a step-by-step decoding loop slower, so it is off by default.
    """

    provider: str = "auto"
    intra_op_threads: int = 1
    inter_op_threads: int = 1
    spinning: bool = False
    optimization: str = "all"
    io_binding: str = "auto"  # auto (on with CUDA), on, off: see service/engine/binding.py
    device_id: int = 0

    def __post_init__(self) -> None:
        if self.io_binding not in ("auto", "on", "off"):
            raise ValueError(f"io_binding must be auto, on or off, not {self.io_binding!r}")

    def providers(self) -> list[str]:
        """Execution providers for ``provider``, most preferred first."""
        available = ort.get_available_providers()
        if self.provider == "cuda" or (self.provider == "auto" and "CUDAExecutionProvider" in available):
            if "CUDAExecutionProvider" not in available:
                raise RuntimeError("provider 'cuda' asked for, but onnxruntime has no CUDAExecutionProvider")
            return ["CUDAExecutionProvider", "CPUExecutionProvider"]
        return ["CPUExecutionProvider"]

    @property
    def uses_cuda(self) -> bool:
        return self.providers()[0] == "CUDAExecutionProvider"

    @property
    def binds_io(self) -> bool:
        return self.io_binding == "on" or (self.io_binding == "auto" and self.uses_cuda)

    @property
    def device(self) -> str:
        """Where bound inputs live: ``cuda`` or ``cpu``."""
        return "cuda" if self.uses_cuda else "cpu"


_LEVELS = {
    "none": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def create_inference_session(
    path: Path, runtime: RuntimeOptions, profile_prefix: Path | None = None
) -> ort.InferenceSession:
    """An inference session for the graph at ``path`` under ``runtime``; with ``profile_prefix``, ONNX Runtime's
    profiler on, its events written to a file of that prefix (``end_profiling`` names it)."""
    options = ort.SessionOptions()
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = str(profile_prefix)
    options.intra_op_num_threads = runtime.intra_op_threads
    options.inter_op_num_threads = runtime.inter_op_threads
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = _LEVELS[runtime.optimization]
    spin = "1" if runtime.spinning else "0"
    options.add_session_config_entry("session.intra_op.allow_spinning", spin)
    options.add_session_config_entry("session.inter_op.allow_spinning", spin)
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=options, providers=runtime.providers())
