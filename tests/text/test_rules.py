"""The rule table: one stable LanguageTool rule per ERRANT category, and LanguageTool's switches over it."""

from __future__ import annotations

from service.text.categories import CATEGORIES
from service.text.dialects import DIALECT_CODE
from service.text.rules import RULES, RuleSelection, rule_of

GRAMMAR, SPELLING = RULES["VERB:SVA"], RULES["SPELL"]


def test_every_category_has_one_rule_with_its_own_id() -> None:
    assert set(RULES) == {*CATEGORIES, DIALECT_CODE.partition(":")[2]}  # and the dialect stage's
    assert len({rule.id for rule in RULES.values()}) == len(RULES)
    assert all(rule.id.startswith("GEC_") for rule in RULES.values())
    assert rule_of("M:VERB:SVA") is rule_of("R:VERB:SVA") is GRAMMAR and GRAMMAR.id == "GEC_VERB_SVA"
    assert SPELLING.category_id == "TYPOS" and RULES["PUNCT"].category_id == "PUNCTUATION"


def test_languagetools_order_of_switches() -> None:
    assert RuleSelection().selected(GRAMMAR)
    assert not RuleSelection(disabled_categories=frozenset({"GRAMMAR"})).selected(GRAMMAR)
    both = RuleSelection(enabled_categories=frozenset({"GRAMMAR"}), disabled_categories=frozenset({"GRAMMAR"}))
    assert both.selected(GRAMMAR)
    named = RuleSelection(enabled_rules=frozenset({"GEC_VERB_SVA"}), disabled_rules=frozenset({"GEC_VERB_SVA"}))
    assert named.selected(GRAMMAR)
    only = RuleSelection(enabled_categories=frozenset({"TYPOS"}), enabled_only=True)
    assert only.selected(SPELLING) and not only.selected(GRAMMAR)
    assert RuleSelection(disabled_rules=frozenset({"MORFOLOGIK_RULE_EN_US"})).selected(SPELLING)
