"""Our edit categories as LanguageTool rules: one stable rule id, description, issue type and category each.

``RULES`` is the one table (the README's "Use it from your editor" shows it): a rule per ERRANT category
(``service.text.categories``; ``GEC_VERB_SVA`` for ``R:VERB:SVA``, ``M:VERB:SVA`` and ``U:VERB:SVA``) and one for the
dialect stage's spelling variants (``GEC_SPELL_DIALECT``, ``service.text.dialects``), so a
writer can turn one kind of edit off by its rule id (``disabledRules=GEC_DET``). Category ids are
LanguageTool's own (``TYPOS``, ``GRAMMAR``, ``PUNCTUATION``, ``CASING``, ``MISC``), so a client's category
settings, such as ``disabledCategories=TYPOS`` to turn spell checking off, mean here what they mean to
LanguageTool. Rule ids are ours (``GEC_*``): no LanguageTool rule does what a sequence-to-sequence model
does. A match's message is the edit's own (``service.text.messages``). ``issueType`` values are
LanguageTool's (ITS 2.0 localization quality issue types).

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
    context_for_sure_match: int

    @property
    def ignore_for_incomplete_sentence(self) -> bool:
        """LanguageTool's rule: true when the context needed is unknown (-1) or more than 3 tokens."""
        return self.context_for_sure_match == -1 or self.context_for_sure_match > 3


# ERRANT's categories (``service.text.categories.CATEGORIES``): description, short message, LanguageTool category
_CATEGORY_RULES = {
    "ADJ": ("Adjective", "Adjective", "GRAMMAR"),
    "ADJ:FORM": ("Adjective form: comparative and superlative", "Adjective form", "GRAMMAR"),
    "ADV": ("Adverb", "Adverb", "GRAMMAR"),
    "CONJ": ("Conjunction", "Conjunction", "GRAMMAR"),
    "CONTR": ("Contraction", "Contraction", "GRAMMAR"),
    "DET": ("Determiner: articles and other determiners", "Article or determiner", "GRAMMAR"),
    "MORPH": ("Word form: the same word as another part of speech", "Word form", "GRAMMAR"),
    "NOUN": ("Noun", "Noun", "GRAMMAR"),
    "NOUN:INFL": ("Noun inflection: forms that do not exist", "Noun form", "GRAMMAR"),
    "NOUN:NUM": ("Noun number: singular and plural", "Singular or plural", "GRAMMAR"),
    "NOUN:POSS": ("Possessive noun", "Possessive", "GRAMMAR"),
    "ORTH": ("Capitalisation and spacing", "Capitalisation or spacing", "CASING"),
    "OTHER": ("Other word choice", "Word choice", "MISC"),
    "PART": ("Particle", "Particle", "GRAMMAR"),
    "PREP": ("Preposition", "Preposition", "GRAMMAR"),
    "PRON": ("Pronoun", "Pronoun", "GRAMMAR"),
    "PUNCT": ("Punctuation", "Punctuation", "PUNCTUATION"),
    "SPELL": ("Possible spelling mistake", "Spelling mistake", "TYPOS"),
    "SPELL:DIALECT": ("Spelling of another English dialect", "Dialect spelling", "TYPOS"),
    "VERB": ("Verb", "Verb", "GRAMMAR"),
    "VERB:FORM": ("Verb form: infinitive, gerund, participle", "Verb form", "GRAMMAR"),
    "VERB:INFL": ("Verb inflection: forms that do not exist", "Verb form", "GRAMMAR"),
    "VERB:SVA": ("Subject-verb agreement", "Agreement", "GRAMMAR"),
    "VERB:TENSE": ("Verb tense", "Tense", "GRAMMAR"),
    "WO": ("Word order", "Word order", "GRAMMAR"),
}
_LANGUAGETOOL_CATEGORIES = {
    "TYPOS": "Possible Typo",
    "GRAMMAR": "Grammar",
    "PUNCTUATION": "Punctuation",
    "CASING": "Capitalization",
    "MISC": "Miscellaneous",
}
_ISSUE_TYPES = {
    "TYPOS": "misspelling",
    "PUNCTUATION": "typographical",
    "CASING": "typographical",
    "MISC": "uncategorized",
}

RULES: dict[str, Rule] = {  # by ERRANT category, the operation left out
    category: Rule(
        id="GEC_" + category.replace(":", "_"),
        description=description,
        issue_type=_ISSUE_TYPES.get(group, "grammar"),
        category_id=group,
        category_name=_LANGUAGETOOL_CATEGORIES[group],
        type_name="UnknownWord" if category == "SPELL" else "Other",
        short_message=short,
        context_for_sure_match=0 if category.startswith("SPELL") else -1,
    )
    for category, (description, short, group) in _CATEGORY_RULES.items()
}


def rule_of(code: str) -> Rule:
    """The rule of an edit's ERRANT code (``R:VERB:SVA``: the operation is not part of the rule)."""
    return RULES[code.partition(":")[2]]


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
