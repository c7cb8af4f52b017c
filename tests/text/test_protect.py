"""Protected spans: every class of text the model must not rewrite is found, and learner prose is not."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.text.protect import Kind, Span, find_protected
from tests.text.strategies import LEARNER_PAIRS, texts


def found(text: str, kind: Kind | None = None) -> list[tuple[str, str]]:
    """``(label, text)`` of each protected span (of one kind, if given)."""
    return [(s.label, text[s.start : s.end]) for s in find_protected(text).spans if kind is None or s.kind is kind]


def protects(text: str, piece: str, label: str, kind: Kind = Kind.MASK) -> bool:
    start = text.index(piece)
    return any(
        s.start == start and s.end == start + len(piece) and s.label == label and s.kind is kind
        for s in find_protected(text).spans
    )


URLS = [
    "https://www.example.com/path/to_page?id=42&ref=abc",
    "http://example.org",
    "HTTPS://EXAMPLE.COM/UPPER",
    "https://github.com/openai/whisper",
    "https://en.wikipedia.org/wiki/Foo_(bar)",
    "https://example.com/a,b,c?x=1#frag",
    "http://user:pass@host.example.net:8080/p",
    "ftp://ftp.example.org/pub/file.tar.gz",
    "file:///etc/hosts",
    "//cdn.example.com/lib.js",
    "www.bbc.co.uk/news",
    "www.example.com",
    "github.com/openai/whisper",
    "example.com",
    "example.org",
    "shop.example.de",
    "bit.ly/3xYz",
    "localhost:8000/v1/correct",
    "localhost",
    "127.0.0.1:6379",
    "10.0.0.1",
    "http://[::1]:8080/x",
    "http://例子.测试/路径",
    "xn--80ak6aa92e.com",
]


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("frame", ["Please visit {} for more details.", "({})", "See {}.", "{}, then {} again"])
def test_every_url_form_is_masked_whole(url: str, frame: str) -> None:
    text = frame.format(url, url)
    assert protects(text, url, "url"), found(text)


@pytest.mark.parametrize(
    "address",
    ["john.smith@example.com", "user+tag@sub.domain.travel", "JOHN@EXAMPLE.COM", "a_b-c@mail.co.uk", "x@y.io"],
)
@pytest.mark.parametrize("frame", ["Write to {} if you has questions.", "<{}>", "mailto:{}", "({}).", '"{}"'])
def test_email_addresses_are_masked_whole(address: str, frame: str) -> None:
    text = frame.format(address)
    start = text.index(address)
    spans = find_protected(text).spans
    assert any(s.start <= start and start + len(address) <= s.end and s.kind is Kind.MASK for s in spans), found(text)


@pytest.mark.parametrize(
    "text",
    [
        "I went home.So I slept.",
        "It was the end.It was sad.",
        "at home.my mom came",
        "it.so what",
        "We met in Paris.In the evening",
        "e.g. apples, i.e. fruit, etc. and U.S.A or F.C.E. too",
        "Mr.Smith is here.",
        "He said:yes.",
        "My friends(s) came.",
        "I went there in 2019.",
        "The students (who were late) came",
        "It costs a lot -- too much.",
    ],
)
def test_learner_slips_are_not_masked(text: str) -> None:
    """A missing space after a full stop, abbreviations and brackets are prose the model may correct."""
    assert found(text, Kind.MASK) == []
    assert found(text, Kind.HIDE) == []


@pytest.mark.parametrize(
    "path", ["/usr/local/bin/python", "~/docs/notes.txt", "./run.sh", "../data/x.csv", "C:\\Users\\me\\file.docx"]
)
def test_file_paths(path: str) -> None:
    text = f"Open {path} and check it."
    assert protects(text, path, "path"), found(text)


@pytest.mark.parametrize("name", ["main.py", "report.docx", "index.html", "photo.jpeg", "data.v2.csv", "a-b.tar.gz"])
def test_file_names(name: str) -> None:
    text = f"I sended {name} yesterday."
    assert protects(text, name, "path"), found(text)


@pytest.mark.parametrize(("piece", "label"), [("@alice", "mention"), ("@bob.smith", "mention"), ("#python", "hashtag")])
def test_mentions_and_hashtags(piece: str, label: str) -> None:
    text = f"Thanks {piece}, it were great!"
    assert protects(text, piece, label), found(text)


def test_hash_and_at_signs_that_are_no_tags() -> None:
    assert found("# Title", Kind.MASK) == []  # a heading
    assert protects("Item # 5 costs", "#", "symbol", Kind.KEEP)
    assert protects("I like C# a lot", "C#", "code")
    assert not [label for label, _ in found("mail me at a@b.com") if label == "mention"]


@pytest.mark.parametrize(
    "code",
    [
        "snake_case",
        "__init__",
        "iPhone",
        "eBay",
        "getElementById",
        "print()",
        "os.path.join()",
        "obj.method(x)",
        "f(a,b)",
        "numpy.linalg.norm",
        "a==b",
        "x->next",
        "std::cout",
        "--verbose",
        "--max-batch=8",
        "key=value",
        "$HOME",
        "${PATH}",
        "{name}",
        "0x1F",
        "3f2a9c1d0e",
        "C++",
    ],
)
def test_code_like_tokens(code: str) -> None:
    text = f"Then you call {code} again."
    assert protects(text, code, "code"), found(text)


@pytest.mark.parametrize("word", ["fiancée", "naïve", "São", "Müller", "résumé", "jalapeño", "Zoë", "façade", "Nguyễn"])
def test_words_with_a_latin_letter_beyond_ascii_are_kept_as_written(word: str) -> None:
    """Loanwords and names: the model read "fiancée" and wrote "fiancials"."""
    text = f"I met {word} yesterday and it were nice."
    assert protects(text, word, "accented", Kind.KEEP), found(text)


def test_signs_beyond_ascii_are_no_letters() -> None:
    assert not [label for label, _ in found("It is 3×4 or 12÷3 metres.") if label == "accented"]


INLINE_CODE = [
    '{"status": "ok", "count": 3}',
    "{debug: true, port: 8080}",
    "{'a': {'b': 1}, 'c': [1, 2]}",
    "SELECT * FROM users WHERE id = 5;",
    "INSERT INTO logs (msg) VALUES ('hi');",
    "UPDATE users SET name = 'Bob' WHERE id = 2;",
    "DELETE FROM users WHERE active;",
    "CREATE TABLE t (id int);",
]


@pytest.mark.parametrize("code", INLINE_CODE)
def test_brace_groups_and_sql_statements_are_one_masked_atom(code: str) -> None:
    """Read as written, the words around them were rewritten ("The API returns {...}": "The candidate returns")."""
    text = f"The API returns {code} when it work."
    (span,) = find_protected(text).spans
    assert (text[span.start : span.end], span.kind, span.label) == (code, Kind.MASK, "code")


@pytest.mark.parametrize(
    "prose", ["SELECT the best one; then go.", "I will UPDATE you later; ok.", "select name from users;", "a { b"]
)
def test_capitals_and_lone_braces_without_a_statement_are_prose(prose: str) -> None:
    assert not [label for label, _ in found(prose) if label == "code"], found(prose)


@pytest.mark.parametrize("slip", ["energyHydrogen", "thatI", "video(s)", "Survey(1995)", "e.t.c", "--"])
def test_slips_that_look_a_little_like_code_are_prose(slip: str) -> None:
    text = f"We saw {slip} there."
    assert not [label for label, _ in found(text) if label == "code"], found(text)


@pytest.mark.parametrize(
    "number",
    [
        "$1,250.50",
        "1.2",
        "€20",
        "20 €",
        "£3.99",
        "¥1000",
        "50%",
        "3.5 %",
        "-4",
        "2024-01-15",
        "15/01/2024",
        "15.01.2024",
        "10:30",
        "10:30am",
        "7pm",
        "v1.2.3",
        "3.11.7",
        "5kg",
        "10GB",
        "20°C",
        "3rd",
        "21st",
        "1,000,000",
        "1.000.000,50",
        "15-20",
    ],
)
def test_numbers_with_units_and_currencies_are_kept(number: str) -> None:
    text = f"It costs {number} (about 1.2 million yen) now."
    assert protects(text, number, "number", Kind.KEEP), found(text)


def test_special_token_spellings_are_kept() -> None:
    text = "a </s> b <pad> c <unk><mask> d"
    spans = find_protected(text).spans
    for spelling in ("</s>", "<pad>", "<unk>", "<mask>"):
        start = text.index(spelling)
        assert any(s.start <= start and start + len(spelling) <= s.end for s in spans), spelling


def hidden(text: str) -> list[str]:
    return [piece for label, piece in found(text, Kind.HIDE)]


def prose_of(text: str) -> str:
    """The text with every protected span blanked (what is left is what the model reads as written)."""
    chars = list(text)
    for span in find_protected(text).spans:
        chars[span.start : span.end] = " " * (span.end - span.start)
    return " ".join("".join(chars).split())


@pytest.mark.parametrize(
    ("text", "prose"),
    [
        ("## Installation", "Installation"),
        ("## Installation ##", "Installation"),
        ("# Title", "Title"),
        ("Title\n=====", "Title"),
        ("Click **Save** to keep it.", "Click Save to keep it."),
        ("Click __Save__ or *this* or _that_ or ~~old~~ ones.", "Click Save or this or that or old ones."),
        ("Read [the docs](https://example.com/docs) first.", "Read the docs first."),
        ('Read [the docs](https://example.com/docs "Docs") first.', "Read the docs first."),
        ("Read [the docs][1] first.\n\n[1]: https://example.com", "Read the docs first."),
        ("- item one\n- item two", "item one item two"),
        ("* item\n+ item", "item item"),
        ("1. first step\n2) second step", "first step second step"),
        ("> quoted text\n> more", "quoted text more"),
        ("Some <b>bold</b> text", "Some bold text"),
        ("| Name | Age |\n|------|-----|\n| Bob | twenty |", "Name Age Bob twenty"),
        ("Text\r\n\r\n## Heading\r\n- item *one*", "Text Heading item one"),
        ("```python\nx = 1  # set\n```\nSome text.", "Some text."),
        ("~~~\ncode here\n~~~\nAfter.", "After."),
        ("---\nText", "Text"),
    ],
)
def test_markdown_syntax_is_hidden_and_its_text_is_prose(text: str, prose: str) -> None:
    assert prose_of(text) == prose


@pytest.mark.parametrize(
    ("text", "atom"),
    [
        ("Run `pip install` now.", "`pip install`"),
        ("Run ``a `b` c`` now.", "``a `b` c``"),
        ("See ![the logo](logo.png) here.", "![the logo](logo.png)"),
        ("See <https://example.com> here.", "<https://example.com>"),
    ],
)
def test_markdown_atoms_are_masked_whole(text: str, atom: str) -> None:
    assert protects(text, atom, "markdown"), found(text)


def test_indented_lines_are_prose_not_code_blocks() -> None:
    assert prose_of("    I has four spaces before me.") == "I has four spaces before me."


@pytest.mark.parametrize(
    "line",
    [
        "x = 1  # set the counter",
        "total += price * 2",
        "def correct(text):",
        "class Pipeline:",
        "import numpy as np",
        "from service import pipeline",
        "#include <stdio.h>",
        "// a comment",
        "$ pip install gecserve",
        ">>> print(x)",
        "for (int i = 0; i < n; i++) {",
        "  });",
    ],
)
def test_code_lines_are_hidden_whole(line: str) -> None:
    text = f"I wrote this:\n{line}\nIt works."
    assert prose_of(text) == "I wrote this: It works."


@pytest.mark.parametrize("line", ["Let me know.", "Return the book.", "For example: this.", "Class is over."])
def test_sentences_that_start_like_code_are_prose(line: str) -> None:
    assert prose_of(line) == line


@pytest.mark.parametrize(
    ("text", "run"),
    [
        ("He have a cat. 😀😀😀 She go home.", "😀😀😀"),
        ("I ❤️ you", "❤️"),
        ("He said 你好 to me", "你好"),
        ("cafe\u0301 time", "\u0301"),
        ("a 😀 😀 b", "😀 😀"),
    ],
)
def test_runs_the_model_cannot_read_are_hidden_and_glued(text: str, run: str) -> None:
    spans = [s for s in find_protected(text).spans if s.label == "unreadable"]
    assert [text[s.start : s.end] for s in spans] == [run]
    assert spans[0].kind is Kind.HIDE and spans[0].glued


def test_only_atoms_and_unreadable_runs_are_glued() -> None:
    text = "**Note** visit https://x.com at 10:30 😀 ok"
    glued = {s.label: s.glued for s in find_protected(text).spans}
    assert glued == {"markdown": False, "url": True, "number": False, "unreadable": True}


@pytest.mark.parametrize(("source", "_"), LEARNER_PAIRS)
def test_learner_sentences_are_prose(source: str, _: str) -> None:
    assert [label for label, _piece in found(source) if label not in ("number", "symbol")] == []


def test_table_cells_and_blocks_are_cut_apart() -> None:
    text = "| Name | Age |\n|---|---|\n| Bob | 20 |"
    cuts = find_protected(text).cuts
    assert text.index("Age") in cuts and text.index("Bob") in cuts


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts, st.text(alphabet=st.sampled_from(list("ab .,#*_`[]()<>|~\\&@:/=-\n1😀é")), max_size=60)))
def test_spans_are_sorted_disjoint_and_inside_the_text(text: str) -> None:
    protection = find_protected(text)
    previous = 0
    for span in protection.spans:
        assert isinstance(span, Span)
        assert previous <= span.start < span.end <= len(text)
        previous = span.end
    assert all(0 <= cut <= len(text) for cut in protection.cuts)


@pytest.mark.parametrize("run", ["a" * 150, "QUJD" * 40, "x" * 20_000])
def test_a_run_longer_than_any_word_is_masked(run: str) -> None:
    text = f"I typed {run} by mistake."
    assert protects(text, run, "long_token"), found(text)
