"""The CTranslate2 peer: int8 greedy decoding of the same Hugging Face weights.

Needs the build extra (ctranslate2, transformers). BART checkpoints converted with
ctranslate2 4.8 under transformers 5 need ``normalize_before: false`` and
``normalize_embedding: true`` in the config; the converter is given a patched copy.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path


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
        out = Path(self._tmp.name) / "ct2"
        TransformersConverter(str(patched)).convert(str(out), quantization=quantization, force=True)
        self.vocab: list[str] = json.loads((out / "shared_vocabulary.json").read_text())
        self.index = {token: i for i, token in enumerate(self.vocab)}
        self.translator = ctranslate2.Translator(
            str(out), device="cpu", compute_type=quantization, intra_threads=threads, inter_threads=1
        )

    def generate(
        self, sources: Sequence[Sequence[int]], eos_token: str = "</s>", max_length: int = 256
    ) -> list[list[int]]:
        batch = [[self.vocab[i] for i in source] + [eos_token] for source in sources]
        results = self.translator.translate_batch(
            batch, beam_size=1, max_decoding_length=max_length, max_batch_size=len(batch)
        )
        return [[self.index[t] for t in r.hypotheses[0]] for r in results]
