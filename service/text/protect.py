"""Protected spans: what the model must not rewrite, found in a paragraph before the model reads it.

Each span is a ``[start, end)`` of the paragraph (code points) with a kind that says how the model sees it:

* ``MASK``: an atom the model cannot read but the sentence needs as a word: URLs with and without a scheme,
  e-mail addresses, file paths and names (Windows and UNC paths with the blanks of their folders), @mentions and
  #hashtags, code-like tokens (``snake_case``, ``camelCase``, ``f()``, ``a.b.c``, operators, ``key=value``), brace
  groups (JSON, dicts) and SQL statements in capitals ending in ``;``, markdown's inline code, autolinks and images,
  and any run of over 100 characters the model reads without a blank (a hash, base64, a key held down: no word
  is that long); and a quotation in another language ("Wer nicht wagt, der nicht gewinnt").
  The model reads one placeholder word (``PLACEHOLDER``) in its place.
* ``KEEP``: read as written, never edited: numbers with their currency and unit (amounts, dates, times,
  percentages, versions), words with a Latin letter beyond ASCII (loanwords and names: "fiancée", "Müller"), and
  text spelling a special token of the model (``</s>``, ``<pad>``...), which is
  encoded as text but which the model rewrites (``</s>`` as ``_/s>``); a markdown link's text and the first word
  of a list item.
* ``HIDE``: left out of what the model reads: markdown syntax (heading and list markers, block quotes,
  emphasis markers, a link's brackets and target, table pipes, fenced code blocks, HTML) and runs of
  characters the model cannot read (emoji, other scripts, combining marks: ``script.editable`` says which),
  which it turns into nonsense even one at a time; and emoticons (":)", "^_^") with the blanks before them.

No edit touches a protected span. A ``glued`` span (atoms and unreadable runs) also takes no edit that ends
where it starts or starts where it ends (no word inserted next to a URL, no space removed beside an emoji);
markdown syntax, emoticons and ``KEEP`` spans take insertions at their edges ("**Note** this" may still become
"**Note**: this").

Markdown is parsed by ``markdown-it-py`` (CommonMark, with GFM tables and strikethrough; indented code
blocks are off, since indented lines in a plain-text editor are prose): the characters its inline tokens
read as text are prose, every other non-blank character is syntax. A paragraph with no character that
markdown gives a meaning to is not parsed. URLs and e-mail addresses are found by ``linkify-it-py`` with
the full list of top-level domains; a URL without a scheme is taken only when it looks like one
(``www.``, a path, a port, or a well-known top-level domain that is not also an English word), since
learners often leave out the space after a full stop ("at home.So I"). Windows paths and emoticons are found on the
paragraph as written, before markdown (whose escapes would cut them); a quotation's language is
``language.LanguageIdentifier.foreign_quotation``'s call. The other atoms are regular
expressions (below). Every detector runs in time linear in the paragraph's length.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache

from linkify_it import LinkifyIt
from linkify_it.tlds import TLDS
from markdown_it import MarkdownIt
from markdown_it.helpers import parseLinkDestination, parseLinkTitle
from markdown_it.token import Token

from service.text.language import LanguageIdentifier, language_identifier
from service.text.script import SPECIAL_SPELLINGS, editable, unreadable_runs

__all__ = ["PLACEHOLDER", "Kind", "Protection", "Span", "find_protected"]

PLACEHOLDER = "NASA"
"""The word the model reads for a masked atom. Of 18 candidates put into 600 FCE dev sentences (an acronym, names,
"X", "it", "URL", "example.com"...), the model kept this one in 99.7% of them and left the rest of the sentence as it
corrects it without the word in 89.0%, the most of any ("Example": 29.3% and 31.3%)."""


class Kind(Enum):
    MASK = "mask"
    KEEP = "keep"
    HIDE = "hide"


@dataclass(frozen=True)
class Span:
    """A protected ``[start, end)`` of the paragraph; ``label`` says what was found (``url``, ``markdown``...)."""

    start: int
    end: int
    kind: Kind
    label: str

    @property
    def glued(self) -> bool:
        """No edit may end where it starts or start where it ends (see the module docstring)."""
        return self.kind is Kind.MASK or self.label == "unreadable"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- URLs and e-mail addresses ---------------------------------------------------------------------------------

# Written without a scheme, a domain is a URL only under one of these (or with www., a path or a port): the generic
# top-level domains and the country codes people write bare, leaving out those that are also English words, which a
# missing space after a full stop produces ("home.my", "it.so", "end.it").
_BARE_TLDS = _words(
    "com org net edu gov mil int info biz io ai app dev co uk de fr es ru cn jp nl se dk fi pl cz ch au ca nz br mx "
    "ar za kr tw hk sg ie eu gr pt ro hu sk ua tr il ae sa ir vn th ph ly gl tv fm gg"
)
_HOST_END = re.compile(r"[/:?#]")
# "www.shop.ru.My name is": a capitalised last label of a host without a path is the next sentence
_CAPITALISED_LAST_LABEL = re.compile(r"(?<=[a-z0-9])\.[A-Z][A-Za-z]*$")


@lru_cache(maxsize=1)
def _linkify() -> LinkifyIt:
    linkify = LinkifyIt(options={"fuzzy_ip": True}).tlds(TLDS)
    linkify.add("file:", "http:")  # file:///path, validated as the URLs of http:
    return linkify


def _takes_bare(raw: str) -> bool:
    """Whether a URL found without a scheme looks like one (see ``_BARE_TLDS``)."""
    if raw.startswith(("www.", "WWW.", "//")):
        return True
    cut = _HOST_END.search(raw)
    if cut is not None and cut.end() < len(raw):
        return True  # something after the host: a path, a port, a query
    host = raw[: cut.start()] if cut is not None else raw
    if host.count(".") == 3 and host.replace(".", "").isdigit():
        return True  # an IP address
    tld = host.rsplit(".", 1)[-1]
    return tld in _BARE_TLDS  # lowercase only: "end.It" is a missing space


_LINK_HINT = re.compile(r"\w[.@]\w|//")  # what every URL and e-mail address linkify finds holds


def _links(text: str) -> Iterator[tuple[int, int, str]]:
    linkify = _linkify()
    if not _LINK_HINT.search(text) or not linkify.pretest(text):
        return
    for match in linkify.match(text) or ():
        if match.schema == "mailto:":
            yield match.index, match.last_index, "email"
            continue
        raw = _CAPITALISED_LAST_LABEL.sub("", match.raw) if not match.schema else match.raw
        if match.schema or _takes_bare(raw):
            yield match.index, match.index + len(raw), "url"


# -- other atoms ----------------------------------------------------------------------------------------------

# URLs linkify does not take: any scheme (file:///etc, ssh://, s3://, redis://...) and localhost; trailing punctuation
# is the sentence's
_URL_END = r"(?:[^\s<>\"'`]{0,2048}[^\s<>\"'`.,;:!?)\]}])?"
_OTHER_URLS = r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,15}://" + _URL_END + r"|\blocalhost(?::\d{1,5})?(?:/" + _URL_END + ")?"
_EXTENSIONS = _words(
    "txt pdf docx? xlsx? pptx? odt ods csv tsv json ya?ml toml ini cfg conf xml html? css scss js mjs ts tsx jsx "
    "py ipynb rb php java kt swift cpp cc hpp rs sql sh bash zsh ps1 bat exe dll dylib iso dmg apk "
    "jpe?g png gif bmp svg webp tiff? ico mp3 wav flac ogg mp4 mkv avi mov webm zip tar gz tgz bz2 xz 7z rar "
    "md rst tex pem crt onnx npz npy pt ckpt"
)
# Unbounded repetitions are bounded (a path part of 128 characters, 32 parts...) and atoms start only where no longer
# one could (the lookbehinds), so that no pattern backtracks over a long run ("a.a.a.a...") from every position in it.
_PATHS = (
    r"(?<![\w/.~\\])(?:~|\.{1,2})?(?:/[\w.~@+%-]{1,128}){2,32}/?"  # /usr/bin/env, ~/docs/a.txt, ./run/x
    r"|(?<![\w/.~])(?:~|\.{1,2})/[\w.~@+%-]{1,128}/?"  # ~/notes, ./run.sh, ../x
    r"|(?<![\w.-])[\w-]{1,64}(?:\.[\w-]{1,64}){0,8}\.(?:"  # main.py, report.v2.docx
    + "|".join(sorted(_EXTENSIONS))
    + r")\b(?![.\w]\w)"
)
_MENTION = r"(?<![\w@./])@[A-Za-z0-9_](?:[\w.-]{0,62}\w)?"
_HASHTAG = r"(?<![\w#&/])#[^\W\d_](?:[\w-]{0,62}\w)?"
_CODE = (
    r"(?<![\w.])[A-Za-z0-9]\w{0,63}_\w{1,64}"  # snake_case, my_var2 (an inner underscore)
    r"|(?<![\w.])__[a-z][a-z0-9_]{0,62}__(?!\w)"  # __init__ (lowercase: "__Save__" is bold)
    # camelCase: a one-letter prefix (iPhone, eBay, kWh) or two humps (getElementById); one hump after a longer
    # prefix is more often a missing space ("energyHydrogen", "thatI"), left to the model
    r"|\b[a-z](?:[A-Z][a-z0-9]{0,32}){1,8}\b|\b[a-z]{1,32}(?:[A-Z][a-z0-9]{1,32}){2,8}\b"
    # calls: f(), obj.method(x), f(a,b), f(x=1); not "video(s)" or "Survey(1995)" (a missing space)
    r"|(?<![\w.])[A-Za-z_]\w{0,64}(?:\.[A-Za-z_]\w{0,64}){0,8}\((?:[^\s()]{0,64}[,=\"'][^\s()]{0,64})?\)"
    r"|(?<![\w.])[A-Za-z_]\w{0,64}(?:\.[A-Za-z_]\w{0,64}){1,8}\([^\s()]{0,64}\)"
    r"|(?<![\w.])[a-z_]\w{1,64}(?:\.[a-z_]\w{1,64}){2,8}\b"  # os.path.join (parts of 2+ letters: not e.t.c)
    r"|(?<![\w.\]\)])[\w.\]\)]{1,64}(?:==|!=|<=|>=|=>|->|::|&&|\|\||\+=|-=|\*=|/=|:=)[\w.\[\(\"']{0,64}"  # a==b
    r"|(?<!\S)--?[a-z][\w-]{0,64}=\S{0,128}|(?<!\S)--[a-z][a-z0-9-]{2,64}"  # --flag, --key=value
    r"|(?<![\w.])[A-Za-z_]\w{0,64}=[\w\"'./:-]{1,128}"  # key=value
    r"|\$\{?[A-Za-z_]\w{0,64}\}?|%[sdfr]\b|\{[A-Za-z_]\w{0,64}\}"  # $VAR, ${VAR}, %s, {name}
    r"|\b0x[0-9A-Fa-f]{1,64}\b|\b(?=[0-9a-f]{0,40}\d)(?=[0-9a-f]{0,40}[a-f])[0-9a-f]{7,40}\b"  # 0x1F, a hash
    r"|\b[CFJ](?:#|\+\+)(?![\w#+])"  # C#, C++, F#
)
_NUMBER = (
    r"(?<![\w.,])"
    r"(?:[$€£¥₹₩₽¢]\s?)?"  # currency symbol
    r"(?:[vV](?=\d+\.\d))?"  # a version's v
    r"[-+−]?\d{1,64}(?:[.,:/'’-]\d{1,64}){0,8}"  # 1,250.50  10:30  15/01/2024  2024-01-15  1.2.3
    r"(?:\s?%|‰|°[CF]?|[a-zA-Z]{1,3}\b)?"  # 50%, 20°C, 5kg, 3rd, 10GB, 2pm
    r"(?:\s?[$€£¥₹₩₽])?"  # 50 €
)
_SYMBOLS = r"(?<!\S)[#&|~^*\\{}<>=+@%]+(?!\S)"  # a symbol standing alone: "Item # 5", "Tom & Jerry"
# A word with a letter of Latin beyond ASCII in an English sentence is a loanword or a name ("fiancée", "naïve",
# "São Paulo", "Müller"): the model read "fiancée" and wrote "fiancials". Kept as written.
_BEYOND_ASCII = "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"  # Latin letters, not "×" or "÷"
_LATIN = f"A-Za-z{_BEYOND_ASCII}"
_ACCENTED = rf"(?<![{_LATIN}])[A-Za-z]{{0,64}}[{_BEYOND_ASCII}][{_LATIN}]{{0,64}}(?![{_LATIN}])"
_SPECIAL = "|".join(re.escape(spelling) for spelling in SPECIAL_SPELLINGS)
_ATOMS = re.compile(
    "|".join(
        f"(?P<{name}>{pattern})"
        for name, pattern in (
            ("special", _SPECIAL),
            ("url", _OTHER_URLS),
            ("path", _PATHS),
            ("email_like", r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,64}(?:\.[\w-]{1,64}){1,8}"),
            ("mention", _MENTION),
            ("hashtag", _HASHTAG),
            ("code", _CODE),
            ("number", _NUMBER),
            ("symbol", _SYMBOLS),
            ("accented", _ACCENTED),
            ("long_token", r"(?<!\S)\S{101,}"),
        )
    )
)
_KINDS = {"special": Kind.KEEP, "number": Kind.KEEP, "symbol": Kind.KEEP, "accented": Kind.KEEP}
_LABELS = {"email_like": "email"}


# Every atom holds a character other than a letter or common punctuation, a lowercase-uppercase pair (iPhone), a
# call's parenthesis, or is over 100 characters long:
# only the chunks between blanks that hold one (and their neighbours one space away: "3.5 %", "$ 5") are searched,
# which leaves out most words of prose.
_CANDIDATE = re.compile(r"\S*(?:[^\sA-Za-z,;!?'\"()]|[a-z][A-Z]|\w\(|localhost)\S*|\S{101,}")


def _atoms(text: str) -> Iterator[tuple[int, int, str]]:
    regions: list[list[int]] = []
    for chunk in _CANDIDATE.finditer(text):
        if regions and chunk.start() - regions[-1][1] <= 1:
            regions[-1][1] = chunk.end()
        else:
            regions.append([chunk.start(), chunk.end()])
    for start, end in regions:
        for match in _ATOMS.finditer(text, start, end):
            name = match.lastgroup or "code"
            if name == "long_token" and not editable(match.group()):
                continue  # a run of emoji or another script: the unreadable runs' (left out, not read as a word)
            yield match.start(), match.end(), _LABELS.get(name, name)


# -- inline code the atoms do not find -----------------------------------------------------------------------

# A brace group on one line (one level of nesting): a JSON object, a dict, a template; prose has no braces. And an SQL
# statement in capitals up to its semicolon. Read as written by the model, the words around them were rewritten ("The
# API returns {"status": "ok"}": "The candidate returns ..."; "INSERT INTO logs (msg) ...;": "(mg)"). Both start
# at a character the atoms' chunks may not hold (a brace after a blank, a keyword of capitals), so they are searched
# in the whole stretch, each in time linear in it (bounded repetitions from a literal start).
_INLINE_CODE = re.compile(
    r"\{(?:[^{}\n]|\{[^{}\n]{0,256}\}){1,512}\}"
    r"|(?<![\w])(?:SELECT\s(?=[^;\n]{0,512}\bFROM\b)|INSERT\s+INTO\s|UPDATE\s+\S{1,128}\s+SET\s|DELETE\s+FROM\s"
    r"|(?:CREATE|DROP|ALTER|TRUNCATE)\s+(?:TABLE|INDEX|VIEW|DATABASE|SCHEMA)\s)[^;\n]{1,512};"
)


def _inline_code(text: str) -> Iterator[tuple[int, int, str]]:
    for match in _INLINE_CODE.finditer(text):
        yield match.start(), match.end(), "code"


# -- forms found as written, before markdown reads them -------------------------------------------------------

# Windows and UNC paths: a drive (C:\ or C:/), a share (\\server\share, \\?\C:\..., \\.\pipe), %VARIABLE%\, .\ or
# ..\, then folders, each ended by its separator, so that a folder may hold blanks ("C:\Program Files (x86)\App\";
# after a blank, no "." or "%" that starts another path), then a file or folder name without one, which capitalised
# words may follow ("C:\Program Files", not "...\app.exe. Then"); and a relative path of two names or more joined by
# backslashes (src\main.py). Found on the paragraph as written, since markdown reads "\\" and "\_" as escapes:
# "\\server\share" lost a backslash, and "C:\Program Files\App" was three pieces of prose. The separators and blanks
# that end each part are no part of a name, so no pattern backtracks beyond the bounded part it is in.
_WINDOWS_NAME = r"[^\s\\/:*?\"<>|`\[\]]{1,255}+"
_WINDOWS_PATH = re.compile(
    r"(?:(?<![\w\\])[A-Za-z]:[\\/]|(?<![\w\\])\\\\[\w.$?-]{1,64}+\\(?:[A-Za-z]:\\)?"
    r"|(?<![\w%])%[A-Za-z_]\w{0,64}+%\\|(?<![\w.\\])\.{1,2}\\)"
    rf"(?:{_WINDOWS_NAME}(?: (?![.%]){_WINDOWS_NAME}){{0,4}}[\\/]){{0,32}}+"
    rf"(?:{_WINDOWS_NAME}(?:(?<![.,;!?']) (?:[A-Z0-9][\w.-]{{1,64}}+|\(\w{{1,16}}\))(?![^\s.,;:!?'\")]))"
    r"{0,3}+)?"
    r"|(?<![\w.\\-])[\w.-]{1,128}+(?:\\[\w.-]{1,128}+){1,32}+\\?"
)
_PATH_TRAIL = ".,;:!?'"  # the sentence's punctuation after a path, and a closing bracket it did not open


def _windows_paths(text: str) -> Iterator[tuple[int, int, str]]:
    for match in _WINDOWS_PATH.finditer(text):
        start, end = match.span()
        unopened = text.count(")", start, end) - text.count("(", start, end)
        while text[end - 1] in _PATH_TRAIL or (text[end - 1] == ")" and unopened > 0):
            unopened -= text[end - 1] == ")"
            end -= 1
        if end - start > 2:  # not ".\" alone
            yield start, end, "path"


# Emoticons, hidden with the blanks before them, so that neither is removed ("today :)" became "today:)") while the
# word before may change ("tomorow;)": "tomorrow;)"), and the model reads the sentence without them (read, they kept
# it from correcting the sentence around them): eyes, a tear, a nose and a mouth (":)", ";-)", ":'(", ":D", "=P",
# ">:("), hearts ("<3", "</3"), "xD", and the eastern forms ("^_^", "-_-", "T_T", "o.O", ">_<", "\o/"). Eyes may
# follow a word ("today:)") but not a digit ("10:30", "2:3") or a character of a URL or an operator ("http://", "::",
# "=>"), and every emoticon is followed by a blank, punctuation or the end ("Note:(see" is none). Found as written,
# since markdown reads "^_^" as emphasis and ">_<" opening a line as a quote.
_EMOTICON = re.compile(
    r"(?:(?<![\d:;=/\\<>^*&|%$#@'\"-])>?[:;=]'?[-^]?(?:[)(]{1,5}+|[DP]{1,5}+|[\]\[pOo03/])"
    r"|(?<![\w<])</?3{1,5}+|(?<![\w])[xX]D{1,5}+"
    r"|(?<!\S)(?:\^[_.o-]?\^|[-=;@TtOoXxUu]_[-=;@TtOoXxUu]|[oO]\.[oO]|[xX]\.[xX]|-\.-|>[_.]<|\\o/|¯\\_\(ツ\)_/¯|ಠ_ಠ))"
    r"(?![^\s.,!?;:\"'’”»)\]])"
)


def _emoticons(text: str) -> Iterator[tuple[int, int, str]]:
    end = 0
    for match in _EMOTICON.finditer(text):
        start = match.start()
        while start > end and text[start - 1] in " \t":
            start -= 1
        end = match.end()
        yield start, end, "emoticon"


def _as_written(text: str) -> list[Span]:
    """The Windows paths (masked) and emoticons (hidden) of the paragraph, sorted and disjoint."""
    found = _first_longest([*_windows_paths(text), *_emoticons(text)])
    return [Span(start, end, Kind.MASK if label == "path" else Kind.HIDE, label) for start, end, label in found]


# The first word of a list item, after its marker ("- ", "* ", "+ ", "1. ", "2) ", "(a) ", "b. ", "C) ", "• "; not
# "J. M. Coetzee"), in a block quote or not, after an emphasis marker or not: an item is a fragment, which the model
# rewrote as a sentence (a capital, another word). Kept as written, where markdown reads it as prose, and so is a
# marker of letters or digits, which the model took for a sentence's first word ("c. recieve" -> "C. receive").
_LIST_ITEM_WORD = re.compile(
    r"^[ \t]{0,16}+(?:>[ \t]?){0,8}+(?:[-*+\u2022\u25e6\u25aa\u25b8\u25ba\u2023\u2043\u2219\u00b7]"
    r"|(\(?(?:\d{1,9}|[a-z])[.)]|\(?[A-Z]\)))[ \t]++(?:\*\*|__|[*_])?([^\W_]++(?:['\u2019-][^\W_]++)*+)",
    re.MULTILINE,
)


def _list_item_words(text: str) -> list[tuple[int, int]]:
    """The spans of each list item's first word, and of its marker where that is of letters or digits."""
    return [match.span(group) for match in _LIST_ITEM_WORD.finditer(text) for group in (1, 2) if match.group(group)]


