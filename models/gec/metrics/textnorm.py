"""Move between JFLEG-style tokenised text and the natural text the model reads and writes.

JFLEG (and the other tokenised GEC sets) are whitespace-tokenised in a Penn-Treebank-like way:
``do n't``, ``it 's``, punctuation split off word edges, but a sentence-internal ``day. The`` or
``he/she`` left as one token. The model sees natural text, so evaluation detokenises the
sources (:func:`detokenize`) and tokenises the model output (:func:`tokenize`) before GLEU.

Both are the Moses tokenizer/detokenizer from ``sacremoses`` (English, no XML escaping) plus
small fixes so that ``tokenize(detokenize(line)) == line.split()`` holds for nearly all JFLEG
dev lines:

* ``n't`` is a token of its own (``don't`` -> ``do n't``, ``can't`` -> ``ca n't``); Moses would
  give ``don 't``. Apostrophes inside words other than the clitics ``'s 'm 're 've 'll 'd n't``
  stay in the word (``don'ts``, ``o'clock``, ``doens't``).
* A period directly followed by a space and more text stays on its word (``day. The``,
  ``etc. ;``); Moses still splits the sentence-final one (``years . "``).
* Punctuation inside a token stays inside it: ``he/she``, ``heat(energy)``, ``4:they``,
  ``this,but``, ``&raspsquo;``, ``''``, ``__``.
* Curly quotes and apostrophes in model output are read as the ASCII ones the references use.
* The detokeniser keeps a lone ``.`` after a word ending in ``.`` apart (``etc. .``).

These follow JFLEG's conventions. Other tokenised sets differ (FCE splits every sentence period
and writes ``night - life``), so the same round trip holds for about 95% of FCE dev lines only.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sacremoses import MosesDetokenizer, MosesTokenizer

__all__ = ["detokenize", "tokenize"]

_CLITICS = frozenset({"'s", "'m", "'re", "'ve", "'ll", "'d"})

# Substrings that Moses must not split (it pads most non-alphanumeric characters).
_PROTECTED = [
    r"&[A-Za-z]+;",  # stray HTML entities such as &raspsquo;
    r"''",  # doubled apostrophe used as a closing quote
    r"(?<!\S)/\w+",  # "he /she"
    # word-internal punctuation: he/she, heat(energy), 4:they, this,but, say"hey
    r"\w+(?:[/:\"]\w+|\(\w+\)|,(?=[^\W\d])\w+)+\)?",
    # a word-final period with more text after it on the line: "day. The", "them. ."
    r"(?<!\S)[^\W\d_][\w\-]*\.(?=\s+\S)",
    # an abbreviation's period before other punctuation: "etc.;"
    r"(?<!\S)[^\W\d_]+\.(?=[;:,])",
    r"__+",  # blank placeholders
]

_ASCII_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_INTRA_APOSTROPHE = re.compile(r"'[^\W\d_]+")
# Stands in for a "." that must stay a separate word through the Moses detokenizer.
_LONE_PERIOD = "\ue000"


@lru_cache(maxsize=1)
def _moses() -> tuple[MosesTokenizer, MosesDetokenizer]:
    # imported lazily: sacremoses is a build-time extra, the rest of the package needs only numpy
    from sacremoses import MosesDetokenizer, MosesTokenizer

    return MosesTokenizer(lang="en"), MosesDetokenizer(lang="en")


def _fix_apostrophes(tokens: list[str]) -> list[str]:
    """Turn Moses's ``don 't`` into ``do n't`` and re-join non-clitic splits (``don'ts``)."""
    out: list[str] = []
    for tok in tokens:
        if out and _INTRA_APOSTROPHE.fullmatch(tok) and tok.lower() not in _CLITICS:
            prev = out[-1]
            if tok.lower() == "'t" and len(prev) > 1 and prev[-1] in "nN":
                out[-1] = prev[:-1]
                out.append(prev[-1] + tok)
            elif prev[-1:].isalpha():
                out[-1] = prev + tok
            else:
                out.append(tok)
        else:
            out.append(tok)
    return out


def tokenize(text: str) -> list[str]:
    """Tokenise natural text into JFLEG-style (Moses/PTB-like) tokens."""
    text = " ".join(text.translate(_ASCII_QUOTES).split())
    if not text:
        return []
    mt, _ = _moses()
    tokens = mt.tokenize(text, escape=False, protected_patterns=_PROTECTED)
    return _fix_apostrophes(tokens)


def detokenize(line: str) -> str:
    """Turn a JFLEG-style tokenised line into natural text."""
    tokens = line.split()
    if not tokens:
        return ""
    joined: list[str] = []
    for tok in tokens:
        prev = joined[-1] if joined else ""
        if tok.lower() == "n't" and prev[-1:].isalpha():
            joined[-1] += tok
        elif tok == "." and len(prev) > 1 and prev.endswith("."):
            joined.append(_LONE_PERIOD)  # "etc. ." keeps its second period apart
        else:
            joined.append(tok)
    _, md = _moses()
    return md.detokenize(joined, unescape=False).replace(_LONE_PERIOD, ".")
