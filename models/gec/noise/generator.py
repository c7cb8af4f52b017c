"""Turn clean sentences into learner-like ones, with error rates calibrated on learner data.

``NoiseGenerator.corrupt`` samples how many errors a sentence gets (from the calibrated
edits-per-sentence histogram, scaled by sentence length) and which types (from the calibrated
type weights), then applies them with the functions in :mod:`errors`, each at a different place.
A share ``p_clean`` of sentences is returned unchanged, so a model trained on the pairs learns to
leave correct text alone.

    python -m models.gec.noise.generator --in clean.txt --out noisy.txt --seed 1 \\
        [--calibration calibration.json] [--misspellings misspellings.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from contextlib import ExitStack
from itertools import accumulate
from pathlib import Path
from typing import TextIO

from models.gec.noise.errors import ERROR_FUNCTIONS, spelling
from models.gec.noise.tokens import detokenize, is_word, tokenize

PACKAGED_CALIBRATION = Path(__file__).with_name("calibration.json")

DEFAULT_CALIBRATION: dict = {
    # W&I+LOCNESS training M2, see calibration.json (rounded).
    "mean_tokens": 18.33,
    "mapped_edits_hist": [0.4005, 0.2537, 0.1544, 0.0826, 0.0475, 0.0245, 0.0133, 0.0078, 0.0052, 0.0032, 0.0073],
    "type_weights": {
        "punct_missing": 0.1681,
        "prep_wrong": 0.0902,
        "verb_tense": 0.0785,
        "det_missing": 0.0626,
        "det_extra": 0.0547,
        "noun_number": 0.054,
        "spelling": 0.0485,
        "verb_form": 0.0467,
        "capitalisation": 0.0459,
        "punct_wrong": 0.0448,
        "word_choice": 0.0373,
        "verb_sva": 0.0289,
        "det_wrong": 0.0285,
        "extra_word": 0.0263,
        "prep_missing": 0.0255,
        "morph": 0.0238,
        "word_order": 0.0212,
        "missing_word": 0.0194,
        "prep_extra": 0.019,
        "punct_extra": 0.0175,
        "spacing": 0.0159,
        "pronoun_missing": 0.0149,
        "pronoun_wrong": 0.0132,
        "confusion": 0.007,
        "contraction": 0.004,
        "adj_form": 0.0031,
        "repeated_word": 0.0005,
    },
}
"""Built-in rates, used when no calibration is given."""

# Types with too few learner examples to matter still deserve an occasional appearance.
_MIN_WEIGHT = 0.003


def load_calibration(path: str | Path | None = None) -> dict:
    """Read a rates JSON written by :mod:`calibrate` (default: the packaged one, else built-in)."""
    if path is None:
        if not PACKAGED_CALIBRATION.exists():
            return DEFAULT_CALIBRATION
        path = PACKAGED_CALIBRATION
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_misspellings(path: str | Path) -> dict[str, list[str]]:
    """Read a misspelling dictionary written by ``calibrate --spelling-out``."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class NoiseGenerator:
    """Corrupts clean sentences with realistic learner errors.

    Args:
        calibration: rates as written by :mod:`calibrate` (``type_weights``, ``edits_hist`` or
            ``mapped_edits_hist``, ``mean_tokens``); built-in defaults when None.
        misspellings: correct word -> observed misspellings, used by the spelling errors.
        p_clean: share of sentences returned unchanged.
        seed: seed of the generator's own random source (used when ``corrupt`` gets no rng).
        max_edits: upper bound on errors per sentence.
        type_weights: optional overrides of single type weights (0 disables a type).
    """

    def __init__(
        self,
        calibration: dict | None = None,
        misspellings: dict[str, list[str]] | None = None,
        p_clean: float = 0.15,
        seed: int | None = None,
        max_edits: int = 6,
        type_weights: dict[str, float] | None = None,
    ) -> None:
        cal = calibration if calibration is not None else DEFAULT_CALIBRATION
        weights = dict(cal.get("type_weights") or DEFAULT_CALIBRATION["type_weights"])
        for name in ERROR_FUNCTIONS:
            weights[name] = max(weights.get(name, 0.0), _MIN_WEIGHT)
        for name, w in (type_weights or {}).items():
            if name not in ERROR_FUNCTIONS:
                raise ValueError(f"unknown error type: {name}")
            weights[name] = w
        self.types = [t for t in ERROR_FUNCTIONS if weights.get(t, 0.0) > 0]
        if not self.types:
            raise ValueError("all error types have weight 0")
        total = sum(weights[t] for t in self.types)
        self.weights = {t: weights[t] / total for t in self.types}
        self._cum = list(accumulate(self.weights[t] for t in self.types))
        self._fns = [ERROR_FUNCTIONS[t] for t in self.types]

        hist = cal.get("mapped_edits_hist") or cal.get("edits_hist")
        hist = hist or DEFAULT_CALIBRATION["mapped_edits_hist"]
        counts = [(n, p) for n, p in enumerate(hist) if n >= 1 and p > 0]
        self._n_values = [n for n, _ in counts]
        self._n_cum = list(accumulate(p for _, p in counts))
        self.mean_tokens = float(cal.get("mean_tokens") or DEFAULT_CALIBRATION["mean_tokens"])

        self.misspellings = misspellings
        self.p_clean = p_clean
        self.max_edits = max_edits
        self.rng = random.Random(seed)

    def num_edits(self, n_tokens: int, rng: random.Random) -> int:
        """How many errors a sentence of ``n_tokens`` tokens gets (given it gets any)."""
        n = rng.choices(self._n_values, cum_weights=self._n_cum)[0]
        scale = min(max(n_tokens / self.mean_tokens, 0.5), 1.75)
        x = n * scale
        k = int(x)
        if rng.random() < x - k:
            k += 1
        return max(1, min(k, self.max_edits, max(1, n_tokens // 3)))

    def corrupt(self, sentence: str, rng: random.Random | None = None) -> str:
        """Return a learner-like version of ``sentence`` (or the sentence itself, see p_clean)."""
        return self.corrupt_with_types(sentence, rng)[0]

    def corrupt_with_types(self, sentence: str, rng: random.Random | None = None) -> tuple[str, list[str]]:
        """Like :meth:`corrupt`, also returning the names of the errors applied, in order."""
        rng = rng or self.rng
        if rng.random() < self.p_clean:
            return sentence, []
        core = sentence.strip()
        if not core:
            return sentence, []
        lead = sentence[: len(sentence) - len(sentence.lstrip())]
        trail = sentence[len(sentence.rstrip()) :]
        tokens = tokenize(core)
        n_words = sum(1 for t in tokens if is_word(t.text))
        if n_words == 0:
            return sentence, []
        n_edits = self.num_edits(len(tokens), rng)
        applied: list[str] = []
        types, cum, fns = self.types, self._cum, self._fns
        total = cum[-1]
        failed: set[int] = set()
        for _ in range(n_edits):
            for _attempt in range(10):
                k = _bisect(cum, rng.random() * total)
                if k in failed:
                    continue
                fn = fns[k]
                if fn is spelling:
                    out = spelling(tokens, rng, self.misspellings)
                else:
                    out = fn(tokens, rng)
                if out is None:
                    failed.add(k)
                    continue
                tokens = out
                applied.append(types[k])
                break
        if not applied:
            return sentence, []
        return lead + detokenize(tokens) + trail, applied


def _bisect(cum: list[float], x: float) -> int:
    lo, hi = 0, len(cum) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: corrupt a file of clean sentences, one per line."""
    ap = argparse.ArgumentParser(description="Corrupt clean sentences (one per line).")
    ap.add_argument("--in", dest="inp", type=Path, required=True, help="clean text, '-' = stdin")
    ap.add_argument("--out", type=Path, required=True, help="noisy text, '-' = stdout")
    ap.add_argument("--calibration", type=Path, help="rates JSON (default: packaged)")
    ap.add_argument("--misspellings", type=Path, help="misspelling dictionary JSON")
    ap.add_argument("--p-clean", type=float, default=0.15)
    ap.add_argument("--max-edits", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from tqdm import tqdm

    gen = NoiseGenerator(
        calibration=load_calibration(args.calibration),
        misspellings=load_misspellings(args.misspellings) if args.misspellings else None,
        p_clean=args.p_clean,
        seed=args.seed,
        max_edits=args.max_edits,
    )
    with ExitStack() as stack:
        if str(args.inp) == "-":
            src: TextIO = sys.stdin
        else:
            src = stack.enter_context(open(args.inp, encoding="utf-8"))
        if str(args.out) == "-":
            dst: TextIO = sys.stdout
        else:
            dst = stack.enter_context(open(args.out, "w", encoding="utf-8"))
        for line in tqdm(src, desc="corrupt", unit=" lines", file=sys.stderr, mininterval=1.0):
            dst.write(gen.corrupt(line.rstrip("\n")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
