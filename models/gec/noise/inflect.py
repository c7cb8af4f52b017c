"""Rule-based English inflection: noun number, verb forms, adjective degree, part-of-speech lookup.

Irregular forms come from the hand-written tables below. When the ``lemminflect`` package is
installed its lexicon (about 100k English word forms with their possible parts of speech) is used
to tell nouns from verbs and to inflect irregular words the tables miss; without it a small
suffix-based fallback is used and unknown words are simply not treated as verbs.

Verb forms use Penn tags: VB (base), VBZ (3rd person singular), VBD (past), VBN (participle),
VBG (-ing).
"""

from __future__ import annotations

import os
from functools import lru_cache

from models.gec.noise import words as wl

try:  # pragma: no cover - exercised implicitly
    if os.environ.get("GEC_NOISE_NO_LEMMINFLECT"):
        raise ImportError
    import lemminflect as _lemminflect
except ImportError:  # pragma: no cover
    _lemminflect = None

HAS_LEXICON = _lemminflect is not None

_UPOS_TAGS = {
    "NOUN": ("NN", "NNS"),
    "VERB": ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ"),
    "ADJ": ("JJ", "JJR", "JJS"),
    "ADV": ("RB", "RBR", "RBS"),
}
_lex_tables: list[tuple[dict, dict, dict, dict]] = []
_EMPTY: dict = {}


def _tables() -> tuple[dict, dict, dict, dict] | None:
    """lemminflect's lookup tables, read directly (its public functions deep-copy every
    answer, which costs more than the rest of the generator). None if unavailable."""
    if _lemminflect is None:
        return None
    if not _lex_tables:
        try:
            from lemminflect.core.Inflections import Inflections
            from lemminflect.core.Lemmatizer import Lemmatizer

            lem, inf = Lemmatizer(), Inflections()
            _lex_tables.append(
                (lem._getLemmaDict(), lem._getOverridesDict(), inf._getInflDict(), inf._getOverridesDict())
            )
        except (ImportError, AttributeError):  # pragma: no cover - other lemminflect versions
            _lex_tables.append((_EMPTY, _EMPTY, _EMPTY, _EMPTY))
    tables = _lex_tables[0]
    return None if tables[0] is _EMPTY else tables


def _all_lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """upos -> lemmas of a lower-case word (read-only; do not modify)."""
    tables = _tables()
    if tables is None:
        return _lemminflect.getAllLemmas(word) if _lemminflect is not None else {}
    lemmas, overrides = tables[0].get(word, _EMPTY), tables[1].get(word)
    return {**lemmas, **overrides} if overrides else lemmas


def _all_inflections(lemma: str, upos: str) -> dict[str, tuple[str, ...]]:
    """Penn tag -> forms of a lower-case lemma for one part of speech (read-only)."""
    tables = _tables()
    if tables is None:
        return _lemminflect.getAllInflections(lemma, upos) if _lemminflect is not None else {}
    forms, overrides = tables[2].get(lemma, _EMPTY), tables[3].get(lemma)
    if overrides:
        forms = {**forms, **overrides}
    tags = _UPOS_TAGS[upos]
    return {t: f for t, f in forms.items() if t in tags}


VERB_FORMS = ("VB", "VBZ", "VBD", "VBN", "VBG")

