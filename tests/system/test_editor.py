"""The editor page in a real browser (Debian's Chromium, driven by Playwright) against a real server: typing shows
underlines, a click opens the card, which names the category as a writer would, and Accept corrects the text (with
feedback sent); the keyboard goes from suggestion to suggestion (Tab), accepts (Enter) and dismisses (Escape); "Accept
all" corrects a paragraph; insertions and deletions are drawn to be seen and clicked; an edit's confidence shows
where the answer has one; the text box keeps its width on narrow screens; ``window.gecserve.correct`` answers with
UTF-16 offsets that are right around emoji, CJK and combining marks; an answer to text that has since changed is
discarded; bad input (empty, 20,000 characters and more, emoji only) leaves the page working; and a device engine
that cannot load sends nothing, and shows no setting it ignores (the device engine itself:
``test_device_engine.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from service.text.categories import CATEGORIES, OPERATIONS
from tests.conftest import NEEDS_CHROMIUM
from tests.system.clients import post
from tests.system.server import RunningServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    NEEDS_CHROMIUM,
]

SENTENCE = "i saw a apple yesterday."
CORRECTED = "I saw an apple yesterday."
OTHER = "i saw a apple today."  # a second paragraph with edits of its own (their ids differ from SENTENCE's)
# Every /v1/correct request the page makes is logged; the answers of those whose index is in __delays wait that
# many milliseconds before the page sees them (a slow network, made to order).
FETCH_LOG = """
window.__sent = [];
window.__delays = {};
const originalFetch = window.fetch;
window.fetch = async (url, init) => {
  const index = String(url).endsWith("/v1/correct") ? window.__sent.push(JSON.parse(init.body).text) - 1 : -1;
  const response = await originalFetch(url, init);
  const delay = window.__delays[index];
  if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
  return response;
};
"""


@pytest.fixture
def editor(browser, server: RunningServer) -> Iterator[Page]:
    """The page at /editor, with its requests logged; no uncaught error may happen on it during the test."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(FETCH_LOG)
    page.goto(server.url + "/editor")
    page.wait_for_selector("body[data-loaded]")
    yield page
    page.close()
    assert errors == [], errors


def idle(page: Page, timeout: float = 60_000) -> None:
    page.wait_for_selector("#status[data-busy='false']", timeout=timeout)


def marks(page: Page) -> list[dict]:
    return page.eval_on_selector_all(
        "#backdrop mark",
        """(found) => found.map((m) => ({
          id: m.dataset.editId, category: m.dataset.category, group: m.dataset.group,
          replacement: m.dataset.replacement, text: m.textContent,
          start: Number(m.dataset.start), end: Number(m.dataset.end)}))""",
    )


def click_mark(page: Page, category: str) -> None:
    """A click where the writer sees the underline (the textarea lies over it and takes the click)."""
    box = page.locator(f"#backdrop mark[data-category='{category}']").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector(f"#card:not([hidden])[data-code='{category}']")


def value(page: Page) -> str:
    return page.input_value("#editor")


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def utf16_slice(text: str, start: int, end: int) -> str:
    """``text[start:end]`` with ``start`` and ``end`` in UTF-16 code units, as JavaScript slices."""
    return text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le")


