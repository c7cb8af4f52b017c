"""Train the byte-level BPE tokenizer of the default model with Hugging Face ``tokenizers``.

Byte-level means any input text round-trips exactly: no normaliser, no prefix space, and the
ByteLevel decoder restores the original bytes.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>"]
BOS_ID, PAD_ID, EOS_ID, UNK_ID = 0, 1, 2, 3


def new_tokenizer() -> Tokenizer:
    """An untrained byte-level BPE tokenizer with the project's pre-tokenizer and decoder."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def train_tokenizer(texts: Iterable[str], vocab_size: int, min_frequency: int = 3) -> Tokenizer:
    """Train BPE merges on ``texts``; special tokens get ids 0-3 (BART's convention)."""
    tokenizer = new_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=True,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return tokenizer


def main(argv: list[str] | None = None) -> None:
    """CLI: ``python -m models.gec.tokenizer --text FILE... --vocab-size N --out tokenizer.json``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--text", type=Path, nargs="+", required=True)
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    def lines() -> Iterable[str]:
        for path in args.text:
            with open(path, encoding="utf-8") as handle:
                yield from (line.rstrip("\n") for line in handle)

    train_tokenizer(lines(), args.vocab_size).save(str(args.out))


if __name__ == "__main__":
    main()
