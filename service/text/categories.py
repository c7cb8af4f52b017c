"""The ERRANT error type of an edit (Bryant, Felice and Briscoe, 2017): operation and category, e.g. ``R:VERB:SVA``.

ERRANT classifies an edit from the tokens it changes, their parts of speech, lemmas and dependency labels (from
spaCy) and a spelling dictionary. spaCy's English models are not installable from the package index here, nor
NLTK's data, and a statistical tagger would cost far more than the 0.1 ms an edit may take, so the tagger here is a
lexicon with context rules:

* ``lemminflect`` (a pinned dependency) gives each known word its parts of speech, lemmas and inflections (its
  lexicon is bundled in the wheel: no download); a word's PTB-like tag (NNS, VBZ, VBD, VBN, VBG, JJR...) is the
  inflection slot it fills;
* closed classes (determiners, pronouns, prepositions and subordinators, conjunctions, particles, modals,
  auxiliaries, numbers) are listed here, tagged as spaCy 2 tags them and mapped to coarse classes as ERRANT maps
  PTB tags (possessive determiners and WDT are DET, subordinators are PREP, EX is ADV, modals are VERB);
* ambiguous words take the class their neighbours favour (after a determiner: a noun; after a subject pronoun,
  a modal or infinitival "to": a verb; after "very": an adjective...), and in a one-for-one replacement a class both
  sides can have;
* "aux" (the dependency label ERRANT reads) is a form of be/have/do or a modal followed, adverbs aside, by a verb
  form it governs; a verb is "preceded by an auxiliary" when the word before the edit, adverbs aside, is one;
* the spelling dictionary is SymSpell's English frequency list, shipped inside ``symspellpy`` (a dependency).

Rules, ERRANT's ``classifier.py`` in its order:

* operation: ``M`` nothing -> tokens, ``U`` tokens -> nothing, ``R`` otherwise. A multi-token edit whose last tokens
  agree but for case is classified without them (", he" -> ". He" is R:PUNCT; "he" -> ". He" is M:PUNCT).
* one-sided edits: a possessive ``'s``/``'`` is NOUN:POSS; a contraction ('s 'd 'll 'm 're 've n't) CONTR;
  infinitival "to" VERB:FORM; auxiliaries only VERB:TENSE ("have", "will"); tokens of one class that class (DET,
  PREP, PRON, CONJ, PART, PUNCT, ADJ, ADV, NOUN, VERB; NUM, INTJ and X are not categories); to + verb VERB;
  otherwise OTHER.
* replacements: only case or whitespace differ ORTH; the same tokens reordered WO; then, one token for one:
  possessive NOUN:POSS; contraction CONTR; was/were VERB:SVA; an unknown original word (not in the dictionary): with
  the replacement's lemma NOUN:INFL/VERB:INFL ("informations", "getted") or MORPH, sharing more than half its
  characters with the replacement (``difflib`` ratio, as ERRANT 2.0 did) SPELL, else the common class or OTHER;
  the same lemma (open classes): -ed/-ing participles ADJ:FORM ("bored" -> "boring"), ADJ:FORM, NOUN:NUM, and for
  verbs VERB:FORM (after an auxiliary, or a participle or gerund involved), VERB:TENSE (a past form), VERB:SVA (a
  3rd person -s); MORPH otherwise, or for the same derivational stem ("quick" -> "quickly", "usage" -> "use");
  two auxiliaries VERB:TENSE; the same class that class; the same role (det, prep, particle...) that class;
  PREP/PART PART; DET/PRON by the replacement's role; otherwise OTHER. Several tokens: auxiliaries VERB:TENSE; one
  class that class (same final verb lemma VERB:TENSE); to + verb VERB:FORM or VERB; noun + 's NOUN:POSS;
  more/most + adjective ADJ:FORM; OTHER.
* The gold codes of W&I+LOCNESS came from ERRANT 2.0: its later string-similarity rules for real words ("form" ->
  "from" SPELL) and its NUM/DET and other/another specials are left out, as the gold data has them OTHER.
* UNK is never returned: an edit that changes nothing is ORTH.
"""

from __future__ import annotations

import difflib
import importlib.resources
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

import lemminflect

OPERATIONS = ("M", "R", "U")  # missing (insert), replaced, unnecessary (delete)
CATEGORIES = (
    "ADJ",
    "ADJ:FORM",
    "ADV",
    "CONJ",
    "CONTR",
    "DET",
    "MORPH",
    "NOUN",
    "NOUN:INFL",
    "NOUN:NUM",
    "NOUN:POSS",
    "ORTH",
    "OTHER",
    "PART",
    "PREP",
    "PRON",
    "PUNCT",
    "SPELL",
    "VERB",
    "VERB:FORM",
    "VERB:INFL",
    "VERB:SVA",
    "VERB:TENSE",
    "WO",
)