def test_typing_underlines_and_accept_corrects_the_text(editor: Page) -> None:
    editor.click("#editor")
    editor.keyboard.type(SENTENCE, delay=15)
    editor.wait_for_selector("#backdrop mark[data-category='R:DET']")
    idle(editor)
    shown = {m["category"]: m for m in marks(editor)}
    assert shown["R:DET"]["text"] == "a" and shown["R:DET"]["replacement"] == "an"
    assert shown["R:DET"]["group"] == "DET" and shown["R:ORTH"]["group"] == "ORTH"
    assert editor.get_attribute("#paragraphs li[data-paragraph='0']", "data-engine") == "server"
    colours = {
        m: editor.eval_on_selector(f"mark[data-category='{m}']", "(e) => getComputedStyle(e).borderBottomColor")
        for m in ("R:DET", "R:ORTH")
    }
    assert colours["R:DET"] != colours["R:ORTH"]  # coloured by category

    click_mark(editor, "R:DET")
    assert editor.inner_text("#card-replacement") == "an"
    assert "an apple" in editor.inner_text("#card-message")
    # the card names the category as a writer would; the code is a tooltip only
    assert editor.inner_text("#card-category") == "Article or determiner"
    assert editor.get_attribute("#card-category", "title") == "ERRANT category R:DET"
    assert "R:DET" not in editor.inner_text("#card") and "DET" not in editor.inner_text("#legend")
    assert editor.is_visible("#card-confidence") and "%" in editor.inner_text("#card-confidence")  # the edit's own
    editor.click("#accept")
    editor.wait_for_selector("#feedback-status[data-status='200']")
    assert "Accepted" in editor.inner_text("#feedback-status")
    assert value(editor) == "i saw an apple yesterday."
    assert editor.is_hidden("#card")
    # the other suggestion is still underlined where it is, and accepting it finishes the correction
    click_mark(editor, "R:ORTH")
    editor.click("#accept")
    editor.wait_for_function(f"document.getElementById('editor').value === {CORRECTED!r}")
    idle(editor)
    assert marks(editor) == []


def test_dismiss_hides_the_underline_and_sends_feedback(editor: Page) -> None:
    editor.fill("#editor", SENTENCE)
    editor.wait_for_selector("#backdrop mark[data-category='R:DET']")
    click_mark(editor, "R:DET")
    editor.click("#dismiss")
    editor.wait_for_selector("#feedback-status[data-status='200']")
    assert "Dismissed" in editor.inner_text("#feedback-status")
    assert [m["category"] for m in marks(editor)] == ["R:ORTH"]
    assert value(editor) == SENTENCE


def test_the_client_answers_in_utf16_offsets(editor: Page, server: RunningServer) -> None:
    """Every edit the test model makes (none held back: the offsets, not the threshold, are under test)."""
    prefixes = ["😀😀 ", "👍🏽 日本語 ", "👩\u200d👩\u200d👧 ", "🇬🇧 ", "e\u0301 cafe\u0301 ", ""]
    texts = [prefix + SENTENCE for prefix in prefixes]
    answers = editor.evaluate(
        """async (texts) => {
          const engines = await window.gecserve.ready;
          const answers = [];
          const options = {engine: "server", minConfidence: 0};
          for (const text of texts) answers.push(await window.gecserve.correct(text, options));
          return {engines, answers, slices: answers.map((a, i) => a.edits.map(
            (e) => texts[i].slice(e.offset, e.offset + e.length)))};
        }""",
        texts,
    )
    assert {e["name"]: e["available"] for e in answers["engines"]} == {"server": True, "device": True, "auto": True}
    for prefix, text, answer, slices in zip(prefixes, texts, answers["answers"], answers["slices"], strict=True):
        assert answer["engine"] == "server" and answer["edits"]
        assert slices == [edit["original"] for edit in answer["edits"]]  # the offsets index the JavaScript string
        # the same edits as the service answers in code points, counted again in UTF-16 here
        codepoints = post(server, "/v1/correct", {"text": text, "options": {"min_confidence": 0}}).json()["edits"]
        assert [(e["offset"], e["length"]) for e in answer["edits"]] == [
            (utf16(text[: e["offset"]]), utf16(text[e["offset"] : e["offset"] + e["length"]])) for e in codepoints
        ]
        if not prefix.startswith("e"):  # the tiny model fixes the article after these
            (det,) = [edit for edit in answer["edits"] if edit["category"] == "R:DET"]
            assert det["offset"] == utf16(prefix + "i saw ") and det["length"] == 1  # the UTF-16 index of "a"
    # and the page underlines the right letters after emoji
    editor.fill("#editor", "😀😀 x\n👍🏽 日本語 " + SENTENCE)
    editor.wait_for_selector("#backdrop mark[data-category='R:DET']")
    idle(editor)
    (det,) = [m for m in marks(editor) if m["category"] == "R:DET"]
    assert det["text"] == "a" and utf16_slice(value(editor), det["start"], det["end"]) == "a"
    assert det["start"] == utf16("😀😀 x\n👍🏽 日本語 i saw ")


