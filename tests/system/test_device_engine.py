"""The device engine in a real browser (Debian's Chromium) against a real server on the bundled model: its
corrections are the server's on 300 FCE dev sentences (the language-model review off on the server, the spelling
stage off on both, no edit held back on either), it sends no ``/v1/correct`` request, it applies the service's
policy (``service.text.device_confidence``: each edit's confidence, those under the level's threshold times their
class's multiplier neither shown nor applied, no fixed word rewritten) as the Python computes it, ``auto`` answers
from the server when the device engine cannot load and from the device once it has, and the editor page corrects
with it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page

from service.config import DEFAULT_MODEL
from service.engine.decoding.params import DecodeParams
from service.engine.engine import Engine
from service.engine.manifest import ModelManifest, level_keep_bias
from service.text import device_confidence
from service.text.confidence import TokenScores
from service.text.edits import apply_edits
from service.text.policy import LEVELS, MULTIPLIERS, required
from service.text.segment import split_sentences
from tests.conftest import DEV_DATA, NEEDS_CHROMIUM
from tests.system.clients import metric
from tests.system.server import RunningServer, start_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.server,
    NEEDS_CHROMIUM,
]

SENTENCE = "We goes to school every days."
CORRECTED = "We go to school every day."
PARITY_LINES = 300
# A first difference whose top-2 logit gap (on the service's side) is under this is numeric: the wasm int8 kernels'
# logits differ from x86's by about 0.1 at most (at keep bias 0.4, 1 of 300 FCE dev lines flipped at a gap of 0.105).
NEAR_TIE = 0.15
# The device's confidence beside the Python's from the service engine's log-probabilities: the kernels' differences
# move it by up to 0.085 on these lines with version 4's int8 graphs (log-probabilities up to 0.072 apart; version 3's:
# 0.010)
KERNEL_SLACK = 0.1
CORRECT_IN_PAGE = """async ([lines, engine, options]) => {
  const answers = [];
  for (const line of lines) answers.push(await window.gecserve.correct(line, {engine, spelling: false, ...options}));
  return answers;
}"""
POLICY_LINES = 200


@pytest.fixture(scope="module")
def bundled_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """The bundled model without the language model's review (the device engine has none), its cache off."""
    running = start_server(tmp_path_factory.mktemp("device"), DEFAULT_MODEL, lm_review=False, cache_size=0)
    yield running
    running.stop()


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[[], Page]]:
    """Pages of the test's own; none may raise an uncaught error while the test runs."""
    pages: list[Page] = []
    errors: list[str] = []

    def make() -> Page:
        page = browser.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        pages.append(page)
        return page

    yield make
    for page in pages:
        page.close()
    assert errors == [], errors


def open_editor(page: Page, server: RunningServer, engine: str) -> Page:
    page.goto(f"{server.url}/editor?engine={engine}")
    page.wait_for_selector("body[data-loaded]")
    return page


def correct_requests(server: RunningServer) -> float:
    return metric(httpx.get(server.url + "/metrics").text, "gecserve_request_duration_seconds_count", route="correct")


