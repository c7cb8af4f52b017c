"""Irregular verbs written as if they were regular ("runned", "eated", "buyed", "teached"): the learner's
over-regularised past, read as the verb's own past or past participle.

SymSpell reads such a word as the closest known word ("runned": "ruined", "eated": "seated", "buyed": "buoyed"),
which is another word altogether. ``irregular_forms`` knows the regular-looking forms of the common irregular verbs
(the base with ``-ed`` as English spells it, doubled final consonant or not, and the past with ``-ed``: "wented") and
gives the verb's past and past participle; ``VerbForms.after`` picks the participle after a form of "have" or "be"
("has eated": "has eaten", "was buyed": "was bought") and the past elsewhere ("I eated": "I ate"). Only unknown words
are asked (``spelling.Speller`` asks for the words it would correct): a real word spelt like one of these forms
("singed", "founded", "putted") is never read as one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

__all__ = ["VerbForms", "irregular_forms"]

# base past participle: the irregular verbs of learners' writing whose regular-looking forms are no English words
# (not "kneel", "tear", "grind", "dream", "learn"...: "kneeled", "teared up", "grinded", "learned" are English)
_VERBS = """
arise arose arisen; awake awoke awoken; bear bore borne; beat beat beaten; become became become; begin began begun;
bend bent bent; bet bet bet; bind bound bound; bite bit bitten; bleed bled bled; blow blew blown; break broke broken;
breed bred bred; bring brought brought; build built built; burst burst burst; buy bought bought; catch caught caught;
choose chose chosen; cling clung clung; come came come; cost cost cost; creep crept crept; cut cut cut;
deal dealt dealt; dig dug dug; do did done; draw drew drawn; drink drank drunk; drive drove driven; eat ate eaten;
fall fell fallen; feed fed fed; feel felt felt; fight fought fought; find found found; flee fled fled;
fling flung flung; fly flew flown; forbid forbade forbidden; forget forgot forgotten; forgive forgave forgiven;
freeze froze frozen; get got got; give gave given; go went gone; grow grew grown;
hang hung hung; have had had; hear heard heard; hide hid hidden; hit hit hit; hold held held; hurt hurt hurt;
keep kept kept; know knew known; lead led led; leave left left; lend lent lent; let let let;
lose lost lost; make made made; mean meant meant; meet met met; mislead misled misled;
misunderstand misunderstood misunderstood; overcome overcame overcome; oversleep overslept overslept;
overtake overtook overtaken; pay paid paid; put put put; quit quit quit; read read read; rebuild rebuilt rebuilt;
ride rode ridden; ring rang rung; rise rose risen; run ran run; say said said; see saw seen; seek sought sought;
sell sold sold; send sent sent; set set set; shake shook shaken; shoot shot shot; shrink shrank shrunk;
shut shut shut; sing sang sung; sink sank sunk; sit sat sat; sleep slept slept; slide slid slid; speak spoke spoken;
spend spent spent; spin spun spun; split split split; spread spread spread; stand stood stood; steal stole stolen;
stick stuck stuck; sting stung stung; strike struck struck; swear swore sworn; sweep swept swept; swim swam swum;
swing swung swung; take took taken; teach taught taught; tell told told; think thought thought;
throw threw thrown; understand understood understood; upset upset upset; wake woke woken; wear wore worn;
weep wept wept; win won won; withdraw withdrew withdrawn; write wrote written
"""

# the words before a past participle: perfect tenses and the passive ("I've", "he's": the contracted forms)
_HAVE = {"have", "has", "had", "having"}
_BE = {"be", "is", "are", "was", "were", "been", "being", "am"}
_GET = {"get", "gets", "got", "getting"}
_AUXILIARIES = frozenset(_HAVE | _BE | _GET)
_CONTRACTED = ("'ve", "'s", "'re", "'m", "'d")
_VOWELS = frozenset("aeiou")


@dataclass(frozen=True)
class VerbForms:
    """An irregular verb's past and past participle."""

    past: str
    participle: str

    def after(self, before: str) -> str:
        """The form meant after the word ``before`` (lowercase): the participle after "have" or "be", else the past."""
        return self.participle if before in _AUXILIARIES or before.endswith(_CONTRACTED) else self.past


def _with_ed(word: str) -> set[str]:
    """``word`` with ``-ed`` as English spells it (a final ``e`` taken in, ``y`` after a consonant as ``ied``), and
    with its final consonant doubled where a short vowel comes before it ("runned", "forgetted")."""
    if word.endswith("e"):
        return {word + "d"}
    if word.endswith("y") and word[-2] not in _VOWELS:
        return {word[:-1] + "ied"}
    forms = {word + "ed"}
    if word[-1] not in _VOWELS | set("wxy") and word[-2] in _VOWELS and word[-3:-2] not in _VOWELS:
        forms.add(word + word[-1] + "ed")
    return forms


@functools.cache
def _table() -> dict[str, VerbForms]:
    """Each regular-looking form of the verbs' bases and pasts ("eated", "ated"), but those two verbs share."""
    found: dict[str, set[VerbForms]] = {}
    for entry in _VERBS.split(";"):
        base, past, participle = entry.split()
        for form in _with_ed(base) | _with_ed(past):
            found.setdefault(form, set()).add(VerbForms(past, participle))
    return {form: forms.pop() for form, forms in found.items() if len(forms) == 1}


def irregular_forms(word: str) -> VerbForms | None:
    """The past and participle of the irregular verb ``word`` (lowercase) over-regularises; None where it is none."""
    return _table().get(word)
