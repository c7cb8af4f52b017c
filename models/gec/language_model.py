"""Build the n-gram language model (``service.text.ngrams``) of a model folder from the data directory.

    python -m models.gec.language_model --data ../shared/data --model models/gec-v3 [--order 4] [--min-count 3]

Counts the n-grams of orders 1 to ``--order`` in the monolingual sentences and the training targets (the clean side
of every learner pair), keeps those seen at least ``--min-count`` times (every word seen), and writes
``ngrams.npz`` into the model folder, named ``language_model`` in its manifest with what was counted. Counting is
vectorised: every sentence's token keys go into one array, and each order's fingerprints are counted with
``numpy.unique``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from models.gec.corpora import read_lines
from service.engine.manifest import ModelManifest, name_file
from service.text.ngrams import NgramModel, fingerprints, token_keys, tokens_of

FILE = "ngrams.npz"
ORDER = 4
MIN_COUNT = 3


def corpus_files(data: Path) -> list[Path]:
    """The clean sentences counted: every monolingual source and every training target."""
    return sorted((data / "mono").glob("*.txt.gz")) + sorted((data / "train").glob("*.train.detok.tgt"))


def count_ngrams(lines: Iterable[str], order: int, min_count: int) -> NgramModel:
    """The model of ``lines`` (one sentence each)."""
    keys = [token_keys(tokens_of(line)) for line in lines]
    lengths = np.array([len(k) for k in keys], dtype=np.int64)
    every = np.concatenate(keys)
    prints = fingerprints(every, order).astype(np.uint32)
    starts = np.cumsum(lengths) - lengths
    offset = np.arange(len(every)) - np.repeat(starts, lengths)  # within its sentence: no n-gram spans two
    tables = []
    for n in range(order):
        found, counts = np.unique(prints[n][offset >= n], return_counts=True)
        keep = counts >= (1 if n == 0 else min_count)
        tables.append((found[keep], counts[keep]))
    return NgramModel(tables, len(every))


def ship_language_model(model_dir: Path, data: Path, order: int = ORDER, min_count: int = MIN_COUNT) -> ModelManifest:
    """Build ``ngrams.npz`` into ``model_dir`` and name it in the manifest; returns the manifest."""
    started = time.monotonic()
    files = corpus_files(data)
    lines = (line for path in tqdm(files, desc="n-grams", unit="file", file=sys.stderr) for line in read_lines(path))
    model = count_ngrams(lines, order, min_count)
    model.save(model_dir / FILE)
    info: dict[str, Any] = {
        "order": order,
        "min_count": min_count,
        "tokens": model.total,
        "entries": {str(n): len(model.tables.table(n)[0]) for n in range(1, model.order + 1)},
        "sources": [path.name for path in files],
        "bytes": (model_dir / FILE).stat().st_size,
        "seconds": round(time.monotonic() - started, 1),
        "command": f"python -m models.gec.language_model --data {data} --model {model_dir} --order {order} "
        f"--min-count {min_count}",
    }
    return name_file(model_dir, "language_model", FILE, info)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--order", type=int, default=ORDER)
    parser.add_argument("--min-count", type=int, default=MIN_COUNT)
    args = parser.parse_args(argv)
    manifest = ship_language_model(args.model, args.data, args.order, args.min_count)
    print(manifest.extra["language_model_info"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
