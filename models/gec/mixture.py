"""The training set of a model that continues another (version 4 continues version 3): learner pairs the teacher
kept, identity pairs of clean edited English, and synthetic errors weighted toward the classes the model misses.

- **Learner pairs** (``models.gec.corpora``) less those ``models.gec.teacher`` flagged (its ``flagged.tsv``).
- **Identity pairs**: ``identity`` sentences of the monolingual sources (``sample_mono``: Wikipedia, textbooks,
  PEPs, the Rust book, computer-science abstracts, news of four agencies, speeches, fiction), each its own target,
  so that the model learns to copy what it does not know (a rare word, a name, jargon) instead of replacing it.
- **Targeted synthetic errors**: ``targeted`` other monolingual sentences, each corrupted by the noise generator
  with ``TARGETED_WEIGHTS`` over the learner-calibrated mix: the classes of the learner-error set
  (``models/gec/learner_errors.tsv``) the model misses most (articles, agreement, noun number after numbers and
  quantifiers, verb forms after modals, comparatives, confusions such as their/there, repeated words, capitals,
  extra prepositions). No sentence is left clean (the identity pairs are the clean ones).

No sentence of the clean professional set (``--exclude``, ``models.gec.clean_set``'s TSV) or of the dev sets is
taken, so the set that measures damage to clean text stays unseen.
"""

from __future__ import annotations

import csv
import json
import random
import sys
from pathlib import Path

from tokenizers import Tokenizer

from models.gec.clean_set import key, read_tsv
from models.gec.corpora import Pair, learner_pairs, read_lines, sample_mono
from models.gec.dataset import PackedPairs, pack_pairs
from models.gec.noise.calibrate import calibrate, m2_files
from models.gec.noise.generator import NoiseGenerator, load_calibration
from models.gec.prepare import TARGETED_WEIGHTS

DEV_FILES = ("fce.dev.detok.src", "fce.dev.detok.tgt", "jfleg.dev.src", "clean_tech.dev.txt")


def flagged_pairs(flagged_tsv: Path) -> set[tuple[str, str, str]]:
    """The (corpus, source, target) of each pair the teacher flagged."""
    with flagged_tsv.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return {(row["corpus"], row["source"], row["target"]) for row in rows}


def unseen_keys(data_dir: Path, clean_set_tsv: Path) -> set[str]:
    """The keys (``clean_set.key``) of every sentence a training pair must not be: the clean set's and the dev sets'."""
    keys = {key(sentence) for _, _, sentence in read_tsv(clean_set_tsv)}
    for name in DEV_FILES:
        keys.update(key(line) for line in read_lines(data_dir / "dev" / name))
    return keys


def mono_sentences(data_dir: Path, count: int, seed: int, unseen: set[str]) -> list[str]:
    """``count`` weighted monolingual sentences (``sample_mono``) none of which is in ``unseen``."""
    drawn = (sentence for _, sentence in sample_mono(data_dir, 2 * count, seed))
    return [sentence for sentence in drawn if key(sentence) not in unseen][:count]


def mixture_pairs(
    data_dir: Path, flagged_tsv: Path, clean_set_tsv: Path, identity: int, targeted: int, seed: int
) -> dict[str, list[Pair]]:
    """The three parts of the mixture, by name: ``learner``, ``identity``, ``targeted``."""
    flagged = flagged_pairs(flagged_tsv)
    learner = [pair for pair in learner_pairs(data_dir) if (pair.origin, pair.src, pair.tgt) not in flagged]
    unseen = unseen_keys(data_dir, clean_set_tsv)
    sentences = mono_sentences(data_dir, identity + targeted, seed, unseen)
    generator = NoiseGenerator(
        calibration=load_calibration(),
        misspellings=calibrate(m2_files(data_dir)).misspelling_dict(),
        p_clean=0.0,
        type_weights=TARGETED_WEIGHTS,
    )
    rng = random.Random(seed)
    return {
        "learner": learner,
        "identity": [Pair(s, s, "identity") for s in sentences[:identity]],
        "targeted": [Pair(generator.corrupt(s, rng), s, "targeted") for s in sentences[identity:]],
    }


def pack_mixture(parts: dict[str, list[Pair]], tokenizer: Tokenizer, max_len: int = 128) -> PackedPairs:
    """All the parts' pairs, tokenized and packed into one training set."""
    pairs = [pair for part in parts.values() for pair in part]
    return pack_pairs(tokenizer, [p.src for p in pairs], [p.tgt for p in pairs], max_len)


def prepare_mixture(
    data_dir: Path, run_dir: Path, tokenizer_path: Path, flagged_tsv: Path, clean_set_tsv: Path,
    identity: int, targeted: int, seed: int,
) -> dict[str, object]:  # fmt: skip
    """Write ``tokenizer.json`` (the continued model's), ``stage2.npz`` (the mixture) and ``data.json`` (its summary)
    to ``run_dir``; returns the summary."""
    run_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.post_processor = None
    tokenizer.save(str(run_dir / "tokenizer.json"))
    parts = mixture_pairs(data_dir, flagged_tsv, clean_set_tsv, identity, targeted, seed)
    packed = pack_mixture(parts, tokenizer)
    packed.save(run_dir / "stage2.npz")
    summary: dict[str, object] = {
        "mixture": {name: len(pairs) for name, pairs in parts.items()},
        "stage2_pairs": len(packed),
        "targeted_weights": TARGETED_WEIGHTS,
        "teacher_flagged": str(flagged_tsv),
        "excluded": str(clean_set_tsv),
        "vocab_size": tokenizer.get_vocab_size(),
        "seed": seed,
    }
    (run_dir / "data.json").write_text(json.dumps(summary, indent=2))
    for pair in parts["targeted"][:10]:
        print(f"  {pair.src!r}\n-> {pair.tgt!r}", file=sys.stderr)
    return summary
