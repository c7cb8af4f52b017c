"""The spelling stage's vocabulary: words seen at least N times in the training targets and the monolingual data.

    python -m models.gec.vocabulary --data ../shared/data --model models/gec-default [--min-count 10]

(Re)builds ``vocabulary.txt`` beside the model (one ``word count`` per line, most frequent first), names it in the
manifest (``vocabulary``), records how it was made (``vocabulary_info``) and updates ``files_sha256``; the model's
weights are not touched. ``models.gec.package`` calls the same function when it packages a model. Words are
lowercased runs of ASCII letters, as the spelling stage (``service.text.spelling``) looks them up; dev data is
never read.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from service.engine.manifest import ModelManifest, name_file

FILE = "vocabulary.txt"
MIN_COUNT = 10
_WORD = re.compile(r"[a-z]+")


def sources(data: Path) -> list[Path]:
    """The corrected side of every training corpus, and every monolingual file."""
    return sorted((data / "train").glob("*.train.detok.tgt")) + sorted((data / "mono").glob("*.txt.gz"))


def read_lines(path: Path) -> Iterator[str]:
    """The lines of a text file, gzip or not."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        yield from handle


def count_words(paths: Iterable[Path]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in paths:
        for line in read_lines(path):
            counts.update(_WORD.findall(line.lower()))
    return counts


def ship_vocabulary(model_dir: Path, data: Path, min_count: int = MIN_COUNT) -> ModelManifest:
    """Write the vocabulary into ``model_dir`` and name it in its manifest."""
    paths = sources(data)
    if not paths:
        raise FileNotFoundError(f"no training targets or monolingual files under {data}")
    counts = count_words(paths)
    kept = sorted(((w, c) for w, c in counts.items() if c >= min_count), key=lambda item: (-item[1], item[0]))
    path = model_dir / FILE
    path.write_text("".join(f"{word} {count}\n" for word, count in kept), encoding="utf-8")
    info = {
        "words": len(kept),
        "min_count": min_count,
        "sources": [p.name for p in paths],
        "command": f"python -m models.gec.vocabulary --data {data} --model {model_dir} --min-count {min_count}",
    }
    return name_file(model_dir, "vocabulary", FILE, info)


def packaging_args(argv: list[str] | None, description: str, min_count: int) -> argparse.Namespace:
    """``--data``, ``--model`` and ``--min-count``: what each tool that adds a file to a model folder reads."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the data dir (train/ and mono/)")
    parser.add_argument("--model", type=Path, required=True, help="the model folder to add it to")
    parser.add_argument("--min-count", type=int, default=min_count)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = packaging_args(argv, __doc__ or "", MIN_COUNT)
    manifest = ship_vocabulary(args.model, args.data, args.min_count)
    print(f"{manifest.extra['vocabulary_info']['words']} words -> {args.model / FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
