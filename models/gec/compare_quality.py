"""The correction-quality levers compared on the dev sets, one row a variant: the keep bias across its range both
ways, the language model's review (and language models of other sizes), and correction in rounds.

    python -m models.gec.compare_quality --model models/gec-v3 --data ../shared/data \\
        [--baseline models/gec-default] [--lm-sizes 3:2,4:3,5:3] [--json OUT] [--plot OUT.png]

Every variant corrects JFLEG dev (GLEU against its 4 references, with the spread over GLEU's random reference
choice) and FCE dev through the served path's preprocessing with the spelling stage (``correct_texts``). "False
positives" are the sentences that need no edit (source == first reference) that a variant changes; ``ms`` is the
whole correction's time per sentence on one thread. Rows:

- the model alone (no spelling stage, no review) and as served before this tool (the spelling stage);
- the language model's review as shipped, and with models of other orders and pruning (``--lm-sizes order:min``),
  each with its size on disk, in memory, and its time per sentence;
- the keep bias from -2 to 2, with the review (the curve the ``--plot`` draws, both sets);
- rounds: the output corrected again until nothing changes (at most ``MAX_ROUNDS``), at the default and picky
  levels;
- ``--baseline``: another model folder as served, for comparison.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from models.gec.corpora import read_lines
from models.gec.evaluate import score
from models.gec.language_model import corpus_files, count_ngrams
from models.gec.metrics import detokenize
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest
from service.engine.offline import correct_texts, model_review, model_speller
from service.engine.report import table, write_json
from service.engine.runtime import RuntimeOptions
from service.text.lm_review import LanguageModelReview
from service.text.ngrams import NgramModel

Correct = Callable[[list[str]], list[str]]
BIASES = (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
MAX_ROUNDS = 3


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def in_rounds(correct: Correct, texts: list[str], max_rounds: int = MAX_ROUNDS) -> tuple[list[str], int]:
    """``texts`` corrected, then their corrections corrected again, until a round changes nothing or ``max_rounds``
    were run; the last texts and the rounds run."""
    rounds = 0
    while rounds < max_rounds:
        corrected = correct(texts)
        rounds += 1
        if corrected == texts:
            break
        texts = corrected
    return texts, rounds


class DevSets:
    """JFLEG dev and FCE dev, and the row each variant's corrections give."""

    def __init__(self, data: Path) -> None:
        dev = data / "dev"
        self.jfleg_src = _lines(dev / "jfleg.dev.src")
        self.jfleg_refs = [_lines(dev / f"jfleg.dev.ref{i}") for i in range(4)]
        self.fce_src, self.fce_ref = _lines(dev / "fce.dev.detok.src"), _lines(dev / "fce.dev.detok.tgt")

    def row(self, name: str, correct: Correct, **extra: Any) -> dict[str, Any]:
        started = time.monotonic()
        jfleg_out = correct([detokenize(s) for s in self.jfleg_src])
        fce_out = correct(self.fce_src)
        seconds = time.monotonic() - started
        jfleg = score(self.jfleg_src, self.jfleg_refs, True, jfleg_out)
        fce = score(self.fce_src, [self.fce_ref], False, fce_out)
        row = {
            "variant": name,
            "jfleg_gleu": jfleg["gleu"],
            "jfleg_gleu_std": jfleg["gleu_std"],
            "jfleg_false_positives_%": 100 * (1 - jfleg["unchanged_kept"]),
            "fce_gleu": fce["gleu"],
            "fce_false_positives_%": 100 * (1 - fce["unchanged_kept"]),
            "fce_changed_%": 100 * fce["changed"],
            "ms": 1e3 * seconds / (len(self.jfleg_src) + len(self.fce_src)),
            **extra,
        }
        print(table([row], list(row)), file=sys.stderr, flush=True)
        return row


def served(engine: Engine, model: Path, keep_bias: float | None = None, review: bool = True) -> Correct:
    speller = model_speller(model)
    reviewer = model_review(model) if review else None
    return lambda texts: [
        c.text for c in correct_texts(engine, texts, speller=speller, keep_bias=keep_bias, review=reviewer)
    ]


