"""Inference engine: ONNX Runtime sessions and decoding strategies (no asyncio, no web code)."""

from service.engine.engine import DecodeParams, DecodeResult, Engine, InputTooLongError
from service.engine.manifest import ModelManifest
from service.engine.sessions import SessionSettings

__all__ = ["DecodeParams", "DecodeResult", "Engine", "InputTooLongError", "ModelManifest", "SessionSettings"]