# -- quotations in another language ---------------------------------------------------------------------------

# A quotation: between straight, curly or low double quotes, guillemets, or single quotes (an apostrophe inside a
# word is no closing quote: 'C'est la vie'), on one line (ended by LF or CR), up to 256 characters. One in another
# language (``LanguageIdentifier.foreign_quotation``: "Wer nicht wagt, der nicht gewinnt") is masked with its marks,
# so that the English around it is corrected and the quotation left as written ("Wer night wait" was the model's, and
# «C'est la vie» became "C'est la vie»).
_QUOTATION = re.compile(
    r'"([^"\n\r]{1,256}+)"|“([^“”\n\r]{1,256}+)”|„([^„“”\n\r]{1,256}+)[“”]|«([^«»\n\r]{1,256}+)»|»([^«»\n\r]{1,256}+)«'
    r"|‹([^‹›\n\r]{1,256}+)›|‘((?:[^‘’\n\r]|’(?=\w)){1,256}+)’(?!\w)|(?<!\w)'((?:[^'\n\r]|'(?=\w)){1,256}+)'(?!\w)"
)


def _foreign_quotations(text: str) -> Iterator[tuple[int, int, str]]:
    identifier: LanguageIdentifier | None = None
    for match in _QUOTATION.finditer(text):
        group = match.lastindex or 0
        start, end = match.span(group)
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if " " not in text[start:end]:
            continue  # one word: a word cited, not a quotation ("the word "freind"")
        identifier = identifier or language_identifier()
        if identifier.foreign_quotation(text[start:end]):
            yield match.start(), match.end(), "foreign"


