"""The rule stage's precision report and the learner-error set, without a model: an edit is right when a reference
makes it, closer when it brings the sentence nearer one, the figures are counted per kind and corpus, and the docs'
table comes from them."""

from __future__ import annotations

from models.gec.learner_set import read_set
from models.gec.rule_precision import closer, found, markdown, measure, meets_bar, right
from service.text.grammar_rules import RULE_KINDS, find_rule_edits


def _only(text: str):
    (edit,) = find_rule_edits(text)
    return edit


def test_an_edit_a_reference_makes_is_right_and_closer() -> None:
    text = "She can sings well."
    edit = _only(text)
    assert right(text, edit, ["She can sing well."]) and closer(text, edit, ["She can sing well."])
    assert not right(text, edit, ["She sings well."]) and not closer(text, edit, ["She sings well."])


def test_an_edit_inside_a_larger_rewrite_is_closer_but_not_exact() -> None:
    text = "hence ideas and concepts are reliable."
    edit = _only(text)
    reference = "Hence, ideas and concepts are reliable."
    assert not right(text, edit, [reference]) and closer(text, edit, [reference])


def test_an_error_the_reference_corrects_another_way_is_found_though_not_closer() -> None:
    text = "My duties like a organization member were various."
    edit = _only(text)
    rewritten = "My duties as a staff member were various."
    assert edit.kind == "a_an" and not closer(text, edit, [rewritten]) and found(text, edit, [rewritten])
    assert not found(text, edit, [text])  # a reference that keeps what the rule read: no error found there


def test_measure_counts_per_kind_and_corpus_and_every_clean_edit_is_wrong() -> None:
    dev = [
        ("fce", "She can sings well.", ["She can sing well."]),
        ("jfleg", "We have two new chair in the room.", ["We have two new chairs in the room."]),
        ("jfleg", "We bought some furnitures.", ["We bought furniture."]),
    ]
    rows, misses = measure(dev, ["I have many book."])
    by = {row["kind"]: row for row in rows}
    assert list(by) == list(RULE_KINDS)
    assert (by["bare_verb"]["fce_edits"], by["bare_verb"]["fce_right"]) == (1, 1)
    assert (by["plural"]["jfleg_edits"], by["plural"]["dev_closer_%"], by["plural"]["clean_edits"]) == (1, 100.0, 1)
    assert (by["uncountable"]["jfleg_right"], by["uncountable"]["jfleg_closer_%"]) == (0, 100.0)
    assert [m["corpus"] for m in misses] == ["jfleg", "clean"]
    table = markdown(rows)
    assert "| `plural` |" in table and "| 1, 1, 100%, 100% |" in table


def test_the_learner_set_has_a_correction_for_each_sentence() -> None:
    rows = read_set()
    assert len(rows) >= 40 and all(source != corrected for _, source, corrected in rows)
    assert {kind for kind, _, _ in rows} >= set(RULE_KINDS)


def test_a_kind_is_kept_by_its_dev_edits_or_where_it_made_none_by_the_training_pairs_and_the_clean_set() -> None:
    kept_on_dev = {"dev_found_%": 95.0, "pairs_found_%": 50.0, "clean_edits": 3}
    assert meets_bar(kept_on_dev) and not meets_bar(kept_on_dev | {"dev_found_%": 80.0})
    rare = {"dev_found_%": None, "pairs_found_%": 100.0, "clean_edits": 0}
    assert (
        meets_bar(rare) and not meets_bar(rare | {"clean_edits": 1}) and not meets_bar(rare | {"pairs_found_%": 80.0})
    )
    assert not meets_bar(rare | {"pairs_found_%": None})  # never measured anywhere: not kept
