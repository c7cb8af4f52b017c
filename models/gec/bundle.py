"""What a lent GPU machine needs to train the larger model, in one folder small enough to travel with the project.

    python -m models.gec.bundle --data ../shared/data --clean runs/clean-set.tsv --tokenizer \\
        models/gec-default/tokenizer.json --sentences 1100000 --out .gpu/bundle

The machine has no data folder and takes at most 64 MiB with the working tree, so the bundle holds text, not
training pairs: the monolingual sentences (``sample_mono``'s weighted draw, none of the clean set's or the dev sets'
sentences), the learner pairs, the learners' misspellings the noise generator draws from (read from the M2 files
here) and the tokenizer, each compressed with ``lzma``. ``models.gec.lease`` corrupts and packs them there.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path

SENTENCES = "sentences.txt.xz"
LEARNER = "learner.tsv.xz"
MISSPELLINGS = "misspellings.json.xz"
TOKENIZER = "tokenizer.json"
SUMMARY = "bundle.json"


def write_bundle(data_dir: Path, clean_set_tsv: Path, tokenizer: Path, sentences: int, seed: int, out: Path) -> dict:
    """Write the bundle's files to ``out``; returns its summary (also ``bundle.json``)."""
    # Imported here: the lent machine reads this module's names (models.gec.lease) without the data tools'
    # dependencies (the clean set's filters import the service's text stages).
    from models.gec.corpora import learner_pairs
    from models.gec.mixture import mono_sentences, unseen_keys
    from models.gec.noise.calibrate import calibrate, m2_files

    out.mkdir(parents=True, exist_ok=True)
    drawn = mono_sentences(data_dir, sentences, seed, unseen_keys(data_dir, clean_set_tsv))
    learner = learner_pairs(data_dir)
    if any("\t" in text or "\n" in text for pair in learner for text in (pair.src, pair.tgt)):
        raise ValueError("a learner pair holds a tab or a newline: it cannot be written as TSV")
    (out / SENTENCES).write_bytes(lzma.compress("\n".join(drawn).encode()))
    rows = "\n".join(f"{pair.origin}\t{pair.src}\t{pair.tgt}" for pair in learner)
    (out / LEARNER).write_bytes(lzma.compress(rows.encode()))
    misspellings = calibrate(m2_files(data_dir)).misspelling_dict()
    (out / MISSPELLINGS).write_bytes(lzma.compress(json.dumps(misspellings).encode()))
    (out / TOKENIZER).write_bytes(tokenizer.read_bytes())
    summary = {
        "sentences": len(drawn),
        "learner_pairs": len(learner),
        "seed": seed,
        "excluded": str(clean_set_tsv),
        "tokenizer": str(tokenizer),
        "bytes": {path.name: path.stat().st_size for path in sorted(out.iterdir()) if path.name != SUMMARY},
    }
    (out / SUMMARY).write_text(json.dumps(summary, indent=2))
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the GEC data directory (../shared/data)")
    parser.add_argument("--clean", type=Path, required=True, help="the clean set's TSV (models.gec.clean_set)")
    parser.add_argument("--tokenizer", type=Path, required=True, help="the tokenizer the model is trained with")
    parser.add_argument("--sentences", type=int, default=1_100_000, help="monolingual sentences to draw")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    summary = write_bundle(args.data, args.clean, args.tokenizer, args.sentences, args.seed, args.out)
    print(json.dumps(summary, indent=2), file=sys.stderr)


if __name__ == "__main__":
    main()