def test_the_device_engine_corrects_as_the_server_does_and_sends_no_correct_request(
    new_page: Callable[[], Page], bundled_server: RunningServer
) -> None:
    lines = [line for line in (DEV_DATA / "fce.dev.detok.src").read_text(encoding="utf-8").splitlines() if line][
        :PARITY_LINES
    ]
    page = open_editor(new_page(), bundled_server, "device")
    before = correct_requests(bundled_server)
    device = page.evaluate(CORRECT_IN_PAGE, [lines, "device", {"minConfidence": 0}])
    assert correct_requests(bundled_server) == before  # nothing of the text reached the service
    options = {"spelling": False, "min_confidence": 0}  # the models' corrections, none held back
    server = [
        httpx.post(bundled_server.url + "/v1/correct", json={"text": line, "options": options}).json() for line in lines
    ]
    assert all(answer["engine"] == "device" for answer in device)
    left = [i for i in range(len(lines)) if {s["dropped"] for s in device[i]["sentences"]} & {"protected", "language"}]
    assert len(left) <= PARITY_LINES // 20  # not plain prose ("e.g.", "1.") or names read as foreign: a few
    assert all(device[i]["edits"] == [] for i in left if len(device[i]["sentences"]) == 1)
    differ = [i for i in range(len(lines)) if device[i]["text"] != server[i]["text"] and i not in left]
    assert sum(answer["edits"] != [] for answer in device) > PARITY_LINES // 6  # it does correct
    # the device's model corrects a misspelling in the spelling stage's stead, which the server (its stage off) leaves
    words = device_confidence.device_words(Path(DEFAULT_MODEL) / str(ModelManifest.load(DEFAULT_MODEL).vocabulary))
    spelt = [  # word for word: an edit may span a misspelling and the word beside it
        i
        for i in differ
        if any(
            device_confidence.spelling_candidate(typed, meant, words)
            for e in device[i]["edits"]
            for typed, meant in zip(e["original"].split(), e["replacement"].split(), strict=False)
        )
    ]
    assert len(spelt) <= PARITY_LINES // 10
    differ = [i for i in differ if i not in spelt]
    # the service's model rewrites a misspelling its spelling stage has a candidate for ("expresse": "experience"),
    # which the device, without the stage, keeps unless its model writes a close spelling
    rewritten = [
        i
        for i in differ
        if any(not words.known(w) for e in server[i]["edits"] for w in re.findall(r"[A-Za-z]+", e["original"]))
    ]
    assert len(rewritten) <= PARITY_LINES // 20
    differ = [i for i in differ if i not in rewritten]
    assert len(differ) <= 3, [(lines[i], server[i]["text"], device[i]["text"]) for i in differ]
    engine = Engine(Path(DEFAULT_MODEL), variant="int8")
    keep_bias = ModelManifest.load(Path(DEFAULT_MODEL)).keep_bias["default"]
    for i in differ:  # each other difference is explained: another sentence split, or a numeric near-tie
        spans = [(s.start, s.end) for s in split_sentences(lines[i])]
        if spans != [(s["start"], s["end"]) for s in device[i]["sentences"]] or len(spans) != 1:
            continue
        source = engine.codec.encode(lines[i])
        greedy = engine.generate([source], "greedy", DecodeParams(record_gaps=True), keep_biases=[keep_bias])[0]
        ours = engine.codec.encode(device[i]["text"])
        first = next(k for k, (a, b) in enumerate(zip([*greedy.tokens, -1], [*ours, -1], strict=False)) if a != b)
        assert greedy.gaps[first] < NEAR_TIE, (lines[i], device[i]["text"], greedy.gaps[first])


def test_the_device_engine_applies_the_policy_as_the_python_computes_it(
    new_page: Callable[[], Page], bundled_server: RunningServer
) -> None:
    lines = [line for line in (DEV_DATA / "fce.dev.detok.src").read_text(encoding="utf-8").splitlines() if line]
    plain = [line for line in lines if line.isascii() and line.strip() == line and not any(c.isdigit() for c in line)]
    lines = [line for line in plain if len(split_sentences(line)) == 1][:POLICY_LINES]
    page = open_editor(new_page(), bundled_server, "device")
    answers = {
        level: page.evaluate(CORRECT_IN_PAGE, [lines, "device", options])
        for level, options in [
            ("all", {"minConfidence": 0}),
            ("none", {"minConfidence": 1}),
            *((lv, {"level": lv}) for lv in LEVELS),
        ]
    }
    engine = Engine(Path(DEFAULT_MODEL), variant="int8")
    keep_bias = level_keep_bias(engine.manifest, "default")
    fit_file = ModelManifest.load(Path(DEFAULT_MODEL)).extra["device_confidence"]
    fit = device_confidence.DeviceConfidence.load(Path(DEFAULT_MODEL) / fit_file)
    words = device_confidence.device_words(Path(DEFAULT_MODEL) / str(engine.manifest.vocabulary))
    results = engine.generate(
        [engine.codec.encode(line) for line in lines], "aggressive", keep_biases=[keep_bias] * len(lines)
    )
    compared, shown = 0, dict.fromkeys(LEVELS, 0)
    for i, (line, result) in enumerate(zip(lines, results, strict=True)):
        everything = answers["all"][i]
        assert answers["none"][i]["text"] == line and answers["none"][i]["edits"] == []  # held back, not applied
        assert sum(s["held"] for s in answers["none"][i]["sentences"]) == len(everything["edits"])
        assert all(0 <= edit["confidence"] <= 1 for edit in everything["edits"])
        scores = TokenScores(*engine.codec.decode_with_ends(result.tokens), tuple(result.logprobs))
        found_edits = device_confidence.sentence_edits(line, scores, words)
        expected = [found for found in found_edits if not found.fixed]
        if apply_edits(line, [f.edit for f in expected]) != everything["text"] or everything["sentences"][0]["dropped"]:
            continue  # another output (a near-tie) or one left as written: nothing to compare
        compared += 1
        assert [(e["offset"], e["original"], e["replacement"]) for e in everything["edits"]] == [
            (f.edit.start, f.edit.original, f.edit.replacement) for f in expected
        ]
        for edit, found in zip(everything["edits"], expected, strict=True):
            assert abs(edit["confidence"] - fit.confidence(found.row)) <= KERNEL_SLACK
        for level, threshold in LEVELS.items():
            kept = {(e["offset"], e["replacement"]) for e in answers[level][i]["edits"]}
            shown[level] += len(kept)
            if level_keep_bias(engine.manifest, level) != keep_bias:
                continue  # decoded otherwise ("picky" leans less on the writer's words)
            for edit, found in zip(everything["edits"], expected, strict=True):
                need = required(found.lexical, threshold)
                if abs(edit["confidence"] - need) > KERNEL_SLACK:
                    assert ((edit["offset"], edit["replacement"]) in kept) == (edit["confidence"] >= need)
    # an edit rewriting a fixed word is never shown (``expected`` leaves them out); version 4 rewrites none of these
    # lines' fixed words, so that such edits are found alike is tests/web/test_device_confidence.py's to show
    assert compared >= POLICY_LINES * 0.9
    everything = sum(len(answer["edits"]) for answer in answers["all"])
    assert shown["safe"] < shown["default"] < everything and shown["default"] < shown["picky"], (shown, everything)
    assert set(MULTIPLIERS) >= set(device_confidence.CLASSES)