_CONTRACTIONS = frozenset(("'d", "'ll", "'m", "n't", "'re", "'s", "'ve"))
_AUX_CONTRACTIONS = {"ca": "can", "sha": "shall", "wo": "will"}
_RARE = frozenset(("INTJ", "NUM", "SYM", "X"))
_OPEN = frozenset(("ADJ", "ADV", "NOUN", "VERB"))
_DEP_CLASS = {"amod": "ADJ", "advmod": "ADV", "det": "DET", "prep": "PREP", "prt": "PART", "punct": "PUNCT"}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Closed classes: word -> (ERRANT class, PTB tag).
_CLOSED: dict[str, tuple[str, str]] = {}
for _group, _pos, _ptb in (
    ("a an the this these those some any each every no another either neither all both half", "DET", "DT"),
    ("which whatever whichever", "DET", "WDT"),
    ("my your his its our their whose thy", "DET", "PRP$"),
    (
        "i me you he him she it we us they them myself yourself himself herself itself ourselves yourselves "
        "themselves oneself mine yours hers ours theirs u",
        "PRON",
        "PRP",
    ),
    ("who whom whoever what", "PRON", "WP"),
    (
        "about above across after against along amongst among around as at before behind below beneath beside besides "
        "between beyond by despite during except for from in inside into near of on onto outside over past per since "
        "than through throughout till toward towards under underneath unlike until upon via with within without "
        "because if whether although though while unless whereas once whilst upto",
        "PREP",
        "IN",
    ),
    ("and or but nor & plus", "CONJ", "CC"),
    (
        "not never also very too just only even still already always often sometimes usually really quite rather "
        "almost again ever here there then now when where why how however therefore moreover furthermore thus hence "
        "instead perhaps maybe together ago soon later away back nowadays anymore besides otherwise else",
        "ADV",
        "RB",
    ),
    ("many few several such other own same", "ADJ", "JJ"),
    ("can could may might must shall should will would ought 'll 'd wo ca sha", "VERB", "MD"),
    (
        "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand "
        "million billion",
        "NUM",
        "CD",
    ),
    ("oh ok okay hi hello yes wow please", "INTJ", "UH"),
):
    for _word in _group.split():
        _CLOSED[_word] = (_pos, _ptb)
_CLOSED["n't"] = ("ADV", "RB")
_CLOSED["'m"] = ("VERB", "VBP")
_CLOSED["'re"] = ("VERB", "VBP")
_CLOSED["'ve"] = ("VERB", "VBP")

_BE = {"be": "VB", "am": "VBP", "are": "VBP", "is": "VBZ", "was": "VBD", "were": "VBD", "been": "VBN", "being": "VBG"}
_HAVE = {"have": "VBP", "has": "VBZ", "had": "VBD", "having": "VBG"}
_DO = {"do": "VBP", "does": "VBZ", "did": "VBD", "doing": "VBG", "done": "VBN"}
_AUX_LEMMA = {**dict.fromkeys(_BE, "be"), **dict.fromkeys(_HAVE, "have"), **dict.fromkeys(_DO, "do")}
_AUXABLE = (
    frozenset(_BE)
    | frozenset(_HAVE)
    | frozenset(_DO)
    | _words("can could may might must shall should will would ought 'll 'd wo ca sha")
)
_MODALS = _words("can could may might must shall should will would ought 'll 'd wo ca sha")
_SUBJECTS = _words("i you we they he she it who there this that which people one")
_SKIPPED = _words("not n't never also always just already still often usually really even ever probably certainly only")
_DEGREE = _words("very so too quite really more most less least extremely pretty rather how as")
_PARTICLES = _words("up out off down")
_SPEC = _words("the a an this these those my your his her its our their some any each every no another either")
_SPEC |= _words("neither all both whose which what many few several such other own same 's")
_PREPS = frozenset(w for w, (p, _) in _CLOSED.items() if p == "PREP") | {"to", "like"}


def _dictionary() -> frozenset[str]:
    path = importlib.resources.files("symspellpy") / "frequency_dictionary_en_82_765.txt"
    with path.open(encoding="utf-8") as f:
        return frozenset(line.split(" ", 1)[0] for line in f)


_KNOWN: frozenset[str] | None = None


def is_word(word: str) -> bool:
    """Whether ``word`` (or its lowercase) is an English word: SymSpell's frequency dictionary, closed classes."""
    global _KNOWN
    if _KNOWN is None:
        _KNOWN = _dictionary() | frozenset(_CLOSED) | frozenset(_AUX_LEMMA)
    return word in _KNOWN or word.lower() in _KNOWN


def _is_punct(token: str) -> bool:
    return all(unicodedata.category(ch)[0] in "PS" for ch in token)


