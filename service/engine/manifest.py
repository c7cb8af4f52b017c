"""``manifest.json`` of a model folder: what the engine needs to run it, and what it measured."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# The keep bias (``decoding.alignment``) of each level a request may ask for, for a model whose manifest measured
# none: the model as trained by default, and ``picky`` (LanguageTool's level) at the recall end.
KEEP_BIAS_LEVELS = {"default": 0.0, "picky": -1.0}
"""The keep bias of each level a model's manifest may measure for itself; a level it does not name (``safe``, which
differs from ``default`` in its confidence threshold alone) decodes with the model's ``default``."""


@dataclass
class ModelManifest:
    """Everything about a model folder that is not in the ONNX graphs themselves.

    ``variants`` maps a variant name (``fp32``, ``int8``) to its ``encoder``/``decoder`` files.
    Source token ids are ``source_prefix_ids + content + source_suffix_ids``; decoding starts
    from ``decoder_prefix_ids`` (the decoder start token, then a forced BOS where the family
    has one) and ends at ``eos_token_id``.
    """

    name: str
    version: str
    family: str
    architecture: dict[str, Any]
    pad_token_id: int
    eos_token_id: int
    decoder_prefix_ids: list[int]
    source_prefix_ids: list[int]
    source_suffix_ids: list[int]
    max_source_positions: int
    max_target_positions: int
    variants: dict[str, dict[str, str]]
    default_variant: str = "fp32"
    tokenizer: str = "tokenizer.json"
    vocabulary: str | None = None  # the spelling stage's known words (``models.gec.vocabulary``); None: no stage
    # the spelling stage's ranking (``models.gec.spelling_model``); None: the closest known word, then the most frequent
    spelling_model: str | None = None
    # the n-gram language model that reviews corrections (``models.gec.language_model``); None: no review
    language_model: str | None = None
    # the fit that turns an edit's evidence into its confidence (``models.gec.calibrate``); None: the model's own
    # probability of the edit
    confidence: str | None = None
    # the keep bias of each level (``KEEP_BIAS_LEVELS``'s names), measured on the dev sets for this model
    keep_bias: dict[str, float] = field(default_factory=lambda: dict(KEEP_BIAS_LEVELS))
    files_sha256: dict[str, str] = field(default_factory=dict)
    verification: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def decoder_layers(self) -> int:
        return int(self.architecture["decoder_layers"])

    @property
    def decoder_heads(self) -> int:
        return int(self.architecture["decoder_attention_heads"])

    @property
    def head_dim(self) -> int:
        """Each attention head's size: the export's ``head_dim`` where it recorded one (T5's ``d_kv``, which need
        not be ``d_model / heads``), else ``d_model / heads``."""
        recorded = self.architecture.get("head_dim")
        return int(recorded) if recorded else int(self.architecture["d_model"]) // self.decoder_heads

    @property
    def max_source_content(self) -> int:
        """Longest content (without prefix/suffix special tokens) the encoder accepts."""
        return self.max_source_positions - len(self.source_prefix_ids) - len(self.source_suffix_ids)

    @classmethod
    def load(cls, model_dir: Path) -> ModelManifest:
        data = json.loads((Path(model_dir) / "manifest.json").read_text(encoding="utf-8"))
        known = set(cls.__dataclass_fields__)
        extra = {k: v for k, v in data.items() if k not in known}
        manifest = cls(**{k: v for k, v in data.items() if k in known})
        manifest.extra.update(extra)
        return manifest

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        extra = data.pop("extra")
        data.update(extra)
        return data

    def save(self, model_dir: Path) -> None:
        path = Path(model_dir) / "manifest.json"
        path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


class ModelFolderError(ValueError):
    """A folder that cannot be served as a model; the message names the folder or the file at fault. ``variant``:
    the variant asked for is the fault."""

    def __init__(self, message: str, variant: bool = False) -> None:
        super().__init__(message)
        self.variant = variant


def check_model_folder(
    path: Path, variant: str | None = None, decodes: bool = True, spelling: bool = True, review: bool = True
) -> ModelManifest:
    """The manifest of the model folder at ``path``, checked: it reads, ``variant`` (None: the manifest's default)
    is one of its variants, and the files it names are there (the tokenizer; the variant's graphs where the
    caller ``decodes``; the spelling stage's files and the language model where ``spelling`` and ``review`` are
    on). ``ModelFolderError`` naming the folder or the file otherwise."""
    try:  # a name too long for the file system, or with a NUL, raises rather than not being there
        folder = path.is_dir()
        exists = folder or path.exists()
        has_manifest = folder and (path / "manifest.json").is_file()
    except (OSError, ValueError) as error:
        raise ModelFolderError(f"{str(path)!r} cannot be a model folder: {error}") from error
    if not folder:
        raise ModelFolderError(f"{path}: {'not a folder' if exists else 'no such folder'}")
    if not has_manifest:
        raise ModelFolderError(f"{path} is not a model folder: it has no manifest.json")
    try:
        manifest = ModelManifest.load(path)
    except (OSError, ValueError, TypeError) as error:
        raise ModelFolderError(f"{path / 'manifest.json'} cannot be read: {error}") from error
    chosen = variant or manifest.default_variant
    if chosen not in manifest.variants:
        known = ", ".join(sorted(manifest.variants))
        raise ModelFolderError(f"the model at {path} has no variant {chosen!r} (it has {known})", variant=True)
    needed: list[str | None] = [manifest.tokenizer]
    if decodes:
        needed += manifest.variants[chosen].values()
    if spelling:
        needed += [manifest.vocabulary, manifest.spelling_model]
    if review:
        needed.append(manifest.language_model)
    missing = [file for file in needed if file is not None and not (path / file).is_file()]
    if missing:
        raise ModelFolderError(f"{path} lacks {', '.join(missing)}, named by its manifest.json")
    return manifest


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, as ``files_sha256`` records it."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def name_file(model_dir: Path, role: str, file: str, info: dict[str, Any]) -> ModelManifest:
    """Name ``file``, already written in ``model_dir``, as the manifest's ``role`` (a field such as
    ``vocabulary``), with its SHA-256 and how it was made (``{role}_info``); returns the saved manifest."""
    manifest = ModelManifest.load(model_dir)
    setattr(manifest, role, file)
    digest = file_sha256(Path(model_dir) / file)
    manifest.files_sha256 = dict(sorted({**manifest.files_sha256, file: digest}.items()))
    manifest.extra[f"{role}_info"] = info
    manifest.save(model_dir)
    return manifest


def level_keep_bias(manifest: ModelManifest, level: str) -> float:
    """The keep bias a request at ``level`` decodes with on the model of ``manifest``."""
    if level in manifest.keep_bias:
        return manifest.keep_bias[level]
    return KEEP_BIAS_LEVELS.get(level, manifest.keep_bias.get("default", KEEP_BIAS_LEVELS["default"]))
