"""Fit the confidence of a model's edits (``service.text.confidence``) on held-in data, and ship the fit with the model.

    python -m models.gec.calibrate --model models/gec-default --data ../shared/data [--learner 32000 --clean 64000]

Held-in data, never the dev sets: learner sentence pairs of the training sets (``train/*.detok.src``/``.tgt``;
an edit is right when the reference has the same edit) and clean edited English of the monolingual sources
(``mono/*.txt.gz``, read as sentences needing no edit: every edit there is wrong), in equal numbers, so that the
fit sees the writers the service is for: learners, and people whose text is already right. Every sentence is
corrected by the served batch path (``service.engine.offline.correct_texts``, nothing held back), each edit's
evidence is read as the service reads it, and a logistic regression (L2-regularised, Newton's method) fits the
probability that an edit is right, in two steps: the weights are fitted with each clean sentence's edits counted
``--clean-weight`` times (4: a wrong edit of a clean sentence is what the fit must learn to tell, and clean sentences
have few edits to learn it from), then the score they give is rescaled (one slope and one offset, Platt's method) on
the held-in data with learners' and clean sentences weighing alike, so that the number stays calibrated there.
The fit is written beside the model (``confidence.json``) and named in its manifest (``confidence``, with its
SHA-256); the reliability table (edits binned by confidence: how many, and the share right) is printed and kept in
the fit.

Then the model is measured as served, the fit in place: JFLEG dev and FCE dev at each level (``safe``, ``default``,
``picky``: the level's confidence threshold and keep bias, the spelling stage, the review, the rule stage), as
``gecserve eval --level L`` measures them (``models.gec.evaluate.served_quality``), written into the manifest as
``quality`` with the threshold, keep bias and fit each level was measured at: what ``GET /v1/models`` lists (a level
whose threshold, keep bias or fit has changed since is listed without figures). What ``models.gec.package`` measured
when the model was packaged (every edit kept, the keep bias curve, the model alone) stays as ``packaging_quality``.

    python -m models.gec.calibrate --measure-only --model models/gec-default --data ../shared/data --threads 1

measures and writes ``quality`` alone, without fitting: after a level's keep bias (the manifest's ``keep_bias``), a
threshold (``service.text.policy.LEVELS``) or the served path changed. About a minute a model here (``--threads 1``).

    python -m models.gec.calibrate --device --model models/gec-default --data ../shared/data

fits the device engine's confidence instead (``service.text.device_confidence``: what the browser computes without
the spelling stage, the language model or ERRANT) on the same held-in sentences, each one alone as the browser
reads it: decoded by the model alone with the default level's keep bias (aggressive decoding, the device's), its
edits the word-level diff of the device (an edit is right when the diff of the source and the reference has it),
less those rewriting a word the model may not rewrite; written as ``device_confidence.json``, named in the manifest
as ``device_confidence``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from models.gec.corpora import read_lines
from models.gec.edit_labels import is_right, reference_edits, reliability
from models.gec.evaluate import DEV_SETS, served_quality
from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine, keep_bias_for
from service.engine.offline import correct_texts, model_review, model_speller
from service.engine.report import table
from service.engine.runtime import RuntimeOptions
from service.text import device_confidence
from service.text.confidence import FEATURES, UNCALIBRATED, TokenScores, features
from service.text.edits import Edit
from service.text.guard import degenerate
from service.text.segment import split_sentences
from service.text.units import Assembled

FIT_FILE = "confidence.json"
DEVICE_FIT_FILE = "device_confidence.json"
DEVICE_BATCH = 64
LEARNER_SETS = ("fce", "wi_locness", "nucle", "lang8")
CLEAN_SOURCES = ("wikipedia", "reuters21578", "brown", "openstax_ccby", "peps", "rustbook", "novels100", "scitldr")
L2 = 1.0  # the regularisation of the weights (not the bias), in units of one edit's log-likelihood
CLEAN_WEIGHT = 4.0  # how many times a clean sentence's edit counts in the fit of the weights (not in the rescaling)


def learner_pairs(data: Path, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """``count`` learner (source, reference) pairs drawn evenly from the training sets."""
    pairs: list[tuple[str, str]] = []
    for name in LEARNER_SETS:
        sources, targets = (
            read_lines(data / "train" / f"{name}.train.detok.src"),
            read_lines(data / "train" / f"{name}.train.detok.tgt"),
        )
        both = [(s, t) for s, t in zip(sources, targets, strict=True) if s.strip() and t.strip() and len(s) < 400]
        pairs += rng.sample(both, min(len(both), count // len(LEARNER_SETS)))
    return pairs


def clean_sentences(data: Path, count: int, rng: random.Random) -> list[str]:
    """``count`` clean sentences drawn evenly from the monolingual sources."""
    found: list[str] = []
    for name in CLEAN_SOURCES:
        lines = (line.strip() for line in read_lines(data / "mono" / f"en.{name}.txt.gz"))
        sentences = [line for line in lines if 20 <= len(line) < 400]
        found += rng.sample(sentences, min(len(sentences), count // len(CLEAN_SOURCES)))
    return found


def labelled_rows(
    corrected: Sequence[Assembled], references: Sequence[str], sources: Sequence[str]
) -> Iterator[tuple[list[float], int]]:
    """Each edit's feature row and whether the reference has the same edit."""
    for assembled, reference, source in zip(corrected, references, sources, strict=True):
        wanted = reference_edits(source, [reference])
        for edit in [*assembled.edits, *assembled.held]:
            if edit.evidence is None:
                continue
            row = features(Edit(edit.start, edit.end, edit.original, edit.replacement), edit.evidence)
            yield row, int(is_right(edit, wanted))


