"""A clean professional English evaluation set of six registers, for measuring how often correction damages
sentences that need no edit.

    python -m models.gec.clean_set --data ../shared/data --out runs/clean-set.tsv [--seed 20240611]

Writes a TSV with a header (``register``, ``source``, ``sentence``): about 450 sentences a register, drawn with
a fixed seed (one random stream per source, so a change to one source leaves the others' draws alone). Nothing is
copied into the repository: the set is built at run time from the data folder and from the packages installed in
this Python environment (``importlib.metadata``; never the standard library).

Registers and their sources (``SOURCES``, with the number of sentences drawn from each):

- **technical**: ``dev/clean_tech.dev.txt`` (third-party packages' docstrings, 200); the long descriptions in the
  installed third-party distributions' ``METADATA`` (their READMEs: prose paragraphs only, no code, list, table,
  heading or HTML block; at most ``PER_DOCUMENT`` a distribution; this project's own left out; 200); Python
  Enhancement Proposals (``mono/en.peps``, 50).
- **legal**: sentences with legal vocabulary (``legal``: at least two distinct terms of ``LEGAL_TERMS``, such as
  court, statute, plaintiff, ruled, pursuant) from Wikipedia and WikiSplit, BBC and Reuters news, US speeches,
  the OpenStax government and history textbooks (``mono/``). No licence text is used anywhere: every sentence
  with licence vocabulary (``LICENCE``: licence, copyright, warranty, redistribution, ...) is refused in every
  register.
- **scientific**: SciTLDR computer-science abstracts (``mono/en.scitldr``), sentences with science vocabulary
  (``SCIENCE_TERMS``) from the OpenStax textbooks (``mono/en.openstax_ncsa`` and ``en.openstax_ccby``), and the
  prose of the installed scientific packages' docstrings (``SCIENTIFIC_PACKAGES``: scipy's statistics, special
  functions, signal, integration, optimisation and spatial modules, networkx's algorithms, sympy's physics,
  mpmath's functions; no tests; at most ``PER_DOCUMENT`` a module).
- **business/news**: BBC News 2004-05, Reuters 1987, AG's News, ABC (Australia) 2006 (``mono/``).
- **fiction**: English novels 1870-1927 (ELTeC and the 100 English novels, ``mono/``).
- **government/speeches**: US State of the Union addresses and inaugurals (``mono/en.us_speeches``) and Brown
  corpus sentences with government vocabulary (``GOVERNMENT_TERMS``).

Every sentence is well formed (``refusal``): 8-40 words, a capital first, ``.``, ``?`` or ``!`` last (not an
ellipsis), brackets and double quotes balanced, no URL, e-mail, code, markup or licence wording, nothing the
service would mask or hide (``service.text.protect``), mostly letters, not a heading (mostly capitalised
words). Sentences are deduplicated across the whole set on their letters and digits, and none that appears in
the learner dev sets (FCE dev, JFLEG dev: sources and references) is taken.

Known limits: the mono sources were open to training (``models.gec.corpora``) and the confidence fit
(``models.gec.calibrate``) reads clean sentences of several of them (Wikipedia, Reuters, Brown, OpenStax CC BY,
PEPs, novels100, SciTLDR): a few of this set's sentences may be among them; the installed packages' prose was
seen by neither. As in any edited text, a few real errors remain (a typo in a 1987 wire story, a doubled word).
"""

from __future__ import annotations

import argparse
import ast
import gzip
import importlib.util
import random
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path

from service.engine.report import table
from service.text.protect import Kind, find_protected
from service.text.segment import split_sentences

REGISTERS = ("technical", "legal", "scientific", "business/news", "fiction", "government/speeches")
SEED = 20240611
PER_DOCUMENT = 6  # sentences at most from one distribution's description or one module's docstrings
POOL = 25  # candidates read from a source, per sentence drawn (the mono files are shuffled: the first are a sample)
MIN_WORDS, MAX_WORDS = 8, 40

