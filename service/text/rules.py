"""Our edit types as LanguageTool rules: one stable rule id, description, issue type and category each.

``RULES`` is the one table (the README's "Use it from your editor" shows it). Category ids are
LanguageTool's own (``TYPOS``, ``GRAMMAR``, ``PUNCTUATION``, ``CASING``, ``TYPOGRAPHY``, ``MISC``), so a
client's category settings, such as ``disabledCategories=TYPOS`` to turn spell checking off, mean here
what they mean to LanguageTool. Rule ids are ours (``GEC_*``): no LanguageTool rule does what a
sequence-to-sequence model does. ``issueType`` values are LanguageTool's (ITS 2.0 localization quality
issue types).

``contextForSureMatch`` is 0 (the span alone shows the error) for spelling, and -1 (unknown) for the
rest: the model decides from the whole sentence, so an edit near the end of a sentence still being
typed may go away once it is finished. LanguageTool derives ``ignoreForIncompleteSentence`` from it
(-1 or over 3 means true), and so do we.

``selected`` applies LanguageTool's rule and category switches in LanguageTool's order: a rule named
in ``enabledRules`` is on, else one named in ``disabledRules`` is off, else one whose category is in
``enabledCategories`` is on, else one whose category is in ``disabledCategories`` is off, else it is on;
with ``enabledOnly`` only the rules named or in a named category are on. Ids this table does not know
(LanguageTool's own rules, which editors often disable by name) are ignored, as LanguageTool ignores them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One edit type as a LanguageTool rule."""

    id: str
    description: str
    issue_type: str
    category_id: str
    category_name: str
    type_name: str  # the match's type.typeName: UnknownWord (spelling), Other
    short_message: str
    message: str  # the start of every match message; the edit itself is described after it
    context_for_sure_match: int

    @property
    def ignore_for_incomplete_sentence(self) -> bool:
        """LanguageTool's rule: true when the context needed is unknown (-1) or more than 3 tokens."""
        return self.context_for_sure_match == -1 or self.context_for_sure_match > 3


RULES: dict[str, Rule] = {  # by edit type (service.text.classify.CATEGORIES)
    "spelling": Rule(
        "GEC_SPELLING", "Possible spelling mistake", "misspelling", "TYPOS", "Possible Typo",
        "UnknownWord", "Spelling mistake", "Possible spelling mistake.", 0,
    ),
    "grammar": Rule(
        "GEC_GRAMMAR", "Grammar: articles, prepositions, pronouns, verb and noun forms", "grammar", "GRAMMAR",
        "Grammar", "Other", "Grammatical error", "Possible grammatical error.", -1,
    ),
    "word_order": Rule(
        "GEC_WORD_ORDER", "Word order", "grammar", "GRAMMAR", "Grammar",
        "Other", "Word order", "The words may be in the wrong order.", -1,
    ),
    "punctuation": Rule(
        "GEC_PUNCTUATION", "Punctuation", "typographical", "PUNCTUATION", "Punctuation",
        "Other", "Punctuation", "Possible punctuation error.", -1,
    ),
    "capitalisation": Rule(
        "GEC_CAPITALISATION", "Capitalisation", "typographical", "CASING", "Capitalization",
        "Other", "Capitalisation", "Possible capitalisation error.", -1,
    ),
    "whitespace": Rule(
        "GEC_WHITESPACE", "Whitespace", "whitespace", "TYPOGRAPHY", "Typography",
        "Other", "Whitespace", "Possible whitespace error.", -1,
    ),
    "word_choice": Rule(
        "GEC_WORD_CHOICE", "Word choice: other words inserted, removed or replaced", "uncategorized", "MISC",
        "Miscellaneous", "Other", "Word choice", "A different wording may be correct here.", -1,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class RuleSelection:
    """LanguageTool's ``enabledRules``, ``disabledRules``, ``enabledCategories``, ``disabledCategories`` and
    ``enabledOnly``."""

    enabled_rules: frozenset[str] = frozenset()
    disabled_rules: frozenset[str] = frozenset()
    enabled_categories: frozenset[str] = frozenset()
    disabled_categories: frozenset[str] = frozenset()
    enabled_only: bool = False

    def selected(self, rule: Rule) -> bool:
        """Whether ``rule`` is on (the order is in the module docstring)."""
        if rule.id in self.enabled_rules:
            return True
        if self.enabled_only:
            return rule.category_id in self.enabled_categories
        if rule.id in self.disabled_rules:
            return False
        if rule.category_id in self.enabled_categories:
            return True
        return rule.category_id not in self.disabled_categories