@lru_cache(maxsize=1 << 16)
def _readings(lower: str) -> dict[str, tuple[str, ...]]:
    """Open-class readings of a lowercase word: class -> lemmas (lemminflect's lexicon)."""
    out: dict[str, tuple[str, ...]] = {}
    for upos, lemmas in lemminflect.getAllLemmas(lower).items():
        pos = {"PROPN": "NOUN", "AUX": "VERB"}.get(upos, upos)
        if pos in _OPEN:
            out[pos] = out.get(pos, ()) + tuple(lemmas)
    return out


@lru_cache(maxsize=1 << 16)
def _slots(lemma: str, pos: str, lower: str) -> frozenset[str]:
    """The PTB tags under which ``lower`` is an inflection of ``lemma`` (a ``pos``)."""
    upos = "VERB" if pos == "VERB" else pos
    tags = {tag for tag, forms in lemminflect.getAllInflections(lemma, upos=upos).items() if lower in forms}
    if "VBD" in tags and pos == "VERB" and not lemminflect.getInflection(lemma, "VBN"):
        tags.add("VBN")
    if (
        pos == "VERB"
        and "VBD" in tags
        and lemminflect.getInflection(lemma, "VBN") == lemminflect.getInflection(lemma, "VBD")
    ):
        tags.add("VBN")
    return frozenset(tags)


def _guess(lower: str) -> tuple[str, str, str]:
    """Class, tag and lemma of an unknown word, from its suffix."""
    if lower.endswith("ly"):
        return "ADV", "RB", lower
    if lower.endswith("ing") and len(lower) > 5:
        return "VERB", "VBG", _oov_lemma(lower, "VERB")
    if lower.endswith("ed") and len(lower) > 4:
        return "VERB", "VBD", _oov_lemma(lower, "VERB")
    if lower.endswith(("ous", "ful", "ive", "able", "ible", "ic", "al", "less", "ish")):
        return "ADJ", "JJ", lower
    if lower.endswith("s") and not lower.endswith("ss") and len(lower) > 3:
        return "NOUN", "NNS", _oov_lemma(lower, "NOUN")
    return "NOUN", "NN", lower


@lru_cache(maxsize=1 << 16)
def _oov_lemma(lower: str, pos: str) -> str:
    lemmas = lemminflect.getAllLemmasOOV(lower, pos).get(pos)
    return lemmas[0] if lemmas else lower


@dataclass(frozen=True, slots=True)
class Tagged:
    """A token as ERRANT sees it: its text, coarse class (ERRANT's mapping of PTB tags), PTB tag, lemmas, and a
    dependency-like role: ``aux``, ``poss``, ``prep``, ``prt``, ``det``, ``punct``, ``amod``, ``advmod``, ``subj``,
    ``obj`` or ``""``."""

    text: str
    lower: str
    pos: str
    tag: str
    lemmas: frozenset[str]
    dep: str


def _prev_skipping(before: list[str]) -> str:
    for word in reversed(before):
        lw = word.lower()
        if lw not in _SKIPPED:
            return lw
    return ""


def _next_skipping(after: list[str]) -> str:
    for word in after:
        lw = word.lower()
        if lw not in _SKIPPED and not (lw.endswith("ly") and len(lw) > 4 and set(_readings(lw)) <= {"ADV"}):
            return lw
    return ""


def _verb_tags(lower: str) -> frozenset[str]:
    if lower in _BE:
        return frozenset((_BE[lower],))
    if lower in _HAVE:
        return frozenset((_HAVE[lower],) + (("VBN",) if lower == "had" else ()))
    if lower in _DO:
        return frozenset((_DO[lower],))
    tags: set[str] = set()
    for lemma in _readings(lower).get("VERB", ()):
        tags |= _slots(lemma, "VERB", lower)
    return frozenset(tags)


def _is_aux(lower: str, after: list[str]) -> bool:
    """A form of be/have/do or a modal followed (adverbs aside) by a verb form it governs."""
    nxt = _next_skipping(after)
    if not nxt or _is_punct(nxt):
        return False
    if lower in _MODALS:
        return True
    lemma = _AUX_LEMMA.get(lower)
    if lemma is None:
        return False
    if nxt in _SUBJECTS and len(after) > 1 and lemma == "do":  # "do you know"
        return True
    tags = _verb_tags(nxt)
    if lemma == "be":
        return bool(tags & {"VBG", "VBN"}) and nxt not in _BE
    if lemma == "have":
        return bool(tags & {"VBN"}) or nxt in ("been", "got")
    return bool(tags & {"VB", "VBP"}) and lower not in ("done", "doing")


def _verb_context(prev: str) -> bool:
    return (
        prev in _MODALS
        or prev in _words("i you we they he she it who to n't not never please let")
        or (prev in _AUX_LEMMA and _AUX_LEMMA[prev] == "do")
    )


