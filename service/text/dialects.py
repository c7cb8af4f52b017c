"""English dialects: the spelling variants of American and British English, and which one each dialect writes.

The variant list is ``breame``'s (Apache-2.0): about 1,700 British spellings with their American ones and back
(colour/color, organise/organize, programme/program, centre/center, travelled/traveled, analyse/analyze,
licence/license, with their inflected forms). Two uses:

- ``swaps_dialect``: whether an edit turns one dialect's spelling of a word into the other's. The model's edits
  never do, whatever the language asked (``service.text.units`` drops them): a writer's dialect is theirs.
- ``suggest_variants``: with a dialect named (``DIALECTS``), the words of a paragraph spelled the other way, each an
  edit of its own category (``DIALECT_CODE``) and a message naming the dialect. Without one, both spellings stand.

Which spelling each dialect writes (the docs' "English dialects" page says why):

- ``en-US``: American, but -ogue and -og both stand (dialogue, catalogue: Merriam-Webster's first spellings);
  ``en-GB``: British.
- ``en-CA``: Canadian, as the Canadian Oxford Dictionary and the Canadian Press Stylebook spell it: British -our,
  -re, doubled l (travelled), -ence (defence, licence) and -ogue; American -ize, -yze, e for ae/oe (pediatric) and
  program. Other pairs (tire/tyre, aluminum/aluminium, gray/grey, ...) are written both ways in Canada: no
  suggestion.
- ``en-AU``: British, as the Macquarie Dictionary and the Australian Government Style Manual spell it, but
  program (the Style Manual's spelling in every sense).

A suggestion's confidence is ``SURE`` (returned at every level), or ``UNSURE`` (``picky`` only) for a pair of no
regular class ("other": aeroplane/airplane, tyre/tire, and the list's errors such as buses/busses) and where the
other spelling is also written in the dialect asked: -ize in British English (Oxford spelling), and the American
spellings British English keeps for another sense or part of speech (``BRITISH_ALSO``: a computer program, the
verb license, the noun practice, a gas meter, to tire, a draft text, a disk drive), or the British ones American
English also writes (``AMERICAN_ALSO``: judgement, theatre, ...). A replacement more than ten times rarer than the word
it replaces in ``wordfreq``'s English (both dialects together: ``vocabulary.zipf``) is never suggested: the list's
archaic or mistaken entries (connexion, instal, busses, gaol) and the spellings a dialect keeps for the common sense
(British practices and licensed, not practises and licenced). Only lowercase words, and a
capitalised one that starts its sentence, are suggested: a capitalised word inside a sentence is a name (the
Labor Party, Pearl Harbor).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from breame.data.spelling_constants import AMERICAN_ENGLISH_SPELLINGS, BRITISH_ENGLISH_SPELLINGS

from service.text.vocabulary import zipf

DIALECT_CODE = "R:SPELL:DIALECT"  # the ERRANT-style code of a variant suggestion
SURE = 0.9  # the confidence of a suggestion whose original the dialect does not write
UNSURE = 0.25  # of one it also writes (another sense, or both standard): over picky's threshold only
RARER = 1.0  # a replacement more than this many zipf (log10) rarer than the word it replaces is never suggested

AMERICAN, BRITISH = "American", "British"

# American spellings British English writes too, for another sense or part of speech (Oxford, Cambridge)
BRITISH_ALSO = frozenset(
    (
        "program",
        "programs",
        "license",
        "licenses",
        "licensed",
        "licensing",
        "practice",
        "practices",
        "meter",
        "meters",
        "tire",
        "tires",
        "draft",
        "drafts",
        "disk",
        "disks",
        "install",
    )
)
# British spellings American English writes too (Merriam-Webster gives both)
AMERICAN_ALSO = frozenset(
    (
        "judgement",
        "judgements",
        "ageing",
        "theatre",
        "theatres",
        "axe",
        "axes",
        "grey",
        "glamour",
    )
)


@dataclass(frozen=True)
class Dialect:
    """An English dialect: its LanguageTool code, its name in messages, and which spelling it writes of each class
    of pair (``_pair_class``; a class it does not name: both stand)."""

    code: str
    name: str
    spells: dict[str, str] = field(hash=False)


_CLASSES = ("our", "re", "ll", "ence", "ogue", "ize", "yze", "ae", "mme", "other")
DIALECTS = {
    dialect.code.casefold(): dialect
    for dialect in (
        Dialect("en-US", "American English", dict.fromkeys(set(_CLASSES) - {"ogue"}, AMERICAN)),
        Dialect("en-GB", "British English", dict.fromkeys(_CLASSES, BRITISH)),
        Dialect(
            "en-CA",
            "Canadian English",
            {
                **dict.fromkeys(("our", "re", "ll", "ence", "ogue"), BRITISH),
                **dict.fromkeys(("ize", "yze", "ae", "mme"), AMERICAN),
            },
        ),
        Dialect("en-AU", "Australian English", {**dict.fromkeys(_CLASSES, BRITISH), "mme": AMERICAN}),
    )
}
CODES = tuple(dialect.code for dialect in DIALECTS.values())

_WORD = re.compile(r"[A-Za-z]+")
# British to American rewrites by class, tried in order: (class, British, American); -re is ``_RE_ENDING``
_REWRITES = (
    ("our", "our", "or"),
    ("ize", "is", "iz"),
    ("yze", "ys", "yz"),
    ("ll", "ll", "l"),
    ("ence", "ence", "ense"),
    ("ogue", "ogue", "og"),
    ("ae", "ae", "e"),
    ("ae", "oe", "e"),
    ("mme", "mme", "m"),
)
_RE_ENDING = re.compile(r"(?<=[^aeiou])(?:re(?=s?$)|r(?=ed$|ing$))")  # centre(s), centred, centring


class UnknownDialectError(ValueError):
    """A language code that names none of ``DIALECTS``."""


def dialect_of(code: str | None) -> Dialect | None:
    """The dialect a LanguageTool code names (any case), None for none; ``UnknownDialectError`` for another code."""
    if code is None:
        return None
    dialect = DIALECTS.get(code.casefold())
    if dialect is None:
        raise UnknownDialectError(f"'{code}' is not a language code this service serves: use one of {', '.join(CODES)}")
    return dialect


@cache
def _pairs() -> frozenset[tuple[str, str]]:
    """Every (British, American) pair of the list, lowercase."""
    british = set(BRITISH_ENGLISH_SPELLINGS.items())
    american = {(uk, us) for us, uk in AMERICAN_ENGLISH_SPELLINGS.items()}
    return frozenset(british | american)


@cache
def _swaps() -> frozenset[tuple[str, str]]:
    """The pairs both ways round."""
    return frozenset({*_pairs(), *((us, uk) for uk, us in _pairs())})


def swaps_dialect(original: str, replacement: str) -> bool:
    """Whether an edit changes a word of ``original`` into its other dialect's spelling in ``replacement``."""
    before = {word.lower() for word in _WORD.findall(original)}
    after = {word.lower() for word in _WORD.findall(replacement)} - before
    swaps = _swaps()
    return any((a, b) in swaps for a in before - after for b in after)


