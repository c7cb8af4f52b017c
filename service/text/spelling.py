"""The spelling stage: out-of-vocabulary words replaced by what they were most likely meant to be, before the model
reads the text.

A word is a maximal run of ASCII letters inside a whitespace-delimited chunk. It is left alone (the guards) when its
chunk looks like a URL, an e-mail address, a hashtag or mention, code (``snake_case``, ``a.b``, ``f()``, brackets,
operators, slashes) or has a digit (numbers, ``mp3``, ``2nd``); when it is joined to other letters by an apostrophe
or a hyphen (``did'nt``, ``e-mial``: left to the model); when it is shorter than 3 letters (``ok``, ``ur``) or longer
than 40 (no word); when it is informal (``informal``: "lol", "thx", "sooo"); when more than half the words of its
sentence are unknown (another language the language check let through: a short sentence); when it is not all
lowercase: an acronym, a proper noun, or a capitalised first word of a sentence shorter than ``initial_min_words``
words (learner letters open and sign off with names: ``Vasiliy.``, ``Anni Soler``); or when it is known: in
SymSpell's English frequency dictionary (shipped inside ``symspellpy``) or in the model's vocabulary (words seen at
least N times in the training targets and the monolingual data, ``models.gec.vocabulary``), compared lowercased; or
when it is a real English word of the larger ``vocabulary`` (jargon, names, neologisms: "config", "onboarding",
"subpath" are words, not misspellings of "coffin", "boarding" and "sabbath").

An unknown word's candidates are SymSpell's closest known words (edit distance at most ``MAX_DISTANCE``, 2) that
are a plausible misspelling of it (``classify.plausible_distance``: far-fetched candidates are never taken) and, with
the model's ranking, the word split in two frequent words that go together ("alot": "a lot"); for a long word with no
candidate, known words 3 edits away that keep its first letter ("errounuosly": "erroneously") and the word split in a
frequent word and the closest frequent word to the rest ("weatherrealted": "weather related"). The ranking
(``ranking.Ranker``, shipped beside the model) picks the candidate that best explains the typed word between its
neighbours; without one, the most frequent of the closest wins. An irregular verb written as if regular ("runned",
"buyed") is the verb's past or participle (``inflections``), never SymSpell's closest word ("ruined", "buoyed"). A
corrected capitalised word keeps its capital. Real-word errors ("their" for "there") are known words, left to the
model.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from symspellpy import SymSpell, Verbosity
from symspellpy.editdistance import DistanceAlgorithm, EditDistance

from service.text.classify import osa_distance, plausible_distance
from service.text.edits import Edit, cased_like
from service.text.inflections import irregular_forms
from service.text.informal import informal
from service.text.ranking import Ranker
from service.text.vocabulary import Vocabulary
from service.text.word_pairs import END, START

DICTIONARY = "frequency_dictionary_en_82_765.txt"  # symspellpy's bundled English unigram counts
MAX_DISTANCE = 2
# SymSpell indexes the deletes of each word's first PREFIX_LENGTH letters: 5 holds the dictionaries in
# 46 MB and loads them in 1.4 s (7, its default: 173 MB, 3.6 s), with the same GLEU on both dev sets.
PREFIX_LENGTH = 5
MIN_LENGTH = 3  # "ok", "u", "ur": shorter words are never changed
MAX_LENGTH = 40  # longer runs of letters are no misspelt words (and would cost a lookup quadratic in their length)
INITIAL_MIN_WORDS = 4  # a capitalised first word is corrected in sentences of at least this many words
SPLIT_MIN_COUNT = 1000  # the words of a split are each seen at least this often (and together: in the pair counts)
# A listed word is two words run together ("aswell") when they are seen together this often: 133 and more for the
# learners' "thirdworld", "hardwork", "allday"; "back off" 10, "key points" 26 and "red is" 17 times.
RUN_TOGETHER_MIN_PAIRS = 100
# Where a word has no candidate within 2 edits: split with its second part corrected from this many letters, and
# looked up 3 edits away beyond as many letters as ``classify.plausible_distance`` allows 2 edits for.
SPLIT_CORRECTED_MIN_LENGTH = 8
THREE_EDITS_AFTER = 8
CANDIDATES_KEPT = 4096  # unknown words whose candidates a speller keeps (``Speller.candidates``)
# A sentence of at least FOREIGN_MIN_WORDS words, more than FOREIGN_SHARE of them unknown, is another language (the
# spelling stage leaves it): "Dun ako nagtrabaho noong isang taon." became "Dun aka nagtrabaho noon sang ton."
FOREIGN_MIN_WORDS = 3
FOREIGN_SHARE = 0.5

_CHUNK = re.compile(r"\S+")
_WORD = re.compile(r"[A-Za-z]+")
_URL = re.compile(r"(?i)(^|\W)(https?://|ftp://|www\.)|\w\.(com|org|net|edu|gov|io|uk|de|fr|info|html?)\b")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.\w+")
_CODE = re.compile(r"[_=<>{}\[\]\\/|`*~^$]|[a-z][A-Z]|[A-Za-z]\.[A-Za-z]|\w\(")
_TAG_START = re.compile(r"^[\"'(\[]*[#@]")
_JOINERS = frozenset("'-\u2019")
_CONTEXT_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")  # the words of ``word_pairs``, in their case


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


Candidates = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]  # (typed words, meant words) of each candidate


class Manifest(Protocol):
    """What ``spelling_files`` reads of a model's manifest (``engine.manifest.ModelManifest``)."""

    @property
    def vocabulary(self) -> str | None: ...

    @property
    def spelling_model(self) -> str | None: ...


