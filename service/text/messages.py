"""What an edit tells a writer: one sentence from its ERRANT code (``service.text.categories``) and its words.

``explain("R:VERB:SVA", "go", "goes", before="She")`` gives "'go' → 'goes': the verb agrees with its subject
'She'." The message names the words changed (quoted as the writer wrote them) and, where the category says
why, the reason: the article before a vowel or a consonant sound, agreement with the subject (the nearest
pronoun or noun before the verb, where one is found), a noun not used in the plural (a plural made singular with
no singular determiner before it, as uncountable nouns are), a missing or unnecessary word by its kind.
Categories the code does not know read as a plain suggestion. An edit that adds, removes or changes only
whitespace says so in words, between the words around it ("Remove the space between 'every' and 'day'."), never
as quotes around nothing.
"""

from __future__ import annotations

import re

__all__ = ["explain", "explain_dialect"]

_SUBJECTS = {"i", "you", "he", "she", "it", "we", "they", "this", "that", "these", "those", "there", "who", "which"}
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_VOWEL_SOUND = re.compile(r"^(?:[aeiou]|hour|honest|honou?r|heir)", re.IGNORECASE)
_CONSONANT_SOUND = re.compile(r"^(?:uni|use|usu|euro|one|once|u[bcfhjkqrst][aeiou])", re.IGNORECASE)

_SINGULAR_DETERMINERS = {"a", "an", "one", "this", "that", "each", "every", "another", "either", "neither"}

# The replacements whose message depends on nothing but the words: {change} is "'old' → 'new'"
_TEMPLATES = {
    "SPELL": "Possible spelling mistake: {change}.",
    "PUNCT": "Check the punctuation: {change}.",
    "WO": "The words may be in the wrong order: {change}.",
    "CONTR": "Write the contraction this way: {change}.",
    "VERB:TENSE": "{change}: the verb's tense should fit the rest of the sentence.",
    "VERB:FORM": "{change}: this form of the verb is the one used here.",
    "VERB:INFL": "{original} is not a form of the verb: use {replacement}.",
    "NOUN:POSS": "{change}: the possessive form.",
    "ADJ:FORM": "{change}: the comparative or superlative form.",
    "MORPH": "{change}: the same word in the form this sentence needs.",
}

# What each word-class category calls its words, for "add", "remove" and "use ... instead of ..."
_KINDS = {
    "DET": "determiner",
    "PREP": "preposition",
    "PRON": "pronoun",
    "CONJ": "conjunction",
    "PART": "particle",
    "ADJ": "adjective",
    "ADV": "adverb",
    "NOUN": "noun",
    "VERB": "verb",
}


def _q(text: str) -> str:
    return f"'{text.strip()}'"


def _subject(before: str) -> str | None:
    """The subject a verb after ``before`` agrees with: the nearest pronoun, else the nearest word, of the last
    clause."""
    clause = re.split(r"[.!?;:,]", before)[-1]
    words: list[str] = _WORD.findall(clause)
    for word in reversed(words):
        if word.lower() in _SUBJECTS:
            return word
    return words[-1] if words else None


def _article(replacement: str, after: str) -> str | None:
    """Why 'a' or 'an' before the next word, when the edit picks one of them."""
    following = _WORD.findall(after)
    if replacement.lower() not in ("a", "an") or not following:
        return None
    sound = "vowel" if _VOWEL_SOUND.match(following[0]) and not _CONSONANT_SOUND.match(following[0]) else "consonant"
    return f"Use {_q(replacement)} before a {sound} sound, as in {_q(replacement + ' ' + following[0])}."


def _plural(original: str, replacement: str) -> bool:
    """Whether ``replacement`` reads as the plural of ``original`` (by its ending)."""
    a, b = original.lower(), replacement.lower()
    return len(b) > len(a) and b.endswith(("s", "es", "ies", "en", "ren", "i", "a"))


def _blanks(text: str, definite: bool = False) -> str:
    """Whitespace as a writer reads it: "a space", "2 spaces", "a tab", "a line break" ("the space" when
    ``definite``)."""
    if "\n" in text or "\r" in text:
        count, name = max(text.count("\n"), text.count("\r")), "line break"
    elif set(text) == {"\t"}:
        count, name = len(text), "tab"
    else:
        count, name = len(text), "space"
    if count == 1:
        return f"{'the' if definite else 'a'} {name}"
    return f"{'the ' if definite else ''}{count} {name}s"


