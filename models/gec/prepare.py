"""Build the training sets of the default model from the data directory.

Stage 1: synthetic pairs (clean monolingual sentences corrupted by the calibrated noise
generator) plus the learner pairs, oversampled. Stage 2: learner pairs only. Also trains the
tokenizer. Everything is written under the run directory, never into the project.
"""

from __future__ import annotations

import json
import random
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tokenizers import Tokenizer
from tqdm import tqdm

from models.gec.corpora import learner_pairs, sample_mono
from models.gec.dataset import PackedPairs, pack_pairs
from models.gec.noise.calibrate import calibrate, m2_files
from models.gec.noise.generator import NoiseGenerator, load_calibration
from models.gec.tokenizer import train_tokenizer

# Adjustments to the learner-calibrated error mix. Spelling is raised: W&I essays were written
# with a spell-checking tool at hand, while editors' users (and JFLEG) misspell far more.
# Tense swaps are lowered: on a single clean sentence they mostly produce another correct
# sentence ("is" -> "was"), and training on them teaches the model to rewrite correct text.
TYPE_WEIGHT_OVERRIDES = {"spelling": 0.13, "verb_tense": 0.03}
P_CLEAN = 0.2
# The mix of the synthetic errors of the classes the model misses (models.gec.mixture), over the learner-calibrated
# one: the classes of the learner-error set (models/gec/learner_errors.tsv). No sentence is left clean.
TARGETED_WEIGHTS = {
    "det_wrong": 0.08,
    "verb_sva": 0.10,
    "noun_number": 0.10,
    "verb_form": 0.08,
    "adj_form": 0.04,
    "confusion": 0.04,
    "repeated_word": 0.02,
    "capitalisation": 0.06,
    "prep_extra": 0.04,
    "spelling": 0.13,
    "verb_tense": 0.03,  # mostly another correct sentence on a single clean one ("is" -> "was")
}


def _corrupt_chunk(args: tuple[list[str], int, dict, dict, float, dict[str, float]]) -> list[str]:
    lines, seed, calibration, misspellings, p_clean, type_weights = args
    generator = NoiseGenerator(
        calibration=calibration, misspellings=misspellings, p_clean=p_clean, type_weights=type_weights
    )
    rng = random.Random(seed)
    return [generator.corrupt(line, rng) for line in lines]


def corrupt_sentences(
    clean: list[str],
    seed: int,
    misspellings: dict[str, list[str]],
    workers: int = 2,
    p_clean: float = P_CLEAN,
    type_weights: dict[str, float] = TYPE_WEIGHT_OVERRIDES,
) -> list[str]:
    """Each of ``clean`` corrupted by the calibrated noise generator (``type_weights`` over the learner-calibrated
    mix, a share ``p_clean`` left as written), in chunks over ``workers`` processes; the same seed gives the same
    sentences whatever the number of workers."""
    calibration = load_calibration()
    chunk = 20_000
    jobs = [
        (clean[i : i + chunk], seed * 1_000_003 + i, calibration, misspellings, p_clean, type_weights)
        for i in range(0, len(clean), chunk)
    ]
    noisy: list[str] = []
    with ProcessPoolExecutor(workers) as pool:
        for part in tqdm(
            pool.map(_corrupt_chunk, jobs), total=len(jobs), desc="synthetic errors", unit="chunk", file=sys.stderr
        ):
            noisy.extend(part)
    return noisy


def synthetic_pairs(data_dir: Path, count: int, seed: int, workers: int = 2) -> tuple[list[str], list[str]]:
    """Corrupt ``count`` weighted monolingual sentences; returns (noisy sources, clean targets)."""
    clean = [sentence for _, sentence in sample_mono(data_dir, count, seed)]
    misspellings = calibrate(m2_files(data_dir)).misspelling_dict()
    return corrupt_sentences(clean, seed, misspellings, workers), clean


def prepare(
    data_dir: Path,
    run_dir: Path,
    synthetic: int,
    vocab_size: int,
    seed: int,
    learner_repeat: int = 2,
    max_len: int = 128,
    tokenizer_path: Path | None = None,
    stage1: bool = True,
) -> dict:
    """Write ``tokenizer.json``, ``stage1.npz`` (unless ``stage1`` is false: a run that only fine-tunes), ``stage2.npz``
    and ``data.json`` to ``run_dir``; the tokenizer is trained, or copied from ``tokenizer_path`` (a run that
    continues a trained model keeps its tokenizer)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    learner = learner_pairs(data_dir)
    noisy, clean = synthetic_pairs(data_dir, synthetic, seed) if stage1 else ([], [])
    if tokenizer_path is None:
        tokenizer_texts = [p.src for p in learner] + [p.tgt for p in learner] + clean[:300_000]
        tokenizer: Tokenizer = train_tokenizer(tokenizer_texts, vocab_size)
    else:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.post_processor = None
    tokenizer.save(str(run_dir / "tokenizer.json"))

    learner_packed = pack_pairs(tokenizer, [p.src for p in learner], [p.tgt for p in learner], max_len)
    synthetic_packed = pack_pairs(tokenizer, noisy, clean, max_len)
    if stage1:
        PackedPairs.concat([synthetic_packed] + [learner_packed] * learner_repeat).save(run_dir / "stage1.npz")
    learner_packed.save(run_dir / "stage2.npz")

    unchanged = sum(n == c for n, c in zip(noisy, clean, strict=True))
    summary = {
        "learner_pairs": len(learner_packed),
        "learner_by_corpus": {
            name: sum(p.origin == name for p in learner) for name in sorted({p.origin for p in learner})
        },
        "synthetic_pairs": len(synthetic_packed),
        "synthetic_unchanged_share": round(unchanged / max(1, len(noisy)), 4),
        "stage1_pairs": len(synthetic_packed) + learner_repeat * len(learner_packed) if stage1 else 0,
        "learner_repeat": learner_repeat,
        "vocab_size": tokenizer.get_vocab_size(),
        "type_weight_overrides": TYPE_WEIGHT_OVERRIDES,
        "p_clean": P_CLEAN,
        "max_len": max_len,
        "seed": seed,
    }
    (run_dir / "data.json").write_text(json.dumps(summary, indent=2))
    for noisy_line, clean_line in list(zip(noisy, clean, strict=True))[:20]:
        print(f"  {noisy_line!r}\n-> {clean_line!r}", file=sys.stderr)
    return summary