def test_an_answer_to_text_that_has_changed_is_discarded(editor: Page, server: RunningServer) -> None:
    # typed key by key, then changed, all before the debounce fires: only the final text is sent
    editor.evaluate(
        """(texts) => {
          const area = document.getElementById("editor");
          for (const text of texts) {
            for (let n = 1; n <= text.length; n++) {
              area.value = text.slice(0, n);
              area.dispatchEvent(new Event("input", {bubbles: true}));
            }
          }
        }""",
        ["He go home every days.", SENTENCE],
    )
    editor.wait_for_selector("#backdrop mark[data-category='R:DET']")
    idle(editor)
    assert editor.evaluate("window.__sent") == [SENTENCE]

    # changed while its answer is on the way: that answer (held back 2 s) is discarded when it comes
    editor.evaluate("window.__delays[1] = 2000")
    first = "Tom found a honest owl."
    editor.fill("#editor", first)
    editor.wait_for_function("window.__sent.length === 2")
    final = "We visited a island last week."
    editor.fill("#editor", final)
    editor.wait_for_function("document.body.dataset.discarded === '1'", timeout=30_000)
    idle(editor)
    assert editor.evaluate("window.__sent") == [SENTENCE, first, final]
    expected = post(server, "/v1/correct", {"text": final, "offset_unit": "utf16"}).json()["edits"]
    shown = marks(editor)
    assert [(m["start"], m["end"], m["replacement"]) for m in shown] == [
        (e["offset"], e["offset"] + e["length"], e["replacement"]) for e in expected
    ]
    assert all(utf16_slice(final, m["start"], m["end"]) == m["text"] for m in shown)
    assert editor.get_attribute("#paragraphs li[data-paragraph='0']", "data-edits") == str(len(expected))


def test_only_changed_paragraphs_are_checked_again(editor: Page) -> None:
    lines = [SENTENCE, "Tom found a honest owl.", "He go home every days."]
    editor.fill("#editor", "\n".join(lines))
    editor.wait_for_function("window.__sent.length === 3")
    idle(editor)
    editor.fill("#editor", "\n".join([lines[0], "Tom found a honest owl today.", lines[2]]))
    idle(editor)
    editor.fill("#editor", "\n".join(lines))  # back as it was: every answer is in the cache
    idle(editor)
    assert editor.evaluate("window.__sent") == [*lines, "Tom found a honest owl today."]
    assert (
        editor.eval_on_selector_all("#paragraphs li", "(rows) => rows.map((r) => r.dataset.engine)") == ["server"] * 3
    )


def test_bad_input_leaves_the_page_working(editor: Page) -> None:
    editor.fill("#editor", SENTENCE)
    editor.wait_for_selector("#backdrop mark")
    editor.fill("#editor", "")  # empty: nothing to check, nothing shown
    idle(editor)
    assert marks(editor) == [] and editor.get_attribute("#paragraphs li", "data-status") == "empty"

    editor.fill("#editor", "😀🎉👍🏽🇬🇧")  # emoji only
    editor.wait_for_selector("#paragraphs li[data-status='ok']")
    assert marks(editor) == []

    long = (SENTENCE + " ") * 900
    editor.fill("#editor", long[:20_000])  # at the service's limit: answered
    editor.wait_for_selector("#paragraphs li[data-paragraph='0']:not([data-status='pending'])", timeout=120_000)
    assert editor.get_attribute("#paragraphs li[data-paragraph='0']", "data-status") == "ok"
    editor.fill("#editor", long[:20_001] + "\n" + SENTENCE)  # over it: refused, shown; the next paragraph is checked
    editor.wait_for_selector("#paragraphs li[data-paragraph='0'][data-status='error'][data-http-status='413']")
    assert "413" in editor.inner_text("#paragraphs li[data-paragraph='0']")
    editor.wait_for_selector("#backdrop mark[data-paragraph='1'][data-category='R:DET']", timeout=120_000)

    editor.fill("#editor", SENTENCE)  # and it goes on working
    editor.wait_for_selector("#backdrop mark[data-category='R:DET']")


