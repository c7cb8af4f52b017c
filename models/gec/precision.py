"""The precision report: how often the served correction changes text that needs no edit, and how far its edits'
confidence tells right edits from wrong ones, at each level of ``service.text.policy.LEVELS``.

    python -m models.gec.precision --model models/gec-default --data ../shared/data --clean runs/clean-set.tsv \\
        --json docs/benchmarks/precision.json --plot docs/benchmarks/reliability.png

The clean set is made by ``models.gec.clean_set``. Every text goes through the served batch path
(``service.engine.offline.correct_texts``: the spelling stage, the language model's review and the confidence fit
where the model ships them, the guard), once per level: a level decodes with its keep bias and keeps the edits whose
confidence reaches its threshold times the edit's lexical multiplier (``service.text.policy``; ``Assembled.edits``),
holding the others back (``Assembled.held``), so kept + held are all the edits the engine made. Reported:

a. per register of the clean set, and over all of it: the share of sentences changed, at each level;
b. FCE dev and JFLEG dev: of the sentences that need no edit (the source equals the first reference after collapsing
   whitespace; JFLEG's tokenised lines detokenised as ``gecserve eval`` reads them), the share changed, at each level;
   also the share of all their sentences changed, and the share of kept and of held edits that are right;
c. the reliability curve: all the edits made on FCE dev and JFLEG dev together at the default level, binned by
   confidence (10 bins over 0..1), each bin's share of right edits (``models.gec.edit_labels``: an edit is right
   when some reference makes the same edit on the text the service read), and the expected calibration error;
   ``--plot`` draws it with the diagonal, each bin's edits and the levels' thresholds;
d. per ERRANT category (``TypedEdit.category``), at each level: the dev edits kept and held, the share right of each,
   and the clean set's edits kept (all of which damage a clean sentence, bar its rare real typos);
e. per lexical class (``service.text.policy.lexical_class``, whose multipliers scale a level's threshold), the
   reliability curve of c.: what the multipliers are chosen from.

The JSON also lists the clean sentences changed at the default level, with their edits, to read what was damaged.

A progress line is printed per step, the summary tables at the end; ``--json`` gets every figure.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.gec.clean_set import REGISTERS, read_tsv
from models.gec.edit_labels import calibration_error, is_right, reference_edits, reliability
from models.gec.metrics import detokenize
from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_confidence, model_review, model_speller
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions
from service.text.confidence import ConfidenceModel
from service.text.lm_review import LanguageModelReview
from service.text.policy import LEVELS
from service.text.spelling import Speller
from service.text.units import Assembled, TypedEdit

CURVE_LEVEL = "default"  # the level whose edits (kept and held: all the engine made) the reliability curve bins
DEV_SETS = ("fce", "jfleg")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def _percent(part: int, whole: int) -> float | None:
    return 100 * part / whole if whole else None


@dataclass(frozen=True)
class DevSentence:
    """A dev sentence as the service reads it (natural text) with its references (natural text too)."""

    corpus: str
    text: str
    references: tuple[str, ...]

    @property
    def needs_no_edit(self) -> bool:
        """The source equals the first reference (whitespace collapsed)."""
        return _norm(self.text) == _norm(self.references[0])


def dev_sentences(data: Path) -> list[DevSentence]:
    """FCE dev (natural text) then JFLEG dev (its tokenised source and four references detokenised)."""
    dev = data / "dev"
    fce = [
        DevSentence("fce", source, (target,))
        for source, target in zip(_lines(dev / "fce.dev.detok.src"), _lines(dev / "fce.dev.detok.tgt"), strict=True)
    ]
    references = zip(*(_lines(dev / f"jfleg.dev.ref{k}") for k in range(4)), strict=True)
    jfleg = [
        DevSentence("jfleg", detokenize(source), tuple(detokenize(r) for r in refs))
        for source, refs in zip(_lines(dev / "jfleg.dev.src"), references, strict=True)
    ]
    return fce + jfleg


@dataclass(frozen=True)
class LabelledEdit:
    """One edit the engine made to a dev sentence: its ERRANT category, lexical class (``service.text.policy``),
    confidence, whether the level kept it, and whether a reference makes it."""

    corpus: str
    category: str
    lexical: str
    confidence: float
    kept: bool
    right: bool


def label_edits(sentences: Sequence[DevSentence], corrected: Sequence[Assembled]) -> list[LabelledEdit]:
    """The kept and held edits of each corrected dev sentence, labelled against its references."""
    labelled = []
    for sentence, correction in zip(sentences, corrected, strict=True):
        gold = reference_edits(sentence.text, sentence.references)
        for kept, edits in ((True, correction.edits), (False, correction.held)):
            labelled += [
                LabelledEdit(sentence.corpus, e.category, _lexical(e), e.confidence, kept, is_right(e, gold))
                for e in edits
            ]
    return labelled


def _lexical(edit: TypedEdit) -> str:
    return edit.evidence.lexical if edit.evidence is not None else "unknown"


def changed(source: str, correction: Assembled) -> bool:
    """Whether the correction differs from the source (whitespace collapsed)."""
    return _norm(correction.text) != _norm(source)


def clean_changes(rows: Sequence[tuple[str, str, str]], corrected: Sequence[Assembled]) -> list[dict[str, Any]]:
    """The clean sentences a correction changed: register, source, sentence, correction, and each kept edit."""
    return [
        {
            "register": register,
            "source": source,
            "sentence": sentence,
            "corrected": correction.text,
            "edits": [
                {
                    "original": e.original,
                    "replacement": e.replacement,
                    "category": e.category,
                    "confidence": e.confidence,
                }
                for e in correction.edits
            ],
        }
        for (register, source, sentence), correction in zip(rows, corrected, strict=True)
        if changed(sentence, correction)
    ]


def clean_figures(rows: Sequence[tuple[str, str, str]], corrected: Sequence[Assembled]) -> dict[str, dict[str, Any]]:
    """Per register (and ``all``): sentences, those changed, and their share (%)."""
    sentences, hit = Counter[str](), Counter[str]()
    for (register, _, sentence), correction in zip(rows, corrected, strict=True):
        for name in (register, "all"):
            sentences[name] += 1
            hit[name] += changed(sentence, correction)
    return {
        name: {"sentences": sentences[name], "changed": hit[name], "changed_%": _percent(hit[name], sentences[name])}
        for name in [*(r for r in REGISTERS if r in sentences), "all"]
    }


def dev_figures(
    sentences: Sequence[DevSentence], corrected: Sequence[Assembled], edits: Sequence[LabelledEdit]
) -> dict[str, dict[str, Any]]:
    """Per dev set: sentences and those changed, those needing no edit and those of them changed, and the kept and
    held edits with the right ones among them."""
    figures = {}
    for corpus in DEV_SETS:
        pairs = [(s, c) for s, c in zip(sentences, corrected, strict=True) if s.corpus == corpus]
        clean = [(s, c) for s, c in pairs if s.needs_no_edit]
        hit = sum(changed(s.text, c) for s, c in pairs)
        hit_clean = sum(changed(s.text, c) for s, c in clean)
        kept = [e for e in edits if e.corpus == corpus and e.kept]
        held = [e for e in edits if e.corpus == corpus and not e.kept]
        kept_right, held_right = sum(e.right for e in kept), sum(e.right for e in held)
        figures[corpus] = {
            "sentences": len(pairs),
            "changed_%": _percent(hit, len(pairs)),
            "needs_no_edit": len(clean),
            "no_edit_changed": hit_clean,
            "no_edit_changed_%": _percent(hit_clean, len(clean)),
            "kept": len(kept),
            "kept_right": kept_right,
            "kept_right_%": _percent(kept_right, len(kept)),
            "held": len(held),
            "held_right": held_right,
            "held_right_%": _percent(held_right, len(held)),
        }
    return figures


def category_rows(
    edits: dict[str, list[LabelledEdit]], clean_categories: dict[str, Counter[str]]
) -> list[dict[str, Any]]:
    """Per ERRANT category and level: the dev edits kept and held with the share right of each, and the clean set's
    edits kept; categories by their number of dev edits, most first."""
    made = Counter(e.category for e in edits[CURVE_LEVEL])
    names = sorted(set(made) | {c for counts in clean_categories.values() for c in counts}, key=lambda c: (-made[c], c))
    rows = []
    for name in names:
        for level, labelled in edits.items():
            kept = [e for e in labelled if e.category == name and e.kept]
            held = [e for e in labelled if e.category == name and not e.kept]
            rows.append(
                {
                    "category": name,
                    "level": level,
                    "kept": len(kept),
                    "kept_right_%": _percent(sum(e.right for e in kept), len(kept)),
                    "held": len(held),
                    "held_right_%": _percent(sum(e.right for e in held), len(held)),
                    "clean_kept": clean_categories[level][name],
                }
            )
    return rows


def plot(rows: Sequence[dict[str, Any]], thresholds: dict[str, float], path: Path) -> None:
    """The reliability curve (share right per bin of confidence, the diagonal for reference, each level's threshold
    before its lexical multipliers) above the edits per bin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    centres = [(row["low"] + row["high"]) / 2 for row in rows]
    width = rows[0]["high"] - rows[0]["low"]
    figure, (curve, counts) = plt.subplots(2, 1, figsize=(6, 7), sharex=True, height_ratios=(3, 1))
    shares = [row["share_right"] for row in rows]
    curve.bar(
        [c for c, s in zip(centres, shares, strict=True) if s is not None],
        [s for s in shares if s is not None],
        width=width * 0.9,
        alpha=0.7,
        label="share of edits right",
    )
    curve.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    for name, threshold in thresholds.items():
        for axes in (curve, counts):
            axes.axvline(threshold, color="red", linewidth=0.8, alpha=0.6)
        counts.text(
            threshold, 0.95, f" {name}", transform=counts.get_xaxis_transform(), va="top", fontsize=8, color="red"
        )
    error = calibration_error(rows)
    title = "Edits by confidence" + ("" if error is None else f" (expected calibration error {error:.3f})")
    curve.set(ylabel="share of edits right (FCE + JFLEG dev)", xlim=(0, 1), ylim=(0, 1), title=title)
    curve.legend(loc="upper left")
    curve.grid(alpha=0.3)
    counts.bar(centres, [row["edits"] for row in rows], width=width * 0.9, color="grey")
    for centre, row in zip(centres, rows, strict=True):
        counts.text(centre, row["edits"], str(row["edits"]), ha="center", va="bottom", fontsize=7)
    counts.set(xlabel="confidence", ylabel="edits")
    counts.grid(alpha=0.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)