def language_models(data: Path, sizes: Sequence[tuple[int, int]]) -> dict[str, tuple[LanguageModelReview, Any]]:
    """A review with a language model of each ``(order, min_count)``, and its size on disk and in memory."""
    lines = [line for path in corpus_files(data) for line in read_lines(path)]
    reviews = {}
    for order, min_count in sizes:
        model = count_ngrams(lines, order, min_count)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "ngrams.npz"
            model.save(path)
            disk = path.stat().st_size
            model = NgramModel.load(path)
        memory = model.tables.nbytes
        sized = {"lm_entries": model.entries, "lm_disk_mb": disk / 2**20, "lm_memory_mb": memory / 2**20}
        reviews[f"order {order}, seen >= {min_count}"] = (LanguageModelReview(model), sized)
    return reviews


def compare(
    model: Path, data: Path, lm_sizes: Sequence[tuple[int, int]], baseline: Path | None
) -> list[dict[str, Any]]:
    sets = DevSets(data)
    engine = Engine(model, options=RuntimeOptions(intra_op_threads=1))
    levels = ModelManifest.load(model).keep_bias
    speller = model_speller(model)
    rows = [
        sets.row("model alone", lambda texts: [c.text for c in correct_texts(engine, texts, keep_bias=0.0)]),
        sets.row("spelling (served before the review)", served(engine, model, keep_bias=0.0, review=False)),
    ]
    shipped = model_review(model)
    if shipped is not None:
        rows.append(sets.row("spelling + review (shipped language model)", served(engine, model, keep_bias=0.0)))
    for name, (review, sized) in language_models(data, lm_sizes).items():
        rows.append(
            sets.row(
                f"spelling + review ({name})",
                lambda texts, r=review: [  # type: ignore[misc]
                    c.text for c in correct_texts(engine, texts, speller=speller, keep_bias=0.0, review=r)
                ],
                **sized,
            )
        )
    for bias in BIASES:
        rows.append(sets.row(f"keep bias {bias:+.1f}", served(engine, model, keep_bias=bias), keep_bias=bias))
    for level in ("default", "picky"):
        correct = served(engine, model, keep_bias=levels[level])
        rows.append(sets.row(f"rounds until unchanged, {level}", lambda texts, c=correct: in_rounds(c, texts)[0]))
    if baseline is not None:
        rows.append(sets.row(f"baseline {baseline.name} (served)", served(Engine(baseline), baseline)))
    return rows


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """GLEU and false positives across the keep bias, JFLEG dev and FCE dev."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = sorted((r for r in rows if "keep_bias" in r), key=lambda r: r["keep_bias"])
    biases = [r["keep_bias"] for r in curve]
    figure, (gleu, false) = plt.subplots(1, 2, figsize=(10, 4))
    for name in ("jfleg", "fce"):
        gleu.plot(biases, [r[f"{name}_gleu"] for r in curve], marker="o", label=f"{name.upper()} dev")
        false.plot(biases, [r[f"{name}_false_positives_%"] for r in curve], marker="o", label=f"{name.upper()} dev")
    gleu.set(xlabel="keep bias (logits)", ylabel="GLEU", title="GLEU")
    false.set(xlabel="keep bias (logits)", ylabel="% of sentences needing no edit changed", title="False positives")
    for axes in (gleu, false):
        axes.grid(alpha=0.3)
        axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def _size(text: str) -> tuple[int, int]:
    order, min_count = text.split(":")
    return int(order), int(min_count)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, default=None, help="another model folder, as served")
    parser.add_argument("--lm-sizes", default="", help="order:min_count,... language models to compare")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--plot", type=Path, default=None)
    args = parser.parse_args(argv)
    sizes = [_size(part) for part in args.lm_sizes.split(",") if part]
    rows = compare(args.model, args.data, sizes, args.baseline)
    columns = list(dict.fromkeys(column for row in rows for column in row))
    print(table(rows, columns))
    if args.json:
        write_json(args.json, {"model": str(args.model), "rows": rows})
    if args.plot:
        plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
