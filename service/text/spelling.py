"""The spelling stage: out-of-vocabulary words replaced by their closest known word, before the model reads the text.

A word is a maximal run of ASCII letters inside a whitespace-delimited chunk. It is left alone (the guards) when its
chunk looks like a URL, an e-mail address, a hashtag or mention, code (``snake_case``, ``a.b``, ``f()``, brackets,
operators, slashes) or has a digit (numbers, ``mp3``, ``2nd``); when it is joined to other letters by an apostrophe
or a hyphen (``did'nt``, ``e-mial``: left to the model); when it is shorter than 3 letters (``ok``, ``ur``); when it
is not all lowercase: an acronym, a proper noun, or (unless ``sentence_initial``) a capitalised first word, which in
learner letters is most often a name (``Vasiliy.``, ``Anni Soler``); or when it is known: in SymSpell's English
frequency dictionary (shipped inside ``symspellpy``) or in the model's vocabulary (words seen at least N times in
the training targets and the monolingual data, ``models.gec.vocabulary``), compared lowercased.

An unknown word takes SymSpell's closest suggestion (edit distance at most ``max_distance``, ranked by distance and
then by frequency) if it is a plausible misspelling of it (``classify.is_spelling_variant``: far-fetched candidates
are never taken); a corrected capitalised first word keeps its capital. Real-word errors ("their" for "there") are
known words, left to the model.
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Mapping
from pathlib import Path

from symspellpy import SymSpell, Verbosity

from service.text.classify import is_spelling_variant
from service.text.edits import Edit

DICTIONARY = "frequency_dictionary_en_82_765.txt"  # symspellpy's bundled English unigram counts
MAX_DISTANCE = 2
# SymSpell indexes the deletes of each word's first PREFIX_LENGTH letters: 5 holds the dictionaries in
# 46 MB and loads them in 1.4 s (7, its default: 173 MB, 3.6 s), with the same GLEU on both dev sets.
PREFIX_LENGTH = 5
MIN_LENGTH = 3  # "ok", "u", "ur": shorter words are never changed

_CHUNK = re.compile(r"\S+")
_WORD = re.compile(r"[A-Za-z]+")
_URL = re.compile(r"(?i)(^|\W)(https?://|ftp://|www\.)|\w\.(com|org|net|edu|gov|io|uk|de|fr|info|html?)\b")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.\w+")
_CODE = re.compile(r"[_=<>{}\[\]\\/|`*~^$]|[a-z][A-Z]|[A-Za-z]\.[A-Za-z]|\w\(")
_TAG_START = re.compile(r"^[\"'(\[]*[#@]")
_JOINERS = frozenset("'-\u2019")


def is_url(chunk: str) -> bool:
    return _URL.search(chunk) is not None


def is_email(chunk: str) -> bool:
    return _EMAIL.search(chunk) is not None


def is_tag(chunk: str) -> bool:
    """A hashtag or an @mention."""
    return _TAG_START.match(chunk) is not None


def is_code(chunk: str) -> bool:
    return _CODE.search(chunk) is not None


def has_digit(chunk: str) -> bool:
    return any(char.isdigit() for char in chunk)


def guarded_chunk(chunk: str) -> bool:
    """A whitespace-delimited chunk whose words the stage must not touch."""
    return is_url(chunk) or is_email(chunk) or is_tag(chunk) or is_code(chunk) or has_digit(chunk)


def load_vocabulary(path: Path) -> dict[str, int]:
    """A vocabulary file: one ``word count`` per line (``models.gec.vocabulary`` writes it)."""
    vocabulary = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, count = line.split(" ")
        vocabulary[word] = int(count)
    return vocabulary


class Speller:
    """SymSpell over its bundled dictionary plus a model's vocabulary, behind the guards of the module docstring."""

    def __init__(
        self, vocabulary: Mapping[str, int], max_distance: int = MAX_DISTANCE, sentence_initial: bool = False
    ) -> None:
        self.max_distance = max_distance
        self.sentence_initial = sentence_initial
        self.symspell = SymSpell(max_dictionary_edit_distance=MAX_DISTANCE, prefix_length=PREFIX_LENGTH)
        path = importlib.resources.files("symspellpy") / DICTIONARY
        with importlib.resources.as_file(path) as file:
            self.symspell.load_dictionary(file, term_index=0, count_index=1)
        for word, count in vocabulary.items():
            if word not in self.symspell.words:
                self.symspell.create_dictionary_entry(word, count)

    @classmethod
    def load(cls, vocabulary_path: Path) -> Speller:
        return cls(load_vocabulary(vocabulary_path))

    def known(self, word: str) -> bool:
        """In the dictionary or the vocabulary (``word`` lowercased)."""
        return word in self.symspell.words

    def suggest(self, word: str) -> str | None:
        """The closest known word to the lowercase unknown ``word`` that is a plausible misspelling of it."""
        for item in self.symspell.lookup(word, Verbosity.CLOSEST, self.max_distance):
            if is_spelling_variant(word, item.term):
                return item.term
        return None

    def corrections(self, text: str) -> list[Edit]:
        """Word replacements on ``text`` (sorted, on its offsets); ``apply_edits`` gives the spelled text."""
        edits = []
        first_word = True
        for chunk_match in _CHUNK.finditer(text):
            chunk = chunk_match.group()
            guarded = guarded_chunk(chunk)
            for match in _WORD.finditer(chunk):
                sentence_start, first_word = first_word, False
                if guarded or not self._stands_alone(chunk, match.start(), match.end()):
                    continue
                replacement = self._correct(match.group(), sentence_start)
                if replacement is not None:
                    start = chunk_match.start() + match.start()
                    edits.append(Edit(start, start + len(match.group()), match.group(), replacement))
        return edits

    @staticmethod
    def _stands_alone(chunk: str, start: int, end: int) -> bool:
        """Not joined to other letters by an apostrophe or a hyphen, nor touching other word characters."""
        before = chunk[start - 2 : start] if start >= 2 else ""
        after = chunk[end : end + 2]
        joined_before = len(before) == 2 and before[1] in _JOINERS and before[0].isalpha()
        joined_after = len(after) == 2 and after[0] in _JOINERS and after[1].isalpha()
        touching = (start > 0 and chunk[start - 1].isalnum()) or (end < len(chunk) and chunk[end].isalnum())
        return not (joined_before or joined_after or touching)

    def _correct(self, word: str, sentence_start: bool) -> str | None:
        if len(word) < MIN_LENGTH:
            return None
        if word.islower():
            lower = word
        elif self.sentence_initial and sentence_start and word[0].isupper() and word[1:].islower():
            lower = word.lower()
        else:
            return None  # an acronym, a proper noun, a capitalised first word, or mixed case
        if self.known(lower):
            return None
        suggestion = self.suggest(lower)
        if suggestion is None:
            return None
        return suggestion if word.islower() else suggestion[0].upper() + suggestion[1:]
