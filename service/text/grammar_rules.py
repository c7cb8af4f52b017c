"""The rule stage: learner errors a rule gets right, found on every sentence beside the model.

``find_rule_edits`` reads one sentence as the model reads it (``units.Unit.normalized``) and returns the edits of the
kinds in ``RULE_KINDS``. Word forms come from ``lemminflect`` (a word's lemmas and a lemma's inflections), so a rule
names no verb, noun or adjective of its own beyond the closed classes grammar fixes (modals, number words and
quantifiers, function words) and the uncountable nouns learners pluralise. Each rule fires only where its context
leaves no doubt: a word the lexicon reads as two parts of speech the rule cannot tell apart is left alone, a noun
followed by another word than a phrase's end is left alone ("two year old"), a word in capitals is left alone.

A kind is kept only where at least 90% of the edits it makes on FCE dev and JFLEG dev together bring the sentence
closer to a reference (``python -m models.gec.rule_precision``, which also gives the share that match a reference's
edit exactly); each kind's edits carry that bar as their confidence. ``service.text.units`` merges the stage's edits
with the model's: one edit where both make it, the model's where the model changes what a rule read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

import inflect
import lemminflect

from service.text.categories import word_class
from service.text.edits import cased_like
from service.text.vocabulary import zipf

__all__ = ["RULE_KINDS", "RuleEdit", "RuleKind", "find_rule_edits"]


@dataclass(frozen=True)
class RuleKind:
    """One class of rule: what it corrects and its measured precision, the confidence its edits carry; ``over_model``:
    where the model changes the very word the rule changes, the rule's edit stands (``units.with_rules``)."""

    name: str
    description: str
    confidence: float
    over_model: bool = False


RULE_KINDS = {
    kind.name: kind
    for kind in (
        RuleKind("repeated", 'a function word written twice ("the the")', 0.9),
        RuleKind("a_an", 'the indefinite article that does not fit the sound after it ("a umbrella", "an very")', 0.9),
        RuleKind("capital", "a sentence of five tokens or more that starts in lowercase", 0.9),
        RuleKind(
            "agreement",
            'a verb that does not agree with its subject ("We was", "My brother don\'t", "She like")',
            0.9,
            over_model=True,  # the model's tense for it, with no past in the sentence: "He go to school" -> "went"
        ),
        RuleKind(
            "bare_verb",
            'a modal or "do" followed by another form than the bare verb ("She can sings", "Did you left")',
            0.9,
        ),
        RuleKind("uncountable", 'an uncountable noun made plural ("informations")', 0.9),
        RuleKind("plural", 'a singular noun after a number word or quantifier ("two new chair")', 0.9),
        RuleKind("comparative", 'a double comparative or superlative ("more taller")', 0.9),
        RuleKind("conditional", '"will" in a condition opening a clause ("If I will see him")', 0.9),
        RuleKind(
            "there_their",
            'their, there and they\'re, your and you\'re confused ("Their going", "there new car")',
            0.9,
            over_model=True,  # the model's other word of the set for it: "Their going" -> "There going"
        ),
        RuleKind("explain_to", '"to" missing before the person after "explain" ("explain me the rules")', 0.9),
        RuleKind("suggest_that", '"suggest" with an object and infinitive ("He suggested me to go")', 0.9),
        RuleKind("look_forward", '"look forward to" before a bare verb ("I look forward to hear from you")', 0.9),
        RuleKind(
            "past_time",
            'a present verb after a past time opening the sentence ("Yesterday I go", "Last week we visit")',
            0.9,
        ),
        RuleKind("be_agree", '"agree" used as an adjective after "be" ("I am agree", "He is agree")', 0.9),
    )
}
"""The rule kinds kept, each with the confidence its edits carry: the bar each met (``models.gec.rule_precision``)."""


@dataclass(frozen=True)
class RuleEdit:
    """Replace ``text[start:end]`` (``original``) by ``replacement``; ``context``: the span of the sentence the rule
    read to decide (the edit's own span within it), which an edit of the model there overrides."""

    start: int
    end: int
    original: str
    replacement: str
    kind: str
    context: tuple[int, int]


_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+(?:[.,]\d+)*|\S")  # words (any letters), numbers, the rest


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower().replace("’", "'")

    @property
    def is_word(self) -> bool:
        return self.text[0].isalpha()


