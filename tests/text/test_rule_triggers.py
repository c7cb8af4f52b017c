"""The rule stage's triggers: ``find_rule_edits`` runs at each token only the rules whose trigger admits its word,
and finds what running every rule at every token finds, the same edits in the same order (the first found wins on
overlap): on the learner sentences (``models/gec/learner_errors.tsv`` and the rule tests' own) and on sentences made
of every word of the rule module's word sets and common words; and wherever a rule yields in an example, no word of
those sets put in that word's place makes it yield where its trigger would not run it."""

from __future__ import annotations

import csv
from itertools import product
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.text import grammar_rules
from service.text.grammar_rules import (
    _FIRST_TOKEN,
    _RULES,
    Rule,
    RuleEdit,
    Trigger,
    _found,
    _Token,
    _tokens,
    find_rule_edits,
)
from tests.text.test_grammar_rules import CORRECT, FIXES

LEARNER_ERRORS = Path(__file__).resolve().parents[2] / "models" / "gec" / "learner_errors.tsv"
EVERY_RULE = tuple(rule for rule, _ in _RULES)
COMMON = (
    *("goes", "went", "go", "chair", "chairs", "information", "apple", "umbrella", "hour", "user", "taller", "tallest"),
    *("cheapest", "cat", "book", "people", "new", "big", "good", "welcome", "going", "house", "like", "likes", "work"),
    *("see", "sing", "sings", "rain", "saw", "left", "yesterday", "last", "week", "days", "ago", "lot", "lots"),
    *("forward", "hearing", "why", "what", "me", "us", "them", "not", "be", "agreed", "but", "so", "when", "then"),
    *(".", ",", "?", "!", ";", "-", "'", "3", "It's", "They’re", "I’m", "DON'T", "Their", "There", "If", "More"),
)
VOCABULARY = sorted(
    {
        word
        for value in vars(grammar_rules).values()
        if isinstance(value, frozenset | dict) and all(isinstance(word, str) for word in value)
        for word in value
    }
    | set(COMMON)
)  # every word of the rule module's word sets, whichever a trigger is built from, and common words
WORD = st.sampled_from(VOCABULARY).flatmap(lambda word: st.sampled_from([word, word.capitalize(), word.upper()]))


def _learner_sentences() -> list[str]:
    with LEARNER_ERRORS.open(encoding="utf-8") as f:
        return [row["source"] for row in csv.DictReader(f, delimiter="\t")]


EXAMPLES = [*_learner_sentences(), *(source for source, _, _ in FIXES), *CORRECT]


@st.composite
def sentences(draw: st.DrawFn) -> str:
    """Words of the vocabulary, or an example with up to three of them put in or put for its own words."""
    examples = st.sampled_from(EXAMPLES).map(str.split)
    words = draw(st.one_of(st.lists(WORD, min_size=1, max_size=14), examples))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(words)))
        words[at : at + draw(st.integers(0, 1))] = [draw(WORD)]
    return "".join(word + draw(st.sampled_from([" ", " ", " ", "  ", ""])) for word in words).strip()


def _every_rule_at_every_token(text: str) -> list[RuleEdit]:
    tokens = _tokens(text)
    return [edit for i in range(len(tokens)) for rule in EVERY_RULE for edit in rule(text, tokens, i)]


def _assert_same_as_every_rule_everywhere(text: str) -> None:
    assert _found(text, _tokens(text)) == _every_rule_at_every_token(text)
    with patch.object(grammar_rules, "_rules_at", lambda tokens, i: EVERY_RULE):
        reference = [find_rule_edits(text, starts) for starts in (True, False)]
    assert [find_rule_edits(text, starts) for starts in (True, False)] == reference


@pytest.mark.parametrize("text", EXAMPLES)
def test_the_triggered_rules_find_what_every_rule_everywhere_finds_in_learner_sentences(text: str) -> None:
    _assert_same_as_every_rule_everywhere(text)


@settings(max_examples=500, deadline=None)
@given(sentences())
def test_the_triggered_rules_find_what_every_rule_everywhere_finds(text: str) -> None:
    _assert_same_as_every_rule_everywhere(text)


def _yields_at(rule: Rule, text: str, i: int) -> bool:
    tokens = _tokens(text)
    return i < len(tokens) and any(True for _ in rule(text, tokens, i))


def _admits(trigger: Trigger, text: str, i: int) -> bool:
    return i == 0 if trigger == _FIRST_TOKEN else _tokens(text)[i].lower in trigger


def _put(text: str, tokens: list[_Token], i: int, word: str) -> str:
    """``text`` with ``word`` for ``tokens[i]`` and for the same word repeated right after it ("the the": "I I")."""
    run = [tokens[i]]
    while len(run) + i < len(tokens) and tokens[len(run) + i].lower == tokens[i].lower:
        run.append(tokens[len(run) + i])
    for token in reversed(run):
        text = text[: token.start] + word + text[token.end :]
    return text


def test_a_rule_yields_only_at_a_word_its_trigger_admits() -> None:
    """At each token where a rule yields in an example, every word of the vocabulary in its place: wherever the rule
    still yields, its trigger admits the word (so no word a rule tests is missing from its trigger)."""
    for text in EXAMPLES:
        tokens = _tokens(text)
        for (rule, trigger), i in product(_RULES, range(len(tokens))):
            if not _yields_at(rule, text, i):
                continue
            for word in VOCABULARY:
                variant = _put(text, tokens, i, word)
                assert not _yields_at(rule, variant, i) or _admits(trigger, variant, i), (rule.__name__, variant)