def test_a_device_engine_that_cannot_load_sends_nothing(browser, server: RunningServer) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
    page.add_init_script(FETCH_LOG)
    page.route("**/device/model.json", lambda route: route.fulfill(status=404, body="{}"))
    page.goto(f"{server.url}/editor?engine=device")
    page.wait_for_selector("body[data-loaded]")
    assert page.input_value("#engine") == "device"
    assert page.is_hidden("#spelling-setting")  # the device engine has no spelling stage to turn off
    page.fill("#editor", SENTENCE)
    page.wait_for_selector("#engine-note:has-text('could not be loaded')")
    assert "your text is sent nowhere" in page.inner_text("#engine-note")
    assert page.evaluate("window.__sent") == [] and marks(page) == []
    assert page.get_attribute("#paragraphs li", "data-status") == "error"  # with the reason
    page.select_option("#engine", "server")
    page.wait_for_selector("#backdrop mark[data-category='R:DET']")
    assert page.is_hidden("#engine-note") and "engine=server" in page.url and page.is_visible("#spelling-setting")
    assert page.get_attribute("#paragraphs li", "data-engine") == "server"
    page.close()
    assert errors == [], errors


def test_every_category_has_a_writers_name(editor: Page) -> None:
    codes = [f"{operation}:{category}" for operation in OPERATIONS for category in CATEGORIES]
    names = editor.evaluate("(codes) => codes.map((code) => categoryLabel(code))", codes)
    for code, name in zip(codes, names, strict=True):
        assert name and name != "Suggestion" and ":" not in name and name != name.upper(), (code, name)
    assert names[codes.index("R:SPELL")] == "Spelling" and names[codes.index("R:VERB:FORM")] == "Verb form"
    assert names[codes.index("M:DET")] == "Missing word" and names[codes.index("U:PREP")] == "Unneeded word"
    assert editor.evaluate("categoryLabel('R:ORTH', 'whitespace')") == "Spacing"


def test_the_keyboard_goes_through_the_suggestions(editor: Page) -> None:
    editor.fill("#editor", SENTENCE + "\n" + OTHER)
    editor.wait_for_selector("#backdrop mark[data-paragraph='1']")
    idle(editor)
    order = [(m["category"], m["start"]) for m in sorted(marks(editor), key=lambda m: m["start"])]
    assert len(order) >= 3
    editor.focus("#editor")
    editor.evaluate("document.getElementById('editor').setSelectionRange(0, 0)")
    shown = []
    for _ in order:
        editor.keyboard.press("Tab")
        shown.append(editor.get_attribute("#card", "data-code"))
    assert shown == [category for category, _ in order]  # Tab: the next suggestion, in the text's order
    editor.keyboard.press("Shift+Tab")
    assert editor.get_attribute("#card", "data-code") == order[-2][0]
    editor.keyboard.press("Escape")  # dismisses the suggestion (and says so to the service)
    editor.wait_for_selector("#feedback-status[data-status='200']")
    assert "Dismissed" in editor.inner_text("#feedback-status") and editor.is_hidden("#card")
    assert len(marks(editor)) == len(order) - 1
    editor.evaluate("document.getElementById('editor').setSelectionRange(0, 0)")
    editor.keyboard.press("Tab")
    first = marks(editor)[0]
    editor.keyboard.press("Enter")  # accepts it: the text changes, no line break is typed
    editor.wait_for_function("document.getElementById('feedback-status').textContent.startsWith('Accepted')")
    text = value(editor)
    assert (
        text.count("\n") == 1
        and text[first["start"] : first["start"] + len(first["replacement"])] == first["replacement"]
    )
    while editor.is_visible("#card") or editor.evaluate("document.activeElement.id") == "editor":
        editor.keyboard.press("Tab")  # past the last suggestion, Tab leaves the text as usual
        if editor.evaluate("document.activeElement.id") != "editor":
            break
    assert editor.evaluate("document.activeElement.id") != "editor"


