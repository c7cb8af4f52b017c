"""The rule stage's precision: per rule kind (``service.text.grammar_rules.RULE_KINDS``), the edits it makes on FCE dev
and JFLEG dev and the share some reference makes, and the edits it makes on the clean professional set.

    python -m models.gec.rule_precision --data ../shared/data --clean runs/clean-set.tsv --train \\
        --json docs/benchmarks/rules.json --markdown [--wrong]

The rules read each sentence alone, as the service's stage does (no model: what the rules do by themselves). An edit
is right when applying it alone to the sentence gives word-level edits that some reference makes
(``models.gec.edit_labels``; JFLEG detokenised as ``gecserve eval`` reads it, ``models.gec.precision.dev_sentences``).
Every clean sentence is correct English, so each edit made there is a false alarm (bar the set's rare real typos).
An edit is also counted when it brings the sentence closer to some reference (``closer``: fewer tokens to change),
as a reference often rewrites more around a right edit than the edit itself ("hence" -> "Hence," where the rule
capitalised), and when some reference changes the words the rule read (``found``: the error is there, which the
reference corrected another way: "a organization member" -> "a staff member" where the rule wrote "an").

``--train`` adds the FCE and W&I+LOCNESS training pairs, where the rules were designed (``train``), and the NUCLE and
Lang-8 training pairs, which no rule was designed on (``heldout``): one partial reference each (Lang-8's correctors
rarely fix a capital), so their shares are lower bounds. A kind is kept in the stage only while ``dev_found_%``, the
share of its edits right, closer or found over FCE dev and JFLEG dev together, is at least ``BAR`` (``meets_bar``);
a kind too rare to make an edit there (a learner writes "If I will" once in some ten thousand sentences) only while
that share over all the training pairs (``pairs_found_%``) is, and it makes no edit on the clean set. Its edits carry
``BAR`` as their confidence.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from models.gec.clean_set import read_tsv
from models.gec.edit_labels import is_right, reference_edits
from models.gec.precision import DEV_SETS, dev_sentences
from service.engine.report import table, write_json
from service.text.edits import Edit, apply_edits, extract_edits, tokenize
from service.text.grammar_rules import RULE_KINDS, RuleEdit, find_rule_edits

BAR = 0.9  # the share of its dev edits a kind needs right, closer or found (``dev_found_%``) to be kept


TRAIN_SETS = ("fce", "wi_locness")  # the learner training pairs the rules were designed on (``--train``)
HELD_OUT_SETS = ("nucle", "lang8")  # the learner training pairs no rule was designed on: judged with the dev sets
PAIRS = ("train", "heldout")  # a kind too rare for the dev sets is measured on these together


def train_pairs(data: Path, names: Sequence[str] = TRAIN_SETS) -> list[tuple[str, str]]:
    """The learner training pairs of the corpora ``names`` (natural text)."""
    pairs: list[tuple[str, str]] = []
    for name in names:
        sources = (data / "train" / f"{name}.train.detok.src").read_text(encoding="utf-8").splitlines()
        targets = (data / "train" / f"{name}.train.detok.tgt").read_text(encoding="utf-8").splitlines()
        pairs += zip(sources, targets, strict=True)
    return pairs


def right(text: str, edit: RuleEdit, references: Sequence[str]) -> bool:
    """Whether ``edit`` of ``text``, applied alone, makes only edits some reference makes."""
    fixed = apply_edits(text, [Edit(edit.start, edit.end, edit.original, edit.replacement)])
    gold = reference_edits(text, references)
    made = extract_edits(text, fixed)
    return bool(made) and all(is_right(e, gold) for e in made)


def closer(text: str, edit: RuleEdit, references: Sequence[str]) -> bool:
    """Whether ``edit`` of ``text``, applied alone, brings it closer to some reference: fewer tokens to change
    (words and punctuation, blanks aside). Counts an edit right whose reference changed more around it ("hence" ->
    "Hence" where the reference wrote "Hence,"), which ``right`` cannot match."""
    fixed = apply_edits(text, [Edit(edit.start, edit.end, edit.original, edit.replacement)])
    before, after = _words_of(text), _words_of(fixed)
    return any(_distance(after, _words_of(r)) < _distance(before, _words_of(r)) for r in references)


def found(text: str, edit: RuleEdit, references: Sequence[str]) -> bool:
    """Whether some reference changes the words the rule read (``edit.context``): the error is there, though the
    reference corrects it another way ("a organization member" -> "a staff member", where the rule wrote "an")."""
    start, end = edit.context
    return any(
        e.start < end and e.end > start if e.end > e.start else start <= e.start <= end
        for reference in references
        for e in extract_edits(text, reference)
    )


def _words_of(text: str) -> list[str]:
    return [token for token in tokenize(text) if not token.isspace()]


def _distance(a: Sequence[str], b: Sequence[str]) -> int:
    """The token edit distance (insertions, deletions, substitutions) of ``a`` and ``b``."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def measure(
    dev: Iterable[tuple[str, str, Sequence[str]]], clean: Iterable[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per kind: the edits made and right on each dev set (``(corpus, text, references)``), and on ``clean``
    sentences; and every wrong dev edit and clean edit, to read."""
    made, hits, misses = Counter[tuple[str, str]](), Counter[tuple[str, str]](), []
    near, seen = Counter[tuple[str, str]](), Counter[tuple[str, str]]()
    for corpus, text, references in dev:
        for edit in find_rule_edits(text):
            ok = right(text, edit, references)
            made[edit.kind, corpus] += 1
            hits[edit.kind, corpus] += ok
            nearer = ok or closer(text, edit, references)
            near[edit.kind, corpus] += nearer
            seen[edit.kind, corpus] += nearer or found(text, edit, references)
            if not ok:
                misses.append({"corpus": corpus, "kind": edit.kind, "text": text, "edit": edit.original,
                               "replacement": edit.replacement})  # fmt: skip
    for text in clean:
        for edit in find_rule_edits(text):
            made[edit.kind, "clean"] += 1
            misses.append({"corpus": "clean", "kind": edit.kind, "text": text, "edit": edit.original,
                           "replacement": edit.replacement})  # fmt: skip
    rows = []
    for kind in RULE_KINDS:
        row: dict[str, Any] = {"kind": kind, "confidence": RULE_KINDS[kind].confidence}
        for corpus in (*DEV_SETS, "train", "heldout"):
            n, k = made[kind, corpus], hits[kind, corpus]
            row[f"{corpus}_edits"], row[f"{corpus}_right"] = n, k
            row[f"{corpus}_precision_%"] = round(100 * k / n, 1) if n else None
            row[f"{corpus}_closer_%"] = round(100 * near[kind, corpus] / n, 1) if n else None
            row[f"{corpus}_found_%"] = round(100 * seen[kind, corpus] / n, 1) if n else None
        both = sum(made[kind, c] for c in DEV_SETS)
        row["dev_precision_%"] = round(100 * sum(hits[kind, c] for c in DEV_SETS) / both, 1) if both else None
        row["dev_closer_%"] = round(100 * sum(near[kind, c] for c in DEV_SETS) / both, 1) if both else None
        row["dev_found_%"] = round(100 * sum(seen[kind, c] for c in DEV_SETS) / both, 1) if both else None
        pairs = sum(made[kind, c] for c in PAIRS)
        row["pairs_found_%"] = round(100 * sum(seen[kind, c] for c in PAIRS) / pairs, 1) if pairs else None
        row["clean_edits"] = made[kind, "clean"]
        rows.append(row)
    return rows, misses


def meets_bar(row: dict[str, Any], bar: float = BAR) -> bool:
    """Whether a kind's measured ``row`` keeps it in the stage: at least ``bar`` of its dev edits right, closer or
    found; where it made none there, of its edits on all the training pairs, and none on the clean set."""
    if row["dev_found_%"] is not None:
        return bool(row["dev_found_%"] >= 100 * bar)
    found = row.get("pairs_found_%")
    return found is not None and found >= 100 * bar and row["clean_edits"] == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the GEC data folder (../shared/data)")
    parser.add_argument("--clean", type=Path, required=True, help="the clean set (python -m models.gec.clean_set)")
    parser.add_argument("--train", action="store_true", help="also measure on the learner training pairs")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--markdown", action="store_true", help="also print the docs' table (docs/quality.md)")
    parser.add_argument("--wrong", action="store_true", help="also print each edit no reference makes, to read")
    args = parser.parse_args(argv)
    dev = [(s.corpus, s.text, s.references) for s in dev_sentences(args.data)]
    if args.train:
        dev += [("train", text, (target,)) for text, target in train_pairs(args.data)]
        dev += [("heldout", text, (target,)) for text, target in train_pairs(args.data, HELD_OUT_SETS)]
    clean = [sentence for _, _, sentence in read_tsv(args.clean)]
    rows, misses = measure(dev, clean)
    columns = ["kind", "confidence"]
    figures = ("edits", "right", "precision_%", "closer_%", "found_%")
    columns += [f"{c}_{f}" for c in (*DEV_SETS, "train", "heldout") for f in figures]
    columns += ["dev_precision_%", "dev_closer_%", "dev_found_%", "pairs_found_%", "clean_edits"]
    print(table(rows, columns))
    if args.markdown:
        print(markdown(rows))
    if args.wrong:
        for miss in misses:
            print(f"{miss['corpus']}\t{miss['kind']}\t{miss['edit']!r} -> {miss['replacement']!r}\t{miss['text']}")
    if args.json:  # figures only: the data's sentences stay out of the repository
        write_json(args.json, {"bar": BAR, "clean_sentences": len(clean), "kinds": rows})
    return 0


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The docs' table of the kinds: what each corrects, its confidence, and per dev set its edits, those matching a
    reference's and the shares closer and found; the same over both; for the design and the held-out training pairs;
    the clean set's edits."""
    lines = [
        "| Kind | Corrects | Confidence | FCE dev: edits, exact, closer, found"
        " | JFLEG dev: edits, exact, closer, found | Both: closer, found | Design pairs: edits, closer, found"
        " | Held-out pairs: edits, closer, found | Clean set: edits |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        kind = RULE_KINDS[row["kind"]]
        dev = [
            f"{row[f'{c}_edits']}, {row[f'{c}_right']}, {_share(row[f'{c}_closer_%'])}, {_share(row[f'{c}_found_%'])}"
            for c in DEV_SETS
        ]
        train, held_out = (
            f"{row[f'{c}_edits']}, {_share(row[f'{c}_closer_%'])}, {_share(row[f'{c}_found_%'])}"
            if row.get(f"{c}_edits")
            else "-"
            for c in PAIRS
        )
        lines.append(
            f"| `{kind.name}` | {kind.description} | {kind.confidence} | {dev[0]} | {dev[1]} |"
            f" {_share(row['dev_closer_%'])}, {_share(row['dev_found_%'])} | {train} | {held_out} |"
            f" {row['clean_edits']} |"
        )
    return "\n".join(lines)


def _share(percent: float | None) -> str:
    return "-" if percent is None else f"{percent:.0f}%"


if __name__ == "__main__":
    sys.exit(main())
