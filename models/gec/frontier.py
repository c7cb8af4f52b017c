"""Quality against damage: each model folder as served, across the confidence threshold, scored on JFLEG dev and FCE
dev (GLEU) and on the clean professional set (the share of its sentences changed).

    python -m models.gec.frontier --data ../shared/data --clean runs/clean-set.tsv \\
        --model "version 3=models/gec-v3" --model "version 4=models/gec-default" --json docs/benchmarks/frontier.json \\
        --plot docs/benchmarks/frontier.png

Each model corrects the clean set, JFLEG dev and FCE dev once, as served at the ``default`` level (its spelling
stage, keep bias, review, rule stage and confidence fit) but with every edit kept; a threshold then keeps the edits
the service's own test keeps (``service.text.units.passes``: the confidence reaches it times the edit's lexical
multiplier), what the service answers with that ``min_confidence`` but for the rule edits a held-back model edit
overrode, which the service makes (``units.with_rules``' ``held``) and these figures leave out: a rare case, the
figures a lower bound on what is fixed. Per model and threshold: JFLEG dev and
FCE dev GLEU (``models.gec.evaluate.score``), the share of FCE dev's sentences needing no edit that are changed, and
the share of the clean set changed. The plot draws JFLEG dev GLEU against the clean set's changed share, a line a model.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from models.gec.clean_set import read_tsv
from models.gec.corpora import read_lines
from models.gec.evaluate import score
from models.gec.metrics import detokenize
from service.engine.engine import Engine
from service.engine.offline import correct_texts, model_confidence, model_review, model_speller
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions
from service.text.edits import Edit, apply_edits
from service.text.units import Assembled, passes

THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
COLUMNS = ("model", "threshold", "jfleg_gleu", "fce_gleu", "fce_no_edit_changed_%", "clean_changed_%")


def kept_text(source: str, assembled: Assembled, threshold: float) -> str:
    """``source`` with the edits of ``assembled`` (every edit kept) whose confidence reaches ``threshold``."""
    kept = [Edit(e.start, e.end, e.original, e.replacement) for e in assembled.edits if passes(e, threshold)]
    return apply_edits(source, kept)


def frontier(
    name: str, model: Path, data: Path, clean: Sequence[str], thresholds: Sequence[float], threads: int
) -> list[dict[str, Any]]:
    """The rows of one model folder (``COLUMNS``), one a threshold."""
    dev = data / "dev"
    jfleg_src = read_lines(dev / "jfleg.dev.src")
    jfleg_refs = [read_lines(dev / f"jfleg.dev.ref{k}") for k in range(4)]
    fce_src, fce_ref = read_lines(dev / "fce.dev.detok.src"), read_lines(dev / "fce.dev.detok.tgt")
    texts = [*clean, *(detokenize(s) for s in jfleg_src), *fce_src]
    engine = Engine(model, options=RuntimeOptions(intra_op_threads=threads))
    corrected = correct_texts(
        engine, texts, progress=True, speller=model_speller(model), review=model_review(model),
        confidence=model_confidence(model), min_confidence=0.0,
    )  # fmt: skip
    rows = []
    for threshold in thresholds:
        fixed = [kept_text(text, assembled, threshold) for text, assembled in zip(texts, corrected, strict=True)]
        on_clean, on_jfleg = fixed[: len(clean)], fixed[len(clean) : len(clean) + len(jfleg_src)]
        on_fce = fixed[len(clean) + len(jfleg_src) :]
        jfleg = score(jfleg_src, jfleg_refs, True, on_jfleg)
        fce = score(fce_src, [fce_ref], False, on_fce)
        values = (
            name, threshold, round(jfleg["gleu"], 2), round(fce["gleu"], 2),
            round(100 * (1 - fce["unchanged_kept"]), 2),
            round(100 * sum(a != b for a, b in zip(clean, on_clean, strict=True)) / len(clean), 2),
        )  # fmt: skip
        rows.append(dict(zip(COLUMNS, values, strict=True)))
        print(f"{name} at {threshold}: {rows[-1]}", file=sys.stderr)
    return rows


def plot(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """JFLEG dev GLEU against the clean set's changed share, a line a model, each point labelled by its threshold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for name in dict.fromkeys(row["model"] for row in rows):
        mine = [row for row in rows if row["model"] == name]
        xs, ys = [row["clean_changed_%"] for row in mine], [row["jfleg_gleu"] for row in mine]
        axes.plot(xs, ys, marker="o", label=name)
        for row, x, y in zip(mine, xs, ys, strict=True):
            axes.annotate(f"{row['threshold']:g}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    axes.set(xlabel="clean professional set: sentences changed (%)", ylabel="JFLEG dev GLEU")
    axes.set_title("Quality against damage, by confidence threshold")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the GEC data folder (../shared/data)")
    parser.add_argument("--clean", type=Path, required=True, help="the clean set (python -m models.gec.clean_set)")
    parser.add_argument("--model", action="append", required=True, help="NAME=FOLDER, once a model")
    parser.add_argument("--thresholds", default=",".join(map(str, THRESHOLDS)))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args(argv)
    clean = [sentence for _, _, sentence in read_tsv(args.clean)]
    thresholds = [float(t) for t in args.thresholds.split(",")]
    rows = []
    for spec in args.model:
        name, _, folder = spec.partition("=")
        rows += frontier(name, Path(folder), args.data, clean, thresholds, args.threads)
    print(table(rows, COLUMNS))
    if args.json:
        write_json(args.json, {"clean_sentences": len(clean), "rows": rows})
    if args.plot:
        plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