_IRREGULAR_VERBS = """
arise arose arisen|awake awoke awoken|bear bore born|beat beat beaten|become became become
begin began begun|bend bent bent|bet bet bet|bind bound bound|bite bit bitten|bleed bled bled
blow blew blown|break broke broken|breed bred bred|bring brought brought|build built built
burst burst burst|buy bought bought|cast cast cast|catch caught caught|choose chose chosen
cling clung clung|come came come|cost cost cost|creep crept crept|cut cut cut|deal dealt dealt
dig dug dug|do did done|draw drew drawn|drink drank drunk|drive drove driven|eat ate eaten
fall fell fallen|feed fed fed|feel felt felt|fight fought fought|find found found|flee fled fled
fly flew flown|forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven
freeze froze frozen|get got got|give gave given|go went gone|grind ground ground|grow grew grown
hang hung hung|have had had|hear heard heard|hide hid hidden|hit hit hit|hold held held
hurt hurt hurt|keep kept kept|kneel knelt knelt|know knew known|lay laid laid|lead led led
leave left left|lend lent lent|let let let|lie lay lain|light lit lit|lose lost lost
make made made|mean meant meant|meet met met|mistake mistook mistaken|overcome overcame overcome
pay paid paid|put put put|quit quit quit|read read read|ride rode ridden|ring rang rung
rise rose risen|run ran run|say said said|see saw seen|seek sought sought|sell sold sold
send sent sent|set set set|shake shook shaken|shine shone shone|shoot shot shot|show showed shown
shrink shrank shrunk|shut shut shut|sing sang sung|sink sank sunk|sit sat sat|sleep slept slept
slide slid slid|speak spoke spoken|spend spent spent|spin spun spun|split split split
spread spread spread|spring sprang sprung|stand stood stood|steal stole stolen|stick stuck stuck
sting stung stung|strike struck struck|swear swore sworn|sweep swept swept|swim swam swum
swing swung swung|take took taken|teach taught taught|tear tore torn|tell told told
think thought thought|throw threw thrown|understand understood understood|upset upset upset
undertake undertook undertaken|wake woke woken|wear wore worn|weep wept wept|win won won
wind wound wound|withdraw withdrew withdrawn|write wrote written|overtake overtook overtaken
undergo underwent undergone|broadcast broadcast broadcast|bid bid bid|forecast forecast forecast
hurt hurt hurt|shed shed shed|spit spat spat|stink stank stunk|arise arose arisen
"""
# Frequent regular verbs: the fallback lexicon when lemminflect is absent.
_REGULAR_VERBS = """
accept achieve add agree allow answer appear apply arrive ask attend avoid believe belong call
change check clean close collect compare complain complete consider contain continue cook copy
cover cross cry dance decide depend describe design destroy develop die discover discuss dress
drop earn enjoy enter explain fail fill finish fix follow happen hate help hope hurry improve
include increase intend introduce invite join jump kill kiss laugh learn like listen live look
love manage marry match matter mention miss move need offer open order own paint pass pick plan
play prefer prepare present prevent produce promise protect provide pull push reach realise
realize receive recommend reduce refer relax remember remove repeat reply report require rest
return save seem serve share shop smile solve sound start stay stop study succeed suggest supply
support suppose surprise talk thank touch train travel try turn use visit wait walk want wash
watch wish wonder work worry agree create borrow organise organize rain snow point look
"""
_IRREGULAR_NOUNS = """
man men|woman women|child children|person people|foot feet|tooth teeth|mouse mice|goose geese
life lives|wife wives|knife knives|leaf leaves|half halves|wolf wolves|shelf shelves
thief thieves|loaf loaves|calf calves|self selves|crisis crises|analysis analyses
thesis theses|hypothesis hypotheses|phenomenon phenomena|criterion criteria|medium media
potato potatoes|tomato tomatoes|hero heroes|echo echoes|sheep sheep|fish fish|deer deer
series series|species species|aircraft aircraft|policeman policemen|businessman businessmen
"""
# Regular-looking plurals learners produce for irregular nouns ("childs", "mans", "lifes").
OVERREGULAR_PLURALS = {
    "child": "childs",
    "man": "mans",
    "woman": "womans",
    "person": "persons",
    "foot": "foots",
    "tooth": "tooths",
    "life": "lifes",
    "wife": "wifes",
    "knife": "knifes",
    "leaf": "leafs",
    "thief": "thiefs",
    "city": "citys",
    "country": "countrys",
    "family": "familys",
    "people": "peoples",
    "children": "childrens",
    "mouse": "mouses",
    "half": "halfs",
}
_SINGULAR_IN_S = frozenset(
    {
        "news",
        "physics",
        "mathematics",
        "economics",
        "politics",
        "bus",
        "gas",
        "class",
        "business",
        "process",
        "access",
        "success",
        "address",
        "glass",
        "boss",
        "kiss",
        "loss",
        "focus",
        "virus",
        "status",
        "campus",
        "bonus",
        "census",
        "basis",
        "analysis",
        "crisis",
        "this",
        "its",
        "his",
        "is",
        "was",
        "has",
        "does",
        "us",
        "as",
        "always",
        "perhaps",
        "thus",
        "various",
        "famous",
        "yes",
        "less",
        "unless",
        "across",
        "series",
        "species",
        "christmas",
        "athletics",
        "genius",
        "chaos",
        "lens",
        "atlas",
        "canvas",
        "bias",
        "plus",
        "minus",
        "previous",
        "serious",
        "nervous",
        "dangerous",
        "delicious",
        "enormous",
        "jealous",
        "religious",
        "obvious",
        "curious",
        "anxious",
        "generous",
        "tennis",
        "means",
    }
)
_IRREGULAR_ADJS = {
    "good": ("better", "best"),
    "bad": ("worse", "worst"),
    "far": ("further", "furthest"),
    "little": ("less", "least"),
    "many": ("more", "most"),
    "much": ("more", "most"),
    "well": ("better", "best"),
}