def _noun_context(prev: str) -> bool:
    return prev in _SPEC or prev in _PREPS or (prev in _CLOSED and _CLOSED[prev][0] == "NUM") or prev.isdigit()


def _scores(lower: str, readings: dict[str, tuple[str, ...]], before: list[str], after: list[str]) -> dict[str, float]:
    prev = before[-1].lower() if before else ""
    prev_skip = _prev_skipping(before)
    nxt = after[0].lower() if after else ""
    scores: dict[str, float] = {}
    for pos in readings:
        s = {"NOUN": 1.0, "VERB": 0.8, "ADJ": 0.9, "ADV": 0.5}[pos]
        if pos == "NOUN":
            if _noun_context(prev):
                s += 2
            elif prev not in _CLOSED and "ADJ" in _readings(prev) and "VERB" not in _readings(prev):
                s += 1.5
            if nxt in ("of", "and", "or", "is", "are", "was", "were") or (nxt in _PREPS and nxt != "to"):
                s += 0.5
            elif not nxt or _is_punct(nxt):
                s += 0.75
            if prev in _DEGREE:
                s -= 1
        elif pos == "VERB":
            vtags = _slots(readings["VERB"][0], "VERB", lower)
            if _verb_context(prev_skip) and vtags & {"VB", "VBP"}:
                s += 3
            if prev_skip in _AUX_LEMMA and vtags & {"VBG", "VBN"}:
                s += 2
            if (nxt in _SPEC and nxt not in ("'s",)) or nxt in _words("me him us them"):
                s += 1.5
            if prev in _SUBJECTS and vtags & {"VBZ", "VBD", "VBP"}:
                s += 2
            elif prev and "NOUN" in _readings(prev) and prev not in _CLOSED and vtags & {"VBZ", "VBD"}:
                s += 0.5
            if lower.endswith("ing") or lower.endswith("ed"):
                s += 0.5
            if prev in _SPEC and prev not in ("that", "which", "what"):
                s -= 1.5
        elif pos == "ADJ":
            if prev in _DEGREE:
                s += 2
            if prev_skip in _BE:
                s += 1.5
            if nxt and nxt not in _CLOSED and not _is_punct(nxt) and "NOUN" in _readings(nxt):
                s += 2.5 if prev in _SPEC or prev in _PREPS else 1
        elif pos == "ADV":
            if lower.endswith("ly"):
                s += 1
            if prev in _DEGREE and "ADJ" not in readings:
                s += 2
            if "VERB" in _readings(prev) and (not nxt or nxt in _PREPS or _is_punct(nxt)):
                s += 1
        scores[pos] = s
    return scores