def device_rows(
    engine: Engine, sources: Sequence[str], references: Sequence[str], keep_bias: float, model: Path
) -> Iterator[tuple[tuple[float, ...], int]]:
    """Each device edit's feature row (``device_confidence.FEATURES``) and whether the reference has it, for the
    sources the browser would decode as one sentence (the model in ``model``)."""
    vocabulary = engine.manifest.vocabulary
    words = device_confidence.device_words(model / vocabulary if vocabulary else None)
    pairs = [
        (source, reference, tokens)
        for source, reference in zip(sources, references, strict=True)
        if len(split_sentences(source)) == 1 and len(tokens := engine.codec.encode(source)) <= engine.max_source_tokens
    ]
    for start in range(0, len(pairs), DEVICE_BATCH):
        chunk = pairs[start : start + DEVICE_BATCH]
        results = engine.generate(
            [t for _, _, t in chunk], "aggressive", DecodeParams(), keep_biases=[keep_bias] * len(chunk)
        )
        for (source, reference, _), result in zip(chunk, results, strict=True):
            text, ends = engine.codec.decode_with_ends(result.tokens)
            if degenerate(source, text) is not None:
                continue
            wanted = {(e.start, e.end, e.replacement) for e in device_confidence.diff_edits(source, reference)}
            scores = TokenScores(text, ends, tuple(result.logprobs))
            for found in device_confidence.sentence_edits(source, scores, words):
                edit = found.edit
                if not found.fixed:
                    yield found.row, int(is_right(edit, wanted))


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float = L2, iterations: int = 50, counts: np.ndarray | None = None
) -> np.ndarray:
    """Weights of an L2-regularised logistic regression (the first column, the bias, unregularised), by Newton's
    method; ``counts``: how many times each row counts (1 each by default)."""
    counts = np.ones(len(y)) if counts is None else counts
    weights = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ weights, -30, 30)))
        gradient = x.T @ (counts * (p - y)) + penalty * weights
        hessian = (x * (counts * p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.abs(step).max() < 1e-7:
            break
    return weights


def fit_weighted(x: np.ndarray, y: np.ndarray, clean: np.ndarray, clean_weight: float, balance: float) -> np.ndarray:
    """Weights fitted with the ``clean`` rows counted ``clean_weight`` times, their score then rescaled (Platt) with
    the clean rows counted ``balance`` times (learners' and clean sentences weighing alike): the weights of one
    logistic regression whose ranking is the first fit's and whose probabilities are the second's."""
    weights = fit_logistic(x, y, counts=np.where(clean, clean_weight, 1.0))
    score = np.column_stack([np.ones(len(y)), x @ weights])
    offset, slope = fit_logistic(score, y, l2=0.0, counts=np.where(clean, balance, 1.0))
    rescaled = weights * slope
    rescaled[0] += offset
    return rescaled


def ship(model_dir: Path, fit: dict[str, object], name: str = FIT_FILE, key: str = "confidence") -> None:
    """Write the fit beside the model as ``name`` and name it, with its hash, in the manifest under ``key``."""
    path = model_dir / name
    path.write_text(json.dumps(fit, indent=1) + "\n", encoding="utf-8")
    manifest_path = model_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest[key] = name
    manifest.setdefault("files_sha256", {})[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["files_sha256"] = dict(sorted(manifest["files_sha256"].items()))
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def ship_quality(model_dir: Path, quality: dict[str, object]) -> None:
    """Write the served figures (``served_quality``) into the manifest as ``quality``; a ``quality`` of the old
    kind, ``models.gec.package``'s figures of the model as packaged, becomes ``packaging_quality`` where it stands."""
    manifest_path = model_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    before = manifest.get("quality")
    if isinstance(before, dict) and "levels" not in before and "packaging_quality" not in manifest:
        manifest = {("packaging_quality" if key == "quality" else key): value for key, value in manifest.items()}
    manifest["quality"] = quality
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def measure(model_dir: Path, data: Path, threads: int) -> int:
    """Measure the model as served at each level, write it into the manifest and print it."""
    quality = served_quality(model_dir, data, threads)
    ship_quality(model_dir, quality)
    levels = quality["levels"]
    rows = [
        {"level": level, "threshold": figures["threshold"], "keep_bias": figures["keep_bias"]}
        | {f"{name}_{key}": figures[name][key] for name in DEV_SETS for key in ("gleu", "unchanged_kept")}
        for level, figures in levels.items()
    ]
    print(table(rows, list(rows[0])))
    print(f"calibrate: wrote the served figures into {model_dir / 'manifest.json'} (quality)", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--learner", type=int, default=32000, help="learner sentence pairs")
    parser.add_argument("--clean", type=int, default=64000, help="clean sentences")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep-bias", type=float, default=None, help="the keep bias (default: the model's)")
    parser.add_argument("--device", action="store_true", help="fit the device engine's confidence")
    parser.add_argument(
        "--clean-weight", type=float, default=CLEAN_WEIGHT, help="a clean edit's count in the fit of the weights"
    )
    parser.add_argument(
        "--measure-only",
        action="store_true",
        help="measure the served dev figures at each level into the manifest's quality, without fitting",
    )
    args = parser.parse_args(argv)
    if args.measure_only:
        return measure(args.model, args.data, args.threads)
    rng = random.Random(args.seed)
    pairs = learner_pairs(args.data, args.learner, rng)
    clean = clean_sentences(args.data, args.clean, rng)
    sources = [s for s, _ in pairs] + clean
    references = [t for _, t in pairs] + clean
    print(f"calibrate: {len(pairs)} learner pairs, {len(clean)} clean sentences", file=sys.stderr)
    engine = Engine(args.model, options=RuntimeOptions(intra_op_threads=args.threads))
    trained_on: dict[str, float] = {"learner_pairs": len(pairs), "clean_sentences": len(clean), "seed": args.seed}
    if args.device:
        keep_bias = keep_bias_for(engine.manifest, "aggressive", "default", args.keep_bias)
        rows = [(row, label, False) for row, label in device_rows(engine, sources, references, keep_bias, args.model)]
        fitted = device_confidence.FEATURES, DEVICE_FIT_FILE, "device_confidence"
        return _fit_and_ship(args.model, rows, *fitted, None, **trained_on)
    corrected = correct_texts(
        engine,
        sources,
        progress=True,
        speller=model_speller(args.model),
        keep_bias=args.keep_bias,
        review=model_review(args.model),
        confidence=UNCALIBRATED,
        min_confidence=0.0,
    )
    rows = [
        (row, label, clean)
        for clean, part in ((False, slice(0, len(pairs))), (True, slice(len(pairs), None)))
        for row, label in labelled_rows(corrected[part], references[part], sources[part])
    ]
    balance = len(pairs) / max(1, len(clean))
    trained_on["clean_weight"] = args.clean_weight
    _fit_and_ship(args.model, rows, FEATURES, FIT_FILE, "confidence", (args.clean_weight, balance), **trained_on)
    del engine, corrected, rows  # what the fit read: the measure loads the model afresh, as served
    return measure(args.model, args.data, args.threads)


def _fit_and_ship(
    model: Path,
    rows: Sequence[tuple[Sequence[float], int, bool]],
    names: Sequence[str],
    name: str,
    key: str,
    weighing: tuple[float, float] | None,
    **trained_on: float,
) -> int:
    """Fit the rows (feature row, right, from a clean sentence), print the reliability table and the weights, and
    ship the fit as ``name`` (manifest ``key``) with what it was ``trained_on``; ``weighing``: the clean rows' count
    in the fit and in the rescaling (``fit_weighted``), None: one fit, every row counted once."""
    x = np.array([r for r, _, _ in rows], dtype=np.float64)
    y = np.array([label for _, label, _ in rows], dtype=np.float64)
    clean = np.array([c for _, _, c in rows], dtype=bool)
    weights = fit_logistic(x, y) if weighing is None else fit_weighted(x, y, clean, *weighing)
    probabilities = 1.0 / (1.0 + np.exp(-np.clip(x @ weights, -30, 30)))
    curve = reliability(zip(probabilities.tolist(), (y == 1).tolist(), strict=True))
    print(table(curve, ["low", "high", "edits", "right", "share_right", "mean_confidence"]))
    print(
        table(
            [{"feature": f, "weight": round(float(w), 4)} for f, w in zip(names, weights, strict=True)],
            ["feature", "weight"],
        )
    )
    fit = {
        "features": list(names),
        "weights": [round(float(w), 6) for w in weights],
        "trained_on": {**trained_on, "edits": len(rows)},
        "reliability": curve,
    }
    ship(model, fit, name, key)
    print(f"calibrate: wrote {model / name} ({len(rows)} edits, {int(y.sum())} right)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