def report(
    engine: Engine,
    clean: Sequence[tuple[str, str, str]],
    dev: Sequence[DevSentence],
    speller: Speller | None,
    review: LanguageModelReview | None,
    confidence: ConfidenceModel | None,
    batch_size: int = 32,
) -> dict[str, Any]:
    """Every figure of the report (see the module docstring), the clean set and the dev sets corrected at each
    level."""
    texts = [sentence for _, _, sentence in clean] + [s.text for s in dev]
    clean_by_level, dev_by_level, edits_by_level, clean_categories = {}, {}, {}, {}
    damaged: list[dict[str, Any]] = []
    for step, level in enumerate(LEVELS, 2):
        print(f"[{step}/{len(LEVELS) + 2}] correcting {len(texts)} texts at level {level!r}", file=sys.stderr)
        corrected = correct_texts(
            engine,
            texts,
            batch_size=batch_size,
            progress=True,
            speller=speller,
            review=review,
            confidence=confidence,
            level=level,
        )
        on_clean, on_dev = corrected[: len(clean)], corrected[len(clean) :]
        edits_by_level[level] = label_edits(dev, on_dev)
        clean_by_level[level] = clean_figures(clean, on_clean)
        dev_by_level[level] = dev_figures(dev, on_dev, edits_by_level[level])
        clean_categories[level] = Counter(e.category for c in on_clean for e in c.edits)
        if level == CURVE_LEVEL:
            damaged = clean_changes(clean, on_clean)
    print(f"[{len(LEVELS) + 2}/{len(LEVELS) + 2}] labelling and binning the edits", file=sys.stderr, flush=True)
    curve = edits_by_level[CURVE_LEVEL]
    bins = reliability((e.confidence, e.right) for e in curve)
    classes = sorted({e.lexical for e in curve})
    return {
        "levels": dict(LEVELS),
        "clean": clean_by_level,
        "dev": dev_by_level,
        "reliability": {"level": CURVE_LEVEL, "bins": bins, "calibration_error": calibration_error(bins)},
        "lexical_reliability": {
            name: reliability((e.confidence, e.right) for e in curve if e.lexical == name) for name in classes
        },
        "categories": category_rows(edits_by_level, clean_categories),
        "clean_changed": {"level": CURVE_LEVEL, "sentences": damaged},
    }


