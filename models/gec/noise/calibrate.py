"""Calibrate the noise generator from learner data in M2 format (W&I+LOCNESS training split).

Computes how many edits learner sentences have (histogram, share of error-free sentences), how
often each ERRANT error type occurs, and maps those types onto the generator's error types
(``errors.ERROR_FUNCTIONS``). Separately harvests real misspellings from ``R:SPELL`` edits.

    python -m models.gec.noise.calibrate --data ../shared/data \\
        --out models/gec/noise/calibration.json --spelling-out build/misspellings.json

The rates file holds numbers only (no text from the corpus) and may be committed; the
misspelling dictionary is built from the data at build time and is never committed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from models.gec.noise import inflect as infl
from models.gec.noise import words as wl

MAX_EDITS_BUCKET = 10
"""Histogram buckets are 0..MAX_EDITS_BUCKET edits; the last one collects all larger counts."""

SKIP_TYPES = frozenset({"noop", "UNK", "Um", "um"})

ERRANT_TO_GENERATOR: dict[str, str] = {
    "M:DET": "det_missing",
    "U:DET": "det_extra",
    "R:DET": "det_wrong",
    "M:PREP": "prep_missing",
    "U:PREP": "prep_extra",
    "R:PREP": "prep_wrong",
    "R:PART": "prep_wrong",
    "M:PART": "missing_word",
    "U:PART": "extra_word",
    "R:VERB:SVA": "verb_sva",
    "M:VERB:SVA": "verb_sva",
    "U:VERB:SVA": "verb_sva",
    "R:VERB:FORM": "verb_form",
    "M:VERB:FORM": "verb_form",
    "U:VERB:FORM": "verb_form",
    "R:VERB:INFL": "verb_form",
    "R:VERB:TENSE": "verb_tense",
    "M:VERB:TENSE": "verb_tense",
    "U:VERB:TENSE": "verb_tense",
    "R:NOUN:NUM": "noun_number",
    "R:NOUN:INFL": "noun_number",
    "R:PRON": "pronoun_wrong",
    "M:PRON": "pronoun_missing",
    "U:PRON": "extra_word",
    "R:SPELL": "spelling",
    "R:VERB": "word_choice",
    "R:NOUN": "word_choice",
    "R:ADJ": "word_choice",
    "R:ADV": "word_choice",
    "R:CONJ": "word_choice",
    "R:MORPH": "morph",
    "R:ADJ:FORM": "adj_form",
    "M:PUNCT": "punct_missing",
    "U:PUNCT": "punct_extra",
    "R:PUNCT": "punct_wrong",
    "M:NOUN:POSS": "punct_missing",
    "R:NOUN:POSS": "punct_missing",
    "U:NOUN:POSS": "punct_extra",
    "R:CONTR": "contraction",
    "M:CONTR": "contraction",
    "U:CONTR": "contraction",
    "R:WO": "word_order",
    "M:VERB": "missing_word",
    "M:CONJ": "missing_word",
    "M:ADV": "missing_word",
    "M:OTHER": "missing_word",
    "U:VERB": "extra_word",
    "U:CONJ": "extra_word",
    "U:ADV": "extra_word",
    "U:OTHER": "extra_word",
    "U:NOUN": "extra_word",
    "U:ADJ": "extra_word",
}
"""ERRANT type -> generator type. Unlisted types (R:OTHER, M:NOUN, ...) count only when the
edit's words match one of the generator's confusion lists (see :func:`classify`)."""


@dataclass(frozen=True)
class Edit:
    """One M2 annotation: replace tokens [start, end) of the original by ``correction``."""

    start: int
    end: int
    etype: str
    correction: str
    annotator: int = 0


def parse_m2(lines: Iterable[str]) -> Iterator[tuple[list[str], list[Edit]]]:
    """Yield (original tokens, edits of the first annotator) for each M2 block.

    ``noop`` and ``UNK`` edits are dropped, so an error-free sentence has an empty edit list.
    """
    tokens: list[str] | None = None
    edits: list[Edit] = []

    def flush() -> tuple[list[str], list[Edit]]:
        assert tokens is not None
        if edits:
            first = min(e.annotator for e in edits)
            chosen = [e for e in edits if e.annotator == first]
        else:
            chosen = []
        return tokens, [e for e in chosen if e.etype not in SKIP_TYPES and e.start >= 0]

    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith("S "):
            if tokens is not None:
                yield flush()
            tokens = line[2:].split(" ") if line[2:] else []
            edits = []
        elif line.startswith("A ") and tokens is not None:
            fields = line[2:].split("|||")
            span = fields[0].split()
            ann_field = fields[5].strip() if len(fields) > 5 else "0"
            ann = int(ann_field) if ann_field.lstrip("-").isdigit() else 0
            edits.append(Edit(int(span[0]), int(span[1]), fields[1], fields[2], ann))
        elif not line.strip() and tokens is not None:
            yield flush()
            tokens = None
    if tokens is not None:
        yield flush()


def _join(tokens: list[str]) -> str:
    """Tokenised words back to text, gluing clitics ("do n't" -> "don't")."""
    text = " ".join(tokens)
    for clitic in ("n't", "'s", "'re", "'ve", "'ll", "'d", "'m"):
        text = text.replace(" " + clitic, clitic)
    return text


def _in(options: list[tuple[str, float]] | None, word: str) -> bool:
    return bool(options) and any(alt == word for alt, _ in options or ())


def classify(orig_tokens: list[str], edit: Edit) -> str | None:
    """The generator error type that produces this edit's error, or None if none does."""
    orig_span = orig_tokens[edit.start : edit.end]
    cor_span = edit.correction.split() if edit.correction not in ("", "-NONE-") else []
    o = _join(orig_span).lower()
    c = _join(cor_span).lower()
    op = edit.etype.split(":", 1)[0]

    if op == "R" and o and c:
        if _in(wl.CONFUSIONS.get(c), o):
            return "confusion"
        if c in wl.CONTRACTIONS and o in wl.CONTRACTIONS[c][1]:
            return "contraction"
        if wl.SPLITS.get(c) == o or wl.MERGES.get(tuple(c.split(" ", 1))) == o:  # type: ignore[arg-type]
            return "spacing"
    if edit.etype == "R:ORTH":
        if o == c:
            return "capitalisation"
        if o.replace(" ", "") == c.replace(" ", ""):
            return "spacing"
        return None
    if op == "U" and len(orig_span) == 1:
        word = orig_span[0].lower()
        before = orig_tokens[edit.start - 1].lower() if edit.start > 0 else ""
        after = orig_tokens[edit.end].lower() if edit.end < len(orig_tokens) else ""
        if word in (before, after) and word.isalpha():
            return "repeated_word"
    gen = ERRANT_TO_GENERATOR.get(edit.etype)
    if gen is None:
        return None
    if gen == "word_choice":
        # Only the confusions the generator knows: count an edit when its corrected word is one
        # the generator would replace.
        lemma = infl.verb_lemma(c) if c.isalpha() else None
        if c in wl.OTHER_CHOICE or (lemma is not None and lemma in wl.VERB_CHOICE):
            return gen
        return None
    if op in ("M", "U") and gen in ("missing_word", "extra_word"):
        span = cor_span if op == "M" else orig_span
        if len(span) != 1:
            return None
    return gen