def _tokens(text: str) -> list[_Token]:
    return [_Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_MODALS = _words("can could may might must shall should will would")
_NUMBERS = _words(
    "two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred"
)
_QUANTIFIERS = _words("many several few various")
_COUNTS = _NUMBERS | _QUANTIFIERS  # what a plural noun follows
_PHRASE_END = _words(". , ! ? ; : and or in on at of for with from to that which who")  # what may follow a plural
_UNCOUNTABLE = _words(
    "information advice furniture homework equipment knowledge luggage baggage vocabulary housework"
)  # the nouns learners pluralise that English never does
_NEVER_TWICE = _words("the a an to of with from my your his her our their are were and I we they")
_REPEAT_HEADS = _NEVER_TWICE | {"i"}  # as ``_Token.lower`` reads them: "I" is "i"
_THIRD = _words("he she it")
_PLAIN_SUBJECTS = _words("i you we they")  # the subjects of a verb's plain present
_PRONOUNS = _PLAIN_SUBJECTS | _THIRD
_BEFORE_NOUN = _words("a an the this that his her my your our their its in on of for by")  # "a can", "his will"


@lru_cache(maxsize=65536)
def _lemmas(lower: str) -> dict[str, tuple[str, ...]]:
    return dict(lemminflect.getAllLemmas(lower))


@lru_cache(maxsize=65536)
def _inflections(lemma: str, upos: str) -> dict[str, tuple[str, ...]]:
    return dict(lemminflect.getAllInflections(lemma, upos=upos))


def _has_tag(lower: str, upos: str, tag: str) -> bool:
    """Whether ``lower`` is the ``tag`` form (PTB) of one of its ``upos`` lemmas."""
    return any(lower in _inflections(lemma, upos).get(tag, ()) for lemma in _lemmas(lower).get(upos, ()))


def _only_verb_tag(lower: str, tags: frozenset[str], noun_too: bool = False, other_too: bool = False) -> bool:
    """Whether ``lower`` is one verb's form of ``tags`` and no other form of a verb, and not an adjective, nor a noun
    unless ``noun_too`` (where the context wants a verb: "he must finishes"), nor another part of speech than a noun
    unless ``other_too`` (no auxiliary even then)."""
    lemmas = _lemmas(lower)
    if other_too:
        fits = "VERB" in lemmas and "AUX" not in lemmas and len(lemmas["VERB"]) == 1
    else:
        fits = set(lemmas) == {"VERB"} or (noun_too and set(lemmas) == {"VERB", "NOUN"})
    verb_tags = _verb_tags(lower)
    return fits and bool(verb_tags) and verb_tags <= tags


def _verb_tags(lower: str) -> set[str]:
    """The verb forms (PTB tags) ``lower`` is of its verb lemmas."""
    return {
        t
        for lemma in _lemmas(lower).get("VERB", ())
        for t, words in _inflections(lemma, "VERB").items()
        if lower in words
    }


def _edit(token: _Token, replacement: str, kind: str, context: tuple[int, int]) -> RuleEdit:
    return RuleEdit(token.start, token.end, token.text, cased_like(replacement, token.text), kind, context)


# -- repeated words ---------------------------------------------------------------------------------------------------


def _repeated(text: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """The repeats of a function word deleted with the blanks before them ("the the", "the the the": one edit for the
    run, from its first word)."""
    first = tokens[i]
    if first.lower not in _REPEAT_HEADS or (i > 0 and _repeats(text, tokens[i - 1], first)):
        return
    last = i
    while last + 1 < len(tokens) and _repeats(text, tokens[last], tokens[last + 1]):
        last += 1
    if last > i:
        end = tokens[last].end
        yield RuleEdit(first.end, end, text[first.end : end], "", "repeated", (first.start, end))


def _repeats(text: str, word: _Token, following: _Token) -> bool:
    """Whether ``following`` is ``word`` again, after blanks only."""
    gap = text[word.end : following.start]
    return following.lower == word.lower and bool(gap) and gap.isspace()


def _capital(text: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """A sentence's first word in lowercase, where the sentence starts with it and the lexicon knows it."""
    word = tokens[i]
    if i != 0 or len(tokens) < 5 or tokens[-1].text not in (".", "?", "!"):
        return
    known = _lemmas(word.lower) or word.lower in _NEVER_TWICE  # a name the lexicon lacks keeps its case ("iPhone")
    if word.start == 0 and word.text.isalpha() and word.text.islower() and known:
        yield RuleEdit(0, 1, text[0], text[0].upper(), "capital", (0, word.end))


# -- a or an ---------------------------------------------------------------------------------------------------------

_ENGLISH = inflect.engine()
_ARTICLES = _words("a an")
_NOT_ARTICLE_BEFORE = _words("another other enough each every any all only so as such i")  # "a another", "an so on"
_LETTER_NAMES = _words("letter grade vitamin plan option section part point item exhibit appendix class type")
_ARTICLE_ZIPF = 3.0  # the word after the article is a well-known one (not "an mmapped file", jargon read aloud)


@lru_cache(maxsize=8192)
def _article_for(lower: str) -> str:
    """The indefinite article the sound of ``lower`` takes (``inflect``: "an hour", "a university", "a one")."""
    return str(_ENGLISH.a(lower)).split(" ", 1)[0]


def _article(text: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "a umbrella", "an very good": the article before a well-known noun, adjective or adverb whose sound takes the
    other one. Left alone: a letter ("grade A", "the letter a"), the article before a compound ("a arm-suits"), a
    plural or a word that takes no article ("a another"), a word the lexicon does not know ("an mmapped file"), "an"
    before an "h" ("an historic": both are written), and "an" after a noun, adjective or pronoun or before a word
    that is no noun or adjective, where it is more often a typed "and" ("mad an hungry", "an so on")."""
    article = tokens[i]
    if article.lower not in _ARTICLES or (article.text == "A" and i > 0) or i + 1 >= len(tokens):
        return
    word, after = tokens[i + 1], tokens[i + 2].text if i + 2 < len(tokens) else ""
    previous = tokens[i - 1].lower if i > 0 else ""
    if not word.text.isalpha() or (word.text.isupper() and len(word.text) > 1) or after in ("-", "'", "’"):
        return
    lower = word.lower
    if previous in _LETTER_NAMES or lower in _NOT_ARTICLE_BEFORE | _UNCOUNTABLE or zipf(lower) < _ARTICLE_ZIPF:
        return
    lemmas = set(_lemmas(lower))
    plural = _has_tag(lower, "NOUN", "NNS") and not _has_tag(lower, "NOUN", "NN") and "ADJ" not in lemmas
    if not lemmas & {"NOUN", "ADJ", "ADV"} or not lemmas <= {"NOUN", "ADJ", "ADV", "VERB"} or plural:
        return
    wanted = _article_for(lower)
    if wanted == article.lower or (article.lower == "an" and lower.startswith("h")):
        return
    if article.lower == "an" and (
        set(_lemmas(previous)) & {"NOUN", "ADJ"} or previous in _PRONOUNS or not lemmas & {"NOUN", "ADJ"}
    ):
        return
    yield _edit(article, wanted, "a_an", (article.start, word.end))


# -- agreement of auxiliaries ----------------------------------------------------------------------------------------

_BOUNDARY = _words(", ; : ( and but so because when if that then")  # what may stand before a clause's subject
_THIRD_AUX = {"don't": "doesn't", "do": "does", "have": "has"}
_PLAIN_AUX = {"doesn't": "don't", "does": "do", "has": "have"}
_POSSESSIVES = _words("my his her our your their the")


def _past_sentence(tokens: list[_Token]) -> bool:
    """Whether the sentence tells of the past (a past time opening it, a past form that is no bare verb, or
    was/were/did/had): there a wrong present ("he have") more often wants the past than agreement."""
    return _past_opening(tokens) is not None or any(
        t.lower in ("was", "were", "did", "had", "didn't")
        or (_has_tag(t.lower, "VERB", "VBD") and not _has_tag(t.lower, "VERB", "VB"))
        for t in tokens
    )


def _agreement(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "We was", "He don't", "They has": an auxiliary that does not agree with the pronoun subject opening a clause
    before it (not in a sentence about the past, where "he have" wants "had")."""
    if i + 1 >= len(tokens) or (i > 0 and tokens[i - 1].lower not in _BOUNDARY):
        return
    subject, verb = tokens[i].lower, tokens[i + 1]
    context, lower = (tokens[i].start, verb.end), verb.lower
    if lower == "was" and subject in ("you", "we", "they"):
        yield _edit(verb, "were", "agreement", context)
    elif subject in _THIRD and lower in _THIRD_AUX and not _past_sentence(tokens):
        yield _edit(verb, _THIRD_AUX[lower], "agreement", context)
    elif subject in _PLAIN_SUBJECTS and lower in _PLAIN_AUX and (subject != "i" or lower != "does"):
        yield _edit(verb, _PLAIN_AUX[lower], "agreement", context)
    elif subject in _THIRD and verb.text.islower() and not _past_sentence(tokens) and _present_plain(lower):
        inflected = _inflections(_lemmas(lower)["VERB"][0], "VERB").get("VBZ", ())
        if inflected and (i + 2 >= len(tokens) or tokens[i + 2].lower not in _NOT_AFTER_VERB):
            yield _edit(verb, inflected[0], "agreement", context)


_NOT_AFTER_VERB = _words("be been being is are was were not")  # "it need be"; "he stamp not": archaic, not wrong


def _present_plain(lower: str) -> bool:
    """Whether ``lower`` is a verb's plain present form and no other form of a verb (not "cut", also its past), its
    one verb lemma a full verb (not "be", "have", "do" or a modal), though it may also read as a noun or adjective
    ("work", "like"): after "he", "she" or "it" opening a clause only a verb fits."""
    lemmas = _lemmas(lower)
    verbs = lemmas.get("VERB", ())
    if len(verbs) != 1 or "AUX" in lemmas or "ADV" in lemmas or verbs[0] in ("be", "have", "do") or lower in _MODALS:
        return False
    return _verb_tags(lower) <= {"VB", "VBP"}


def _noun_subject(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "My brother don't": a possessive or "the" and a singular noun opening a clause, then "don't"."""
    if i + 2 >= len(tokens) or tokens[i].lower not in _POSSESSIVES or (i > 0 and tokens[i - 1].lower not in _BOUNDARY):
        return
    noun, verb = tokens[i + 1], tokens[i + 2]
    singular = _has_tag(noun.lower, "NOUN", "NN") and not _has_tag(noun.lower, "NOUN", "NNS")
    noun_reading = {"NOUN"} <= set(_lemmas(noun.lower)) <= {"NOUN", "VERB"}  # after a possessive: "my father"
    if verb.lower == "don't" and noun_reading and singular and not _past_sentence(tokens):
        yield _edit(verb, "doesn't", "agreement", (tokens[i].start, verb.end))


_NOT_ONE = _words(
    "lot lots few number couple variety range bunch dozen hundred thousand million billion series pair total host"
    " handful majority minority great good many"
)  # after "a", a count of many: "There are a few", "There are a dozen"


def _there_is(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "There is many people", "There is a lot of cars": "there is/was" before a number word or quantifier and a
    word, or before "a lot of"/"lots of" and a plural noun; "There are a problem": "there are" before "a"/"an", perhaps
    an adjective, and a singular noun that no "of", "and" or "or" follows ("There are a lot of", "a number of" stand;
    not "were": "if there were a God" is a wish)."""
    if i + 3 >= len(tokens) or tokens[i].lower != "there" or tokens[i + 1].lower not in ("is", "was", "are"):
        return
    verb, words = tokens[i + 1], [t.lower for t in tokens[i + 2 : i + 6]]
    if verb.lower in ("is", "was"):
        if words[0] in _COUNTS and tokens[i + 3].is_word:
            end = tokens[i + 3].end
        elif words[:3] == ["a", "lot", "of"] or words[:2] == ["lots", "of"]:
            at = 3 if words[0] == "a" else 2  # the noun, after "a lot of" or "lots of"
            noun = words[at] if at < len(words) else ""
            plural = noun == "people" or _is_plural(noun)
            if not plural or noun in _UNCOUNTABLE:
                return  # "There is a lot of water", "lots of news"
            end = tokens[i + 2 + at].end
        else:
            return
        yield _edit(verb, "are" if verb.lower == "is" else "were", "agreement", (tokens[i].start, end))
    elif verb.lower == "are" and words[0] in _ARTICLES and words[1] not in _NOT_ONE:  # "if there were a": a wish
        j = i + 3 + (len(words) > 2 and set(_lemmas(words[1])) == {"ADJ"})  # "a big problem"
        after = tokens[j + 1].lower if j + 1 < len(tokens) else ""
        if j >= len(tokens) or tokens[j].lower in _NOT_ONE or after in ("of", "and", "or"):
            return  # "There are a number of", "There are a man and a woman": agreement with both
        lemmas = set(_lemmas(tokens[j].lower))
        singular = not _has_tag(tokens[j].lower, "NOUN", "NNS") and tokens[j].text.islower()  # not "a Sir Samuel"
        if "NOUN" in lemmas and lemmas <= {"NOUN", "VERB"} and singular:
            yield _edit(verb, "is", "agreement", (tokens[i].start, tokens[j].end))


# -- bare verbs after modals and "do" ---------------------------------------------------------------------------------


_DO = _words("do does did don't doesn't didn't")
_WANTS_BARE = {head: frozenset({"VBZ", "VBD", "VBN"}) for head in ("did", "didn't")} | {
    head: frozenset({"VBZ"}) for head in _MODALS | _DO - {"did", "didn't"} | {"can't", "won't"}
}
"""The verb forms each head is wrongly followed by and that this rule replaces: after "did" every form but the bare
one; after a modal, "do" and "does" the -s form ("I don't wants"; "I don't went" may want "didn't go")."""


def _bare_verb(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "She can sings", "didn't went", "Did you went", "Where did you saw", "I don't wants", "Does he knows": a modal
    or "do" followed by another form than the bare verb; "do", "did" and "does" only negated or opening a question,
    alone or after a question word (elsewhere they may be the main verb: "all you do becomes"), "don't", "doesn't" and
    "didn't" not opening a question."""
    head = tokens[i].lower
    wrong = _WANTS_BARE.get(head)
    if wrong is None or (i > 0 and tokens[i - 1].lower in _BEFORE_NOUN):
        return  # "a can of", "his will"
    if head in _DO and head.endswith("n't") and _asks(tokens, i):
        return  # "And don't victuals spring up?": a question, whose subject comes next
    j = i + 1
    subject = i > 0 and tokens[i - 1].lower in _PRONOUNS  # "he must finishes": a verb, though also a noun
    if head in _DO and i > 0 and tokens[i - 1].is_word and tokens[i - 1].lower not in _CLAUSE_OPENERS:
        subject = True  # "education don't stops", not 'a few "don't worries"'
    if j < len(tokens) and tokens[j].lower == "not":
        j += 1
    elif head in _DO and _opens_question(tokens, i) and j < len(tokens) and tokens[j].lower in _PRONOUNS:
        j, subject = j + 1, True  # "Did you went", "Where did you went"
    elif head in ("do", "did", "does"):
        return
    if j < len(tokens) and tokens[j].text.islower():
        verb = tokens[j]
        after = tokens[j + 1].lower if j + 1 < len(tokens) else ""
        past = head in ("did", "didn't") and _verb_follows(verb.lower, after)
        lemma = _bare_form(verb.lower, wrong, subject, past)
        if lemma is not None and lemma != verb.lower:
            yield _edit(verb, lemma, "bare_verb", (tokens[i].start, verb.end))


_WH = _words("what where when why how who which")
_CLAUSE_OPENERS = _BOUNDARY | _WH  # what may stand before a clause's subject or its question word's verb


def _asks(tokens: list[_Token], i: int) -> bool:
    """Whether ``tokens[i]`` opens a clause (or follows a question word) and a question mark follows it."""
    opening = i == 0 or tokens[i - 1].lower in _CLAUSE_OPENERS
    return opening and any(t.text == "?" for t in tokens[i + 1 :])


def _opens_question(tokens: list[_Token], i: int) -> bool:
    """Whether ``tokens[i]`` opens the sentence, or follows a question word that does ("Where did you")."""
    return i == 0 or (i == 1 and tokens[0].lower in _WH)


def _verb_follows(lower: str, after: str) -> bool:
    """After "did", whether a past form the lexicon also reads as another part of speech is the verb: a form not in
    "-ed" ("Did you left?"), or one that "to" or an object follows ("I didn't wanted to go"); not a participle that
    reads as an adjective alone ("I didn't interested in it", "Did you tired?": a learner's "be", not "do"), nor
    "used to" ("They didn't used to": written so as often as "use to")."""
    if lower == "used" and after == "to":
        return False
    return not lower.endswith("ed") or after in _VERB_FOLLOWS | {"to"}


_RARE_PAST_ZIPF = 3.0  # "sawed", "felled": a verb this rare in the past is not the one a writer meant after "did"


def _bare_form(lower: str, wrong: frozenset[str], subject: bool, other_too: bool = False) -> str | None:
    """The bare verb of ``lower`` where it is a verb's ``wrong`` form and no other (``_only_verb_tag``; ``other_too``:
    though the lexicon also reads it as another part of speech), or a past form that is also the bare form of another,
    rarer verb ("saw": to saw, whose past "sawed" is rare; "fell"), which after "did" and a subject is the past of the
    common one (a word more common than the verb it is the past of, as "weed" is than "wee", is left alone). Left
    alone: such a form whose own verb is common ("found": to found, "founded"; "lay": to lay, "laid"; "wound",
    "bore")."""
    if _only_verb_tag(lower, wrong, subject, other_too):
        return _lemmas(lower)["VERB"][0]
    lemmas = _lemmas(lower)
    verbs = lemmas.get("VERB", ())
    if "VBD" not in wrong or not subject or lower not in verbs or len(verbs) != 2:
        return None
    if set(lemmas) - {"VERB", "NOUN", "ADJ"}:
        return None
    common = next(v for v in verbs if v != lower)
    past = _inflections(lower, "VERB").get("VBD", ())
    if lower not in _inflections(common, "VERB").get("VBD", ()) or not past or zipf(past[0]) >= _RARE_PAST_ZIPF:
        return None
    if zipf(common) <= zipf(lower):
        return None  # "did not weed": "wee" is rarer than "weed"
    return common


# -- "will" in a condition ------------------------------------------------------------------------------------------

_CLAUSE_OPENING = _words("; and but so")  # what may stand before a condition's "if" (not "know if", "asked me, if")


def _conditional(text: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "If I will see him, I will tell him": "will" deleted in an if-clause opening a sentence or a clause, before
    a bare verb, which agrees with its pronoun subject ("If it will rain" -> "If it rains"). Left alone: "if" after
    a verb, a comma or "as" ("I wonder if he will come", "tell me, if it will"), and "you" ("if you will": a polite
    request)."""
    if tokens[i].lower != "if" or (i > 0 and tokens[i - 1].lower not in _CLAUSE_OPENING) or i + 3 >= len(tokens):
        return
    subject, will, verb = tokens[i + 1], tokens[i + 2], tokens[i + 3]
    if subject.lower not in _PRONOUNS - {"you"} or will.lower != "will" or not verb.text.islower():
        return
    if verb.lower == "be":
        form = {"i": "am", "we": "are", "they": "are"}.get(subject.lower, "is")
    elif _present_plain(verb.lower):
        lemma = _lemmas(verb.lower)["VERB"][0]
        form = _inflections(lemma, "VERB").get("VBZ", (lemma,))[0] if subject.lower in _THIRD else verb.lower
    else:
        return
    start = will.start
    yield RuleEdit(start, verb.end, text[start : verb.end], form, "conditional", (tokens[i].start, verb.end))


# -- their, there, they're; your, you're ----------------------------------------------------------------------------

_LIST_JOINS = _words("and or")  # "their thinking and their actions": gerunds in a list
_CONTRACTED = {"their": "they're", "there": "they're", "your": "you're"}
_CLOSED_ADJECTIVES = _words("many few several such other own same all")  # no adjective of a noun phrase's own
_AFTER_VERB_LIKE = _words("is are was were am be been has have had will would can could")  # "is there new evidence"


def _there_their(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "Their going to visit", "Your welcome.": a possessive (or "there") opening a clause before a present
    participle that is no gerund subject (no verb follows it), or "your welcome" alone, is the pronoun and "are";
    "I like there new house": "there" after a verb or preposition, before an adjective and a noun or before a noun
    alone, is the possessive."""
    word = tokens[i]
    lower = word.lower
    opening = i == 0 or tokens[i - 1].lower in _BOUNDARY
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    if lower not in _CONTRACTED or following is None or not following.text.islower():
        return
    after = tokens[i + 2] if i + 2 < len(tokens) else None
    context = (word.start, following.end)
    if (
        opening
        and _verb_tags(following.lower) == {"VBG"}
        and "NOUN" not in _lemmas(following.lower)
        and after is not None
        and after.is_word
        and after.lower not in _LIST_JOINS
        and not _verb_tags(after.lower)
    ):
        yield _edit(word, _CONTRACTED[lower], "there_their", context)
    elif opening and lower == "your" and (adjective_at := _you_are(tokens, i + 1, i == 0)) is not None:
        yield _edit(word, "you're", "there_their", (word.start, tokens[adjective_at].end))
    elif lower == "there" and i > 0 and not opening and tokens[i - 1].lower not in _AFTER_VERB_LIKE:
        adjective = set(_lemmas(following.lower)) == {"ADJ"} and following.lower not in _CLOSED_ADJECTIVES
        if adjective and after is not None and after.text.islower() and word_class(after.lower) == "NOUN":
            yield _edit(word, "their", "there_their", (word.start, after.end))


_INTENSIFIERS = _words("very so too really quite")


def _you_are(tokens: list[_Token], j: int, first: bool) -> int | None:
    """Where "your" opening a clause is "you're": before an adjective, perhaps after an intensifier, that ends the
    sentence ("Your very kind.", "Your right!": one that is also a noun only after an intensifier or where "your"
    opens the sentence, ``first``), or "welcome" ending the clause or before "to" and a verb ("Your welcome to
    stay"); the adjective's index. Not "Your dear," (a letter's close), "Your right to vote", "you and your future"."""
    intensified = j < len(tokens) and tokens[j].lower in _INTENSIFIERS
    k = j + intensified
    if k >= len(tokens) or not tokens[k].text.islower():
        return None
    word, lemmas = tokens[k].lower, _lemmas(tokens[k].lower)
    if word == "welcome":
        return k if _ends_or_wants_verb(tokens, k + 1) else None
    if "ADJ" not in lemmas or word in _CLOSED_ADJECTIVES or ("NOUN" in lemmas and not (intensified or first)):
        return None
    return k if k + 1 == len(tokens) or tokens[k + 1].text in (".", "!", "?") else None


def _ends_or_wants_verb(tokens: list[_Token], j: int) -> bool:
    """Whether the clause ends at ``tokens[j]`` or "to" and a verb follow ("Your welcome." "Your welcome to stay")."""
    if j >= len(tokens) or not tokens[j].is_word:
        return True
    return tokens[j].lower == "to" and j + 1 < len(tokens) and "VERB" in _lemmas(tokens[j + 1].text)


# -- nouns ------------------------------------------------------------------------------------------------------------


_UNCOUNTABLE_PLURALS = frozenset(noun + "s" for noun in _UNCOUNTABLE)


def _uncountable(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    word = tokens[i]
    if word.lower in _UNCOUNTABLE_PLURALS and word.text.islower():
        yield _edit(word, word.lower[:-1], "uncountable", (word.start, word.end))


def _plural(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "two new chair", "five more chair", "three other student": a number word or quantifier, perhaps "more" or
    "other", adjectives, then a singular noun that ends its phrase."""
    if tokens[i].lower not in _COUNTS or (i > 0 and tokens[i - 1].lower in ("the", "a", "one")):
        return
    j = i + 1 + (i + 1 < len(tokens) and tokens[i + 1].lower in ("more", "other"))
    while j < len(tokens) and set(_lemmas(tokens[j].lower)) == {"ADJ"}:
        j += 1
    if j >= len(tokens) or j + 1 >= len(tokens):
        return
    noun, after = tokens[j], tokens[j + 1]
    if not {"NOUN"} <= set(_lemmas(noun.lower)) <= {"NOUN", "VERB"} or not noun.text.islower():
        return
    if noun.lower in _UNCOUNTABLE or after.lower not in _PHRASE_END or _joins_modifiers(tokens, j + 1):
        return
    if _has_tag(noun.lower, "NOUN", "NN") and not _has_tag(noun.lower, "NOUN", "NNS"):
        plural = _inflections(noun.lower, "NOUN").get("NNS", ())
        if plural and plural[0] != noun.lower:
            yield _edit(noun, plural[0], "plural", (tokens[i].start, noun.end))


def _is_plural(lower: str) -> bool:
    """Whether ``lower`` is a plural noun and no singular one."""
    return _has_tag(lower, "NOUN", "NNS") and not _has_tag(lower, "NOUN", "NN")


def _joins_modifiers(tokens: list[_Token], k: int) -> bool:
    """Whether ``tokens[k]`` is "and"/"or" between two nouns before a plural one, the first a modifier like the
    second ("ten other city and police officials")."""
    if tokens[k].lower not in _LIST_JOINS or k + 2 >= len(tokens):
        return False
    return tokens[k + 1].text.islower() and "NOUN" in _lemmas(tokens[k + 1].lower) and _is_plural(tokens[k + 2].lower)


# -- comparatives -----------------------------------------------------------------------------------------------------

_MORE_MOST = _words("more most")


def _comparative(text: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "more taller", "the most cheapest": "more"/"most" deleted before an adjective's own -er/-est form."""
    head = tokens[i].lower
    if head not in _MORE_MOST or i + 1 >= len(tokens):
        return
    adjective = tokens[i + 1]
    lemmas = _lemmas(adjective.lower)
    if not {"ADJ"} <= set(lemmas) <= {"ADJ", "ADV"} or not _has_tag(
        adjective.lower, "ADJ", "JJR" if head == "more" else "JJS"
    ):
        return
    if adjective.lower not in _inflections(lemmas["ADJ"][0], "ADJ").get("JJ", ()):
        start, end = tokens[i].start, adjective.start
        yield RuleEdit(start, end, text[start:end], "", "comparative", (start, adjective.end))


# -- a past time opening the sentence -------------------------------------------------------------------------------

_LAST = _words(
    "night week weekend month year summer winter spring autumn time monday tuesday wednesday thursday friday saturday"
    " sunday"
)  # "Last week", "Last Sunday"
_AGO_COUNT = _NUMBERS | _words("a an one several many some few")  # "Two days ago", "A week ago", "3 years ago"
_AGO_UNIT = _words("day days week weeks month months year years")


def _past_opening(tokens: list[_Token]) -> int | None:
    """Where the sentence goes on after a past time that opens it ("Yesterday", "Last week", "Two days ago", and a
    comma after it); None where no past time opens it."""
    words = [t.lower for t in tokens[:3]] + ["", "", ""]
    if words[0] == "yesterday":
        j = 1
    elif words[0] == "last" and words[1] in _LAST:
        j = 2
    elif (words[0] in _AGO_COUNT or words[0].isdigit()) and words[1] in _AGO_UNIT and words[2] == "ago":
        j = 3
    else:
        return None
    return j + 1 if j < len(tokens) and tokens[j].text == "," else j


def _past_time(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "Yesterday I go to the park", "Last week we visit our grandmother", "Two days ago she buys a car": a past time
    opening the sentence, a pronoun subject, then a full verb's present form: its past. Left alone: "be", "have",
    "do" and modals, a verb that is also a past form ("put"), and a verb before "be" or "not"."""
    if i != 0:
        return
    j = _past_opening(tokens)
    if j is None or j + 1 >= len(tokens) or tokens[j].lower not in _PRONOUNS or not tokens[j + 1].text.islower():
        return
    verb = tokens[j + 1]
    lemma = _lemmas(verb.lower).get("VERB", ("",))[0]
    present = _present_plain(verb.lower) or (_verb_tags(verb.lower) == {"VBZ"} and _present_plain(lemma))
    past = _inflections(lemma, "VERB").get("VBD", ()) if present else ()
    if past and (j + 2 >= len(tokens) or tokens[j + 2].lower not in _NOT_AFTER_VERB):
        yield _edit(verb, past[0], "past_time", (tokens[0].start, verb.end))


# -- verb patterns ----------------------------------------------------------------------------------------------------

_OBJECTS = {"me": "I", "us": "we", "him": "he", "her": "she", "them": "they"}  # an object pronoun and its subject
_SECOND_OBJECT = _words(
    "the a an this these those that what why how who where when whether if everything something anything my your his"
    " our their"
)  # what opens a second object or a clause after the pronoun ("explained her the secret", "explain me why")
_VERB_FOLLOWS = _words("me you him her us them it the a an this that these those my your his our their")


def _forms(lemma: str) -> frozenset[str]:
    """Every form of the verb ``lemma`` (lemminflect)."""
    return frozenset(form for forms in _inflections(lemma, "VERB").values() for form in forms)


_EXPLAIN, _SUGGEST, _LOOK = _forms("explain"), _forms("suggest"), _forms("look")


def _explain_to(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "He explained me the rules", "Could you explain us why": "to" before the person "explain" is said to, an object
    pronoun before a second object or a clause. Left alone: the pronoun as the thing explained ("explain her project",
    "We always explained them.", "You cannot explain me away", "the doctor explained him to me")."""
    if tokens[i].lower not in _EXPLAIN or i + 1 >= len(tokens):
        return
    pronoun = tokens[i + 1]
    if pronoun.lower not in _OBJECTS or not pronoun.text.islower():  # a word in capitals: left alone
        return
    if i + 2 >= len(tokens) or tokens[i + 2].lower not in _SECOND_OBJECT:
        return
    yield _edit(pronoun, f"to {pronoun.lower}", "explain_to", (tokens[i].start, pronoun.end))


def _suggest_that(text: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "He suggested me to see a doctor" -> "He suggested that I see a doctor": "suggest" takes no object and
    infinitive; the person becomes the subject of a that-clause and the verb stays bare (the subjunctive). Left alone:
    "be" and "have" ("suggested him to be the author": proposed that he was)."""
    if tokens[i].lower not in _SUGGEST or i + 3 >= len(tokens):
        return
    pronoun, to, verb = tokens[i + 1], tokens[i + 2], tokens[i + 3]
    if pronoun.lower not in _OBJECTS or to.lower != "to" or not verb.text.islower():
        return
    if "VB" not in _verb_tags(verb.lower) or verb.lower in _VERB_FOLLOWS | {"be", "have"}:
        return  # "Some sources suggested her to be the same person": "suggest" as "put forward"
    subject = _OBJECTS[pronoun.lower]
    yield RuleEdit(pronoun.start, to.end, text[pronoun.start : to.end], f"that {subject}", "suggest_that",
                   (tokens[i].start, verb.end))  # fmt: skip


def _look_forward(_: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "I look forward to hear from you" -> "hearing": "look forward to" takes a gerund. The word after "to" must be
    a bare verb that is no other part of speech, or one that is also a noun with an object after it ("to meet you",
    not "to work": the place)."""
    if tokens[i].lower not in _LOOK or i + 3 >= len(tokens):
        return
    if tokens[i + 1].lower != "forward" or tokens[i + 2].lower != "to":
        return
    verb = tokens[i + 3]
    lemmas = _lemmas(verb.lower)
    if not verb.text.islower() or verb.lower not in lemmas.get("VERB", ()) or len(lemmas["VERB"]) != 1:
        return
    others = set(lemmas) - {"VERB", "AUX"}
    after = tokens[i + 4].lower if i + 4 < len(tokens) else ""
    if (others and not (others == {"NOUN"} and after in _VERB_FOLLOWS)) or after in ("if", "whether"):
        return  # "look forward to see if": to look ahead, to see
    gerund = _inflections(verb.lower, "VERB").get("VBG", ())
    if gerund:
        yield _edit(verb, gerund[0], "look_forward", (tokens[i].start, verb.end))


_APOSTROPHE = re.compile("['’]")
_BE_AGREE = {"am": "agree", "are": "agree", "is": "agrees", "i'm": "agree", "we're": "agree", "you're": "agree",
             "they're": "agree", "he's": "agrees", "she's": "agrees", "it's": "agrees"}  # fmt: skip


def _be_agree(text: str, tokens: list[_Token], i: int) -> Iterator[RuleEdit]:
    """ "I am agree", "I'm agree", "He is not agree": "agree" is a verb, not an adjective: "be" deleted and "agree"
    agreeing with the subject ("He agrees"), or "not" with "do" ("He does not agree"). "am", "is" and "are" only after
    a word (not "Is agree a verb?"); a contraction only of a pronoun ("Let's agree" is right)."""
    be = tokens[i]
    form = _BE_AGREE.get(be.lower)
    contracted = "'" in be.lower  # "I'm" is one token
    if form is None or i + 1 >= len(tokens) or (not contracted and (i == 0 or not tokens[i - 1].is_word)):
        return
    j = i + 1
    negated = tokens[j].lower == "not"
    j += negated
    if j >= len(tokens) or tokens[j].lower != "agree" or not tokens[j].text.islower():
        return
    if negated:
        form = "does not agree" if form == "agrees" else "do not agree"
    subject = _APOSTROPHE.split(be.text)[0]
    replacement = f"{subject} {form}" if contracted else form
    context = (tokens[i - 1].start if i > 0 and not contracted else be.start, tokens[j].end)
    yield RuleEdit(be.start, tokens[j].end, text[be.start : tokens[j].end], replacement, "be_agree", context)


Rule = Callable[[str, list[_Token], int], Iterator[RuleEdit]]
_FIRST_TOKEN: Final = "first token"
Trigger = frozenset[str] | Literal["first token"]
"""Where a rule can yield: at a token whose word (``_Token.lower``) is one of the set, or, ``_FIRST_TOKEN``, only at
the sentence's first token, whatever its word."""

_RULES: tuple[tuple[Rule, Trigger], ...] = (
    (_repeated, _REPEAT_HEADS),
    (_article, _ARTICLES),
    (_capital, _FIRST_TOKEN),
    (_agreement, _PRONOUNS),  # each branch wants a subject of _PLAIN_SUBJECTS or _THIRD
    (_noun_subject, _POSSESSIVES),
    (_there_is, _words("there")),
    (_bare_verb, frozenset(_WANTS_BARE)),
    (_uncountable, _UNCOUNTABLE_PLURALS),
    (_plural, _COUNTS),
    (_comparative, _MORE_MOST),
    (_conditional, _words("if")),
    (_there_their, frozenset(_CONTRACTED)),
    (_past_time, _FIRST_TOKEN),
    (_explain_to, _EXPLAIN),
    (_suggest_that, _SUGGEST),
    (_look_forward, _LOOK),
    (_be_agree, frozenset(_BE_AGREE)),
)
"""Every rule in the order it runs at a token (the first edit found wins on overlap), with its trigger: the words its
early returns let through at ``tokens[i]``; ``find_rule_edits`` runs it at no other token."""


def _rules_for(word: str | None, first: bool) -> tuple[Rule, ...]:
    """The rules whose trigger admits ``word`` (None: a word no trigger names), at the first token or another, in
    ``_RULES``'s order."""
    return tuple(rule for rule, trigger in _RULES if (first if trigger == _FIRST_TOKEN else word in trigger))


_TRIGGER_WORDS = frozenset(word for _, trigger in _RULES if trigger != _FIRST_TOKEN for word in trigger)
_AT_WORD = {word: _rules_for(word, first=False) for word in _TRIGGER_WORDS}
_AT_FIRST_WORD = {word: _rules_for(word, first=True) for word in _TRIGGER_WORDS}
_AT_FIRST = _rules_for(None, first=True)


def _rules_at(tokens: list[_Token], i: int) -> tuple[Rule, ...]:
    """The rules that can yield at ``tokens[i]``, in ``_RULES``'s order."""
    if i == 0:
        return _AT_FIRST_WORD.get(tokens[0].lower, _AT_FIRST)
    return _AT_WORD.get(tokens[i].lower, ())


def _found(text: str, tokens: list[_Token]) -> list[RuleEdit]:
    """Every rule's edits at every token of ``text`` where its trigger admits it, token by token in ``_RULES``'s
    order: the same list as running each rule at each token."""
    found: list[RuleEdit] = []
    for i in range(len(tokens)):
        for rule in _rules_at(tokens, i):
            found.extend(rule(text, tokens, i))
    return found


def find_rule_edits(text: str, starts_sentence: bool = True) -> list[RuleEdit]:
    """The rule edits of one sentence ``text``, sorted, none overlapping another's span (the first found wins);
    ``starts_sentence``: ``text`` starts a sentence (else its first word keeps its case)."""
    found = _found(text, _tokens(text))
    if not starts_sentence:
        found = [edit for edit in found if edit.kind != "capital"]
    kept: list[RuleEdit] = []
    for edit in sorted(found, key=lambda e: (e.start, e.end)):
        if not kept or (edit.start >= kept[-1].end and edit.start > kept[-1].start):
            kept.append(edit)
    return kept