def _tag_closed(lower: str, text: str, before: list[str], after: list[str]) -> tuple[str, str, str]:
    """Class, tag and role of a closed-class word in context; ("", "", "") when it is not one."""
    prev = before[-1].lower() if before else ""
    nxt = after[0].lower() if after else ""
    if lower in _BE or lower in _HAVE or lower in _DO:
        tag = _BE.get(lower) or _HAVE.get(lower) or _DO[lower]
        if lower == "had" and prev in _HAVE:
            tag = "VBN"
        return "VERB", tag, "aux" if _is_aux(lower, after) else ""
    if lower == "to":
        if nxt and ("VB" in _verb_tags(nxt) or nxt in _BE or nxt in _HAVE or nxt in _DO) and nxt not in _SPEC:
            return "PART", "TO", "aux"
        if nxt.endswith("ing") and "VBG" in _verb_tags(nxt):
            return "PART", "TO", "aux"
        return "PREP", "IN", "prep"
    if lower in ("'s", "’s", "'", "’") and before:
        if lower in ("'", "’") and not (prev.endswith("s") and nxt and not _is_punct(nxt)):
            return "PUNCT", "''", "punct"
        if prev in _words("it he she that there what who here let where how") or lower in ("'", "’"):
            return ("VERB", "VBZ", "") if lower != "'" else ("PART", "POS", "case")
        return "PART", "POS", "case"
    if lower == "that":
        if not nxt or _is_punct(nxt):
            return "DET", "DT", "obj"
        if nxt in _MODALS or nxt in _AUX_LEMMA or nxt == "'s" or _verb_tags(nxt) & {"VBZ", "VBD"}:
            return "DET", "WDT", "nsubj"
        if prev and prev not in _CLOSED and "NOUN" in _readings(prev) and "VERB" not in _readings(prev):
            return "DET", "WDT", "nsubj"
        if nxt not in _SUBJECTS and nxt not in _CLOSED and "NOUN" in _readings(nxt):
            return "DET", "DT", "det"
        return "PREP", "IN", "mark"
    if lower == "her":
        nxt_readings = _readings(nxt)
        if nxt and nxt not in _CLOSED and nxt_readings.keys() & {"NOUN", "ADJ"} and "ADV" not in nxt_readings:
            return "DET", "PRP$", "poss"
        return "PRON", "PRP", "obj"
    if lower in ("what",) and nxt and nxt not in _CLOSED and "NOUN" in _readings(nxt):
        return "DET", "WDT", "det"
    if lower in ("more", "most", "less", "least", "much", "enough"):
        if nxt and nxt not in _CLOSED and set(_readings(nxt)) == {"NOUN"}:
            return "ADJ", "JJ", "amod"
        if lower in ("much",) and (not nxt or _is_punct(nxt)):
            return "ADV", "RB", "advmod"
        return "ADV", "RB", "advmod"
    if lower in _PARTICLES:
        if (prev and "VERB" in _readings(prev) and prev not in _SPEC) or (
            prev in ("it", "them", "him", "her", "me", "us") and (not nxt or _is_punct(nxt))
        ):
            return "PART", "RP", "prt"
        return "PREP", "IN", "prep"
    if lower == "so":
        if nxt == "that" or nxt in _SUBJECTS or nxt in _SPEC:
            return "PREP", "IN", "mark"
        return "ADV", "RB", "advmod"
    if lower == "like":
        if prev in _words("i you we they would 'd n't not to do really also"):
            return "VERB", "VBP", ""
        return "PREP", "IN", "prep"
    if lower == "as" and nxt in ("well", "soon", "much", "many", "long", "far"):
        return "ADV", "RB", "advmod"
    if lower in _CLOSED:
        pos, tag = _CLOSED[lower]
        if pos == "VERB":
            return pos, tag, "aux" if _is_aux(lower, after) or lower in _MODALS else ""
        dep = {"DET": "det", "PREP": "prep", "ADV": "advmod", "ADJ": "amod", "CONJ": "cc"}.get(pos, "")
        if tag == "PRP$":
            dep = "poss"
        elif pos == "PRON":
            dep = "obj" if (prev and not _is_punct(prev) and prev not in _CLOSED) or prev in _PREPS else "nsubj"
        elif pos == "DET" and (not nxt or _is_punct(nxt) or (nxt in _CLOSED and _CLOSED[nxt][0] == "VERB")):
            dep = "nsubj"
        return pos, tag, dep
    if lower.isdigit() or lower.replace(",", "").replace(".", "").isdigit():
        return "NUM", "CD", "nummod"
    if _is_punct(text):
        return "PUNCT", ".", "punct"
    return "", "", ""


@lru_cache(maxsize=1 << 17)
def _tag(text: str, before: tuple[str, ...], after: tuple[str, ...], prefer: str = "") -> Tagged:
    lower = text.lower().replace("’", "'")
    b, a = list(before), list(after)
    pos, tag, dep = _tag_closed(lower, text, b, a)
    if pos:
        lemma = _AUX_LEMMA.get(lower, lower)
        return Tagged(text, lower, pos, tag, frozenset((lemma,)), dep)
    readings = _readings(lower)
    if not readings:
        if text[:1].isupper() and before and text[1:].islower() and before[-1] not in (".", "!", "?", '"'):
            return Tagged(text, lower, "NOUN", "NNP", frozenset((lower,)), "")
        pos, tag, lemma = _guess(lower)
        return Tagged(text, lower, pos, tag, frozenset((lemma, lower)), "")
    scores = _scores(lower, readings, b, a)
    if prefer and prefer in scores:
        scores[prefer] += 100
    pos = max(scores, key=scores.__getitem__)
    lemmas = readings[pos]
    tags: set[str] = set()
    for lemma in lemmas:
        tags |= _slots(lemma, pos, lower)
    tag = _pick_tag(pos, tags, lower, b)
    dep = {"ADJ": "amod", "ADV": "advmod"}.get(pos, "")
    if pos == "VERB" and lemmas[0] in ("be", "have", "do") and _is_aux(lower, a):
        dep = "aux"
    return Tagged(text, lower, pos, tag, frozenset(lemmas), dep)


def _pick_tag(pos: str, tags: set[str], lower: str, before: list[str]) -> str:
    if pos == "NOUN":
        return "NNS" if "NNS" in tags and "NN" not in tags else "NN"
    if pos == "ADJ":
        return "JJR" if "JJR" in tags else "JJS" if "JJS" in tags else "JJ"
    if pos == "ADV":
        return "RB"
    if "VBG" in tags:
        return "VBG"
    if "VBZ" in tags:
        return "VBZ"
    prev = _prev_skipping(before)
    after_aux = prev in _AUX_LEMMA or prev in ("get", "got", "gets", "getting")
    if "VBN" in tags and not after_aux and tags & {"VB", "VBP", "VBD"}:  # "become", "run", "put", "worked"
        tags.discard("VBN")
    if "VBD" in tags and "VBN" in tags:
        return "VBN" if after_aux else "VBD"
    for tag in ("VBD", "VBN"):
        if tag in tags:
            return tag
    prev = _prev_skipping(before)
    return "VB" if prev in _MODALS or prev == "to" or prev in _DO else "VBP"