def test_accept_all_corrects_one_paragraph(editor: Page, server: RunningServer) -> None:
    editor.fill("#editor", SENTENCE + "\n" + OTHER)
    editor.wait_for_selector("#backdrop mark[data-paragraph='1']")
    idle(editor)
    expected = post(server, "/v1/correct", {"text": SENTENCE})
    count = len([m for m in marks(editor) if m["start"] < len(SENTENCE)])
    editor.click("#paragraphs li[data-paragraph='0'] button.accept-all")
    editor.wait_for_selector("#feedback-status[data-status='200']")
    assert f"({count} counted)" in editor.inner_text("#feedback-status")
    assert value(editor) == expected.json()["text"] + "\n" + OTHER  # the other paragraph as it was
    idle(editor)
    assert len(marks(editor)) == 2 and all(m["start"] > len(SENTENCE) for m in marks(editor))  # OTHER's, untouched


def show_answer(page: Page, text: str, edits: list[dict]) -> None:
    """The page's text and an answer for it as the service gives them (this test's own edits), drawn."""
    page.evaluate(
        """([text, edits]) => {
          const area = document.getElementById("editor");
          area.value = text;
          remember(text, {status: "ok", engine: "server", answer: {text, edits}});
          render();
        }""",
        [text, edits],
    )


def edit(offset: int, original: str, replacement: str, category: str, **more: object) -> dict:
    return {
        "id": f"e{offset}",
        "offset": offset,
        "length": len(original),
        "original": original,
        "replacement": replacement,
        "category": category,
        "message": "A message.",
        **more,
    }


def test_insertions_and_deletions_are_seen_and_clicked(editor: Page) -> None:
    text = "He wants go home, and I am agree."
    show_answer(editor, text, [edit(9, "", "to ", "M:VERB:FORM"), edit(24, "am ", "", "U:VERB")])
    insertion = editor.locator("#backdrop mark.insert")
    caret = editor.evaluate(
        """() => { const mark = document.querySelector("#backdrop mark.insert");
                   const style = getComputedStyle(mark, "::after");
                   return {width: parseFloat(style.width), height: parseFloat(style.height)}; }"""
    )
    assert caret["width"] >= 10 and caret["height"] >= 6  # a caret wedge, not a 2-pixel bracket
    deleted = editor.eval_on_selector("#backdrop mark.delete", "(m) => getComputedStyle(m).textDecorationLine")
    assert deleted == "line-through"
    # a click on the character after the insertion point opens the insertion's card
    box = insertion.bounding_box()
    assert box is not None
    editor.mouse.click(box["x"] + 6, box["y"] + box["height"] / 2)
    editor.wait_for_selector("#card:not([hidden])[data-code='M:VERB:FORM']")
    assert editor.inner_text("#card-category") == "Missing word" and editor.is_hidden("#card-original")
    colours = editor.eval_on_selector_all(
        "#backdrop mark", "(found) => found.map((m) => getComputedStyle(m).getPropertyValue('--c'))"
    )
    assert len(set(colours)) == 2  # a missing and an unneeded word, each its colour


def test_confidence_shows_where_the_answer_has_it(editor: Page) -> None:
    text = "i saw a apple."
    show_answer(editor, text, [edit(6, "a", "an", "R:DET", confidence=0.93), edit(0, "i", "I", "R:ORTH")])
    editor.evaluate("openCard(state.shown.find((s) => s.edit.id === 'e6'))")
    assert editor.inner_text("#card-confidence") == "almost certain · 93%"
    editor.evaluate("openCard(state.shown.find((s) => s.edit.id === 'e0'))")
    assert editor.is_hidden("#card-confidence")


@pytest.mark.parametrize("width", [420, 360])
def test_narrow_screens_keep_a_wide_text_box(browser, server: RunningServer, width: int) -> None:
    page = browser.new_page(viewport={"width": width, "height": 800})
    page.goto(server.url + "/editor")
    page.wait_for_selector("body[data-loaded]")
    page.fill("#editor", SENTENCE)
    page.wait_for_selector("#backdrop mark[data-category='R:DET']")
    box = page.locator("#editor").bounding_box()
    assert box is not None and box["width"] >= 300
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing runs off the side
    click_mark(page, "R:DET")
    card = page.locator("#card").bounding_box()
    assert card is not None and card["x"] >= 0 and card["x"] + card["width"] <= width
    page.close()
