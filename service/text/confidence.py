"""A confidence for every edit: the probability that a careful writer would keep it, from what the service already
computed when it made the edit.

The evidence (``features``, one row an edit):

- the model's probability of the edit: the lowest probability of the output tokens that make it, and of the token
  just after it (where the output leaves the source, that token was chosen over copying it), read from the decoding
  pass that chose them (``TokenScores``: greedy and aggressive decoding record each token's log-probability; nothing
  is decoded again). An edit the model did not make (the language model review's proposal) has none;
- the language model's score change: how much more likely (log10, ``service.text.ngrams``) the corrected sentence is
  with the edit than without it;
- for a spelling edit (the spelling stage's, or the model's replacing a word by one close in spelling): how far the
  typed word is from the replacement, how likely learners make that misspelling of it (the letter edits of
  ``letter_edits``), how common the typed word is (``service.text.vocabulary``), and whether the stage made it;
- how fluent the sentence is as written: its tokens' mean and lowest probability under the language model (a
  learner's sentence reads less likely than an edited one of the same words' frequency);
- how many of the sentence's words are rare: learners write with a small vocabulary, and a sentence rich in rare
  words (technical, legal, scientific prose) is seldom a learner's;
- the edit's lexical class (``service.text.policy``) and, for an edit of real words, how common the words it
  changes are: a rare real word (jargon, a name, a term of art) is seldom a learner's error.

``ConfidenceModel`` combines them by logistic regression, fitted on held-in data (``models.gec.calibrate``: learner
sentence pairs and clean edited English, an edit counted right when the reference has it) so that the number is
calibrated: of the edits given 0.8, about 80% are right. A model folder that ships no fit gets ``UNCALIBRATED``:
the model's own probability alone.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from service.text.classify import osa_distance
from service.text.edits import Edit, apply_edits, extract_edits
from service.text.ngrams import NgramModel, tokens_of
from service.text.policy import LEXICAL_CLASSES, lexical_class
from service.text.vocabulary import zipf

LOGPROB_FLOOR = -10.0  # a token's log-probability below this reads as this
LM_CLIP = 5.0  # the language model's score change (log10) is read within +-this
CHANNEL_FLOOR = -20.0  # a misspelling's log-probability below this reads as this
RARE_ZIPF = 3.0  # a word rarer than this (log10 uses a billion words) is rare: learners seldom write it

FEATURES = (
    "bias",
    "model_logprob",  # the lowest log-probability of the model's tokens at the edit (0 where not the model's)
    "not_model",  # 1: the edit is the review's proposal, not the model's
    "lm_delta",  # the language model's log10 score change made by the edit
    "spelling_typed_zipf",  # a spelling edit: how common the typed word is (0: not a listed word)
    "spelling_distance",  # a spelling edit: letters changed
    "spelling_channel",  # a spelling edit: log P(typed | meant) of learners' letter edits (``letter_edits``)
    "spelling_capital",  # a spelling edit: of a capitalised word
    "spelling_first_letter",  # a spelling edit: the first letter changed ("dtype": "type")
    "spelled",  # 1: the spelling stage made the edit (a spelling edit the model made has 0)
    "rare_share",  # the share of the sentence's words that are rare or unknown (zipf under ``RARE_ZIPF``)
    "unknown_share",  # the share of the sentence's words no English word list has (learners' misspellings)
    "mean_zipf",  # how common the sentence's words are, on average
    "log_words",  # log(1 + the sentence's words)
    "capital_share",  # the share of the sentence's words after the first that are capitalised (names)
    "log_edits",  # log of the number of edits the sentence has (learners' sentences have several)
    "known_zipf",  # the lowest frequency of the real words the edit changes (0: none, or no known word)
    "source_lm_mean",  # how fluent the sentence is as written: its tokens' mean log10 probability (language model)
    "source_lm_min",  # and its least likely token's (0, 0: no language model)
    *(f"class_{name}" for name in LEXICAL_CLASSES[1:]),  # the first class is the baseline
)


Channel = Callable[[str, str], float]
"""log P(typed | meant) of a misspelling (``letter_edits.LetterEdits.log_prob``)."""

WORD_PATTERN = r"[A-Za-z]+"  # the words a sentence's evidence counts (the device engine counts the same)
_WORDS = re.compile(WORD_PATTERN)


@dataclass(frozen=True)
class TokenScores:
    """The model's output for one unit (before any review) and each of its tokens' log-probability, with where each
    token ends in the text."""

    text: str
    ends: tuple[int, ...]
    logprobs: tuple[float, ...]

    def lowest(self, start: int, end: int) -> float:
        """The lowest log-probability of the tokens that overlap ``text[start:end]`` and of the one that follows it
        (where the output went on instead of copying; for a deletion, ``start == end``, the token there and the one
        after it)."""
        if not self.logprobs:
            return 0.0
        first = min(bisect.bisect_right(self.ends, start), len(self.logprobs) - 1)
        last = min(max(first, bisect.bisect_left(self.ends, end)) + 1, len(self.logprobs) - 1)
        return max(LOGPROB_FLOOR, min(self.logprobs[first : last + 1]))

    def to_json(self) -> list[object]:
        return [self.text, list(self.ends), [round(p, 4) for p in self.logprobs]]

    @classmethod
    def from_json(cls, data: Sequence[object]) -> TokenScores:
        text, ends, logprobs = data
        return cls(str(text), tuple(ends), tuple(logprobs))  # type: ignore[arg-type]


@dataclass(frozen=True)
class SentenceEvidence:
    """What the sentence an edit is in tells of its writer: learners write common words, short sentences with
    several errors and misspellings no word list has; professional prose is rich in rare words, terms and names."""

    rare_share: float
    unknown_share: float
    mean_zipf: float
    log_words: float
    capital_share: float
    log_edits: float

    @classmethod
    def of(cls, text: str, edits: int, frequency: Callable[[str], float] = zipf) -> SentenceEvidence:
        """The evidence of ``text`` (one sentence), which has ``edits`` edits; ``frequency``: a word's Zipf value
        (``vocabulary.zipf``, or the device's rounded copy of the list)."""
        words = _WORDS.findall(text)
        if not words:
            return cls(0.0, 0.0, 0.0, 0.0, 0.0, math.log(max(1, edits)))
        frequencies = [frequency(word) for word in words]
        capitals = sum(word[0].isupper() for word in words[1:])
        return cls(
            sum(f < RARE_ZIPF for f in frequencies) / len(words),
            sum(f == 0 for f in frequencies) / len(words),
            sum(frequencies) / len(words),
            math.log(1 + len(words)),
            capitals / max(1, len(words) - 1),
            math.log(max(1, edits)),
        )


@dataclass(frozen=True)
class EditEvidence:
    """What is known of one edit of a unit's text (``unit_evidence``)."""

    model_logprob: float | None  # None: not the model's edit
    lm_delta: float
    spelled: bool
    lexical: str  # ``policy.lexical_class``
    sentence: SentenceEvidence  # of the sentence the edit is in
    channel: float  # a spelling edit's log P(typed | meant) (0 for other edits, or without a channel)
    half_move: bool = False  # it deletes words the model moved elsewhere, where the review took the move back
    fluency: tuple[float, float] = (0.0, 0.0)  # the sentence's tokens' mean and lowest log10 probability (``lm``)


def unit_evidence(
    source: str,
    final: str,
    edits: Sequence[Edit],
    codes: Sequence[str],
    spelled: Sequence[bool],
    scores: TokenScores | None,
    lm: NgramModel | None,
    channel: Channel | None = None,
) -> list[EditEvidence]:
    """The evidence of each of ``edits`` (``extract_edits(source, final)``, with their ERRANT ``codes`` and whether
    the spelling stage made each): ``scores`` is the model's output and its tokens' log-probabilities, ``lm`` the
    language model that scores the sentence with and without each edit, ``channel`` how likely learners make each
    misspelling."""
    if not edits:  # most sentences: nothing to weigh
        return []
    model_edits = extract_edits(source, scores.text) if scores is not None else []  # the model's own, once
    model_positions = _model_positions(model_edits)
    moved = _moved_words(model_edits, edits)
    deltas = _lm_deltas(source, final, edits, lm)
    sentence = SentenceEvidence.of(source, len(edits))
    fluency = _fluency(source, lm)
    found = []
    for edit, code, spell, delta in zip(edits, codes, spelled, deltas, strict=True):
        position = model_positions.get((edit.start, edit.end, edit.replacement))
        logprob = None
        if scores is not None and position is not None:
            logprob = scores.lowest(position, position + len(edit.replacement))
        lexical = lexical_class(code, edit.original, edit.replacement, spell)
        typed = 0.0
        if lexical == "spelling" and channel is not None:
            typed = max(CHANNEL_FLOOR, channel(edit.original.lower(), edit.replacement.lower().replace(" ", "")))
        half_move = bool(moved.intersection(edit.original.lower().split())) and not edit.replacement.strip()
        found.append(EditEvidence(logprob, delta, spell, lexical, sentence, typed, half_move, fluency))
    return found


def _moved_words(model_edits: Sequence[Edit], edits: Sequence[Edit]) -> set[str]:
    """The words the model's edits insert that the final ``edits`` do not: where the model moved a word ("I like
    very much football." -> "I like football very much.") and the review kept only its deletion."""
    final = {(e.start, e.end, e.replacement) for e in edits}
    return {
        word
        for edit in model_edits
        if (edit.start, edit.end, edit.replacement) not in final
        for word in edit.replacement.lower().split()
    }


def _model_positions(model_edits: Sequence[Edit]) -> dict[tuple[int, int, str], int]:
    """Where each of the model's own edits (source to its output) starts in its output."""
    positions, shift = {}, 0
    for edit in model_edits:
        positions[(edit.start, edit.end, edit.replacement)] = edit.start + shift
        shift += len(edit.replacement) - (edit.end - edit.start)
    return positions


def _fluency(source: str, lm: NgramModel | None) -> tuple[float, float]:
    """The mean and the lowest log10 probability of ``source``'s tokens under ``lm`` ((0, 0) without one)."""
    if lm is None:
        return (0.0, 0.0)
    scores = lm.token_scores(tokens_of(source))
    return (float(scores.mean()), float(scores.min())) if len(scores) else (0.0, 0.0)


def _lm_deltas(source: str, final: str, edits: Sequence[Edit], lm: NgramModel | None) -> list[float]:
    """Each edit's log10 score change: the sentence with every edit against it with all but that one (``edits``: one
    or more; ``unit_evidence`` weighs none for a sentence without)."""
    if lm is None:
        return [0.0] * len(edits)
    without = [apply_edits(source, [e for e in edits if e is not edit]) for edit in edits]
    scores = lm.scores([final, *without])
    return [float(np.clip(scores[0] - other, -LM_CLIP, LM_CLIP)) for other in scores[1:]]


def features(edit: Edit, evidence: EditEvidence) -> list[float]:
    """The feature row (``FEATURES``) of ``edit``."""
    spelling = evidence.lexical == "spelling"
    typed = zipf(edit.original) if spelling else 0.0
    distance = osa_distance(edit.original.lower(), edit.replacement.lower()) if spelling else 0
    words = [word for word in edit.original.split() if word.isalpha()]
    frequencies = [zipf(word) for word in words]
    known = min(frequencies) if words and not evidence.spelled and min(frequencies) > 0 else 0.0
    classes = [1.0 if evidence.lexical == name else 0.0 for name in LEXICAL_CLASSES[1:]]
    logprob = evidence.model_logprob
    capital = spelling and edit.original[:1].isupper()
    return [
        1.0,
        logprob if logprob is not None else 0.0,
        1.0 if logprob is None else 0.0,
        evidence.lm_delta,
        typed,
        float(distance),
        evidence.channel,
        1.0 if capital else 0.0,
        1.0 if spelling and edit.original[:1].lower() != edit.replacement[:1].lower() else 0.0,
        1.0 if evidence.spelled else 0.0,
        evidence.sentence.rare_share,
        evidence.sentence.unknown_share,
        evidence.sentence.mean_zipf,
        evidence.sentence.log_words,
        evidence.sentence.capital_share,
        evidence.sentence.log_edits,
        known,
        *evidence.fluency,
        *classes,
    ]


@dataclass(frozen=True)
class ConfidenceModel:
    """Logistic regression over ``FEATURES``: ``weights`` in their order."""

    weights: tuple[float, ...]  # empty: uncalibrated (``UNCALIBRATED``)

    @classmethod
    def load(cls, path: Path) -> ConfidenceModel:
        """A fit ``models.gec.calibrate`` wrote: ``{"features": [...], "weights": [...]}`` (the features must be
        ``FEATURES``, in order)."""
        data = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"{path}: fitted on features {data['features']}, not this service's {list(FEATURES)}")
        return cls(tuple(float(w) for w in data["weights"]))

    def confidence(self, edit: Edit, evidence: EditEvidence) -> float:
        """The probability that ``edit`` is right, 0..1 (rounded to 3 places); 0 for half a move."""
        if evidence.half_move:
            return 0.0
        if not self.weights:
            logprob = evidence.model_logprob
            return round(math.exp(logprob) if logprob is not None else 1.0, 3)
        z = sum(w * x for w, x in zip(self.weights, features(edit, evidence), strict=True))
        return round(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))), 3)


UNCALIBRATED = ConfidenceModel(())
"""Without a fit: the model's own probability of the edit (1 for an edit the model did not make)."""