def word_class(word: str, before: str = "", after: str = "") -> str:
    """The coarse part of speech (UPOS-like: NOUN, PROPN, VERB, AUX, ADJ, ADV, DET, PRON, ADP, CCONJ, SCONJ, PART,
    PUNCT, NUM, INTJ, X) of ``word`` between the texts ``before`` and ``after``."""
    t = _tag(word, tuple(before.split()[-3:]), tuple(after.split()[:3]))
    if t.pos == "VERB":
        return "AUX" if t.dep == "aux" or t.lower in _MODALS or t.lower in _BE else "VERB"
    if t.pos == "NOUN":
        return "PROPN" if t.tag == "NNP" else "NOUN"
    if t.pos == "PREP":
        return "SCONJ" if t.dep == "mark" or t.lower in _SUBORDINATORS else "ADP"
    if t.pos == "CONJ":
        return "CCONJ"
    if t.pos == "PART" and t.tag == "POS":
        return "PART"
    return t.pos


_SUBORDINATORS = _words("because if whether although though while unless whereas once whilst since")


def _tag_side(tokens: list[str], before: list[str], after: list[str], prefer: list[str] | None = None) -> list[Tagged]:
    out = []
    for i, token in enumerate(tokens):
        b = tuple((before + tokens[:i])[-3:])
        a = tuple((tokens[i + 1 :] + after)[:3])
        out.append(_tag(token, b, a, prefer[i] if prefer and i < len(prefer) else ""))
    return out


