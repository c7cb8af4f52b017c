"""The CTranslate2 peer: int8 greedy decoding of the same Hugging Face weights.

Needs the build extra (ctranslate2, transformers). BART checkpoints converted with
ctranslate2 4.8 under transformers 5 need ``normalize_before: false`` and
``normalize_embedding: true`` in the config, and a bare ``tokenizer.json`` needs a
``tokenizer_config.json`` naming the generic fast tokenizer; the converter is given a patched copy.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from service.engine.tokenization import TOKENIZER_CONFIG


class CT2Greedy:
    """Greedy decoding with CTranslate2 on token ids of the model's own vocabulary."""

    def __init__(self, hf_dir: Path, threads: int = 1, quantization: str = "int8") -> None:
        import ctranslate2
        from ctranslate2.converters import TransformersConverter

        self._tmp = tempfile.TemporaryDirectory()
        patched = Path(self._tmp.name) / "hf"
        shutil.copytree(hf_dir, patched)
        config = json.loads((patched / "config.json").read_text())
        if config.get("model_type") in ("bart", "mbart"):
            config.setdefault("normalize_before", config.get("model_type") == "mbart")
            config.setdefault("normalize_embedding", True)
        (patched / "config.json").write_text(json.dumps(config))
        if (patched / "tokenizer.json").exists() and not (patched / "tokenizer_config.json").exists():
            # A bare tokenizer.json: load it as the generic fast tokenizer, not the family's own
            # class (mBART's would add language codes and reject a byte-level BPE vocabulary).
            (patched / "tokenizer_config.json").write_text(json.dumps(TOKENIZER_CONFIG))
        out = Path(self._tmp.name) / "ct2"
        TransformersConverter(str(patched)).convert(str(out), quantization=quantization, force=True)
        self.vocab: list[str] = json.loads((out / "shared_vocabulary.json").read_text())
        self.index = {token: i for i, token in enumerate(self.vocab)}
        # mBART's spec has no fixed decoder start token (it expects a language code as the target
        # prefix); give the checkpoint's own start token explicitly (and strip it if it comes back).
        start = config.get("decoder_start_token_id")
        self.prefix = [self.vocab[start]] if config.get("model_type") == "mbart" and start is not None else []
        self.translator = ctranslate2.Translator(
            str(out), device="cpu", compute_type=quantization, intra_threads=threads, inter_threads=1
        )

    def generate(
        self, sources: Sequence[Sequence[int]], eos_token: str = "</s>", max_length: int = 256
    ) -> list[list[int]]:
        batch = [[self.vocab[i] for i in source] + [eos_token] for source in sources]
        results = self.translator.translate_batch(
            batch,
            target_prefix=[self.prefix] * len(batch) if self.prefix else None,
            beam_size=1,
            max_decoding_length=max_length,
            max_batch_size=len(batch),
        )
        return [[self.index[t] for t in self._without_prefix(r.hypotheses[0])] for r in results]

    def _without_prefix(self, tokens: list[str]) -> list[str]:
        n = len(self.prefix)
        return tokens[n:] if n and tokens[:n] == self.prefix else tokens
