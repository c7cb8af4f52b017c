"""The precision report's instruments, without a model: labelling edits against references (offsets on the text the
service reads, JFLEG's tokenised lines detokenised), binning by confidence, the clean set's sentence filters, and
that the clean set is drawn deterministically."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from models.gec.clean_set import (
    Source,
    build,
    governmental,
    legal,
    mono,
    package_descriptions,
    prose_paragraphs,
    read_tsv,
    refusal,
    write_tsv,
)
from models.gec.edit_labels import calibration_error, confidence_bin, is_right, reference_edits, reliability
from models.gec.precision import (
    category_rows,
    clean_changes,
    clean_figures,
    dev_figures,
    dev_sentences,
    label_edits,
    plot,
    summary,
)
from service.text.edits import Edit, extract_edits

GOOD = "The committee approved the budget after a long debate about the new library."


def _data(root: Path, mono_lines: dict[str, list[str]] | None = None) -> Path:
    """A data folder with tiny dev sets (FCE: one sentence needing an edit, one not; JFLEG: tokenised) and mono
    files."""
    dev = root / "dev"
    dev.mkdir(parents=True)
    fce_src = ["He go to school every day.", "I like it very much."]
    fce_tgt = ["He goes to school every day.", "I like it very much."]
    for name, lines in {"fce.dev.detok.src": fce_src, "fce.dev.detok.tgt": fce_tgt}.items():
        (dev / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        (dev / name.replace(".detok", "")).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (dev / "jfleg.dev.src").write_text("I do n't like apple .\n", encoding="utf-8")
    refs = ["I do n't like apples .", "I do n't like apples .", "I do n't like the apple .", "I dislike apples ."]
    for k, ref in enumerate(refs):
        (dev / f"jfleg.dev.ref{k}").write_text(ref + "\n", encoding="utf-8")
    (root / "mono").mkdir()
    for name, lines in (mono_lines or {}).items():
        with gzip.open(root / "mono" / f"en.{name}.txt.gz", "wt", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    return root


# labelling


def test_an_edit_some_reference_makes_is_right_and_one_none_makes_is_wrong() -> None:
    source = "He go to school every day."
    gold = reference_edits(source, ["He goes to school every day.", "He went to school every day."])
    assert is_right(Edit(3, 5, "go", "goes"), gold)
    assert is_right(Edit(3, 5, "go", "went"), gold)  # the second reference's
    assert not is_right(Edit(3, 5, "go", "going"), gold)
    assert not is_right(Edit(9, 9, "", "the "), gold)
    assert not is_right(Edit(4, 5, "o", "goes"), gold)  # the same replacement on another span


def test_jfleg_edits_are_labelled_on_the_detokenised_text_the_service_reads(tmp_path: Path) -> None:
    fce_needs_edit, fce_clean, jfleg = dev_sentences(_data(tmp_path))
    assert (fce_needs_edit.needs_no_edit, fce_clean.needs_no_edit, jfleg.needs_no_edit) == (False, True, False)
    assert jfleg.text == "I don't like apple."
    assert jfleg.references[0] == "I don't like apples."
    gold = reference_edits(jfleg.text, jfleg.references)
    [made] = extract_edits(jfleg.text, "I don't like apples.")
    assert made == Edit(13, 18, "apple", "apples") and is_right(made, gold)
    assert not is_right(Edit(14, 19, "apple", "apples"), gold)  # the tokenised line's offsets
    assert is_right(Edit(13, 13, "", "the "), gold)  # the third reference's


def _typed(edit: Edit, confidence: float, category: str = "R:NOUN:NUM") -> SimpleNamespace:
    evidence = SimpleNamespace(lexical="morphology")
    return SimpleNamespace(**vars(edit), confidence=confidence, category=category, evidence=evidence)


def test_kept_and_held_edits_are_both_labelled(tmp_path: Path) -> None:
    sentences = dev_sentences(_data(tmp_path))
    right = _typed(Edit(3, 5, "go", "goes"), 0.9, "R:VERB:SVA")
    wrong = _typed(Edit(15, 15, "", "the "), 0.3, "M:DET")
    corrections = [
        SimpleNamespace(edits=[right], held=[wrong]),
        SimpleNamespace(edits=[], held=[_typed(Edit(0, 1, "I", "We"), 0.1, "R:PRON")]),
        SimpleNamespace(edits=[_typed(Edit(13, 18, "apple", "apples"), 0.6)], held=[]),
    ]
    labelled = label_edits(sentences, corrections)  # type: ignore[arg-type]
    got = [(e.corpus, e.category, e.kept, e.right, e.confidence) for e in labelled]
    assert got == [
        ("fce", "R:VERB:SVA", True, True, 0.9),
        ("fce", "M:DET", False, False, 0.3),
        ("fce", "R:PRON", False, False, 0.1),
        ("jfleg", "R:NOUN:NUM", True, True, 0.6),
    ]
    assert {e.lexical for e in labelled} == {"morphology"}


def test_the_report_tables_and_plot_come_from_labelled_edits(tmp_path: Path) -> None:
    sentences = dev_sentences(_data(tmp_path))
    fixed = SimpleNamespace(text="He goes to school every day.", edits=[_typed(Edit(3, 5, "go", "goes"), 0.9)], held=[])
    corrections = [fixed, SimpleNamespace(text="I like it very much.", edits=[], held=[])]
    corrections.append(SimpleNamespace(text=sentences[2].text, edits=[], held=[_typed(Edit(0, 1, "I", "We"), 0.2)]))
    edits = label_edits(sentences, corrections)  # type: ignore[arg-type]
    clean = [("legal", "bbc", GOOD)]
    at = GOOD.index("long")
    damaged = SimpleNamespace(
        text=GOOD.replace("long", "longer"), edits=[_typed(Edit(at, at + 4, "long", "longer"), 0.6)]
    )
    bins = reliability((e.confidence, e.right) for e in edits)
    dev = dev_figures(sentences, corrections, edits)  # type: ignore[arg-type]
    assert dev["fce"] | {"changed_%": 50.0, "needs_no_edit": 1, "no_edit_changed_%": 0.0, "kept_right": 1} == dev["fce"]
    assert dev["jfleg"]["held"] == 1 and dev["jfleg"]["held_right"] == 0
    figures = {
        "levels": {"default": 0.5},
        "clean": {"default": clean_figures(clean, [damaged])},  # type: ignore[list-item]
        "dev": {"default": dev},
        "reliability": {"level": "default", "bins": bins, "calibration_error": calibration_error(bins)},
        "lexical_reliability": {"morphology": bins},
        "categories": category_rows({"default": edits}, {"default": Counter({"R:ADJ": 1})}),
    }
    assert figures["clean"]["default"]["legal"]["changed_%"] == 100.0
    assert clean_changes(clean, [damaged])[0]["corrected"] == damaged.text  # type: ignore[list-item]
    assert [row["category"] for row in figures["categories"]] == ["R:NOUN:NUM", "R:ADJ"]
    text = summary(figures)
    assert "Clean set: share of sentences changed" in text and "R:ADJ" in text
    plot(bins, figures["levels"], tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 0


# binning


@pytest.mark.parametrize(
    ("confidence", "expected"), [(0.0, 0), (0.05, 0), (0.1, 1), (0.5, 5), (0.99, 9), (1.0, 9), (-0.1, 0), (1.2, 9)]
)
def test_confidence_bins_are_ten_equal_bins_over_0_to_1(confidence: float, expected: int) -> None:
    assert confidence_bin(confidence) == expected


def test_reliability_gives_each_bin_its_edits_and_share_right() -> None:
    rows = reliability([(0.05, False), (0.15, True), (0.15, False), (0.95, True), (1.0, True), (0.92, False)])
    assert len(rows) == 10
    assert (rows[0]["low"], rows[0]["high"]) == (0.0, 0.1)
    assert [row["edits"] for row in rows] == [1, 2, 0, 0, 0, 0, 0, 0, 0, 3]
    assert [row["right"] for row in rows] == [0, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert rows[1]["share_right"] == 0.5 and rows[2]["share_right"] is None
    assert rows[9]["mean_confidence"] == pytest.approx((0.95 + 1.0 + 0.92) / 3)
    gaps = 1 * 0.05 + 2 * abs(0.15 - 0.5) + 3 * abs((0.95 + 1.0 + 0.92) / 3 - 2 / 3)
    assert calibration_error(rows) == pytest.approx(gaps / 6)
    assert calibration_error(reliability([])) is None


# the clean set's filters


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("See https://example.com/docs for the full list of options and flags.", "url"),
        ("Write to the maintainers at help@example.org if the build fails again.", "url"),
        ("Call the parse_args function before you read any of the options.", "code or markup"),
        ("The loader returns config.get_value when the key is missing from it.", "code or markup"),
        ("Set timeout=30 in the settings file before you start the service.", "code or markup"),
        ("This is **very** important for every user of the library today.", "code or markup"),
        ("Read the [installation guide](docs) before you install the package.", "code or markup"),
        ("The results (shown in the second table are better than expected.", "brackets"),
        ('He said "it is done and then left the room without a word.', "brackets"),
        ("The court ruled against him.", "length"),
        ("The court ruled against him after a long trial in the spring", "end"),
        ("the court ruled against him after a long trial in the spring.", "start"),
        ("Installation And Configuration Of The Python Package For Linux Users.", "heading"),
        ("Permission to use this software is granted under the MIT license terms.", "licence"),
        ("The court ruled against him, e.g. on the first count of the charge.", "abbreviation"),
    ],
)
def test_a_sentence_that_is_not_clean_prose_is_refused(sentence: str, reason: str) -> None:
    assert refusal(sentence) == reason


@pytest.mark.parametrize(
    "sentence",
    [
        GOOD,
        "Did the court really rule against him after such a long and costly trial?",
        "In 2004, the company's profits rose by 12% to $5.2 billion (a record).",
    ],
)
def test_a_well_formed_prose_sentence_is_kept(sentence: str) -> None:
    assert refusal(sentence) is None


def test_only_prose_paragraphs_of_a_readme_are_read() -> None:
    readme = (
        "# Title\n\nThis library parses the files quickly.\nIt is small.\n\n"
        "```python\nx = 1\n\ny = 2\n```\n\n- a list item that is a sentence.\n\n    indented code block here\n\n"
        "Usage::\n\nThe last paragraph is prose too."
    )
    assert list(prose_paragraphs(readme)) == [
        "This library parses the files quickly. It is small.",
        "The last paragraph is prose too.",
    ]


def test_register_filters_need_two_distinct_terms() -> None:
    assert legal("The appeals court ruled that the statute was unconstitutional.")
    assert not legal("The settlements grew along the river, and new settlement followed.")  # one term, twice
    assert governmental("The federal budget for the agency was cut again this year.")
    assert not governmental('"The federal budget," he said, "was cut again."')  # dialogue


def test_installed_packages_give_prose_of_third_party_distributions_only(tmp_path: Path) -> None:
    found = list(package_descriptions(tmp_path))
    documents = {document for document, _ in found}
    assert len(documents) > 20 and "gecserve" not in documents
    assert sum(refusal(sentence) is None for _, sentence in found) > 200


# the clean set is deterministic


def test_the_set_is_the_same_for_the_same_seed_and_leaves_out_dev_sentences(tmp_path: Path) -> None:
    news = [f"The council approved the plan for district number {w} after a long debate." for w in "ABCDEFGHIJ"]
    news += ["I like it very much and I will tell all my friends about it.", "He went to school every day."]
    news += [news[0], "Short line.", "See https://example.com for the full story of the debate today."]
    data = _data(tmp_path / "data", {"bbc": news})
    sources = (Source("business/news", "bbc", 6, mono("bbc")),)
    first, again = build(data, 7, sources), build(data, 7, sources)
    other = build(data, 8, sources)
    assert first == again and len(first) == 6
    assert {sentence for _, _, sentence in first} <= set(news[:10])
    assert first != other
    write_tsv(tmp_path / "set.tsv", first)
    assert read_tsv(tmp_path / "set.tsv") == first
    dev_like = _data(tmp_path / "dev-like", {"bbc": [*news[:3], "He goes to school every day, as he always did."]})
    fce_line = "He goes to school every day, as he always did."
    (dev_like / "dev" / "fce.dev.detok.tgt").write_text(f"{fce_line}\nI like it very much.\n", encoding="utf-8")
    assert fce_line not in {s for _, _, s in build(dev_like, 7, sources)}
