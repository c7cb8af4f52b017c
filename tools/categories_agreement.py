"""Agreement of ``service.text.categories.categorize`` with the gold ERRANT codes of M2 files.

    .venv/bin/python -m tools.categories_agreement --held-out \\
        --json docs/benchmarks/categories.json --plot docs/benchmarks/categories.png

(default: A and B of ../shared/data/train/m2, the sets the rules were tuned on; ``--held-out`` adds C.)

For each gold edit of annotator 0 (``noop`` and ``UNK`` left out): original = the source tokens [start:end] joined
by spaces, replacement = the correction, before/after = the sentence's tokens around the edit. Prints the overall
agreement (exact code match), the agreement per gold code and per category (operation aside) with counts, the
biggest confusions (gold -> predicted) and the mean time of one ``categorize`` call (each edit once, after a
warm-up pass over the first edits); ``--json`` writes the same, ``--plot`` a bar chart of agreement per code.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from tqdm import tqdm

from service.text.categories import categorize

Edit = tuple[str, str, str, str, str]  # gold code, original, replacement, before, after


def read_m2(path: Path, annotator: str = "0") -> Iterator[Edit]:
    """The gold edits of one annotator in an M2 file (``noop`` and ``UNK`` left out)."""
    tokens: list[str] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("S "):
                tokens = line[2:].split()
            elif line.startswith("A "):
                fields = line[2:].rstrip("\n").split("|||")
                if fields[5] != annotator or fields[1] in ("noop", "UNK"):
                    continue
                start, end = map(int, fields[0].split())
                yield (
                    fields[1],
                    " ".join(tokens[start:end]),
                    fields[2],
                    " ".join(tokens[:start]),
                    " ".join(tokens[end:]),
                )


def agreement(edits: list[Edit], progress: bool = False) -> dict:
    """Codes predicted for ``edits`` against their gold codes: overall, per code, per category, confusions, time."""
    for _, o, c, b, a in edits[:200]:  # warm-up: imports, the dictionary
        categorize(o, c, b, a)
    predicted = []
    elapsed = 0.0
    for _, o, c, b, a in tqdm(edits, disable=not progress, unit="edit", mininterval=1.0):
        t0 = time.perf_counter()
        predicted.append(categorize(o, c, b, a))
        elapsed += time.perf_counter() - t0
    per_code: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_category: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    confusions: Counter[tuple[str, str]] = Counter()
    for (gold, *_), pred in zip(edits, predicted, strict=True):
        for table, key in ((per_code, gold), (per_category, gold[2:])):
            table[key][1] += 1
        if gold == pred:
            per_code[gold][0] += 1
            per_category[gold[2:]][0] += 1
        else:
            confusions[gold, pred] += 1
    right = sum(v[0] for v in per_code.values())

    def table(rows: dict[str, list[int]]) -> dict[str, dict[str, float]]:
        return {
            k: {"count": n, "agreement": round(ok / n, 4)}
            for k, (ok, n) in sorted(rows.items(), key=lambda kv: -kv[1][1])
        }

    return {
        "edits": len(edits),
        "agreement": round(right / len(edits), 4) if edits else 0.0,
        "per_code": table(per_code),
        "per_category": table(per_category),
        "confusions": [{"gold": g, "predicted": p, "count": n} for (g, p), n in confusions.most_common(40)],
        "microseconds_per_edit": round(elapsed / max(len(edits), 1) * 1e6, 1),
        "predicted": predicted,
    }


def print_report(name: str, result: dict, out=sys.stdout) -> None:
    print(f"\n== {name}: {result['edits']} edits, agreement {result['agreement']:.2%}, "
          f"{result['microseconds_per_edit']} µs per edit", file=out)  # fmt: skip
    print(f"{'gold code':<16}{'edits':>7}{'agreement':>11}", file=out)
    for code, row in result["per_code"].items():
        flag = "  <60%" if row["count"] >= 100 and row["agreement"] < 0.6 else ""
        print(f"{code:<16}{row['count']:>7}{row['agreement']:>11.1%}{flag}", file=out)
    print(f"\n{'category':<16}{'edits':>7}{'agreement':>11}", file=out)
    for code, row in result["per_category"].items():
        print(f"{code:<16}{row['count']:>7}{row['agreement']:>11.1%}", file=out)
    print("\nbiggest confusions (gold -> predicted):", file=out)
    for row in result["confusions"][:25]:
        print(f"  {row['gold']:<16} -> {row['predicted']:<16}{row['count']:>6}", file=out)


def plot(results: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    codes = [c for c, row in next(iter(results.values()))["per_code"].items() if row["count"] >= 50]
    fig, ax = plt.subplots(figsize=(14, 5))
    width = 0.8 / len(results)
    for i, (name, result) in enumerate(results.items()):
        values = [result["per_code"].get(c, {"agreement": 0})["agreement"] for c in codes]
        ax.bar([x + i * width for x in range(len(codes))], values, width, label=f"{name} ({result['agreement']:.1%})")
    ax.axhline(0.6, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks([x + width * (len(results) - 1) / 2 for x in range(len(codes))], codes, rotation=70, fontsize=8)
    ax.set_ylabel("agreement with gold")
    ax.set_title("ERRANT code agreement per gold code (codes with at least 50 edits)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("m2", nargs="*", type=Path, help="M2 files (default: A and B of ../shared/data/train/m2)")
    parser.add_argument("--held-out", nargs="*", type=Path, default=None, help="M2 files reported apart (C)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--plot", type=Path, help="write a bar chart of agreement per code here (PNG)")
    parser.add_argument("--annotator", default="0")
    parser.add_argument("--limit", type=int, default=0, help="only the first N edits of each set")
    parser.add_argument("--errors", type=int, default=0, help="print N disagreements of the first set")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "train" / "m2"
    sets = {"A+B": args.m2 or [root / "A.train.gold.bea19.m2", root / "B.train.gold.bea19.m2"]}
    if args.held_out is not None:
        sets["C (held out)"] = args.held_out or [root / "C.train.gold.bea19.m2"]
    results = {}
    for name, paths in sets.items():
        edits = [e for p in paths for e in read_m2(p, args.annotator)]
        if args.limit:
            edits = edits[: args.limit]
        result = agreement(edits, progress=True)
        print_report(name + " (" + ", ".join(p.name for p in paths) + ")", result)
        if args.errors and not results:
            shown = 0
            for (gold, o, c, b, a), pred in zip(edits, result["predicted"], strict=True):
                if gold != pred:
                    print(
                        f"{gold:<14} {pred:<14} {o!r} -> {c!r} | {' '.join(b.split()[-3:])} _ {' '.join(a.split()[:3])}"
                    )
                    shown += 1
                    if shown >= args.errors:
                        break
        del result["predicted"]
        result["files"] = [p.name for p in paths]
        results[name] = result
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