# -- code lines -----------------------------------------------------------------------------------------------

# Lines that are code as a whole (no prose in them is corrected): assignments, definitions, imports, shell and REPL
# prompts, comments, lines ending in "{" or "});", lone closing brackets.
_CODE_LINE = re.compile(
    r"^[ \t]*+(?:"
    r"[A-Za-z_][\w.]{0,64}(?:\[[^\]\n]{0,64}\])?[ \t]*+(?:[-+*/%|&^]|<<|>>|\*\*|//)?=(?!=)[ \t]*+\S[^\n]*+"
    r"|(?:def|class)[ \t]++\w++[ \t]*+[(:][^\n]*+"
    r"|import[ \t]++[\w.]++(?:[ \t]++as[ \t]++\w++)?[ \t]*+|from[ \t]++[\w.]++[ \t]++import[ \t][^\n]*+"
    r"|#(?:include|define|!)[^\n]*+|(?://[ \t]|//$|/\*|\*/|\$ |>>> )[^\n]*+"
    r"|[^\n]{0,1024}(?:\{|\);)[ \t]*+|[})\]]++[;,]?[ \t]*+"
    r")$",
    re.MULTILINE,
)


def _code_lines(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _CODE_LINE.finditer(text) if match.end() > match.start()]


# -- markdown -------------------------------------------------------------------------------------------------

