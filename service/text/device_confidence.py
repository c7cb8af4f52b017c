"""The device engine's confidence and policy: what the browser (``service/web/static/device/confidence.mjs``) computes
for each edit the model makes there, written in Python so that the fit (``models.gec.calibrate --device``) reads
every edit exactly as the browser will.

The device has the model and nothing of the service's later stages (no spelling stage, no language model, no ERRANT
categoriser), so its evidence is what it can compute itself, the same here and there (a test runs both on the dev
sets and on generated text):

- the model's lowest log-probability at the edit (``TokenScores.lowest``: the tokens that make it and the one after
  it, each read off the decoding pass that chose it, the keep bias included);
- the sentence's words (``SentenceEvidence``: rare and unknown shares, mean frequency, length, capitals, edits),
  their frequencies read from ``DeviceWords``: ``wordfreq``'s English list of words of ASCII letters, each with its
  Zipf frequency rounded to 0.1, the file the browser downloads (``words_file``, gzip);
- how common the words the edit changes are (``known_zipf``);
- a coarse lexical class (``lexical_class``), read from the edit's words alone: punctuation or case, the same words
  in another order, function words only (``classify.FUNCTION_WORDS``), a content word inserted or deleted, another
  form of the same word (``classify.same_word_forms``), a spelling neighbour or confusion-set word
  (``policy.related``), or another word.

The edits are the device's own: the word-level diff of a sentence and the model's output (``diff_edits``, as
``edits.mjs``'s ``diffEdits``). A logistic fit over ``FEATURES`` (``DeviceConfidence``) turns the evidence into a
probability; the policy is the server's: an edit is shown when its confidence reaches the level's threshold
(``policy.LEVELS``) times its class's multiplier (``policy.MULTIPLIERS``), and no edit rewrites a word
``policy.fixed_words`` fixes (``DeviceWords.known``: a word of the model's vocabulary, or one the list has that is
not a listed misspelling, as ``vocabulary.Vocabulary`` tells them). The device has no spelling stage, whose
candidates free an unknown word on the server; the model's replacement of an unknown word by a known one close in
spelling (``spelling_candidate``: "recieved": "received") is what the stage would have proposed, and frees it.
``policy_file`` is what the browser reads of all this (``/device/model.json`` names it): the fit, the levels, the
multipliers and the word lists the class needs, from these modules, never copied by hand.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import regex
import wordfreq

from service.text.classify import FUNCTION_WORDS, IRREGULAR_LEMMA, is_spelling_variant, same_word_forms
from service.text.confidence import LOGPROB_FLOOR, RARE_ZIPF, WORD_PATTERN, SentenceEvidence, TokenScores
from service.text.edits import Edit
from service.text.policy import (
    CONFUSION_SETS,
    LEVELS,
    MULTIPLIERS,
    PRONOUN_I,
    fixed_words,
    related,
    rewrites_fixed,
)
from service.text.vocabulary import MISSPELLING_ZIPF_GAP

CLASSES = ("punctuation", "morphology", "closed", "order", "related", "replaced", "deleted", "inserted")
"""The device's lexical classes (``policy.MULTIPLIERS``' keys but ``spelling``: the device has no spelling stage)."""

FEATURES = (
    "bias",
    "model_logprob",  # the lowest log-probability of the model's tokens at the edit (``TokenScores.lowest``)
    "rare_share",  # ``SentenceEvidence``'s, with ``DeviceWords``' frequencies
    "unknown_share",
    "mean_zipf",
    "log_words",
    "capital_share",
    "log_edits",
    "known_zipf",  # the lowest frequency of the words the edit changes (0: none, or one not listed)
    *(f"class_{name}" for name in CLASSES[1:]),  # the first class is the baseline
)

LEXICAL_PATTERN = r"[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*"  # the words of an edit its class reads
PIECE_PATTERN = r"\s+|[\p{L}\p{M}\p{N}_]+|[^\p{L}\p{M}\p{N}_\s]"  # edits.mjs's PIECE: what the diff aligns
_WORDS = regex.compile(WORD_PATTERN)
_LEXICAL = regex.compile(LEXICAL_PATTERN)
_PIECES = regex.compile(PIECE_PATTERN)
_LISTED = regex.compile(r"[a-z]+")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def words_file() -> bytes:
    """The device's word list: ``wordfreq``'s large English list, its words of ASCII letters, one line per Zipf
    frequency rounded to 0.1 (ten times it, then the words, sorted), most frequent first; gzip, reproducible."""
    return _words_file()


@functools.cache
def _words_file() -> bytes:
    groups: dict[int, list[str]] = {}
    for word, frequency in wordfreq.get_frequency_dict("en", "large").items():
        if _LISTED.fullmatch(word):
            groups.setdefault(round((math.log10(frequency) + 9) * 10), []).append(word)
    lines = [f"{tenths} {' '.join(sorted(words))}" for tenths, words in sorted(groups.items(), reverse=True)]
    return gzip.compress(("\n".join(lines) + "\n").encode("ascii"), compresslevel=9, mtime=0)


def dictionary(vocabulary: str) -> frozenset[str]:
    """The words of a model's vocabulary file (``word count`` lines), lowercased: the device's dictionary."""
    return frozenset(line.split(" ")[0].lower() for line in vocabulary.split("\n") if line.split(" ")[0])


def one_edit(word: str) -> set[str]:
    """The strings of lowercase ASCII letters one letter deleted, swapped with the next, replaced or inserted from
    ``word``."""
    cuts = [(word[:k], word[k:]) for k in range(len(word) + 1)]
    found = {a + b[1:] for a, b in cuts if b}
    found |= {a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1}
    found |= {a + letter + b[1:] for a, b in cuts if b for letter in _LETTERS}
    found |= {a + letter + b for a, b in cuts for letter in _LETTERS}
    found.discard(word)
    return found


@dataclass(frozen=True)
class DeviceWords:
    """Each listed word's Zipf frequency (``words_file``), and the model's vocabulary (``dictionary``)."""

    zipfs: dict[str, float]
    dictionary: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, data: bytes, words: frozenset[str] = frozenset()) -> DeviceWords:
        """The list ``words_file`` wrote, with the dictionary ``words``."""
        zipfs = {}
        for line in gzip.decompress(data).decode("ascii").splitlines():
            tenths, *listed = line.split(" ")
            zipfs.update(dict.fromkeys(listed, int(tenths) / 10))
        return cls(zipfs, words)

    def zipf(self, word: str) -> float:
        """How common ``word`` (any case) is; 0 for a word the list lacks."""
        return self.zipfs.get(word.lower(), 0.0)

    def known(self, word: str) -> bool:
        """Whether ``word`` (ASCII letters, any case) is a real word: in the dictionary, or listed and no
        dictionary word one edit from it ``MISSPELLING_ZIPF_GAP`` or more more common ("freind": "friend")."""
        lower = word.lower()
        if lower in self.dictionary:
            return True
        frequency = self.zipf(lower)
        near = [self.zipf(other) for other in one_edit(lower) if other in self.dictionary]
        return frequency > 0 and all(other < frequency + MISSPELLING_ZIPF_GAP for other in near)


@functools.cache
def device_words(vocabulary: Path | None = None) -> DeviceWords:
    """The list the browser downloads, read, with the dictionary of the model's ``vocabulary`` file (the device
    downloads it too) where there is one."""
    words = dictionary(vocabulary.read_text(encoding="utf-8")) if vocabulary is not None else frozenset()
    return DeviceWords.parse(words_file(), words)


def diff_edits(source: str, output: str) -> list[Edit]:
    """The edits that turn ``source`` into ``output``: the differing runs of a longest common subsequence of their
    pieces (runs of whitespace, of letters and digits, single other characters), as ``edits.mjs``'s
    ``diffEdits``."""
    a, b = _PIECES.findall(source), _PIECES.findall(output)
    starts = [0]
    for piece in a:
        starts.append(starts[-1] + len(piece))
    edits, i, j = [], 0, 0
    for mi, mj in [*_common_pairs(a, b), (len(a), len(b))]:
        if mi > i or mj > j:
            original, replacement = "".join(a[i:mi]), "".join(b[j:mj])
            edits.append(Edit(starts[i], starts[i] + len(original), original, replacement))
        i, j = mi + 1, mj + 1
    return edits


def _common_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs of a longest common subsequence of ``a`` and ``b``, in order, the ties broken as ``edits.mjs``'s."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def lexical_words(text: str) -> list[str]:
    """The lowercase words of ``text`` an edit's class reads (with ’ as ')."""
    return [word.lower().replace("’", "'") for word in _LEXICAL.findall(text)]


def function_word(word: str) -> bool:
    """A closed-class word (``classify.FUNCTION_WORDS``), or its contraction ("it's", "don't")."""
    head = word.split("'")[0]
    return word in FUNCTION_WORDS or head in FUNCTION_WORDS or (head.endswith("n") and head[:-1] in FUNCTION_WORDS)


def lexical_class(original: str, replacement: str) -> str:
    """The class (``CLASSES``) of replacing ``original`` by ``replacement``, from their words alone (the module
    docstring)."""
    old, new = lexical_words(original), lexical_words(replacement)
    if old == new:
        return "punctuation"
    if len(old) >= 2 and sorted(old) == sorted(new):
        return "order"
    old_content = [word for word in old if not function_word(word)]
    new_content = [word for word in new if not function_word(word)]
    if old_content == new_content:
        return "closed"
    if not old_content:
        return "inserted"
    if not new_content:
        return "deleted"
    if len(old_content) != len(new_content):
        return "replaced"
    pairs = list(zip(old_content, new_content, strict=True))
    if all(same_word_forms(a, b) for a, b in pairs):
        return "morphology"
    if all(same_word_forms(a, b) or related(a, b) for a, b in pairs):
        return "related"
    return "replaced"


def spelling_candidate(original: str, replacement: str, words: DeviceWords) -> bool:
    """Whether the edit replaces one unknown word (ASCII letters) by a known one close in spelling: what the spelling
    stage would propose."""
    if not (_WORDS.fullmatch(original) and _WORDS.fullmatch(replacement)):
        return False
    close = is_spelling_variant(original.lower(), replacement.lower())
    return close and not words.known(original) and words.known(replacement)


@dataclass(frozen=True)
class DeviceEdit:
    """One edit of a sentence by the device's model, with what the device reads of it."""

    edit: Edit  # offsets in the sentence
    lexical: str  # ``CLASSES``
    fixed: bool  # it rewrites a word ``policy.fixed_words`` fixes: never shown
    row: tuple[float, ...]  # ``FEATURES``