LEGAL_TERMS = re.compile(
    r"\b(?:courts?|judges?|justices|plaintiffs?|defendants?|statutes?|statutory|pursuant|jurisdictions?|appeals?|"
    r"appealed|rul(?:ed|ing|ings)|verdicts?|lawsuits?|litigation|tribunals?|legislation|regulations?|regulatory|"
    r"contracts?|contractual|liable|breach(?:ed|es)?|clauses?|provisions?|enact(?:ed|ment)|amendments?|"
    r"constitutional|unconstitutional|prosecut(?:ed|ion|ors?)|convicted|convictions?|sentenced|indict(?:ed|ment)|"
    r"attorneys?|counsel|injunctions?|damages|compliance|obligations?|arbitration|settlements?|tenants?|"
    r"hereby|thereof|herein|shall|ordinances?|decrees?|felony|misdemeanou?r|lawful|unlawful|illegal|"
    r"legally|legal|laws?|Act|Supreme|acquitted|testimony|witness(?:es)?|trial|sued|guilty|plead(?:ed)?|jury|"
    r"juries|custody|bail|fined|penalt(?:y|ies)|mandated)\b"
)
SCIENCE_TERMS = re.compile(
    r"\b(?:cells?|cellular|tissues?|organs?|proteins?|molecules?|molecular|atoms?|energy|mass|temperature|"
    r"stars?|planets?|galax(?:y|ies)|orbits?|solar|species|evolution|hypothes[ie]s|experiments?|measure(?:d|ments?)|"
    r"data|variables?|equations?|theory|theories|gravity|radiation|nucleus|enzymes?|hormones?|neurons?|membranes?|"
    r"blood|chemical|physical|biological|oxygen|carbon|hydrogen|wavelength|spectrum|telescope|organisms?|genes?|"
    r"genetic|muscles?|bones?|scientists?|research(?:ers)?|samples?|velocity|density|pressure)\b",
    re.IGNORECASE,
)
GOVERNMENT_TERMS = re.compile(
    r"\b(?:government|federal|Congress|Senate|legislature|legislative|administration|agency|agencies|department|"
    r"programs?|budget|fiscal|appropriations?|officials?|polic(?:y|ies)|taxes|taxation|municipal|ministry|cabinet)\b"
)
LICENCE = re.compile(
    r"licen[cs]|copyright|warrant(?:y|ies)|merchantab|redistribut|sublicens|hereby grant|all rights reserved|"
    r"public domain|free software|open[- ]source|\b(?:GPL|MIT|BSD|Apache|CC0|Creative Commons)\b",
    re.IGNORECASE,
)
_URL = re.compile(r"https?:|ftp:|www\.|\S@\S|\b\w+\.(?:com|org|net|io|py|html?|md|rst|txt|json|yaml|toml)\b", re.I)
_CODE = re.compile(
    r"[`_=<>{}\[\]\\|#*~^@]|%\(|::|->|\b[A-Za-z]\w*\.[A-Za-z_]\w+|\w\(|\(\)|\b[a-z]+[A-Z]\w*|[a-z]{2}\.[A-Z]"
)
_ABBREVIATION = re.compile(r"\b\w+\. [a-z]")  # "e.g. the", "approx. two", or a sentence split after one
_OPENING, _CLOSING = "([{", ")]}"
_PROTECTED_FOUND = (Kind.MASK, Kind.HIDE)


def key(sentence: str) -> str:
    """What two sentences must share to be duplicates: their lower-case letters and digits."""
    return re.sub(r"[^a-z0-9]", "", sentence.lower())


def balanced(sentence: str) -> bool:
    """Brackets nest and close, and double quotes pair up."""
    stack: list[str] = []
    for char in sentence:
        if char in _OPENING:
            stack.append(char)
        elif char in _CLOSING and (not stack or _OPENING.index(stack.pop()) != _CLOSING.index(char)):
            return False
    return not stack and sentence.count('"') % 2 == 0


def heading(words: list[str]) -> bool:
    """Mostly capitalised words (a title, a heading, a list of names)."""
    alphabetic = [w for w in words if w[:1].isalpha()]
    return not alphabetic or sum(w[0].isupper() for w in alphabetic) > 2 * len(alphabetic) / 3


def refusal(sentence: str) -> str | None:
    """Why ``sentence`` is not a well-formed prose sentence for the set (see the module docstring); None if it is."""
    words = sentence.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return "length"
    if not ("A" <= sentence[0] <= "Z"):
        return "start"
    if sentence[-1] not in ".?!" or sentence.endswith(".."):
        return "end"
    if _ABBREVIATION.search(sentence):
        return "abbreviation"
    if not balanced(sentence):
        return "brackets"
    if _URL.search(sentence):
        return "url"
    if _CODE.search(sentence):
        return "code or markup"
    if LICENCE.search(sentence):
        return "licence"
    if heading(words):
        return "heading"
    shown = sentence.replace(" ", "")
    if sum(c.isalpha() for c in shown) < 0.6 * len(shown) or sum(c.isdigit() for c in shown) > 0.15 * len(shown):
        return "not prose"
    if any(span.kind in _PROTECTED_FOUND for span in find_protected(sentence).spans):
        return "protected"
    return None


def _distinct(terms: list[str]) -> int:
    """How many different terms, a plural counting as its singular."""
    return len({re.sub(r"(?<=[^s])s$", "", term.lower()) for term in terms})