def spelling_files(model_dir: Path, manifest: Manifest) -> tuple[Path, Path | None] | None:
    """The vocabulary and the ranking (if any) that ``manifest`` names; None where it names no vocabulary."""
    if not manifest.vocabulary:
        return None
    return model_dir / manifest.vocabulary, model_dir / manifest.spelling_model if manifest.spelling_model else None


def load_vocabulary(path: Path) -> dict[str, int]:
    """A vocabulary file: one ``word count`` per line (``models.gec.vocabulary`` writes it)."""
    vocabulary = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, count = line.split(" ")
        vocabulary[word] = int(count)
    return vocabulary


class Speller:
    """SymSpell over its bundled dictionary plus a model's vocabulary, behind the guards of the module docstring, its
    candidates ranked by ``ranker`` where the model ships one."""

    def __init__(
        self,
        vocabulary: Mapping[str, int],
        ranker: Ranker | None = None,
        initial_min_words: int | None = INITIAL_MIN_WORDS,
    ) -> None:
        self.ranker = ranker
        self.initial_min_words = initial_min_words
        # the last words' candidates (``candidates``); functools' cache is safe to share between preprocessing threads
        self._kept_candidates = functools.lru_cache(maxsize=CANDIDATES_KEPT)(self._find_candidates)
        # the edit distances in C++ (editdistpy): the same distances as symspellpy's Python, 1.6 times faster a look-up
        self.symspell = SymSpell(
            max_dictionary_edit_distance=MAX_DISTANCE,
            prefix_length=PREFIX_LENGTH,
            distance_comparer=EditDistance(DistanceAlgorithm.DAMERAU_OSA_FAST),
        )
        path = importlib.resources.files("symspellpy") / DICTIONARY
        with importlib.resources.as_file(path) as file:
            self.symspell.load_dictionary(file, term_index=0, count_index=1)
        for word, count in vocabulary.items():
            if word not in self.symspell.words:
                self.symspell.create_dictionary_entry(word, count)
        self.vocabulary = Vocabulary(self.known, self.neighbours, self.splits)

    @classmethod
    def load(cls, vocabulary_path: Path, ranker_path: Path | None = None) -> Speller:
        """The files a model ships: its vocabulary, and its ranking if it has one."""
        return cls(load_vocabulary(vocabulary_path), Ranker.load(ranker_path) if ranker_path is not None else None)

    def known(self, word: str) -> bool:
        """In the dictionary or the vocabulary (``word`` lowercased)."""
        return word in self.symspell.words

    def closest(self, word: str, max_distance: int) -> list[str]:
        """The closest known words to ``word`` that are plausible misspellings of it, most frequent first."""
        return [term for term, _ in self.neighbours(word, max_distance)]

    def neighbours(self, word: str, max_distance: int = MAX_DISTANCE) -> list[tuple[str, int]]:
        """``closest``'s words, each with its distance (all the same)."""
        return [
            (item.term, item.distance)
            for item in self.symspell.lookup(word, Verbosity.CLOSEST, max_distance)
            if plausible_distance(max(len(word), len(item.term)), item.distance)
        ]

    def suggest(self, word: str, before: str = START, after: str = END) -> str | None:
        """What the lowercase unknown ``word``, between the words ``before`` and ``after``, was most likely meant to
        be (one word, or two separated by a space); None where nothing plausible is known."""
        verb = irregular_forms(word)
        if verb is not None:  # "runned": "ran", not SymSpell's closest, "ruined"
            return verb.after(before)
        candidates = self.candidates(word)
        if not candidates:
            return None
        if self.ranker is None:
            return " ".join(candidates[0][1])  # the closest, the most frequent of them
        ranker = self.ranker
        _, best = max(candidates, key=lambda c: ranker.score(c[0], c[1], before, after))
        return " ".join(best)

    def candidates(self, word: str) -> Candidates:
        """What the lowercase unknown ``word`` may have been meant to be, as ``(typed, meant)`` word tuples: its
        closest known words (the most frequent first), and with a ranker its splits. They depend on the word alone,
        so the last ``CANDIDATES_KEPT`` words' are kept: an editor sends a paragraph again at every pause, and a word's
        SymSpell lookups cost a millisecond."""
        return self._kept_candidates(word)

    def _find_candidates(self, word: str) -> Candidates:
        closest = self.closest(word, MAX_DISTANCE)
        candidates: list[tuple[tuple[str, ...], tuple[str, ...]]] = [((word,), (term,)) for term in closest]
        if self.ranker is None:
            return tuple(candidates)
        candidates += self._splits(word)
        if not closest and len(word) >= SPLIT_CORRECTED_MIN_LENGTH:
            candidates += self._corrected_splits(word)
        if not closest and len(word) > THREE_EDITS_AFTER:
            candidates += [((word,), (term,)) for term in self._three_edits_away(word)]
        return tuple(candidates)

    def _frequent(self, word: str) -> bool:
        assert self.ranker is not None
        return self.known(word) and self.ranker.pairs.count(word) >= SPLIT_MIN_COUNT

    def splits(self, word: str) -> bool:
        """Whether ``word`` is two frequent words often seen together (``RUN_TOGETHER_MIN_PAIRS`` times), written as
        one ("aswell", "alot"; not "backoff" nor "keypoints", terms); needs the ranking."""
        if self.ranker is None:
            return False
        pairs = self.ranker.pairs
        return any(pairs.count(*meant) >= RUN_TOGETHER_MIN_PAIRS for _, meant in self._splits(word))

    def _splits(self, word: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """``word`` as two frequent words seen together."""
        assert self.ranker is not None
        found: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        for i in range(1, len(word)):
            first, second = word[:i], word[i:]
            if self._frequent(first) and self._frequent(second) and self.ranker.pairs.count(first, second):
                found.append(((first, second), (first, second)))
        return found

    def _three_edits_away(self, word: str) -> list[str]:
        """Known words 3 edits from ``word`` that are plausible misspellings of it (of long words only), where
        nothing is closer, and that start with its letter (so far off, a different first letter is a different word:
        "nonfluoridated" is not "fluoridated"). SymSpell's index holds 2 edits: they are looked up with each letter of
        ``word`` dropped in turn."""
        found = set()
        for i in range(1, len(word)):
            for item in self.symspell.lookup(word[:i] + word[i + 1 :], Verbosity.CLOSEST, MAX_DISTANCE):
                term = item.term
                if term[0] == word[0] and plausible_distance(max(len(word), len(term)), osa_distance(word, term)):
                    found.add(term)
        return sorted(found)

    def _corrected_splits(self, word: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """``word`` as a frequent word of at least 3 letters and the closest frequent words to the rest (1 edit)."""
        found: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        for i in range(MIN_LENGTH, len(word) - MIN_LENGTH):
            first, rest = word[:i], word[i:]
            if self._frequent(first):
                found += [((first, rest), (first, term)) for term in self.closest(rest, 1) if self._frequent(term)]
        return found

    def corrections(self, text: str) -> list[Edit]:
        """Word replacements on ``text``, one sentence (sorted, on its offsets); ``apply_edits`` gives the spelled
        text."""
        edits = []
        first_word = True
        context: list[tuple[int, int, str]] | None = None
        for chunk_match in _CHUNK.finditer(text):
            chunk = chunk_match.group()
            guarded: bool | None = None  # the chunk's guards, read only where a word could change (most are known)
            for match in _WORD.finditer(chunk):
                sentence_start, first_word = first_word, False
                word = match.group()
                lower = self._candidate_word(word, sentence_start, text)
                if lower is None:
                    continue
                if guarded is None:
                    guarded = guarded_chunk(chunk)
                if guarded or not self._stands_alone(chunk, match.start(), match.end()):
                    continue
                start = chunk_match.start() + match.start()
                if context is None:
                    context = [(m.start(), m.end(), m.group().lower()) for m in _CONTEXT_WORD.finditer(text)]
                    unknown = [self._unknown(w) for _, _, w in context]
                    if len(context) >= FOREIGN_MIN_WORDS and sum(unknown) > FOREIGN_SHARE * len(context):
                        return []  # another language the language check let through (a short sentence)
                index = next(i for i, (begin, _, _) in enumerate(context) if begin >= start)
                before = context[index - 1][2] if index > 0 else START
                after = context[index + 1][2] if index + 1 < len(context) else END
                suggestion = self.suggest(lower, before, after)
                if suggestion is not None:
                    replacement = cased_like(suggestion, word)
                    edits.append(Edit(start, start + len(word), word, replacement))
        return edits

    def is_word(self, word: str) -> bool:
        """Whether the lowercase ``word`` is one the stage leaves as a word: known to it or to the vocabulary, short,
        or informal (``_unknown``'s opposite)."""
        return not self._unknown(word)

    def may_rewrite(self, word: str) -> bool:
        """Whether the model may rewrite the lowercase ``word``: a word (``is_word``), or a misspelling the stage has
        a close candidate for; an unknown word without one is a name, a product or jargon."""
        return self.is_word(word) or irregular_forms(word) is not None or bool(self.candidates(word))

    def _unknown(self, word: str) -> bool:
        """A lowercase word of 3 letters or more, no apostrophe, neither known (the stage's dictionary, or a real word
        of the larger ``vocabulary`` other than an irregular verb written as regular) nor informal: one the stage may
        change, and what it counts to tell another language."""
        return (
            len(word) >= MIN_LENGTH
            and word.isalpha()
            and not informal(word)
            and not self.known(word)
            and (irregular_forms(word) is not None or not self.vocabulary.knows(word))
        )

    def _candidate_word(self, word: str, sentence_start: bool, text: str) -> str | None:
        """``word`` lowercased where the stage may change it (long enough, lowercase or a capitalised first word of a
        long enough sentence, neither a chat word nor drawn out, unknown); else None."""
        if not MIN_LENGTH <= len(word) <= MAX_LENGTH:
            return None
        if word.islower():
            lower = word
        elif sentence_start and self._initial_corrected(word, text):
            lower = word.lower()
        else:
            return None  # an acronym, a proper noun, a capitalised first word, or mixed case
        return lower if self._unknown(lower) else None

    def _initial_corrected(self, word: str, text: str) -> bool:
        capitalised = word[0].isupper() and word[1:].islower()
        long_enough = self.initial_min_words is not None and len(_WORD.findall(text)) >= self.initial_min_words
        return capitalised and long_enough

    @staticmethod
    def _stands_alone(chunk: str, start: int, end: int) -> bool:
        """Not joined to other letters by an apostrophe or a hyphen, nor touching other word characters."""
        before = chunk[start - 2 : start] if start >= 2 else ""
        after = chunk[end : end + 2]
        joined_before = len(before) == 2 and before[1] in _JOINERS and before[0].isalpha()
        joined_after = len(after) == 2 and after[0] in _JOINERS and after[1].isalpha()
        touching = (start > 0 and chunk[start - 1].isalnum()) or (end < len(chunk) and chunk[end].isalnum())
        return not (joined_before or joined_after or touching)
