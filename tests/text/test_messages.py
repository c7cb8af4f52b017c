"""What an edit tells the writer, by category: the words changed and, where the category says why, the reason; and
every message a writer can be shown names real text, whitespace in words."""

from __future__ import annotations

import itertools
import re

import pytest

from service.text.categories import CATEGORIES, OPERATIONS
from service.text.messages import explain


@pytest.mark.parametrize(
    ("code", "original", "replacement", "before", "after", "message"),
    [
        ("R:DET", "a", "an", "I ate ", " apple.", "Use 'an' before a vowel sound, as in 'an apple'."),
        ("R:DET", "an", "a", "It was ", " university.", "Use 'a' before a consonant sound, as in 'a university'."),
        ("M:DET", "", "an", "I saw ", " hour ago.", "Use 'an' before a vowel sound, as in 'an hour'."),
        ("M:DET", "", "the", "I went to ", " park.", "A determiner may be missing here: 'the'."),
        ("U:DET", "the", "", "I like ", " music.", "The determiner 'the' is not needed here."),
        ("M:ADJ", "", "big", "a ", " house", "An adjective may be missing here: 'big'."),
        ("M:VERB:FORM", "", "to ", "He wants ", "go home.", "Add 'to' before 'go': this form of the verb needs it."),
        (
            "R:VERB:SVA",
            "go",
            "goes",
            "Every day she ",
            " to school.",
            "'go' → 'goes': the verb agrees with its subject 'she'.",
        ),
        (
            "R:VERB:SVA",
            "are",
            "is",
            "The list of names ",
            " long.",
            "'are' → 'is': the verb agrees with its subject 'names'.",
        ),
        ("R:NOUN:INFL", "advices", "advice", "He gave me ", ".", "'advices' is not used in the plural: 'advice'."),
        ("R:NOUN:NUM", "day", "days", "two ", " ago", "'day' → 'days': use the plural here."),
        ("R:NOUN:NUM", "days", "day", "every ", ".", "'days' → 'day': use the singular after 'every'."),
        ("R:NOUN:NUM", "advices", "advice", "He gave me ", ".", "'advices' is not used in the plural: 'advice'."),
        ("R:SPELL", "recieved", "received", "I ", " it.", "Possible spelling mistake: 'recieved' → 'received'."),
        ("R:PREP", "in", "on", "It is ", " Monday.", "Use the preposition 'on' instead of 'in'."),
        ("U:PREP", "of", "", "Despite ", " the rain", "The preposition 'of' is not needed here."),
        ("M:PUNCT", "", ",", "However", " it", "Add the punctuation mark ','."),
        ("R:ORTH", "i", "I", "", " think", "Check the capitalisation: 'i' → 'I'."),
        ("R:ORTH", "every day", "everyday", "an ", " thing", "Check the spacing: 'every day' → 'everyday'."),
        ("R:WO", "always I", "I always", "", " go", "The words may be in the wrong order: 'always I' → 'I always'."),
        ("R:VERB:INFL", "getted", "got", "I ", " it", "'getted' is not a form of the verb: use 'got'."),
        ("R:ORTH", " ", "", "every", "day", "Remove the space between 'every' and 'day'."),
        ("R:ORTH", "", " ", "at home.", "So I", "Add a space between 'home.' and 'So'."),
        ("R:ORTH", "  ", " ", "a", "b.", "Use a space instead of 2 spaces between 'a' and 'b.'."),
        ("R:ORTH", "\n", " ", "one", "line", "Use a space instead of a line break between 'one' and 'line'."),
        ("R:ORTH", "\t", "", "", " Hello", "Remove the tab before 'Hello'."),
        ("R:ORTH", "a  b", "a b", "", "", "Remove the extra space in 'a b'."),
    ],
)
def test_each_category_says_what_and_why(
    code: str, original: str, replacement: str, before: str, after: str, message: str
) -> None:
    assert explain(code, original, replacement, before, after) == message


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("category", CATEGORIES)
def test_every_code_has_a_message_naming_the_words(operation: str, category: str) -> None:
    original = "" if operation == "M" else "word"
    replacement = "" if operation == "U" else "other"
    message = explain(f"{operation}:{category}", original, replacement, "Some text ", " more text.")
    assert message.endswith(".") and (message[0].isupper() or message.startswith("'"))
    assert all(f"'{word}'" in message for word in (original, replacement) if word)


# Each side an edit can have: nothing, words, whitespace of each kind, and words with whitespace around or inside.
SIDES = ["", "word", "two words", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "word ", " word", "two  words", "Word"]
CONTEXTS = [("", ""), ("Some text ", " more text."), ("Some text", "more text.")]
WHITESPACE_WORDS = re.compile(r"\b(?:space|spaces|tab|tabs|line break|line breaks|spacing)\b")


@pytest.mark.parametrize("code", [f"{o}:{c}" for o in OPERATIONS for c in CATEGORIES])
def test_every_message_names_real_text(code: str) -> None:
    """Over every code the classifier can emit and every shape of edit (whatever the code), the message quotes no
    empty or blank text, quotes each side's words, and names whitespace it adds or removes in words."""
    for original, replacement in itertools.permutations(SIDES, 2):
        for before, after in CONTEXTS:
            message = explain(code, original, replacement, before, after)
            shown = (code, original, replacement, before, after, message)
            quoted = re.findall(r"'([^']*)'", message.replace("n't", "nt"))
            assert all(q.strip() for q in quoted), shown  # never '' nor ' '
            assert message.endswith(".") and (message[0].isupper() or message.startswith("'")), shown
            for side in (original, replacement):
                if side.strip() and original.split() != replacement.split():
                    assert f"'{side.strip()}'" in message, shown
            if original.split() == replacement.split():  # only whitespace differs: said in words
                assert WHITESPACE_WORDS.search(message), shown