def legal(sentence: str) -> bool:
    """At least two distinct legal terms."""
    return _distinct(LEGAL_TERMS.findall(sentence)) >= 2


def scientific(sentence: str) -> bool:
    """A term of the sciences."""
    return SCIENCE_TERMS.search(sentence) is not None


def governmental(sentence: str) -> bool:
    """At least two distinct terms of government, and no dialogue (no quotation marks)."""
    return '"' not in sentence and _distinct(GOVERNMENT_TERMS.findall(sentence)) >= 2


Candidates = Callable[[Path], Iterator[tuple[str, str]]]
"""A source's sentences, as ``(document, sentence)``, read from the data folder or the installed packages."""


@dataclass(frozen=True)
class Source:
    """Sentences of one register from one source: ``count`` drawn from the candidates that ``keep`` accepts."""

    register: str
    name: str
    count: int
    candidates: Candidates
    keep: Callable[[str], bool] | None = None
    per_document: int | None = None  # at most this many candidates from one document


def mono(name: str) -> Candidates:
    """A ``mono/en.<name>.txt.gz`` file's lines."""

    def read(data: Path) -> Iterator[tuple[str, str]]:
        with gzip.open(data / "mono" / f"en.{name}.txt.gz", "rt", encoding="utf-8") as lines:
            yield from ((name, line.strip()) for line in lines)

    return read


def clean_tech(data: Path) -> Iterator[tuple[str, str]]:
    """``dev/clean_tech.dev.txt``'s lines."""
    for line in (data / "dev" / "clean_tech.dev.txt").read_text(encoding="utf-8").splitlines():
        yield "clean_tech", line.strip()


def prose_paragraphs(text: str) -> Iterator[str]:
    """The prose paragraphs of a markdown or reStructuredText document (or a docstring), each on one line: blocks
    with a code, list, table, heading, directive, HTML or doctest line, or an indented one, are left out; so is
    everything inside a fenced code block."""
    block: list[str] = []
    fenced = False
    for line in [*text.splitlines(), ""]:
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced, block = not fenced, [*block, "\0"]
            continue
        if fenced:
            continue
        if stripped:
            block.append(line)
            continue
        if block and not any(_not_prose_line(b) for b in block):
            yield " ".join(b.strip() for b in block)
        block = []


def _not_prose_line(line: str) -> bool:
    stripped = line.strip()
    return (
        line.startswith(("\0", " ", "\t"))
        or stripped.startswith(("#", ">", "<", "|", "..", ":", "-", "*", "+", "=", "$", "!", "["))
        or re.match(r"\d+[.)] ", stripped) is not None
        or re.fullmatch(r"([-=~^\"'`#*+])\1{2,}", stripped) is not None
        or stripped.endswith("::")
    )


def sentences_of(text: str) -> Iterator[str]:
    """The sentences of a document's prose paragraphs, split as the service splits them."""
    for paragraph in prose_paragraphs(text):
        yield from (" ".join(s.text.split()) for s in split_sentences(paragraph))


def package_descriptions(_: Path) -> Iterator[tuple[str, str]]:
    """The sentences of every installed third-party distribution's long description, this project's left out."""
    seen = set()
    for dist in sorted(distributions(), key=lambda d: d.metadata["Name"].lower()):
        name = dist.metadata["Name"].lower()
        if name in seen or name == "gecserve":
            continue
        seen.add(name)
        yield from ((name, s) for s in sentences_of(str(dist.metadata.get_payload() or "")))


SCIENTIFIC_PACKAGES = (
    "scipy/stats",
    "scipy/special",
    "scipy/signal",
    "scipy/integrate",
    "scipy/optimize",
    "scipy/spatial",
    "networkx/algorithms",
    "sympy/physics",
    "mpmath/functions",
)


def package_docstrings(folders: Iterable[str]) -> Candidates:
    """The sentences of the docstrings in the modules under the installed packages' ``folders`` (``package/sub``),
    tests left out; a folder whose package is not installed gives none."""

    def read(_: Path) -> Iterator[tuple[str, str]]:
        for folder in folders:
            package, _, sub = folder.partition("/")
            spec = importlib.util.find_spec(package)
            if spec is None or not spec.submodule_search_locations:
                continue
            root = Path(next(iter(spec.submodule_search_locations)))
            for path in sorted((root / sub).rglob("*.py")):
                if "tests" in path.relative_to(root).parts or path.name.startswith("test_"):
                    continue
                yield from ((f"{package}/{path.relative_to(root)}", s) for s in _docstring_sentences(path))

    return read


def _docstring_sentences(path: Path) -> Iterator[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node)
            if docstring:
                yield from sentences_of(docstring)