def test_device_edits_applied_to_the_text_give_its_correction(
    new_page: Callable[[], Page], bundled_server: RunningServer
) -> None:
    page = open_editor(new_page(), bundled_server, "device")
    texts = ["i saw a apple yesterday. He go to school every days.", "Emoji 😀 i has a cat 😀😀 .", "", "😀😀😀"]
    texts += ["日本語 i is", "e\u0301 combining and \U0001f468\u200d\U0001f469 joined"]
    for answer, text in zip(page.evaluate(CORRECT_IN_PAGE, [texts, "device"]), texts, strict=True):
        rebuilt, at = "", 0
        for edit in answer["edits"]:
            assert text[edit["offset"] : edit["offset"] + edit["length"]] == edit["original"]
            rebuilt += text[at : edit["offset"]] + edit["replacement"]
            at = edit["offset"] + edit["length"]
        assert rebuilt + text[at:] == answer["text"]
        assert all(edit["id"].startswith("device-") and edit["type"] for edit in answer["edits"])


PROTECTED = [
    "See https://example.com/a_b?x=1 for it.",
    "Mail john.smith@example.com.",
    "Run `pip install x` first.",
    "\n- Item one\n",
    "I like 😀😀 music.",
    "Call getElementById() now.",
    "Open ~/docs/notes.txt please.",
]


def test_the_device_engine_leaves_what_is_not_plain_prose_as_written_and_keeps_numbers(
    new_page: Callable[[], Page], bundled_server: RunningServer
) -> None:
    page = open_editor(new_page(), bundled_server, "device")
    texts = [f"{SENTENCE} {text} {SENTENCE}" for text in PROTECTED] + ["He have 3.5 kg and 20 apple on 2024-01-15."]
    answers = page.evaluate(CORRECT_IN_PAGE, [texts, "device"])
    for text, answer in zip(texts[:-1], answers, strict=False):
        middle = text[len(SENTENCE) + 1 : -len(SENTENCE) - 1]
        assert answer["text"] == f"{CORRECTED} {middle} {CORRECTED}", answer  # the plain sentences around: corrected
        assert "protected" in [s["dropped"] for s in answer["sentences"]]
    numbers = answers[-1]
    assert numbers["edits"] and all(s["dropped"] is None for s in numbers["sentences"])
    for kept in ("3.5", "20", "2024-01-15"):
        assert kept in numbers["text"]
        assert not any(
            e["offset"] < texts[-1].index(kept) + len(kept) <= e["offset"] + e["length"]
            for e in numbers["edits"]
            if e["length"]
        )


