"""A coarse, deterministic category for an edit, from its ``original`` and ``replacement`` alone.

Rules, tried in this order (words are compared case-insensitively, ’ counts as '):

``spelling``        first, an edit the spelling stage made (``service.text.spelling``), as it made it.

``whitespace``      only whitespace differs ("  " -> " ", "every day" -> "everyday", " ," -> ", "), or nothing visible
                    at all (the same text in another Unicode normal form).
``capitalisation``  only letter case differs, whitespace aside ("i" -> "I").
``punctuation``     only punctuation or symbols differ, whitespace and case aside ("" -> ",", "dont" -> "don't",
                    "end the" -> "end. The").
``word_order``      the same words, two or more, in another order ("always I" -> "I always").
``grammar``         word for word, each pair is two function words (articles, determiners, prepositions, pronouns,
                    auxiliaries, conjunctions) or two forms of one word; or, once function words are set aside, the
                    remaining words are unchanged or pairwise forms of one word ("a" -> "the",
                    "" -> "the ", "in" -> "on", "go" -> "went", "informations" -> "information", "has went" ->
                    "had gone"). Forms of a word come from suffix rules (-s, -es, -ies, -ed, -ied, -ing, -er, -est,
                    -ly, doubled consonants, silent e) and a small table of irregular forms.
``spelling``        one word for one word, close in spelling: optimal-string-alignment distance at most 1 for words
                    of up to 4 letters, 2 up to 8 letters, 3 beyond, and at most 40% of the length ("recieved" ->
                    "received").
``word_choice``     everything else: other replacements, insertions and deletions of content words.
"""

from __future__ import annotations

import unicodedata

from service.text.edits import Edit, tokenize

CATEGORIES = (
    "whitespace",
    "capitalisation",
    "punctuation",
    "word_order",
    "grammar",
    "spelling",
    "word_choice",
)

_ARTICLES_DETERMINERS = (
    "a an the this that these those some any each every no another either neither all both few many much more most "
    "less least several such what which whose my your his her its our their"
)
_PREPOSITIONS = (
    "about above across after against along among around as at before behind below beneath beside besides between "
    "beyond by despite down during except for from in inside into like near of off on onto out outside over past per "
    "since than through throughout till to toward towards under until up upon via with within without"
)
_PRONOUNS = (
    "i me you he him she it we us they them mine yours hers ours theirs myself yourself himself herself itself "
    "ourselves yourselves themselves who whom one ones someone somebody something anyone anybody anything everyone "
    "everybody everything nobody nothing there"
)
_AUXILIARIES = (
    "be am is are was were been being have has had having do does did done doing will would shall should can could "
    "may might must ought not"
)
_CLITICS = frozenset(("'m", "'re", "'s", "'ve", "'ll", "'d"))
_IRREGULAR_CONTRACTIONS = frozenset(("won't", "shan't", "ain't"))
_CONJUNCTIONS = "and or but nor so yet because if although though while whether unless whereas"
FUNCTION_WORDS = frozenset(
    " ".join((_ARTICLES_DETERMINERS, _PREPOSITIONS, _PRONOUNS, _AUXILIARIES, _CONJUNCTIONS)).split()
)

# Irregular forms: each line is one word's forms.
_IRREGULAR = """
be am is are was were been being
have has had having
do does did done doing
go goes went gone going
begin began begun
bring brought
build built
buy bought
catch caught
choose chose chosen
come came
drink drank drunk
eat ate eaten
feel felt
find found
forget forgot forgotten
get got gotten
give gave given
hear heard
keep kept
know knew known
leave left
lose lost
make made
meet met
pay paid
run ran
say said
see saw seen
send sent
sit sat
sleep slept
speak spoke spoken
spend spent
stand stood
swim swam swum
take took taken
teach taught
tell told
think thought
understand understood
wear wore worn
win won
write wrote written
child children
man men
woman women
person people
foot feet
tooth teeth
good better best well
bad worse worst badly
"""
_Y_SUFFIXES = ("ies", "ied", "ier", "iest", "ily")
# Each irregular form's lemma ("went": "go"), also sent to the device engine (``device_confidence``).
IRREGULAR_LEMMA = {form: line.split()[0] for line in _IRREGULAR.strip().splitlines() for form in line.split()}


def classify(edit: Edit, spelled: bool = False) -> str:
    """The category of ``edit`` (one of ``CATEGORIES``; rules in the module docstring); ``spelled``: the spelling
    stage made it."""
    if spelled:
        return "spelling"
    old, new = _visible(edit.original), _visible(edit.replacement)
    if old == new:
        return "whitespace"
    if old.casefold() == new.casefold():
        return "capitalisation"
    if _alphanumerics(old) == _alphanumerics(new):
        return "punctuation"
    old_words, new_words = words(edit.original), words(edit.replacement)
    if len(old_words) >= 2 and sorted(old_words) == sorted(new_words):
        return "word_order"
    if _differ_only_in_grammar(old_words, new_words):
        return "grammar"
    if len(old_words) == 1 and len(new_words) == 1 and is_spelling_variant(old_words[0], new_words[0]):
        return "spelling"
    return "word_choice"


_CLOSED_CLASSES = tuple(frozenset(words.split()) for words in (_ARTICLES_DETERMINERS, _PREPOSITIONS, _CONJUNCTIONS))


