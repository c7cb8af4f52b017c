"""Inference engine: ONNX Runtime sessions and decoding strategies (no asyncio, no web code).

Beside them, what the commands, the benchmarks and the model tools (``models``) share: ``offline``, batch correction
of paragraphs with an engine in the process, as the service reads them; ``report``, the tables and JSON every
measurement writes.
"""

from service.engine.engine import DecodeParams, DecodeResult, Engine, InputTooLongError
from service.engine.manifest import ModelManifest
from service.engine.runtime import RuntimeOptions

__all__ = ["DecodeParams", "DecodeResult", "Engine", "InputTooLongError", "ModelManifest", "RuntimeOptions"]