def test_the_device_engine_leaves_another_language_alone(
    new_page: Callable[[], Page], bundled_server: RunningServer
) -> None:
    german = "Gestern Abend sind wir mit der ganzen Familie ins Kino gegangen, aber der Film war leider langweilig."
    page = open_editor(new_page(), bundled_server, "device")
    (answer,) = page.evaluate(CORRECT_IN_PAGE, [[f"{SENTENCE} {german}"], "device"])
    assert answer["text"] == f"{CORRECTED} {german}"
    assert [s["dropped"] for s in answer["sentences"]] == [None, "language"]


def test_auto_uses_the_server_when_the_device_engine_cannot_load(
    new_page: Callable[[], Page], bundled_server: RunningServer
) -> None:
    page = new_page()
    page.route("**/device/model.json", lambda route: route.fulfill(status=503, body="{}"))
    page.goto(f"{bundled_server.url}/editor?engine=auto")
    page.wait_for_selector("body[data-loaded]")
    answers = page.evaluate(CORRECT_IN_PAGE, [[SENTENCE] * 2, "auto"])
    assert [a["engine"] for a in answers] == ["server", "server"]
    assert answers[0]["text"] == CORRECTED
    page.wait_for_function("!window.gecserve.engine('device').available")  # its load failed, in the background
    device = page.evaluate("window.gecserve.engines().find((e) => e.name === 'device')")
    assert device["available"] is False and "could not be loaded" in device["reason"]
    refused = page.evaluate(
        "window.gecserve.correct('i saw a apple', {engine: 'device'}).then(() => null, (e) => e.reason)"
    )
    assert refused == "engine_unavailable"


def test_auto_answers_from_the_device_once_it_has_loaded_and_from_the_server_what_the_device_leaves(
    new_page: Callable[[], Page], bundled_server: RunningServer
) -> None:
    page = open_editor(new_page(), bundled_server, "auto")
    page.evaluate("window.gecserve.engine('device').load()")
    before = correct_requests(bundled_server)
    answers = page.evaluate(CORRECT_IN_PAGE, [[SENTENCE], "auto"])
    assert answers[0]["engine"] == "device" and answers[0]["text"] == CORRECTED
    assert correct_requests(bundled_server) == before
    text = f"{SENTENCE} See www.example.com/a_b for it."  # a sentence the device leaves: the server reads it all
    answers = page.evaluate(CORRECT_IN_PAGE, [[text, SENTENCE], "auto"])
    assert [a["engine"] for a in answers] == ["server", "device"]
    assert answers[0]["text"] == f"{CORRECTED} See www.example.com/a_b for it."
    assert correct_requests(bundled_server) == before + 1


def test_the_editor_corrects_with_the_device_engine_and_says_what_it_is(
    new_page: Callable[[], Page], bundled_server: RunningServer
) -> None:
    page = open_editor(new_page(), bundled_server, "device")
    note = page.text_content("#engine-note")
    assert "non-commercial research use only" in note and "sent nowhere" in note
    page.fill("#editor", SENTENCE)
    page.wait_for_selector("#paragraphs li[data-status='ok'][data-engine='device']", timeout=60_000)
    page.wait_for_selector("#status[data-busy='false']")
    box = page.locator("#backdrop mark[data-replacement='go']").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.click("#accept")
    assert page.input_value("#editor") == "We go to school every days."
    page.wait_for_selector("#feedback-status:has-text('kept on this device')")
    assert "Loaded gec-default" in page.text_content("#engine-note")
    page.fill("#editor", "x" * 20_001)  # over the service's limit: refused as the server refuses it
    page.wait_for_selector("#paragraphs li[data-status='error']", timeout=60_000)
    page.fill("#editor", f"😀😀😀\n\n{SENTENCE}")
    page.wait_for_selector("#backdrop mark[data-replacement='go']", timeout=60_000)
    german = "Gestern Abend sind wir mit der ganzen Familie ins Kino gegangen, aber der Film war leider langweilig."
    page.fill("#editor", f"{SENTENCE} {german} See www.example.com for it.\n{SENTENCE}")
    row = page.wait_for_selector("#paragraphs li[data-paragraph='0'][data-left='2']", timeout=60_000)
    assert "2 sentences left as written (another language, not plain prose)" in row.text_content()
    assert page.get_attribute("#paragraphs li[data-paragraph='1']", "data-left") == "0"