@dataclass
class Calibration:
    """Counts gathered from M2 files; :meth:`rates` turns them into the JSON numbers."""

    sentences: int = 0
    tokens: int = 0
    edit_hist: Counter[int] | None = None
    mapped_hist: Counter[int] | None = None
    errant: Counter[str] | None = None
    generator: Counter[str] | None = None
    misspellings: defaultdict[str, Counter[str]] | None = None

    def __post_init__(self) -> None:
        self.edit_hist = Counter()
        self.mapped_hist = Counter()
        self.errant = Counter()
        self.generator = Counter()
        self.misspellings = defaultdict(Counter)

    def add(self, tokens: list[str], edits: list[Edit]) -> None:
        """Count one sentence."""
        assert self.edit_hist is not None and self.mapped_hist is not None
        assert self.errant is not None and self.generator is not None
        self.sentences += 1
        self.tokens += len(tokens)
        mapped = 0
        for e in edits:
            self.errant[e.etype] += 1
            gen = classify(tokens, e)
            if gen is not None:
                self.generator[gen] += 1
                mapped += 1
            if e.etype == "R:SPELL":
                self._add_misspelling(tokens[e.start : e.end], e.correction)
        self.edit_hist[min(len(edits), MAX_EDITS_BUCKET)] += 1
        self.mapped_hist[min(mapped, MAX_EDITS_BUCKET)] += 1

    def _add_misspelling(self, orig: list[str], correction: str) -> None:
        assert self.misspellings is not None
        if len(orig) != 1 or " " in correction:
            return
        wrong, right = orig[0].lower(), correction.lower()
        if not (wrong.isalpha() and right.isalpha()) or wrong == right or len(right) < 3:
            return
        if _edit_distance(wrong, right) > max(2, len(right) // 3):
            return  # a different word rather than a misspelling
        if len(wrong) - len(right) >= 2 and (wrong.startswith(right) or wrong.endswith(right)):
            return  # two words run together ("clothesdo")
        if infl.is_known_word(wrong):
            return  # a variant spelling ("color") or another real word
        self.misspellings[right][wrong] += 1

    def rates(self) -> dict:
        """The calibration numbers (no corpus text)."""
        assert self.edit_hist is not None and self.mapped_hist is not None
        assert self.errant is not None and self.generator is not None
        n = max(self.sentences, 1)
        total_edits = sum(self.errant.values())
        mapped_edits = sum(self.generator.values())

        def hist(c: Counter[int]) -> list[float]:
            return [round(c.get(k, 0) / n, 6) for k in range(MAX_EDITS_BUCKET + 1)]

        nonzero = n - self.edit_hist.get(0, 0)
        return {
            "source": "W&I+LOCNESS v2.1 training M2 (first annotator; noop/UNK skipped)",
            "sentences": self.sentences,
            "mean_tokens": round(self.tokens / n, 3),
            "edits": total_edits,
            "zero_edit_share": round(self.edit_hist.get(0, 0) / n, 6),
            "mean_edits": round(total_edits / n, 4),
            "mean_edits_nonzero": round(total_edits / max(nonzero, 1), 4),
            "edits_hist": hist(self.edit_hist),
            "mapped_share": round(mapped_edits / max(total_edits, 1), 4),
            "mapped_edits_hist": hist(self.mapped_hist),
            "errant_types": {k: round(v / max(total_edits, 1), 6) for k, v in self.errant.most_common()},
            "type_weights": {k: round(v / max(mapped_edits, 1), 6) for k, v in self.generator.most_common()},
        }

    def misspelling_dict(self, min_count: int = 1) -> dict[str, list[str]]:
        """correct word -> observed misspellings, most frequent first."""
        assert self.misspellings is not None
        out: dict[str, list[str]] = {}
        for right in sorted(self.misspellings):
            wrongs = [w for w, c in self.misspellings[right].most_common() if c >= min_count]
            if wrongs:
                out[right] = wrongs
        return out


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def calibrate(paths: Iterable[Path]) -> Calibration:
    """Read M2 files and gather all counts."""
    cal = Calibration()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for tokens, edits in parse_m2(f):
                cal.add(tokens, edits)
    return cal


def m2_files(data_dir: Path) -> list[Path]:
    """The training M2 files under a data directory (``<data>/train/m2/*.m2``)."""
    return sorted((data_dir / "train" / "m2").glob("*.m2"))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="data directory with train/m2/*.m2")
    ap.add_argument("--m2", type=Path, nargs="*", default=[], help="explicit M2 files")
    ap.add_argument("--out", type=Path, help="write the rates JSON here")
    ap.add_argument("--spelling-out", type=Path, help="write the misspelling dictionary here")
    args = ap.parse_args(argv)
    paths = list(args.m2) + (m2_files(args.data) if args.data else [])
    if not paths:
        ap.error("no M2 files: give --data or --m2")
    cal = calibrate(paths)
    rates = cal.rates()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rates, indent=1) + "\n", encoding="utf-8")
    else:
        json.dump(rates, sys.stdout, indent=1)
        sys.stdout.write("\n")
    if args.spelling_out:
        args.spelling_out.parent.mkdir(parents=True, exist_ok=True)
        spell = cal.misspelling_dict()
        args.spelling_out.write_text(json.dumps(spell, ensure_ascii=False) + "\n", "utf-8")
    print(
        f"{rates['sentences']} sentences, {rates['edits']} edits, "
        f"{rates['zero_edit_share']:.1%} without edits, {rates['mean_edits']:.2f} edits/sentence, "
        f"{rates['mapped_share']:.1%} of edits mapped to generator types",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