def plausible_alternative(original: str, replacement: str, alternative: str) -> bool:
    """Whether ``alternative`` is a sensible second choice for the edit ``original`` -> ``replacement``: an edit of
    the same category, with as many words as the replacement, each one the replacement's word, a form of it or of a
    word of the original ("have": "had"), a spelling variant of a word of the original, or a word of the same closed
    class as the replacement's (articles and determiners, prepositions, conjunctions: "in": "at"). "I has": "I am"
    is not one."""
    if classify(Edit(0, len(original), original, alternative)) != classify(
        Edit(0, len(original), original, replacement)
    ):
        return False
    old, new, alt = words(original), words(replacement), words(alternative)
    if len(alt) != len(new):
        return False
    return all(
        ours == theirs
        or same_word_forms(ours, theirs)
        or any(same_word_forms(word, theirs) or is_spelling_variant(word, theirs) for word in old)
        or any(ours in group and theirs in group for group in _CLOSED_CLASSES)
        for ours, theirs in zip(new, alt, strict=True)
    )


def words(text: str) -> list[str]:
    """The casefolded NFC words of ``text`` (tokens with a letter or digit), with ’ as '."""
    text = unicodedata.normalize("NFC", text).casefold().replace("\u2019", "'")
    return [t for t in tokenize(text) if any(c.isalnum() for c in t)]


def is_function_word(word: str) -> bool:
    """Articles, determiners, prepositions, pronouns, auxiliaries, conjunctions, and their contractions."""
    if word in FUNCTION_WORDS or word in _IRREGULAR_CONTRACTIONS:
        return True
    head, apostrophe, tail = word.partition("'")
    if not apostrophe:
        return False
    if tail == "t" and head.endswith("n"):  # don't, isn't, can't
        return head[:-1] in FUNCTION_WORDS or head in FUNCTION_WORDS
    return head in FUNCTION_WORDS and f"'{tail}" in _CLITICS  # it's, we'll, I'm


def same_word_forms(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` look like different inflections (or -ly derivations) of one word.

    Both must reduce to a common stem through DIFFERENT endings: "go"/"goes", "stop"/"stopped", "go"/"went". Words
    with the same ending and different stems ("writting"/"writing") are not forms of one word but misspellings.
    """
    if a == b:
        return True
    endings_a, endings_b = _endings_by_stem(a), _endings_by_stem(b)
    return any(not (endings & endings_b[stem]) for stem, endings in endings_a.items() if stem in endings_b)


def is_spelling_variant(a: str, b: str) -> bool:
    """Whether two different words are close enough in spelling to be a misspelling and its correction."""
    return plausible_distance(max(len(a), len(b)), osa_distance(a, b))


def plausible_distance(longest: int, distance: int) -> bool:
    """Whether two different words ``distance`` edits apart, the longer of ``longest`` letters, are close enough
    to be a misspelling and its correction (1 edit up to 4 letters, 2 up to 8, 3 beyond; at most 40% of them)."""
    allowed = 1 if longest <= 4 else 2 if longest <= 8 else 3
    return 0 < distance <= allowed and distance <= 0.4 * longest


def osa_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions, adjacent transpositions."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


def _differ_only_in_grammar(old_words: list[str], new_words: list[str]) -> bool:
    """Word for word, forms of one word or function words; or so once function words are set aside."""
    if len(old_words) == len(new_words) and all(
        same_word_forms(a, b) or (is_function_word(a) and is_function_word(b))
        for a, b in zip(old_words, new_words, strict=True)
    ):
        return True
    old_content = [w for w in old_words if not is_function_word(w)]
    new_content = [w for w in new_words if not is_function_word(w)]
    if len(old_content) != len(new_content):
        return False
    return all(same_word_forms(a, b) for a, b in zip(old_content, new_content, strict=True))


def _visible(text: str) -> str:
    """NFC text without whitespace."""
    return "".join(c for c in unicodedata.normalize("NFC", text) if not c.isspace())


def _alphanumerics(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


def _endings_by_stem(word: str) -> dict[str, set[str]]:
    endings: dict[str, set[str]] = {}
    for stem, ending in _analyses(word):
        endings.setdefault(stem, set()).add(ending)
    return endings


def _analyses(word: str) -> set[tuple[str, str]]:
    """Candidate ``(stem, ending)`` readings of ``word`` under simple English suffix rules (over-generating is fine).

    The word itself is ``(word, "")``; an irregular form is ``(base, "=form")``.
    """
    analyses = {(word, "")}
    if word in IRREGULAR_LEMMA:
        analyses.add((IRREGULAR_LEMMA[word], "=" + word))
    for suffix in ("s", "es", "ed", "ing", "er", "est", "ly", *_Y_SUFFIXES):
        stem = word[: -len(suffix)]
        if not word.endswith(suffix) or len(stem) < 2:
            continue
        if suffix in _Y_SUFFIXES:
            analyses.add((stem + "y", suffix))  # studies, studied, happier, easily
            continue
        analyses |= {(stem, suffix), (stem + "e", suffix)}  # walked, liked
        if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiousl":
            analyses.add((stem[:-1], suffix))  # stopped, bigger
    return analyses