_NEWS = ("bbc", "reuters21578", "agnews", "abc")
SOURCES: tuple[Source, ...] = (
    Source("technical", "clean_tech", 200, clean_tech),
    Source("technical", "package descriptions", 200, package_descriptions, per_document=PER_DOCUMENT),
    Source("technical", "peps", 50, mono("peps")),
    *(Source("legal", name, n, mono(name), legal) for name, n in (("wikipedia", 140), ("wikisplit", 50))),
    *(Source("legal", name, n, mono(name), legal) for name, n in (("bbc", 80), ("reuters21578", 40))),
    Source("legal", "us_speeches", 60, mono("us_speeches"), legal),
    Source("legal", "openstax_ncsa", 80, mono("openstax_ncsa"), legal),
    Source("scientific", "scitldr", 180, mono("scitldr")),
    Source("scientific", "openstax_ncsa", 80, mono("openstax_ncsa"), scientific),
    Source("scientific", "openstax_ccby", 40, mono("openstax_ccby"), scientific),
    Source(
        "scientific",
        "scientific package docstrings",
        150,
        package_docstrings(SCIENTIFIC_PACKAGES),
        per_document=PER_DOCUMENT,
    ),
    *(Source("business/news", name, n, mono(name)) for name, n in zip(_NEWS, (150, 120, 80, 100), strict=True)),
    Source("fiction", "eltec", 225, mono("eltec")),
    Source("fiction", "novels100", 225, mono("novels100")),
    Source("government/speeches", "us_speeches", 350, mono("us_speeches")),
    Source("government/speeches", "brown", 100, mono("brown"), governmental),
)


def dev_keys(data: Path) -> set[str]:
    """The keys of every line of the learner dev sets (FCE dev and JFLEG dev, sources and references)."""
    names = ["fce.dev.src", "fce.dev.tgt", "fce.dev.detok.src", "fce.dev.detok.tgt", "jfleg.dev.src"]
    names += [f"jfleg.dev.ref{k}" for k in range(4)]
    return {key(line) for name in names for line in (data / "dev" / name).read_text(encoding="utf-8").splitlines()}


def draw(source: Source, data: Path, taken: set[str], seed: int) -> list[str]:
    """``source.count`` sentences of ``source`` (fewer if it has fewer) that are well formed, pass its filter and
    whose keys are not in ``taken`` (which gets theirs), drawn with ``seed``."""
    rng = random.Random(f"{seed}-{source.register}-{source.name}")
    limit = POOL * source.count
    by_document: dict[str, list[str]] = {}
    found: set[str] = set()
    for document, sentence in source.candidates(data):
        if len(found) >= limit:
            break
        k = key(sentence)
        if k in taken or k in found or (source.keep is not None and not source.keep(sentence)):
            continue
        if refusal(sentence) is None:
            found.add(k)
            by_document.setdefault(document, []).append(sentence)
    pool = []
    for sentences in by_document.values():
        if source.per_document is not None:
            rng.shuffle(sentences)
            sentences = sentences[: source.per_document]
        pool += sentences
    chosen = rng.sample(pool, min(source.count, len(pool)))
    taken.update(key(s) for s in chosen)
    return chosen


def build(data: Path, seed: int = SEED, sources: Iterable[Source] = SOURCES) -> list[tuple[str, str, str]]:
    """The set as ``(register, source, sentence)`` rows, register by register in ``sources`` order."""
    taken = dev_keys(data)
    rows = []
    for source in sources:
        chosen = draw(source, data, taken, seed)
        print(f"{source.register}: {source.name}: {len(chosen)} of {source.count}", file=sys.stderr, flush=True)
        rows += [(source.register, source.name, s) for s in chosen]
    return rows


def write_tsv(path: Path, rows: list[tuple[str, str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["register\tsource\tsentence", *("\t".join(row) for row in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_tsv(path: Path) -> list[tuple[str, str, str]]:
    """The ``(register, source, sentence)`` rows of a set written by ``write_tsv``."""
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [(r, s, t) for r, s, t in (line.split("\t") for line in lines)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the GEC data folder (../shared/data)")
    parser.add_argument("--out", type=Path, required=True, help="the TSV to write")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    rows = build(args.data, args.seed)
    write_tsv(args.out, rows)
    counts = Counter((register, source) for register, source, _ in rows)
    per_register = Counter(register for register, _, _ in rows)
    summary = [{"register": r, "source": s, "sentences": n} for (r, s), n in counts.items()]
    summary += [{"register": r, "source": "(all)", "sentences": per_register[r]} for r in REGISTERS]
    print(table(summary, ["register", "source", "sentences"]))
    print(f"{len(rows)} sentences -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