# A paragraph is parsed as markdown only when it holds a character markdown gives a meaning to.
_MARKDOWN_HINT = re.compile(r"[*_`#\[\]<>|~\\&]|^[ \t]*(?:[-+>=]|\d{1,9}[.)])", re.MULTILINE)
_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("code")
_MARKUP_INLINE = frozenset({"strong_open", "strong_close", "em_open", "em_close", "s_open", "s_close"})


class _UnalignedError(Exception):
    """The parser's tokens could not be laid on the source (a case the aligner does not know): no markdown."""


@dataclass
class _Aligner:
    """Lays inline tokens on the source, collecting what is prose and what is masked."""

    source: str
    prose: list[tuple[int, int]] = field(default_factory=list)
    masked: list[tuple[int, int]] = field(default_factory=list)
    emphasis: list[tuple[int, int]] = field(default_factory=list)  # emphasis and strikethrough markers
    links: list[tuple[int, int]] = field(default_factory=list)  # each link's text, between its brackets
    pos: int = 0

    def expect(self, literal: str) -> int:
        """Skip to ``literal`` (a few blank or syntax characters may come before it); where it starts."""
        found = self.source.find(literal, self.pos, self.pos + 64 + len(literal)) if literal else -1
        if found < 0:
            raise _UnalignedError(literal)
        self.pos = found + len(literal)
        return found

    def text(self, content: str) -> None:
        """Prose: each character of ``content`` found in order (escapes and entities in between are syntax)."""
        source, pos = self.source, self.pos
        for char in content:
            found = source.find(char, pos, pos + 16)
            if found < 0:
                raise _UnalignedError(content)
            self.prose.append((found, found + 1))
            pos = found + 1
        self.pos = pos

    def code(self, markup: str) -> None:
        """Inline code: masked; but a backtick written for an apostrophe ("I`m", "don` t") leaves it prose."""
        start = self.expect(markup)
        self.expect(markup)
        source = self.source
        if (start > 0 and source[start - 1].isalpha()) or (self.pos < len(source) and source[self.pos].isalpha()):
            self.prose.append((start, self.pos))
        else:
            self.masked.append((start, self.pos))

    def image(self) -> None:
        """``![alt](src)``: masked whole."""
        start = self.expect("![")
        depth, pos, source = 1, self.pos, self.source
        while pos < len(source):
            char = source[pos]
            depth += (char == "[") - (char == "]")
            if char == "\\":
                pos += 1
            elif not depth:
                break
            pos += 1
        self.pos = pos
        self.link_tail()
        self.masked.append((start, self.pos))

    def link_tail(self) -> int:
        """After a link's text: ``](destination "title")``, ``][label]`` or ``]``; where its ``]`` is."""
        bracket = self.expect("]")
        source, pos = self.source, self.pos
        if source.startswith("(", pos):
            pos = _skip_blanks(source, pos + 1)
            destination = parseLinkDestination(source, pos, len(source))
            if destination.ok:
                pos = _skip_blanks(source, destination.pos)
                title = parseLinkTitle(source, pos, len(source))
                if title.ok:
                    pos = _skip_blanks(source, title.pos)
            if not source.startswith(")", pos):
                raise _UnalignedError("link destination")
            self.pos = pos + 1
        elif source.startswith("[", pos):
            end = source.find("]", pos)
            if end < 0:
                raise _UnalignedError("link label")
            self.pos = end + 1
        return bracket

    def inline(self, children: Sequence[Token]) -> None:
        index = 0
        link_start = 0
        while index < len(children):
            token = children[index]
            if token.type == "text":
                self.text(token.content)
            elif token.type in _MARKUP_INLINE:
                start = self.expect(token.markup)
                self.emphasis.append((start, self.pos))
            elif token.type == "html_inline" and token.content in SPECIAL_SPELLINGS:
                start = self.expect(token.content)  # prose, where it is found kept: the model reads it as before
                self.prose.append((start, self.pos))
            elif token.type == "html_inline":
                self.expect(token.content)
            elif token.type == "code_inline":
                self.code(token.markup)
            elif token.type == "image":
                self.image()
            elif token.type == "link_open" and token.markup == "autolink":
                start = self.expect("<")
                self.expect(">")
                self.masked.append((start, self.pos))
                index += 2  # past the link's text and its close
            elif token.type == "link_open":
                link_start = self.expect("[") + 1
            elif token.type == "link_close":
                self.links.append((link_start, self.link_tail()))
            elif token.type in ("softbreak", "hardbreak"):
                self.expect("\n")
            else:
                raise _UnalignedError(token.type)
            index += 1


