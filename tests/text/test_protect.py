"""Protected spans: every class of text the model must not rewrite is found, and learner prose is not."""

from __future__ import annotations

import re

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
    """The text with every hidden or masked span blanked (what is left is what the model reads as written)."""
    chars = list(text)
    for span in find_protected(text).spans:
        if span.kind is not Kind.KEEP:
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


# -- forms kept as written: Windows paths, emoticons, quotations in another language, link texts, list items ------

WINDOWS_PATHS = [
    "C:\\Program Files\\App\\settings.ini",
    "C:\\Program Files (x86)\\Steam\\steam.exe",
    "C:\\Users\\me\\My Documents\\notes.txt",
    "C:\\Program Files",
    "C:\\Users\\me\\_backup",
    "D:\\backup\\",
    "c:\\temp",
    "C:/Users/me/file.txt",
    "\\\\server\\share\\report.docx",
    "\\\\server\\shared folder\\Q3 report\\summary.xlsx",
    "\\\\?\\C:\\very\\long path\\file.bin",
    "\\\\.\\pipe\\docker_engine",
    "%APPDATA%\\Microsoft\\Teams",
    "..\\lib\\native.dll",
    ".\\scripts\\run.ps1",
    "src\\main.py",
]
PATH_FRAMES = ["Please open {} and check it.", "Open {}.", "({})", '"{}"', "Copy {}, then delete {} again.", "{}"]


@pytest.mark.parametrize("path", WINDOWS_PATHS)
@pytest.mark.parametrize("frame", PATH_FRAMES)
def test_windows_and_unc_paths_are_masked_whole_blanks_and_escapes_included(path: str, frame: str) -> None:
    """A folder's blanks are the path's, and markdown's escapes ("\\\\", "\\_") do not cut it: "\\\\server\\share"
    lost a backslash, "C:\\Program Files\\App" was three pieces of prose."""
    text = frame.format(path, path)
    assert protects(text, path, "path"), found(text)


name = st.text(st.sampled_from("abcxyzABC019_-"), min_size=1, max_size=10)
folder = st.lists(name, min_size=1, max_size=3).map(" ".join)  # a folder may hold blanks: its separator ends it
file_name = st.tuples(name, st.sampled_from(["txt", "ini", "exe", "docx", "json", "log", "x"])).map(".".join)
root = st.one_of(
    st.tuples(st.sampled_from("CDcz"), st.sampled_from("\\/")).map(lambda drive: f"{drive[0]}:{drive[1]}"),
    name.map(lambda host: f"\\\\{host}\\"),
    st.sampled_from(["%APPDATA%\\", "%USERPROFILE%\\", ".\\", "..\\"]),
)
windows_paths = st.tuples(root, st.lists(folder, max_size=4), file_name).map(
    lambda parts: parts[0] + "".join(f"{folder}\\" for folder in parts[1]) + parts[2]
)


@settings(max_examples=300, deadline=None)
@given(windows_paths, st.sampled_from(PATH_FRAMES))
def test_generated_windows_paths_are_masked_whole(path: str, frame: str) -> None:
    text = frame.format(path, path)
    assert protects(text, path, "path"), found(text)


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("Save it in C:\\temp and open D:\\data later.", ["C:\\temp", "D:\\data"]),
        ("Install it in C:\\Program Files\\Steam\\steamapps. Then restart.", ["C:\\Program Files\\Steam\\steamapps"]),
        ("Run ..\\lib\\x.dll and .\\run.ps1 now.", ["..\\lib\\x.dll", ".\\run.ps1"]),
        ("See C:\\Temp I think, or C:\\Temp; ok?", ["C:\\Temp", "C:\\Temp"]),
        ("(see C:\\a (b)\\c).", ["C:\\a (b)\\c"]),
    ],
)
def test_a_windows_path_ends_where_the_prose_after_it_starts(text: str, paths: list[str]) -> None:
    assert [piece for label, piece in found(text) if label == "path"] == paths


# Eyes first: these may follow a word ("today:)"); the others stand after a blank
EYES_FIRST = [":)", ":-)", ";)", ";-)", ":D", ":-D", ":(", ":-(", ":P", ":p", "=)", "=D", ":'(", ":')", ":/", ":o"]
EYES_FIRST += [":O", ":]", ":3", ">:(", ":)))", ":(("]
EMOTICONS = [*EYES_FIRST, "<3", "</3", "xD", "XD", "XDD", "^_^", "^^", "^.^", "-_-", "-.-", "T_T", ";_;", "o_O"]
EMOTICONS += ["O_o", "o.O", ">_<", "x_x", "\\o/", "¯\\_(ツ)_/¯", "ಠ_ಠ"]
EMOTICON_FRAMES = [
    "I am so happy today {} and he go home.",
    "It were great {}",
    "{} I has a cat.",
    "Oh, we {}  miss you",
]
EMOTICON_FRAMES += ["- see you {}\n- bye {}", "See you tomorow {}. Bye {}!", "**Great** {} *really*"]


@pytest.mark.parametrize(
    ("emoticon", "frame"),
    [(e, frame) for e in EMOTICONS for frame in EMOTICON_FRAMES] + [(e, "Thanks alot{}, bye{}") for e in EYES_FIRST],
)
def test_emoticons_are_hidden_with_the_blanks_before_them(emoticon: str, frame: str) -> None:
    """Neither the emoticon nor the blank before it may be removed ("today :)" became "today:)"); the word before
    it may still change (no glue)."""
    text = frame.format(emoticon, emoticon)
    emoticons = [(s.start, s.end) for s in find_protected(text).spans if s.label == "emoticon"]
    at = [match.start() for match in re.finditer(re.escape(emoticon), text)]
    assert len(emoticons) == len(at), found(text)
    for (start, end), where in zip(emoticons, at, strict=True):
        assert end == where + len(emoticon) and text[start:where].strip(" ") == "", found(text)
        assert start == where or text[start - 1] not in " \t"  # every blank before it
    assert all(not s.glued for s in find_protected(text).spans if s.label == "emoticon")


