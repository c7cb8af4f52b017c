"""Readers for the GEC data directory: learner sentence pairs and weighted clean monolingual text.

The data stays where it is (a path given on the command line); nothing here copies it into
the project.
"""

from __future__ import annotations

import gzip
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LEARNER_CORPORA = ("wi_locness", "fce", "nucle", "lang8")

# Relative sampling weight per sentence of each monolingual source. Fiction is old-fashioned
# (1870-1927 novels) and 39% of the sentences, so it is weighted down; modern expository and
# news text, the closest to what editors' users write, is weighted up.
MONO_WEIGHTS: dict[str, float] = {
    "wikipedia": 1.0,
    "wikisplit": 1.0,
    "openstax_ccby": 1.5,
    "openstax_ncsa": 1.5,
    "peps": 0.8,
    "rustbook": 0.8,
    "scitldr": 1.0,
    "pil": 1.0,
    "bbc": 1.5,
    "abc": 1.2,
    "agnews": 1.2,
    "reuters21578": 0.6,
    "us_speeches": 1.0,
    "masc": 1.5,
    "brown": 0.8,
    "eltec": 0.15,
    "novels100": 0.15,
}


@dataclass(frozen=True)
class Pair:
    """One training pair: erroneous source, corrected target, and where it came from."""

    src: str
    tgt: str
    origin: str


def read_lines(path: Path) -> list[str]:
    """Read a UTF-8 text file (gzip when the name ends in .gz) into lines without newlines."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


def learner_pairs(data_dir: Path, corpora: tuple[str, ...] = LEARNER_CORPORA) -> list[Pair]:
    """Natural-text learner pairs from ``train/<name>.train.detok.{src,tgt}``.

    Pairs with an empty side (a whole sentence deleted by the annotator) are skipped.
    """
    pairs: list[Pair] = []
    for name in corpora:
        src = read_lines(data_dir / "train" / f"{name}.train.detok.src")
        tgt = read_lines(data_dir / "train" / f"{name}.train.detok.tgt")
        if len(src) != len(tgt):
            raise ValueError(f"{name}: {len(src)} source lines but {len(tgt)} target lines")
        pairs.extend(Pair(s, t, name) for s, t in zip(src, tgt, strict=True) if s.strip() and t.strip())
    return pairs


def mono_sources(data_dir: Path) -> dict[str, Path]:
    """Map of monolingual source name to its file, for every file present."""
    found = {}
    for path in sorted((data_dir / "mono").glob("en.*.txt.gz")):
        found[path.name.removeprefix("en.").removesuffix(".txt.gz")] = path
    return found


def sample_mono(data_dir: Path, count: int, seed: int, max_words: int = 60) -> Iterator[tuple[str, str]]:
    """Yield ``count`` (source name, sentence) pairs drawn by ``MONO_WEIGHTS`` without replacement.

    Each source contributes in proportion to (its size x its weight); within a source the
    files are already shuffled, so taking a prefix is a uniform sample.
    """
    sources = mono_sources(data_dir)
    lines = {name: read_lines(path) for name, path in sources.items()}
    mass = {name: len(lines[name]) * MONO_WEIGHTS.get(name, 1.0) for name in lines}
    total = sum(mass.values())
    quota = {name: min(len(lines[name]), round(count * mass[name] / total)) for name in lines}
    picked = [
        (name, sentence)
        for name in lines
        for sentence in lines[name][: quota[name]]
        if len(sentence.split()) <= max_words
    ]
    random.Random(seed).shuffle(picked)
    yield from picked[:count]
