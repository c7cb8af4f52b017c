"""Build the tiny deterministic test model (``tests/fixtures/tiny-gec``).

    python -m models.fixture --out tests/fixtures/tiny-gec     (or: make fixture)

Generates sentences from a small grammar, corrupts them with a few rule-based errors
(lower-case "i", "a" before a vowel, a repeated word, "teh", a missing final period),
trains a tiny BART for about a minute to copy its input with those corrections, and exports
it through the real exporter (fp32 and static int8: exact as the shipped model is, where ``rowwise``'s
MatMulNBits computed one token differently from several on an AVX-512 CPU). Tests use it so they run
without the default model; it is small enough to commit.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from tokenizers.processors import TemplateProcessing
from transformers import BartForConditionalGeneration

from models.export.exporter import export
from models.gec.architecture import bart_config
from models.gec.dataset import PackedPairs, make_batch, pack_pairs
from models.gec.tokenizer import EOS_ID, train_tokenizer

SUBJECTS = [
    "I",
    "You",
    "We",
    "They",
    "He",
    "She",
    "The cat",
    "My friend",
    "The teacher",
    "Our team",
    "The old man",
    "A student",
    "The children",
    "My sister",
    "Tom",
    "Anna",
]
VERBS = [
    "saw",
    "likes",
    "found",
    "wants",
    "bought",
    "painted",
    "visited",
    "watched",
    "opened",
    "ate",
    "has",
    "needs",
    "remembers",
    "carried",
    "cleaned",
    "took",
]
OBJECTS = [
    "apple",
    "orange",
    "umbrella",
    "egg",
    "idea",
    "book",
    "car",
    "house",
    "letter",
    "garden",
    "island",
    "owl",
    "elephant",
    "window",
    "river",
    "song",
    "picture",
    "hour",
    "cake",
    "dog",
]
ADJECTIVES = [
    "big",
    "small",
    "old",
    "new",
    "red",
    "quiet",
    "happy",
    "strange",
    "empty",
    "useful",
    "early",
    "ugly",
    "honest",
    "open",
]
TAILS = [
    "",
    " yesterday",
    " today",
    " in the morning",
    " at home",
    " with me",
    " again",
    " last week",
    " near the river",
    " every day",
]


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def clean_sentence(rng: random.Random) -> str:
    subject, verb, obj = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
    if rng.random() < 0.5:
        adjective = rng.choice(ADJECTIVES)
        noun_phrase = f"{_article(adjective)} {adjective} {obj}"
    else:
        noun_phrase = rng.choice([f"{_article(obj)} {obj}", f"the {obj}"])
    sentence = f"{subject} {verb} {noun_phrase}{rng.choice(TAILS)}."
    if rng.random() < 0.3:
        sentence += f" {rng.choice(SUBJECTS)} {rng.choice(VERBS)} the {rng.choice(OBJECTS)}."
    return sentence


def corrupt(sentence: str, rng: random.Random) -> str:
    """Apply 0-2 of the fixture's error types."""
    words = sentence.split(" ")
    for _ in range(rng.choice([0, 1, 1, 2])):
        kind = rng.randrange(5)
        if kind == 0 and "I" in words:
            words[words.index("I")] = "i"
        elif kind == 1:
            spots = [i for i, w in enumerate(words[:-1]) if w == "an"]
            if spots:
                words[rng.choice(spots)] = "a"
        elif kind == 2:
            i = rng.randrange(len(words))
            words.insert(i, words[i])
        elif kind == 3 and "the" in words:
            words[words.index("the")] = "teh"
        elif kind == 4 and words[-1].endswith("."):
            words[-1] = words[-1][:-1]
    return " ".join(words)


def train_fixture(work: Path, seconds: float, seed: int) -> Path:
    rng = random.Random(seed)
    clean = [clean_sentence(rng) for _ in range(20000)]
    noisy = [corrupt(s, rng) for s in clean]
    tokenizer = train_tokenizer(clean + noisy, vocab_size=400, min_frequency=2)
    tokenizer.post_processor = TemplateProcessing(single="$A </s>", special_tokens=[("</s>", EOS_ID)])
    data: PackedPairs = pack_pairs(tokenizer, noisy, clean, max_len=64)
    torch.manual_seed(seed)
    model = BartForConditionalGeneration(
        bart_config("tiny", tokenizer.get_vocab_size(), max_positions=128, dropout=0.0)
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    order = np.random.default_rng(seed)
    import time

    started, step = time.monotonic(), 0
    while time.monotonic() - started < seconds:
        batch = make_batch(data, order.choice(len(data), size=64, replace=False))
        logits = model(
            input_ids=torch.from_numpy(batch.input_ids),
            attention_mask=torch.from_numpy(batch.attention_mask),
            decoder_input_ids=torch.from_numpy(batch.decoder_input_ids),
        ).logits
        loss = torch.nn.functional.cross_entropy(
            logits.view(-1, logits.size(-1)), torch.from_numpy(batch.labels).view(-1), ignore_index=-100
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f}", file=sys.stderr)
    checkpoint = work / "hf"
    model.save_pretrained(checkpoint)
    tokenizer.save(str(checkpoint / "tokenizer.json"))
    (work / "samples.txt").write_text("\n".join(noisy[:24]) + "\n")
    return checkpoint


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/tiny-gec"))
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = train_fixture(Path(tmp), args.seconds, args.seed)
        if args.out.exists():
            shutil.rmtree(args.out)
        samples = (Path(tmp) / "samples.txt").read_text().splitlines()
        manifest = export(
            checkpoint,
            args.out,
            name="tiny-gec",
            version="1",
            quantize="int8",
            method="static",
            samples=samples,
            extra={"purpose": "test fixture; not a real GEC model"},
        )
        # Keep the checkpoint beside the export: export tests re-verify against it.
        shutil.copytree(checkpoint, args.out / "hf")
    print(manifest.verification, file=sys.stderr)


if __name__ == "__main__":
    main()
