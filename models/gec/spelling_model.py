"""The spelling stage's ranking model: word and word-pair counts, and the letter edits learners make.

    python -m models.gec.spelling_model --data ../shared/data --model models/gec-default [--min-count 10]

(Re)builds ``spelling.npz`` beside the model (``service.text.ranking.Ranker``), names it in the manifest
(``spelling_model``), records how it was made (``spelling_model_info``) and updates ``files_sha256``. Word and pair
counts come from the corrected side of the training corpora and the monolingual data (the vocabulary's sources), kept
where seen at least ``--min-count`` times. The letter edits come from the training pairs: each word of a source
sentence that the corpus does not know (seen fewer than ``vocabulary.MIN_COUNT`` times) and that its target replaces
by a plausible correction (``classify.is_spelling_variant``) adds its edits (``letter_edits.edit_operations``); their
chances are the letters of the known words. ``models.gec.package`` calls it after the vocabulary; dev data is never
read.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np

from models.gec.vocabulary import MIN_COUNT as VOCABULARY_MIN_COUNT
from models.gec.vocabulary import packaging_args, read_lines, sources
from service.engine.manifest import ModelManifest, name_file
from service.text.classify import is_spelling_variant
from service.text.letter_edits import LetterEdits, contexts_of, edit_operations
from service.text.ranking import Ranker
from service.text.word_pairs import WordPairs, pair_key, words_of

FILE = "spelling.npz"
MIN_COUNT = 10
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*|[^\sa-z]")  # words, and each other character: what the pairs are aligned on
_LETTERS = re.compile(r"[a-z]+")


def count_pairs(paths: Iterable[Path]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """Words and adjacent pairs of words (``word_pairs.words_of`` each line)."""
    words: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for path in paths:
        for line in read_lines(path):
            sentence = words_of(line)
            words.update(sentence)
            pairs.update(pairwise(sentence))
    return words, pairs


def word_pairs(words: Counter[str], pairs: Counter[tuple[str, str]], min_count: int) -> WordPairs:
    kept = [(pair_key(w), n) for w, n in words.items() if n >= min_count]
    kept += [(pair_key(a, b), n) for (a, b), n in pairs.items() if n >= min_count]
    keys = np.array([k for k, _ in kept], dtype=np.uint64)
    counts = np.array([min(n, 2**32 - 1) for _, n in kept], dtype=np.uint32)
    return WordPairs(keys, counts, sum(words.values()))


def training_pairs(data: Path) -> Iterator[tuple[str, str]]:
    """(source, target) lines of every training corpus."""
    for source in sorted((data / "train").glob("*.train.detok.src")):
        target = source.with_name(source.name.removesuffix(".src") + ".tgt")
        yield from zip(read_lines(source), read_lines(target), strict=True)


def misspellings(lines: Iterable[tuple[str, str]], known: Counter[str]) -> Counter[tuple[str, str]]:
    """(typed, intended) words: an unknown word of a source that its target replaces, word for word, by a plausible
    correction."""
    found: Counter[tuple[str, str]] = Counter()
    for source, target in lines:
        typed, meant = _TOKEN.findall(source.lower()), _TOKEN.findall(target.lower())
        if typed == meant:
            continue
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, typed, meant, autojunk=False).get_opcodes():
            if op != "replace" or i2 - i1 != j2 - j1:
                continue
            for word, correction in zip(typed[i1:i2], meant[j1:j2], strict=True):
                plain = _LETTERS.fullmatch(word) and _LETTERS.fullmatch(correction)
                if plain and known[word] < VOCABULARY_MIN_COUNT and is_spelling_variant(word, correction):
                    found[word, correction] += 1
    return found


def letter_edits(found: Counter[tuple[str, str]], words: Counter[str]) -> LetterEdits:
    errors: Counter[str] = Counter()
    for (typed, intended), n in found.items():
        for edit in edit_operations(typed, intended):
            errors[edit] += n
    vocabulary = {w: n for w, n in words.items() if n >= VOCABULARY_MIN_COUNT and _LETTERS.fullmatch(w)}
    return LetterEdits(dict(errors), contexts_of(vocabulary))


def ship_spelling_model(model_dir: Path, data: Path, min_count: int = MIN_COUNT) -> ModelManifest:
    """Write the ranking model into ``model_dir`` and name it in its manifest."""
    paths = sources(data)
    if not paths:
        raise FileNotFoundError(f"no training targets or monolingual files under {data}")
    words, pairs = count_pairs(paths)
    found = misspellings(training_pairs(data), words)
    ranker = Ranker(word_pairs(words, pairs, min_count), letter_edits(found, words))
    path = model_dir / FILE
    ranker.save(path)
    info = {
        "words_and_pairs": len(ranker.pairs.keys),
        "min_count": min_count,
        "words_counted": ranker.pairs.total,
        "learner_misspellings": sum(found.values()),
        "sources": [p.name for p in paths],
        "command": f"python -m models.gec.spelling_model --data {data} --model {model_dir} --min-count {min_count}",
    }
    return name_file(model_dir, "spelling_model", FILE, info)


def main(argv: list[str] | None = None) -> int:
    args = packaging_args(argv, __doc__ or "", MIN_COUNT)
    manifest = ship_spelling_model(args.model, args.data, args.min_count)
    info = manifest.extra["spelling_model_info"]
    print(f"{info['words_and_pairs']} words and pairs -> {args.model / FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