def _share(row: dict[str, Any]) -> str:
    """A bin's share right (%) and its edits, as ``"62 (40)"``; ``-`` without edits."""
    return "-" if not row["edits"] else f"{100 * row['share_right']:.0f} ({row['edits']})"


def summary(figures: dict[str, Any]) -> str:
    """The report's plain-text tables."""
    levels = list(figures["levels"])
    overview = []
    for level in levels:
        dev = figures["dev"][level]
        kept, held = (sum(dev[c][name] for c in DEV_SETS) for name in ("kept", "held"))
        kept_right, held_right = (sum(dev[c][name] for c in DEV_SETS) for name in ("kept_right", "held_right"))
        overview.append(
            {
                "level": level,
                "threshold": figures["levels"][level],
                "clean changed %": figures["clean"][level]["all"]["changed_%"],
                "fce no-edit changed %": dev["fce"]["no_edit_changed_%"],
                "jfleg no-edit changed %": dev["jfleg"]["no_edit_changed_%"],
                "dev kept": kept,
                "kept right %": _percent(kept_right, kept),
                "dev held": held,
                "held right %": _percent(held_right, held),
            }
        )
    registers = [
        {
            "register": name,
            "sentences": figures["clean"][levels[0]][name]["sentences"],
            **{f"{level} changed %": figures["clean"][level][name]["changed_%"] for level in levels},
        }
        for name in figures["clean"][levels[0]]
    ]
    dev_rows = [
        {
            "set": corpus,
            "sentences": figures["dev"][levels[0]][corpus]["sentences"],
            "needs no edit": figures["dev"][levels[0]][corpus]["needs_no_edit"],
            **{f"{level} changed %": figures["dev"][level][corpus]["changed_%"] for level in levels},
            **{f"{level} no-edit changed %": figures["dev"][level][corpus]["no_edit_changed_%"] for level in levels},
        }
        for corpus in DEV_SETS
    ]
    curve = figures["reliability"]
    bins = [
        {
            "confidence": f"{row['low']:.1f}-{row['high']:.1f}",
            "edits": row["edits"],
            "right": row["right"],
            "share right %": None if row["share_right"] is None else 100 * row["share_right"],
            "mean confidence": row["mean_confidence"],
        }
        for row in curve["bins"]
    ]
    error = curve["calibration_error"]
    lexical = [
        {
            "lexical class": name,
            "edits": sum(row["edits"] for row in rows),
            **{f"{row['low']:.1f}": _share(row) for row in rows},
        }
        for name, rows in figures["lexical_reliability"].items()
    ]
    category_columns = ["category", "level", "kept", "kept_right_%", "held", "held_right_%", "clean_kept"]
    sections = [
        "Levels (dev edits: FCE dev + JFLEG dev)\n" + table(overview, list(overview[0])),
        "Clean set: share of sentences changed\n" + table(registers, list(registers[0])),
        "Dev sets: share of sentences changed (all, and of those needing no edit)\n"
        + table(dev_rows, list(dev_rows[0])),
        f"Reliability at level {curve['level']!r} (kept + held edits, FCE dev + JFLEG dev); expected calibration "
        f"error {'-' if error is None else f'{error:.3f}'}\n" + table(bins, list(bins[0])),
        f"Per lexical class at level {curve['level']!r}: share right % (edits) per bin of confidence, from its "
        "lower bound\n" + table(lexical, list(lexical[0]))
        if lexical
        else None,
        "Per ERRANT category (dev edits kept and held, share right of each; clean set edits kept)\n"
        + table(figures["categories"], category_columns),
    ]
    return "\n\n".join(section for section in sections if section is not None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True, help="the GEC data folder (../shared/data)")
    parser.add_argument("--clean", type=Path, required=True, help="the clean set (python -m models.gec.clean_set)")
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--plot", type=Path, default=None, help="draw the reliability curve here (PNG)")
    parser.add_argument("--variant", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    print(f"[1/{len(LEVELS) + 2}] reading the clean set and the dev sets, loading {args.model}", file=sys.stderr)
    clean = read_tsv(args.clean)
    dev = dev_sentences(args.data)
    engine = Engine(args.model, variant=args.variant, options=RuntimeOptions(intra_op_threads=args.threads))
    speller, review, confidence = model_speller(args.model), model_review(args.model), model_confidence(args.model)
    figures = report(engine, clean, dev, speller, review, confidence, args.batch_size)
    print(summary(figures))
    if args.json:
        write_json(args.json, {"model": str(args.model), "clean_set": str(args.clean), **figures})
    if args.plot:
        plot(figures["reliability"]["bins"], figures["levels"], args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