def _parse_table(table: str) -> list[list[str]]:
    rows = []
    for line in table.strip().splitlines():
        for item in line.split("|"):
            if item.strip():
                rows.append(item.split())
    return rows


_VERB_ROWS = _parse_table(_IRREGULAR_VERBS)
IRREGULAR_VERBS: dict[str, tuple[str, str]] = {r[0]: (r[1], r[2]) for r in _VERB_ROWS}
_IRREGULAR_LEMMA: dict[str, str] = {}
for _base, (_past, _part) in IRREGULAR_VERBS.items():
    _IRREGULAR_LEMMA.setdefault(_past, _base)
    _IRREGULAR_LEMMA.setdefault(_part, _base)
_IRREGULAR_LEMMA.update({"lay": "lie", "found": "find", "left": "leave", "saw": "see", "has": "have", "does": "do"})
_KNOWN_VERBS = frozenset(IRREGULAR_VERBS) | frozenset(_REGULAR_VERBS.split()) | {"be"}

_NOUN_ROWS = _parse_table(_IRREGULAR_NOUNS)
IRREGULAR_PLURALS: dict[str, str] = {r[0]: r[1] for r in _NOUN_ROWS}
IRREGULAR_SINGULARS: dict[str, str] = {r[1]: r[0] for r in _NOUN_ROWS}

_BE = {"VB": "be", "VBZ": "is", "VBD": "was", "VBN": "been", "VBG": "being"}
_BE_LEMMA = frozenset({"be", "am", "is", "are", "was", "were", "been", "being"})
_HAVE = {"VB": "have", "VBZ": "has", "VBD": "had", "VBN": "had", "VBG": "having"}
_DOUBLE_FINAL = frozenset(
    {
        "admit",
        "commit",
        "occur",
        "prefer",
        "refer",
        "regret",
        "permit",
        "control",
        "omit",
        "submit",
        "transfer",
        "equip",
        "compel",
        "propel",
        "patrol",
        "travel",
        "cancel",
        "label",
        "level",
        "model",
        "signal",
        "quarrel",
        "fulfil",
        "enrol",
        "marvel",
        "fuel",
        "dial",
        "begin",
        "forget",
        "upset",
        "recur",
        "deter",
        "expel",
        "excel",
        "rebel",
        "worship",
    }
)
_VOWELS = "aeiou"


# --- part of speech -----------------------------------------------------------------------


@lru_cache(maxsize=65536)
def pos_tags(word: str) -> frozenset[str]:
    """Possible open-class parts of speech of a lower-case word: NOUN, VERB, ADJ, ADV, AUX.

    Empty for unknown words and for closed-class words (articles, prepositions, ...).
    """
    if not word.isalpha() and "-" not in word:
        return frozenset()
    if _lemminflect is not None:
        tags = set(_all_lemmas(word))
        if word in IRREGULAR_SINGULARS or word in IRREGULAR_PLURALS:
            tags.add("NOUN")
        if word in _IRREGULAR_LEMMA or word in _KNOWN_VERBS:
            tags.add("VERB")
        return frozenset(tags)
    return _fallback_pos(word)


_ADJ_SUFFIXES = ("ous", "ful", "ive", "able", "ible", "al", "ic", "less", "ish", "ent", "ant", "ary")


def _fallback_pos(word: str) -> frozenset[str]:
    tags: set[str] = set()
    if word in wl.CLOSED_CLASS:
        return frozenset()
    if _rule_verb_lemma(word) is not None:
        tags.add("VERB")
    if word in IRREGULAR_PLURALS or word in IRREGULAR_SINGULARS or word in wl.UNCOUNTABLE:
        tags.add("NOUN")
    if word.endswith("ly") and len(word) > 4:
        tags.add("ADV")
    elif word.endswith(_ADJ_SUFFIXES):
        tags.add("ADJ")
    if word in wl.PARTICIPLE_ADJS:
        tags.add("ADJ")
    if not tags and len(word) > 2:
        tags.add("NOUN")  # unknown content word: most likely a noun
    return frozenset(tags)


def is_noun(word: str) -> bool:
    """True if the lower-case ``word`` can be a (common) noun."""
    return "NOUN" in pos_tags(word)