def _skip_blanks(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n":
        pos += 1
    return pos


@dataclass(frozen=True)
class _Markdown:
    prose: list[tuple[int, int]]  # merged, sorted
    masked: list[tuple[int, int]]
    emphasis: list[tuple[int, int]]
    links: list[tuple[int, int]]  # each link's text
    cuts: list[int]  # where each inline element (paragraph, heading, table cell) starts


def _markdown(text: str) -> _Markdown | None:
    """How markdown reads a paragraph; None where it has no markdown, or where the parser's tokens could not be
    laid on the text."""
    if not _MARKDOWN_HINT.search(text):
        return None
    # markdown-it turns CRLF and CR into LF and NUL into U+FFFD; done here one for one, so offsets hold
    safe = text.replace("\r\n", " \n").replace("\r", "\n").replace("\x00", "\ufffd")
    starts = [0] + [match.end() for match in re.finditer("\n", safe)]
    aligner = _Aligner(safe)
    cuts = []
    try:
        for token in _PARSER.parse(safe):
            if token.type == "inline" and token.map is not None:
                aligner.pos = max(aligner.pos, starts[token.map[0]])
                before = len(aligner.prose)
                aligner.inline(token.children or [])
                if len(aligner.prose) > before:
                    cuts.append(aligner.prose[before][0])
    except _UnalignedError:
        return None
    return _Markdown(_merge(aligner.prose), aligner.masked, aligner.emphasis, aligner.links, cuts)


# -- resolution -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Protection:
    """The protected spans of a paragraph (sorted, disjoint) and where sentences must be cut (markdown's table
    cells and blocks, so that no sentence runs from one into the next)."""

    spans: list[Span]
    cuts: list[int]


def find_protected(paragraph: str) -> Protection:
    """The protected spans of ``paragraph`` and its forced sentence cuts (see the module docstring).

    Code lines are hidden whole; markdown decides what else is prose; in prose (and over emphasis markers, so that
    ``__init__`` is code, not "init" in bold), the atoms (URLs, e-mail, paths, mentions, hashtags, code, numbers,
    symbols, special-token spellings) and the unreadable runs are found. Where two atoms overlap, the one that starts
    first wins, then the longer; an atom needs a character of prose, and leaves the ``*``/``~`` markers at its edges
    to markdown.
    """
    code_lines = _code_lines(paragraph)
    parsed = _markdown(paragraph)
    spans = [Span(start, end, Kind.HIDE, "code") for start, end in code_lines]
    if parsed is None:
        prose, cuts, emphasis, masked, links = [(0, len(paragraph))], [], [], [], []
    else:
        prose, cuts, emphasis, links = parsed.prose, parsed.cuts, parsed.emphasis, parsed.links
        masked = [(s, e) for s, e in parsed.masked if not _inside_any(s, e, code_lines)]
        spans += [Span(s, e, Kind.MASK, "markdown") for s, e in masked]
    blocked = _merge(code_lines + masked)
    found = [
        span for span in _as_written(paragraph) if _outside(span.start, span.end, blocked) == [(span.start, span.end)]
    ]
    taken = _merge(code_lines + [(span.start, span.end) for span in found])
    for start, end in _merge(prose + emphasis):
        for piece_start, piece_end in _outside(start, end, taken):
            found += _prose_spans(paragraph, piece_start, piece_end)
    if parsed is not None:
        found = [atom for span in found if (atom := _on_prose(span, prose, paragraph)) is not None]
        covered = _merge(prose + masked + code_lines + [(span.start, span.end) for span in found])
        spans += [Span(s, e, Kind.HIDE, "markdown") for s, e in _complement(paragraph, covered)]
    taken = _merge(code_lines + [(span.start, span.end) for span in found])
    for label, ranges in (("link", links), ("list", _list_item_words(paragraph))):
        kept = _kept_prose(paragraph, ranges, prose, taken, label)
        found += kept
        taken = _merge(taken + [(span.start, span.end) for span in kept])
    return Protection(sorted(spans + found, key=lambda span: span.start), cuts)


def _kept_prose(
    paragraph: str,
    ranges: list[tuple[int, int]],
    prose: list[tuple[int, int]],
    taken: list[tuple[int, int]],
    label: str,
) -> list[Span]:
    """The prose of each of ``ranges`` outside ``taken`` (sorted, disjoint), without blanks at its edges: kept."""
    spans = []
    for start, end in ranges:
        for piece_start, piece_end in _outside(start, end, taken):
            first = max(bisect.bisect_right(prose, (piece_start, math.inf)) - 1, 0)
            for prose_start, prose_end in prose[first:]:
                if prose_start >= piece_end:
                    break
                a, b = max(prose_start, piece_start), min(prose_end, piece_end)
                while a < b and paragraph[a].isspace():
                    a += 1
                while b > a and paragraph[b - 1].isspace():
                    b -= 1
                if a < b:
                    spans.append(Span(a, b, Kind.KEEP, label))
    return spans


def _on_prose(span: Span, prose: list[tuple[int, int]], text: str) -> Span | None:
    """``span`` without the ``*``/``~`` markers at its edges, if a character of prose is left in it."""
    start, end = span.start, span.end
    while start < end and text[start] in "*~" and not _in(start, prose):
        start += 1
    while end > start and text[end - 1] in "*~" and not _in(end - 1, prose):
        end -= 1
    if not any(_in(i, prose) for i in range(start, end)):
        return None
    return span if (start, end) == (span.start, span.end) else Span(start, end, span.kind, span.label)


def _in(position: int, ranges: list[tuple[int, int]]) -> bool:
    """Whether ``position`` is in one of the sorted, disjoint ``ranges``."""
    index = bisect.bisect_right(ranges, (position, math.inf)) - 1
    return index >= 0 and ranges[index][0] <= position < ranges[index][1]


def _prose_spans(paragraph: str, start: int, end: int) -> list[Span]:
    """The atoms and unreadable runs inside one stretch of prose ``[start, end)``."""
    text = paragraph[start:end]
    found = [*_links(text), *_atoms(text), *_inline_code(text), *_foreign_quotations(text)]
    spans = [Span(start + s, start + e, _KINDS.get(label, Kind.MASK), label) for s, e, label in _first_longest(found)]
    taken = [(span.start, span.end) for span in spans]
    for run_start, run_end in unreadable_runs(paragraph, start, end):
        for s, e in _outside(run_start, run_end, taken):
            spans.append(Span(s, e, Kind.HIDE, "unreadable"))
    return spans


def _first_longest(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Of overlapping ``(start, end, label)`` atoms, the one that starts first, then the longer, then the one listed
    first (a link before the other atoms on the same span); sorted."""
    kept: list[tuple[int, int, str]] = []
    covered = 0
    for atom in sorted(found, key=lambda atom: (atom[0], -atom[1])):
        if atom[0] >= covered:
            kept.append(atom)
            covered = atom[1]
    return kept


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Adjacent or overlapping ranges joined; sorted."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _complement(text: str, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of non-blank characters outside ``covered`` (merged, sorted), blanks inside a line joining them."""
    runs = []
    position = 0
    for start, end in [*covered, (len(text), len(text))]:
        runs += [match.span() for match in _SAME_LINE_RUN.finditer(text, position, start)]
        position = max(position, end)
    return runs


_SAME_LINE_RUN = re.compile(r"\S+(?:[ \t]+\S+)*")


def _inside_any(start: int, end: int, ranges: list[tuple[int, int]]) -> bool:
    return any(s <= start and end <= e for s, e in ranges)


def _outside(start: int, end: int, taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` outside the sorted, disjoint ``taken`` ranges."""
    first = bisect.bisect_right(taken, (start, start)) - 1
    parts = []
    position = start
    for s, e in taken[max(first, 0) :]:
        if s >= end:
            break
        if e <= position:
            continue
        if s > position:
            parts.append((position, s))
        position = max(position, e)
    if position < end:
        parts.append((position, end))
    return parts