def sentence_edits(source: str, scores: TokenScores, words: DeviceWords) -> list[DeviceEdit]:
    """The edits of the model's output (``scores.text``, with its tokens' ends and log-probabilities) of the
    sentence ``source``, and each one's evidence."""
    edits = diff_edits(source, scores.text)
    sentence = SentenceEvidence.of(source, len(edits), words.zipf)
    spelled = [(e.start, e.end) for e in edits if spelling_candidate(e.original, e.replacement, words)]
    fixed = fixed_words(source, words.known, spelled)
    found, shift = [], 0
    for edit in edits:
        position = edit.start + shift
        shift += len(edit.replacement) - len(edit.original)
        lexical = lexical_class(edit.original, edit.replacement)
        frequencies = [words.zipf(word) for word in _WORDS.findall(edit.original)]
        known = min(frequencies) if frequencies and min(frequencies) > 0 else 0.0
        row = (
            1.0,
            scores.lowest(position, position + len(edit.replacement)),
            sentence.rare_share,
            sentence.unknown_share,
            sentence.mean_zipf,
            sentence.log_words,
            sentence.capital_share,
            sentence.log_edits,
            known,
            *(1.0 if lexical == name else 0.0 for name in CLASSES[1:]),
        )
        rewrites = rewrites_fixed(edit.start, edit.end, edit.original, edit.replacement, fixed)
        found.append(DeviceEdit(edit, lexical, rewrites, row))
    return found