def is_verb(word: str) -> bool:
    """True if the lower-case ``word`` can be a verb form."""
    return verb_lemma(word) is not None


def is_adj(word: str) -> bool:
    """True if the lower-case ``word`` can be an adjective."""
    return "ADJ" in pos_tags(word)


@lru_cache(maxsize=65536)
def is_known_word(word: str) -> bool:
    """True for lower-case words of the lexicon or the closed-class lists (not names).

    Unlike :func:`pos_tags` this never guesses: without lemminflect only the built-in lists
    count, so an unknown (e.g. misspelt) word is reported as unknown.
    """
    if word in wl.CLOSED_CLASS or word in wl.NUMBERS:
        return True
    if _lemminflect is not None:
        return bool(_all_lemmas(word)) or word in _IRREGULAR_LEMMA
    return (
        _rule_verb_lemma(word) is not None
        or word in IRREGULAR_PLURALS
        or word in IRREGULAR_SINGULARS
        or word in wl.UNCOUNTABLE
        or word in _SINGULAR_IN_S
    )


# --- nouns ----------------------------------------------------------------------------------


def _rule_plural(noun: str) -> str:
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in _VOWELS:
        return noun[:-1] + "ies"
    return noun + "s"


@lru_cache(maxsize=65536)
def pluralize(noun: str) -> str:
    """Plural of a lower-case singular noun ("city" -> "cities", "child" -> "children")."""
    if noun in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[noun]
    if noun in wl.UNCOUNTABLE:
        return _rule_plural(noun)  # "informations": the learner error we want
    if _lemminflect is not None:
        forms = _all_inflections(noun, "NOUN").get("NNS")
        if forms:
            for f in forms:
                if f != noun:
                    return f
    return _rule_plural(noun)


@lru_cache(maxsize=65536)
def singularize(noun: str) -> str | None:
    """Singular of a lower-case plural noun, or None if ``noun`` does not look plural."""
    if noun in IRREGULAR_SINGULARS:
        return IRREGULAR_SINGULARS[noun]
    if noun in _SINGULAR_IN_S or noun in IRREGULAR_PLURALS or len(noun) < 3:
        return None
    if _lemminflect is not None:
        lemmas = _all_lemmas(noun).get("NOUN")
        if lemmas:
            for lemma in lemmas:
                if lemma != noun and noun in _all_inflections(lemma, "NOUN").get("NNS", ()):
                    return lemma
            return None
    if not noun.endswith("s") or noun.endswith(("ss", "us", "is", "ous")):
        return None
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith(("sses", "xes", "ches", "shes", "zes")):
        return noun[:-2]
    return noun[:-1]


def is_plural(noun: str) -> bool:
    """True if the lower-case ``noun`` is a plural form."""
    return singularize(noun) is not None


# --- verbs ----------------------------------------------------------------------------------


def _syllables(word: str) -> int:
    groups = 0
    prev = False
    for ch in word:
        v = ch in _VOWELS or (ch == "y" and groups > 0)
        if v and not prev:
            groups += 1
        prev = v
    return groups


def _doubles_final(verb: str) -> bool:
    if verb in _DOUBLE_FINAL:
        return True
    if len(verb) < 3 or verb[-1] in "wxy" + _VOWELS:
        return False
    if verb[-2] not in _VOWELS or verb[-3] in _VOWELS:
        return False
    return _syllables(verb) == 1