def _place(before: str, after: str) -> str:
    """Where an edit between ``before`` and ``after`` is, by the words on either side."""
    previous, following = before.split()[-1:], after.split()[:1]
    if previous and following:
        return f"between {_q(previous[0])} and {_q(following[0])}"
    if previous:
        return f"after {_q(previous[0])}"
    if following:
        return f"before {_q(following[0])}"
    return "here"


def _spacing(original: str, replacement: str, before: str, after: str) -> str:
    """The message of an edit whose two sides hold the same words, so that only whitespace changes."""
    if original.strip() or replacement.strip():
        words = _q(" ".join(original.split()))
        if len(original) > len(replacement):
            return f"Remove the extra space in {words}."
        return f"Check the spacing around {words}."
    place = _place(before, after)
    if not original:
        return f"Add {_blanks(replacement)} {place}."
    if not replacement:
        return f"Remove {_blanks(original, definite=True)} {place}."
    return f"Use {_blanks(replacement)} instead of {_blanks(original)} {place}."


def explain(code: str, original: str, replacement: str, before: str = "", after: str = "") -> str:
    """The message of an edit with ERRANT ``code`` (operation:category) replacing ``original`` by ``replacement``,
    between ``before`` and ``after`` in its sentence."""
    if original.split() == replacement.split():  # the same words: only whitespace changes, whatever the code
        return _spacing(original, replacement, before, after)
    category = code.partition(":")[2]
    # the operation as the classifier reads it off the sides (categories.py), so a side is never quoted empty
    operation = "M" if not original.strip() else "U" if not replacement.strip() else "R"
    kind = _KINDS.get(category.split(":")[0], "word")
    change = f"{_q(original)} → {_q(replacement)}"
    if operation == "M":
        if category == "PUNCT":
            return f"Add the punctuation mark {_q(replacement)}."
        if category == "VERB:TENSE":
            return f"Add {_q(replacement)}: the verb's tense needs it."
        if category == "VERB:FORM":  # most often infinitival 'to': "He wants go home."
            following = _WORD.findall(after)[:1]
            where = f" before {_q(following[0])}" if following else ""
            return f"Add {_q(replacement)}{where}: this form of the verb needs it."
        article = _article(replacement, after) if category == "DET" else None
        return article or f"{'An' if kind[0] in 'aeiou' else 'A'} {kind} may be missing here: {_q(replacement)}."
    if operation == "U":
        if category == "PUNCT":
            return f"Remove the punctuation mark {_q(original)}."
        return f"The {kind} {_q(original)} is not needed here."
    template = _TEMPLATES.get(category)
    if template is not None:
        return template.format(change=change, original=_q(original), replacement=_q(replacement))
    if category == "ORTH":
        if (
            original.replace(" ", "").lower() == replacement.replace(" ", "").lower()
            and original.lower() != replacement.lower()
        ):
            return f"Check the spacing: {change}."
        return f"Check the capitalisation: {change}."
    if category == "VERB:SVA":
        subject = _subject(before)
        return (
            f"{change}: the verb agrees with its subject {_q(subject)}."
            if subject
            else f"{change}: the verb agrees with its subject."
        )
    if category == "NOUN:NUM":
        if _plural(original, replacement):
            return f"{change}: use the plural here."
        previous = _WORD.findall(before)[-1:]
        if not previous or previous[0].lower() not in _SINGULAR_DETERMINERS:  # no "a", "every", ...: uncountable
            return f"{_q(original)} is not used in the plural: {_q(replacement)}."
        return f"{change}: use the singular after {_q(previous[0])}."
    if category == "NOUN:INFL":
        if original.lower().rstrip("s") == replacement.lower() or original.lower() == replacement.lower() + "s":
            return f"{_q(original)} is not used in the plural: {_q(replacement)}."
        return f"{_q(original)} is not a form of the noun: use {_q(replacement)}."
    if category == "DET":
        article = _article(replacement, after) if original.lower() in ("a", "an") else None
        return article or f"Use the determiner {_q(replacement)} instead of {_q(original)}."
    if kind != "word":
        return f"Use the {kind} {_q(replacement)} instead of {_q(original)}."
    return f"Consider {_q(replacement)} instead of {_q(original)}."


def explain_dialect(original: str, replacement: str, dialect: str) -> str:
    """The message of a dialect's spelling variant (``service.text.variants``): "'color' → 'colour': the British
    English spelling."."""
    return f"{_q(original)} → {_q(replacement)}: the {dialect} spelling."
