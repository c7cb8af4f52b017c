"""Text <-> token ids with the model's Hugging Face ``tokenizers`` file, and how ``transformers`` loads it."""

from __future__ import annotations

import itertools
from pathlib import Path

from tokenizers import Tokenizer

from service.engine.manifest import ModelManifest

# The ``tokenizer_config.json`` that goes beside a model's bare ``tokenizer.json`` in a Hugging Face checkpoint
# (the trained one, ``models.gec.unpack``'s, the CTranslate2 peer's copy): load it as the generic fast tokenizer,
# not the family's own class (mBART's adds language codes and rejects a byte-level BPE vocabulary).
TOKENIZER_CONFIG = {
    "tokenizer_class": "PreTrainedTokenizerFast",
    "bos_token": "<s>",
    "eos_token": "</s>",
    "pad_token": "<pad>",
    "unk_token": "<unk>",
}


class TextCodec:
    """Encodes content ids (no special tokens) and decodes ids back to text losslessly."""

    def __init__(self, tokenizer_path: Path, special_ids: set[int]) -> None:
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # Text that spells a special token ("<s>" is also HTML's strike-through tag) is text:
        # it must not become a control token that the model reads and the decoder drops.
        self.tokenizer.encode_special_tokens = True
        self.special_ids = special_ids
        # each id's text decoded alone, by length (0 for a special one): what decode_with_ends adds up, looked up
        # rather than decoded per call (the library's batch decode wakes its thread pool for a few tokens)
        alone = self.tokenizer.decode_batch([[i] for i in range(self.tokenizer.get_vocab_size(with_added_tokens=True))])
        self._piece_lengths = [0 if i in special_ids else len(piece) for i, piece in enumerate(alone)]

    @classmethod
    def for_model(cls, model_dir: Path, manifest: ModelManifest | None = None) -> tuple[TextCodec, ModelManifest]:
        """The model's codec, the one the engine, the preprocessing and the commands all use, and its manifest."""
        m = manifest or ModelManifest.load(model_dir)
        special = {m.pad_token_id, m.eos_token_id, *m.decoder_prefix_ids, *m.source_prefix_ids, *m.source_suffix_ids}
        return cls(Path(model_dir) / m.tokenizer, special), m

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def token_ends(self, text: str) -> list[int]:
        """Where each token of ``encode(text)`` ends in ``text`` (code points; the bytes of one character share its
        end)."""
        return [end for _, end in self.tokenizer.encode(text, add_special_tokens=False).offsets]

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode([i for i in ids if i not in self.special_ids], skip_special_tokens=False)

    def decode_with_ends(self, ids: list[int]) -> tuple[str, tuple[int, ...]]:
        """``decode(ids)``, and where each of ``ids`` ends in that text (code points; a special token ends where
        the one before it does, and the bytes of one character share its end)."""
        text = self.decode(ids)
        lengths, known = self._piece_lengths, len(self._piece_lengths)
        ends = tuple(itertools.accumulate(lengths[i] if i < known else 0 for i in ids))
        if (ends[-1] if ends else 0) != len(text):  # a character split between tokens, or an id past the vocabulary
            return text, tuple(len(self.decode(ids[: k + 1])) for k in range(len(ids)))
        return text, ends

    def decode_batch(self, batch: list[list[int]]) -> list[str]:
        return [self.decode(ids) for ids in batch]