def _rule_inflect(verb: str, form: str) -> str:
    if form in ("VB",):
        return verb
    if form == "VBZ":
        if verb.endswith(("s", "x", "z", "ch", "sh", "o")):
            return verb + "es"
        if verb.endswith("y") and verb[-2:-1] not in _VOWELS:
            return verb[:-1] + "ies"
        return verb + "s"
    if form in ("VBD", "VBN"):
        if verb.endswith("e"):
            return verb + "d"
        if verb.endswith("y") and verb[-2:-1] not in _VOWELS:
            return verb[:-1] + "ied"
        if _doubles_final(verb):
            return verb + verb[-1] + "ed"
        return verb + "ed"
    # VBG
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")) and verb != "be":
        return verb[:-1] + "ing"
    if _doubles_final(verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


@lru_cache(maxsize=65536)
def inflect_verb(lemma: str, form: str) -> str:
    """The ``form`` (VB, VBZ, VBD, VBN, VBG) of a lower-case verb lemma ("go", "VBD") -> "went"."""
    if lemma == "be":
        return _BE[form]
    if lemma == "have":
        return _HAVE[form]
    if lemma in IRREGULAR_VERBS and form in ("VBD", "VBN"):
        past, part = IRREGULAR_VERBS[lemma]
        return past if form == "VBD" else part
    if lemma == "do" and form == "VBZ":
        return "does"
    if lemma in _KNOWN_VERBS or _lemminflect is None:
        return _rule_inflect(lemma, form)
    infl = _all_inflections(lemma, "VERB")
    forms = infl.get(form) or (infl.get("VBD") if form == "VBN" else None)
    if forms:
        rule = _rule_inflect(lemma, form)
        return rule if rule in forms else forms[0]
    return _rule_inflect(lemma, form)


def _rule_verb_lemma(word: str) -> str | None:
    """Lemma of ``word`` from the irregular table and the list of frequent regular verbs."""
    if word in _BE_LEMMA:
        return "be"
    if word in _KNOWN_VERBS:
        return word
    if word in _IRREGULAR_LEMMA:
        return _IRREGULAR_LEMMA[word]
    candidates: list[str] = []
    if word.endswith("ies"):
        candidates.append(word[:-3] + "y")
    if word.endswith("es"):
        candidates.append(word[:-2])
    if word.endswith("s"):
        candidates.append(word[:-1])
    if word.endswith("ied"):
        candidates.append(word[:-3] + "y")
    if word.endswith("ed"):
        candidates += [word[:-2], word[:-1], word[:-3]]
    if word.endswith("ing"):
        candidates += [word[:-3], word[:-3] + "e", word[:-4], word[:-4] + "ie"]
    for c in candidates:
        if c in _KNOWN_VERBS:
            return c
    return None


@lru_cache(maxsize=65536)
def verb_lemma(word: str) -> str | None:
    """Base form of a lower-case verb form ("went" -> "go", "studies" -> "study"), else None."""
    rule = _rule_verb_lemma(word)
    if rule is not None or _lemminflect is None:
        return rule
    lemmas = _all_lemmas(word).get("VERB")
    if not lemmas:
        return None
    for lemma in lemmas:
        if word in verb_forms(lemma).values():
            return lemma
    return lemmas[0]


@lru_cache(maxsize=16384)
def verb_forms(lemma: str) -> dict[str, str]:
    """All five forms of a verb lemma, keyed by tag."""
    return {f: inflect_verb(lemma, f) for f in VERB_FORMS}


@lru_cache(maxsize=65536)
def verb_tags(word: str) -> frozenset[str]:
    """Which verb forms the lower-case ``word`` can be (empty if it is no verb)."""
    if word in ("am", "are"):
        return frozenset({"VBP"})
    if word == "were":
        return frozenset({"VBD"})
    lemma = verb_lemma(word)
    if lemma is None:
        return frozenset()
    forms = verb_forms(lemma)
    tags = {tag for tag, f in forms.items() if f == word}
    if _lemminflect is not None and not tags:
        infl = _all_inflections(lemma, "VERB")
        tags = {tag for tag, fs in infl.items() if word in fs and tag in VERB_FORMS}
    return frozenset(tags)


def third_person(lemma: str) -> str:
    """3rd person singular present ("go" -> "goes")."""
    return inflect_verb(lemma, "VBZ")


def past(lemma: str) -> str:
    """Simple past ("go" -> "went")."""
    return inflect_verb(lemma, "VBD")


def participle(lemma: str) -> str:
    """Past participle ("go" -> "gone")."""
    return inflect_verb(lemma, "VBN")


def gerund(lemma: str) -> str:
    """-ing form ("make" -> "making")."""
    return inflect_verb(lemma, "VBG")


# --- adjectives -----------------------------------------------------------------------------


@lru_cache(maxsize=16384)
def adj_degree(word: str) -> tuple[str, str] | None:
    """(base, "JJR"|"JJS") for comparative/superlative adjectives ("bigger" -> ("big", "JJR"))."""
    for base, (comp, sup) in _IRREGULAR_ADJS.items():
        if word == comp and base not in ("many", "much", "little"):
            return base, "JJR"
        if word == sup and base not in ("many", "much", "little"):
            return base, "JJS"
    if not word.endswith(("er", "est")) or len(word) < 5:
        return None
    if _lemminflect is not None:
        for base in _all_lemmas(word).get("ADJ", ()):
            infl = _all_inflections(base, "ADJ")
            if word in infl.get("JJR", ()):
                return base, "JJR"
            if word in infl.get("JJS", ()):
                return base, "JJS"
        return None
    return None