@dataclass(frozen=True)
class DeviceConfidence:
    """Logistic regression over ``FEATURES``: ``weights`` in their order (empty: the model's own probability)."""

    weights: tuple[float, ...]

    @classmethod
    def load(cls, path: Path) -> DeviceConfidence:
        """A fit ``models.gec.calibrate --device`` wrote (fitted on ``FEATURES``, in order)."""
        data = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"{path}: fitted on features {data['features']}, not the device's {list(FEATURES)}")
        return cls(tuple(float(w) for w in data["weights"]))

    def confidence(self, row: Sequence[float]) -> float:
        """The probability that the edit of ``row`` is right, 0..1 (rounded to 3 places)."""
        if not self.weights:
            return round(math.exp(row[1]), 3)
        z = sum(w * x for w, x in zip(self.weights, row, strict=True))
        return round(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))), 3)


def policy_file(fit: DeviceConfidence) -> bytes:
    """What the browser reads to apply the policy: the fit, the levels' thresholds, the classes' multipliers and the
    words the classes and the evidence need (JSON)."""
    data = {
        "features": list(FEATURES),
        "weights": list(fit.weights),
        "classes": list(CLASSES),
        "levels": LEVELS,
        "multipliers": {name: MULTIPLIERS[name] for name in CLASSES},
        "logprob_floor": LOGPROB_FLOOR,
        "rare_zipf": RARE_ZIPF,
        "misspelling_zipf_gap": MISSPELLING_ZIPF_GAP,
        "function_words": sorted(FUNCTION_WORDS),
        "confusion_sets": [list(group) for group in CONFUSION_SETS],
        "irregular": dict(sorted(IRREGULAR_LEMMA.items())),
        "pronoun_i": sorted(PRONOUN_I),
    }
    return json.dumps(data, separators=(",", ":")).encode("utf-8")
