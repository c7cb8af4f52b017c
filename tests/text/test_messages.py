"""What an edit tells the writer, by category: the words changed and, where the category says why, the reason."""

from __future__ import annotations

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