@pytest.mark.parametrize(
    "text",
    [
        "We met at 10:30 and left at 11:00.",
        "The ratio was 2:3 (roughly).",
        "Note:(see below) it is fine.",
        "Visit http://example.com:8080/x now.",
        "Use std::vector or a=>b here.",
        "It was 0.0 degrees and T.O. Smith came.",
        "Dmitry Loginov (; born 2 February 2000) is a snowboarder.",
        "Windows XP and Xbox are old.",
        "Plan D: we go home.",
    ],
)
def test_colons_brackets_and_letters_that_are_no_emoticons(text: str) -> None:
    assert [piece for label, piece in found(text) if label == "emoticon"] == []


FOREIGN_QUOTATIONS = [
    "Wer nicht wagt, der nicht gewinnt",
    "C'est la vie",
    "Je ne sais quoi",
    "Ich liebe dich",
    "Te quiero mucho",
    "Veni, vidi, vici",
    "Alles klar",
    "Carpe diem",
    "Hakuna matata",
    "No es un día cualquiera",
    "Qui est là?",
]
QUOTES = [('"', '"'), ("“", "”"), ("„", "“"), ("«", "»"), ("« ", " »"), ("»", "«"), ("‘", "’"), ("'", "'")]


@pytest.mark.parametrize("quotation", FOREIGN_QUOTATIONS)
@pytest.mark.parametrize(("left", "right"), QUOTES)
def test_a_quotation_in_another_language_is_masked(quotation: str, left: str, right: str) -> None:
    """ "Wer nicht wagt, der nicht gewinnt" became "Wer night wait, der night gewinnt"."""
    text = f"My grandfather always said {left}{quotation}{right} when I was young."
    assert protects(text, f"{left}{quotation}{right}", "foreign"), found(text)


@pytest.mark.parametrize(
    "text",
    [
        'He said "I has a apple" to me.',
        "She told me “the best is yet to come” and she were right.",
        "The sign said 'No entry after midnight' but we goes in.",
        'It is called "good lucks" in my country.',
        'I said "hello" to the students\' teacher.',
        "We don't know 'what's' it.",
        'The word "recieve" is spelt wrong.',
    ],
)
def test_english_quotations_and_cited_words_are_prose(text: str) -> None:
    assert [label for label, _ in found(text) if label == "foreign"] == [], found(text)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Please read [the changelog](https://example.com/changes) first.", ["the changelog"]),
        ('See [our docs](https://x.io "Docs") and [this page][1].\n\n[1]: https://y.io', ["our docs", "this page"]),
        ("Read [the *new* guide](x.html) now.", ["the", "new", "guide"]),
        ("Read [ the notes ](x.html) now.", ["the notes"]),
        ("Run [`pip install`](x.html) then [main.py](y.html) or [see main.py now](z.html).", ["see", "now"]),
    ],
)
def test_a_link_s_text_is_kept_as_written(text: str, kept: list[str]) -> None:
    """ "[the changelog](...)" became "[the challenging](...)"."""
    assert [piece for label, piece in found(text, Kind.KEEP) if label == "link"] == kept


link_text = st.lists(st.sampled_from(["the", "changelog", "docs", "our", "recieve", "FAQ", "setup", "it"]), min_size=1)


@settings(max_examples=200, deadline=None)
@given(link_text.map(" ".join), st.sampled_from(["https://example.com/a", "x.html", "#top", "<a b>"]))
def test_generated_link_texts_are_kept_whole(words: str, target: str) -> None:
    text = f"Please read [{words}]({target}) before you updates."
    assert protects(text, words, "link", Kind.KEEP), found(text)


LIST_ITEMS = ["- {}", "* {}", "+ {}", "1. {}", "2) {}", "10. {}", "(a) {}", "b) {}", "c. {}", "(C) {}", "• {}"]
LIST_ITEMS += ["  - {}", "> - {}", "- **{}**", "* _{}_"]


@pytest.mark.parametrize("item", LIST_ITEMS)
@pytest.mark.parametrize("word", ["Recieve", "instal", "Chek", "don't", "log-in", "Müller", "go"])
def test_the_first_word_of_a_list_item_is_kept(item: str, word: str) -> None:
    text = "Steps:\n" + "\n".join(item.format(f"{word} the box before you leaves") for _ in range(2))
    starts = [match.start() for match in re.finditer(re.escape(word), text)]
    spans = find_protected(text).spans
    for start in starts:
        assert any(s.start == start and s.end == start + len(word) and s.kind is Kind.KEEP for s in spans), found(text)
    assert "the box before you leaves" in prose_of(text)  # the rest of the item is prose


@pytest.mark.parametrize(
    "text",
    ["J. M. Coetzee wrote it.", "A. Becker came.", "-5 degrees today.", "1.5 kg of flour.", "```\n- x\n```", "a-b c"],
)
def test_what_opens_a_line_like_a_list_marker_is_no_list_item(text: str) -> None:
    assert [piece for label, piece in found(text) if label == "list"] == []