_DERIVATIONAL = _words(
    """ization isation ation ition ution ion ment ness ity ities ical ically ally ful fully less lessly ence ance ency
    ancy ient ience ent ant ive ively ous ously ist ists ism able ably ible ibly ing er ers or ors est ee age ure ry
    ship ships hood dom ian ians an ese ish ize ise ized ised izing ising ate ated ates ating acy ic ics istic
    istics al ed ly s es ies ied y ty ice"""
)
_LONGEST_SUFFIX = max(map(len, _DERIVATIONAL))


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A crude derivational stem, in the spirit of the (aggressive) Lancaster stemmer ERRANT uses: the longest
    listed suffix stripped, up to three times, then final vowels and a doubled final consonant."""
    for _ in range(3):
        keep = 2 if word[:1] in "aeiou" else 3  # Lancaster's acceptability: what a stem keeps
        for n in range(min(_LONGEST_SUFFIX, len(word) - keep), 0, -1):
            if word[-n:] in _DERIVATIONAL:
                word = word[:-n]
                break
        else:
            break
    word = word.rstrip("aeiouy") or word
    if len(word) > 2 and word[-1] == word[-2]:
        word = word[:-1]
    return word


def _same_stem(a: str, b: str) -> bool:
    sa, sb = _stem(a), _stem(b)
    if len(sa) > len(sb):
        sa, sb = sb, sa
    return sb.startswith(sa) and (len(sa) >= 3 or (sa == sb and len(sa) == 2))


def _same_lemma(o: Tagged, c: Tagged) -> bool:
    return bool(o.lemmas & c.lemmas)


def _preceded_by_aux(before: list[str]) -> bool:
    prev = _prev_skipping(before)
    return prev in _AUX_LEMMA or prev in _MODALS or prev == "to"


def _one_sided(toks: list[Tagged]) -> str:
    if len(toks) == 1:
        t = toks[0]
        if t.tag == "POS":
            return "NOUN:POSS"
        if t.lower in _CONTRACTIONS:
            return "CONTR"
        if t.lower == "to" and t.pos == "PART":
            return "VERB:FORM"
    pos = [t.pos for t in toks]
    dep = [t.dep for t in toks]
    if set(dep) <= {"aux"}:
        return "VERB:TENSE"
    if len(set(pos)) == 1 and pos[0] not in _RARE:
        return pos[0]
    if len(set(dep)) == 1 and dep[0] in _DEP_CLASS:
        return _DEP_CLASS[dep[0]]
    if set(pos) == {"PART", "VERB"}:
        return "VERB"
    return "OTHER"


def _two_sided(o_words: list[str], c_words: list[str], before: list[str], after: list[str]) -> str:
    o_low = [w.lower() for w in o_words]
    c_low = [w.lower() for w in c_words]
    if "".join(o_low) == "".join(c_low):
        return "ORTH"
    if sorted(o_low) == sorted(c_low):
        return "WO"
    o_toks = _tag_side(o_words, before, after)
    if len(o_words) == len(c_words) == 1:
        c_toks = _tag_side(c_words, before, after)
        o, c = o_toks[0], c_toks[0]
        shared = _shared_lemma_classes(o.lower, c.lower)
        if shared and o.pos in _OPEN | {"NOUN"} and c.pos in _OPEN:
            # Two forms of one word: the class of that word their contexts favour together.
            if len(shared) == 1:
                best = next(iter(shared))
            else:
                so = _scores(o.lower, _readings(o.lower), before, after)
                sc = _scores(c.lower, _readings(c.lower), before, after)
                best = max(shared, key=lambda p: so.get(p, 0) + sc.get(p, 0))
            if o.pos != best:
                o = _tag_side(o_words, before, after, [best])[0]
            if c.pos != best:
                c = _tag_side(c_words, before, after, [best])[0]
        elif o.pos != c.pos and o.pos in _OPEN and c.pos in _OPEN:
            # A class both words can have: the one their context favours together.
            common = set(_readings(o.lower)) & set(_readings(c.lower))
            if common:
                if c.pos in common:
                    o = _tag_side(o_words, before, after, [c.pos])[0]
                elif o.pos in common:
                    c = _tag_side(c_words, before, after, [o.pos])[0]
        if (
            o.dep != c.dep
            and "aux" in (o.dep, c.dep)
            and {o.lower, c.lower} <= _AUXABLE
            and "VERB" in _readings(_next_skipping(after))
        ):
            # One auxiliary for another before a verb that may not suit the original: both are auxiliaries.
            o, c = replace(o, dep="aux"), replace(c, dep="aux")
        return _one_to_one(o, c, before)
    c_toks = _tag_side(c_words, before, after)
    return _many(o_toks, c_toks)


def _shared_lemma_classes(a: str, b: str) -> set[str]:
    ra, rb = _readings(a), _readings(b)
    return {pos for pos in ra.keys() & rb.keys() if set(ra[pos]) & set(rb[pos])}


def _one_to_one(o: Tagged, c: Tagged, before: list[str]) -> str:
    ol, cl = o.lower, c.lower
    pair = {ol, cl}
    if o.tag == "POS" or c.tag == "POS":
        return "NOUN:POSS"
    if (ol in _CONTRACTIONS or cl in _CONTRACTIONS) and o.pos == c.pos:
        return "CONTR"
    if _AUX_CONTRACTIONS.get(ol) == cl or _AUX_CONTRACTIONS.get(cl) == ol:
        return "CONTR"
    if ol in _AUX_CONTRACTIONS or cl in _AUX_CONTRACTIONS:
        return "VERB:TENSE"
    if pair == {"was", "were"}:
        return "VERB:SVA"
    if o.text.isalpha() and not is_word(o.text):
        if (o.pos == "NOUN" and o.tag != "NNP") or o.pos == "VERB":
            lemma = _oov_lemma(ol, c.pos if c.pos in ("NOUN", "VERB") else o.pos)
            same = lemma in c.lemmas or (_stem(ol) == _stem(cl) and ol[:3] == cl[:3] and _inflected(ol, cl))
        else:
            same = False
        if same:
            if c.pos in ("NOUN", "VERB"):
                return c.pos + ":INFL"
            return "MORPH"
        # ERRANT 2.0 (the version of the W&I+LOCNESS release): half the characters shared is a spelling error.
        if difflib.SequenceMatcher(None, o.text, c.text).ratio() > 0.5:
            return "SPELL"
        return o.pos if o.pos == c.pos and o.pos not in _RARE else "OTHER"
    if _same_lemma(o, c) and o.pos in _OPEN and c.pos in _OPEN:
        if _participles(ol, cl) and o.dep != "aux" and not (before and before[-1].lower() in _AUX_LEMMA):
            return "ADJ:FORM"
        if o.pos == c.pos:
            if o.pos == "ADJ":
                return "ADJ:FORM"
            if o.pos == "NOUN":
                return "NOUN:NUM"
            if o.pos == "VERB":
                if _preceded_by_aux(before) and not (o.dep == "aux" and c.dep == "aux"):
                    return "VERB:FORM"
                if {o.tag, c.tag} & {"VBG", "VBN"}:
                    return "VERB:FORM"
                if "VBD" in (o.tag, c.tag):
                    return "VERB:TENSE"
                if "VBZ" in (o.tag, c.tag):
                    return "VERB:SVA"
                if o.dep == "aux" and c.dep == "aux":
                    return "VERB:TENSE"
        if {o.dep, c.dep} <= {"amod"} or _participles(ol, cl):
            return "ADJ:FORM"
        if o.pos == "ADJ" and c.tag == "NNS":
            return "NOUN:NUM"
        if c.tag in ("VBG", "VBN"):
            return "VERB:FORM"
        if c.tag == "VBD":
            return "VERB:TENSE"
        if c.tag == "VBZ":
            return "VERB:SVA"
        return "MORPH"
    if o.pos in _OPEN and c.pos in _OPEN and _same_stem(ol, cl):
        return "MORPH"
    if o.dep == "aux" and c.dep == "aux":
        return "VERB:TENSE"
    if o.pos == c.pos and o.pos not in _RARE:
        return o.pos
    if o.dep == c.dep and o.dep in _DEP_CLASS:
        return _DEP_CLASS[o.dep]
    if {o.pos, c.pos} == {"PART", "PREP"} or {o.dep, c.dep} == {"prt", "prep"}:
        return "PART"
    if {o.pos, c.pos} == {"DET", "PRON"}:
        if c.pos == "PRON" or c.dep in ("nsubj", "obj"):
            return "PRON"
        if c.dep == "poss":
            return "DET"
    if ol == "your" and cl == "yours":
        return "PRON"
    if pair == {"no", "not"}:
        return "OTHER"
    return "OTHER"


def _participles(o: str, c: str) -> bool:
    """ "bored" and "boring": participles both used as adjectives (spaCy tags them JJ)."""
    pair = sorted((o, c), key=lambda w: w.endswith("ing"))
    return (
        pair[0].endswith("ed")
        and pair[1].endswith("ing")
        and ("ADJ" in _readings(pair[0]) or "ADJ" in _readings(pair[1]))
    )


def _inflected(o: str, c: str) -> bool:
    return o.endswith(("s", "ed", "ing")) or c.endswith(("s", "ed", "ing"))


def _many(o_toks: list[Tagged], c_toks: list[Tagged]) -> str:
    o_pos = [t.pos for t in o_toks]
    c_pos = [t.pos for t in c_toks]
    deps = {t.dep for t in o_toks + c_toks}
    if deps <= {"aux"}:
        return "VERB:TENSE"
    both = set(o_pos + c_pos)
    if len(both) == 1:
        if o_pos[0] == "VERB" and o_toks[-1].lemmas & c_toks[-1].lemmas:
            return "VERB:TENSE"
        if o_pos[0] not in _RARE:
            return o_pos[0]
    if len(deps) == 1:
        dep = next(iter(deps))
        if dep in _DEP_CLASS:
            return _DEP_CLASS[dep]
    if both == {"PART", "VERB"}:
        if o_toks[-1].lemmas & c_toks[-1].lemmas:
            return "VERB:FORM"
        return "VERB"
    if (o_pos == ["NOUN", "PART"] or c_pos == ["NOUN", "PART"]) and o_toks[0].lemmas & c_toks[0].lemmas:
        return "NOUN:POSS"
    if (
        (o_toks[0].lower in ("most", "more") or c_toks[0].lower in ("most", "more"))
        and o_toks[-1].lemmas & c_toks[-1].lemmas
        and len(o_toks) <= 2
        and len(c_toks) <= 2
    ):
        return "ADJ:FORM"
    return "OTHER"


def _split(text: str) -> list[str]:
    return text.replace("’", "'").split()


def _classify(o_words: list[str], c_words: list[str], before: list[str], after: list[str]) -> str:
    if not o_words and not c_words:
        return "R:ORTH"
    if not o_words:
        return "M:" + _one_sided(_tag_side(c_words, before, after))
    if not c_words:
        return "U:" + _one_sided(_tag_side(o_words, before, after))
    if o_words == c_words:
        return "R:ORTH"
    if o_words[-1].lower() == c_words[-1].lower() and (len(o_words) > 1 or len(c_words) > 1):
        return _classify(o_words[:-1], c_words[:-1], before, [c_words[-1], *after])
    if len(o_words) == 1 and len(c_words) <= 2 and not is_word(o_words[0]):
        # "dont" -> "don't" / "do n't": only apostrophes and spaces differ.
        plain = o_words[0].lower().replace("'", "")
        if plain == "".join(c_words).lower().replace("'", "") and "'" in "".join(c_words):
            return "R:CONTR"
    return "R:" + _two_sided(o_words, c_words, before, after)


def categorize(original: str, replacement: str, before: str = "", after: str = "") -> str:
    """The ERRANT code of replacing ``original`` by ``replacement`` (either may be empty) in a sentence whose text
    before and after the edit is ``before`` and ``after``: operation and category, e.g. "R:VERB:SVA", "M:DET",
    "U:PUNCT", "R:SPELL", "R:WO" (UNK is never returned)."""
    b = _split(before)[-3:]
    a = _split(after)[:3]
    return _classify(_split(original), _split(replacement), b, a)
