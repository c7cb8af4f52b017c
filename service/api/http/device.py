"""What the browser's ``device`` engine downloads: ``GET /device/model.json`` and the files it names.

The device engine (``service/web/static/device/``, in a Web Worker) runs the default model's int8 graphs, unchanged,
in onnxruntime-web's wasm backend, with the model's tokenizer read by ``@huggingface/tokenizers`` and, where the model
has one, its vocabulary (which sentences read as English). It applies the service's policy to its edits
(``service.text.device_confidence``) with two files made here, from the service's own modules: ``policy`` (the
device's confidence fit, ``device_confidence`` in the manifest, else the model's own probability; the levels'
thresholds, the lexical classes' multipliers, the words the classes read) and ``words`` (``wordfreq``'s English list
with each word's frequency, gzip: the worker decompresses it). Those two libraries
are the *runtime*: ``make web`` installs them from ``package-lock.json`` into ``service/web/static/vendor/device/``.
``/device/model.json`` says what the engine needs: the graphs' contract (special ids, prefixes, layers, heads), the
keep bias of each level, the model's licence, and the URL of every file, which carries the file's SHA-256
(``/device/files/{sha256}/{name}``): the bytes under a URL never change, so they are sent ``Cache-Control:
immutable`` and the browser keeps them; another model or runtime has other URLs. Files go gzip-compressed to a
browser that accepts it (each compressed once, on its first request, in a thread). Without an int8 variant or
without the runtime there is no device engine: ``/device/model.json`` answers 404 ``not_found`` with the reason,
which the client shows. Like ``/v1/correct``, these need an API key where keys are configured.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from service.api.http.dashboard import STATIC
from service.api.responses import error_response
from service.engine.manifest import ModelManifest, file_sha256, level_keep_bias
from service.error_reasons import ErrorReason
from service.text.device_confidence import DeviceConfidence, policy_file, words_file
from service.text.policy import LEVELS

__all__ = ["DEVICE_VARIANT", "RUNTIME", "device_router"]

DEVICE_VARIANT = "int8"  # what a browser can hold: the shipped graphs, 27 MB
RUNTIME_DIR = STATIC / "vendor" / "device"
# role -> file in RUNTIME_DIR (make web)
RUNTIME = {"ort": "ort.wasm.bundle.min.mjs", "wasm": "ort-wasm-simd-threaded.wasm", "tokenizers": "tokenizers.min.mjs"}
MEDIA_TYPES = {
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".gz": "application/gzip",
}
POLICY_FILE = "device_policy.json"
WORDS_FILE = "device_words.txt.gz"
IMMUTABLE = "public, max-age=31536000, immutable"


class DeviceFiles:
    """The files a browser may fetch for the device engine, by name: their paths, digests and roles."""

    def __init__(self, model_dir: Path, max_text_chars: int, runtime_dir: Path = RUNTIME_DIR) -> None:
        self.manifest = ModelManifest.load(model_dir)
        self.max_text_chars = max_text_chars
        graphs = self.manifest.variants.get(DEVICE_VARIANT)
        self.missing: str | None = None
        if graphs is None:
            self.missing = f"model {self.manifest.name} has no {DEVICE_VARIANT} variant for the device engine"
        elif not all((runtime_dir / file).is_file() for file in RUNTIME.values()):
            self.missing = "the device engine's runtime is not installed on this server (make web)"
        self.roles: dict[str, str] = {}  # role -> file name
        self.paths: dict[str, Path] = {}
        self.digests: dict[str, str] = {}
        self.made: dict[str, bytes] = {}  # name -> the bytes of a file made here, not read from a path
        if self.missing is None:
            model_files = {
                "encoder": graphs["encoder"],
                "decoder": graphs["decoder"],
                "tokenizer": self.manifest.tokenizer,
            }
            if self.manifest.vocabulary is not None:  # which sentences read as English (static/device/language.mjs)
                model_files["vocabulary"] = self.manifest.vocabulary
            for role, name in model_files.items():
                self._add(role, model_dir / name, self.manifest.files_sha256.get(name))
            for role, name in RUNTIME.items():
                self._add(role, runtime_dir / name, None)
            fit = self.manifest.extra.get("device_confidence")
            confidence = DeviceConfidence.load(model_dir / fit) if fit else DeviceConfidence(())
            self._make("policy", POLICY_FILE, policy_file(confidence))
            self._make("words", WORDS_FILE, words_file())

    def _add(self, role: str, path: Path, digest: str | None) -> None:
        self.roles[role] = path.name
        self.paths[path.name] = path
        self.digests[path.name] = digest or file_sha256(path)

    def _make(self, role: str, name: str, data: bytes) -> None:
        self.roles[role] = name
        self.made[name] = data
        self.digests[name] = hashlib.sha256(data).hexdigest()

    def size(self, name: str) -> int:
        return len(self.made[name]) if name in self.made else self.paths[name].stat().st_size

    def url(self, role: str) -> str:
        name = self.roles[role]
        return f"/device/files/{self.digests[name]}/{name}"

    def description(self) -> dict[str, Any]:
        m = self.manifest
        return {
            "name": m.name,
            "version": m.version,
            "variant": DEVICE_VARIANT,
            "licence": str(m.extra.get("licence", "")),
            "files": {role: {"url": self.url(role), "bytes": self.size(name)} for role, name in self.roles.items()},
            "contract": {
                "pad_token_id": m.pad_token_id,
                "eos_token_id": m.eos_token_id,
                "decoder_prefix_ids": list(m.decoder_prefix_ids),
                "source_prefix_ids": list(m.source_prefix_ids),
                "source_suffix_ids": list(m.source_suffix_ids),
                "max_source_positions": m.max_source_positions,
                "max_target_positions": m.max_target_positions,
                "decoder_layers": m.decoder_layers,
                "decoder_heads": m.decoder_heads,
                "head_dim": m.head_dim,
                "vocab_size": int(m.architecture["vocab_size"]),
            },
            "keep_bias": dict(m.keep_bias),
            "level_keep_bias": {level: level_keep_bias(m, level) for level in LEVELS},  # as the server decodes each
            "max_text_chars": self.max_text_chars,
        }


@cache
def _gzipped(path: Path) -> bytes:
    return gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)


def device_router(model_dir: Path, max_text_chars: int, runtime_dir: Path = RUNTIME_DIR) -> APIRouter:
    """``/device/model.json`` and ``/device/files/{sha256}/{name}`` for the model in ``model_dir``; the device
    engine refuses texts longer than ``max_text_chars`` (code points), as ``/v1/correct`` does."""
    router = APIRouter(include_in_schema=False)
    files = DeviceFiles(model_dir, max_text_chars, runtime_dir)
    compressing = asyncio.Lock()  # one file compressed at a time, each once

    @router.get("/device/model.json")
    async def device_model() -> Response:
        if files.missing is not None:
            return error_response(ErrorReason.NOT_FOUND, files.missing)
        return JSONResponse(files.description(), headers={"Cache-Control": "no-cache"})

    @router.get("/device/files/{digest}/{name}")
    async def device_file(digest: str, name: str, request: Request) -> Response:
        if files.digests.get(name) != digest:
            return error_response(ErrorReason.NOT_FOUND, f"no device engine file {name} with SHA-256 {digest}")
        headers = {"Cache-Control": IMMUTABLE, "ETag": f'"{digest}"', "Vary": "Accept-Encoding"}
        if request.headers.get("if-none-match") == f'"{digest}"':
            return Response(status_code=304, headers=headers)
        media_type = MEDIA_TYPES.get(Path(name).suffix, "application/octet-stream")
        if name in files.made:  # small, or compressed already
            return Response(files.made[name], media_type=media_type, headers=headers)
        path = files.paths[name]
        if "gzip" not in request.headers.get("accept-encoding", ""):
            return FileResponse(path, media_type=media_type, headers=headers)  # streamed, not read whole
        async with compressing:
            body = await asyncio.to_thread(_gzipped, path)
        return Response(body, media_type=media_type, headers={**headers, "Content-Encoding": "gzip"})

    return router