def _pair_class(british: str, american: str) -> str:
    """Which of ``_CLASSES`` a pair's difference is: the first whose rewrite of one place of the British spelling, or
    of all its places, gives the American ("other" where none does)."""
    if _RE_ENDING.sub("er", british) == american:
        return "re"
    for name, old, new in _REWRITES:
        places = [match.start() for match in re.finditer(old, british)]
        rewrites = [british[:at] + new + british[at + len(old) :] for at in places] + [british.replace(old, new)]
        if american in rewrites:
            return name
    return "other"


@cache
def replacements(dialect: Dialect) -> dict[str, tuple[str, float]]:
    """The words ``dialect`` spells otherwise (lowercase), each with its spelling there and the suggestion's
    confidence; a word that is some pair's spelling in ``dialect`` is never one of them, nor one whose spelling there
    is over ``RARER`` rarer."""
    found: dict[str, tuple[str, float]] = {}
    for british, american in _pairs():
        kind = _pair_class(british, american)
        side = dialect.spells.get(kind)
        if side == AMERICAN:
            found[british] = (american, UNSURE if kind == "other" or british in AMERICAN_ALSO else SURE)
        elif side == BRITISH:
            oxford = dialect.code == "en-GB" and kind == "ize"
            found[american] = (british, UNSURE if kind == "other" or oxford or american in BRITISH_ALSO else SURE)
    kept = {spelling for spelling, _ in found.values()}
    return {word: found[word] for word in found.keys() - kept if zipf(word) - zipf(found[word][0]) <= RARER}
