"""LanguageTool's API (/v2/check and the start-up endpoints) against a real server running an experiment,
with a real client library (language-tool-python in remote-server mode) and checks written apart from the
service's code.

Field names and types are LanguageTool's published API description as its server writes it:
``RuleMatchesAsJsonSerializer`` (the /v2/check answer), ``ApiV2`` (/v2/languages, /v2/info, 'data'
annotations, the messages of refused parameters) and ``LanguageToolHttpHandler`` (plain-text errors,
a POST body read as URL-encoded whatever its Content-Type) in languagetool-org/languagetool's
languagetool-server, read through the public code index (the swagger file itself could not be fetched
here; its /check schema lists the same fields).
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

import httpx
import language_tool_python
import pytest
import yaml

from service.text.rules import RULES
from tests.system.clients import metric, post, rebuild
from tests.system.server import RunningServer, start_server

pytestmark = pytest.mark.server

EXPERIMENT = {
    "name": "lt-ab",
    "control": "autoregressive",
    "arms": [{"name": "accelerated", "weight": 50}, {"name": "autoregressive", "weight": 50}],
}
ASTRAL = "😀 I saw a apple yesterday. 𝒜 We visits a island with my friend."  # astral characters before the errors
PARAGRAPHS = "I saw a apple yesterday.\n\nWe visited a island last week"
# LanguageTool's match, field by field, with JSON types (bool before int: a bool is an int in Python).
MATCH_FIELDS = {
    "message": str,
    "shortMessage": str,
    "replacements": list,
    "offset": int,
    "length": int,
    "context": dict,
    "sentence": str,
    "type": dict,
    "rule": dict,
    "ignoreForIncompleteSentence": bool,
    "contextForSureMatch": int,
}
ISSUE_TYPES = {"misspelling", "typographical", "grammar", "whitespace", "style", "uncategorized", "other"}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> RunningServer:
    folder = tmp_path_factory.mktemp("lt")
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(EXPERIMENT))
    running = start_server(folder, experiment=path)
    yield running
    running.stop()


def check(server: RunningServer, **fields: str) -> httpx.Response:
    return httpx.post(server.url + "/v2/check", data=fields, timeout=60)


def v1(server: RunningServer, text: str, user: str = "writer") -> dict:
    return post(server, "/v1/correct", {"text": text, "offset_unit": "utf16", "client": {"user_id": user}}).json()


def utf16_cut(text: str, offset: int, length: int) -> str:
    units = text.encode("utf-16-le", "surrogatepass")
    return units[2 * offset : 2 * (offset + length)].decode("utf-16-le", "surrogatepass")


def test_answer_has_languagetools_fields_and_types(server) -> None:
    response = check(server, text=ASTRAL, language="en-US", username="writer")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"software", "warnings", "language", "matches"}
    software = body["software"]
    assert {k: type(v) for k, v in software.items()} == {
        "name": str, "version": str, "buildDate": str, "apiVersion": int, "premium": bool, "status": str,
    }  # fmt: skip
    assert body["warnings"] == {"incompleteResults": False}
    language = body["language"]
    assert list(language) == ["name", "code", "detectedLanguage"]
    assert (language["name"], language["code"]) == ("English (US)", "en-US")
    detected = language["detectedLanguage"]
    assert {k: type(v) for k, v in detected.items()} == {"name": str, "code": str, "confidence": float, "source": str}
    assert (detected["name"], detected["code"], detected["source"]) == ("English (US)", "en-US", "fasttext")
    assert 0.5 < detected["confidence"] <= 1  # the identifier's, as LanguageTool's: detected whatever was named
    assert body["matches"], "the fixture model corrects this text"
    for match in body["matches"]:
        assert list(match) == list(MATCH_FIELDS)
        assert all(type(match[k]) is t for k, t in MATCH_FIELDS.items()), match
        assert all(set(r) == {"value"} and isinstance(r["value"], str) for r in match["replacements"])
        assert {k: type(v) for k, v in match["context"].items()} == {"text": str, "offset": int, "length": int}
        assert set(match["type"]) == {"typeName"} and match["type"]["typeName"] in {"UnknownWord", "Other"}
        rule = match["rule"]
        assert list(rule) == ["id", "description", "issueType", "category"] and set(rule["category"]) == {"id", "name"}
        assert rule["id"].startswith("GEC_") and rule["issueType"] in ISSUE_TYPES
        assert match["ignoreForIncompleteSentence"] == (match["contextForSureMatch"] == -1)


def test_utf16_offsets_match_v1_and_rebuild_its_text(server) -> None:
    """Offsets in UTF-16 code units (astral characters count two), checked by the independent rebuild."""
    expected = v1(server, ASTRAL)
    matches = check(server, text=ASTRAL, language="en-US", username="writer").json()["matches"]
    assert [(m["offset"], m["length"], m["replacements"][0]["value"]) for m in matches] == [
        (e["offset"], e["length"], e["replacement"]) for e in expected["edits"]
    ]
    edits = [
        {"offset": m["offset"], "length": m["length"], "original": e["original"], "replacement": e["replacement"]}
        for m, e in zip(matches, expected["edits"], strict=True)
    ]
    assert rebuild(ASTRAL, edits, "utf16") == expected["text"]
    for match in matches:  # the context shows the match at its own offsets
        context = match["context"]
        shown = utf16_cut(context["text"], context["offset"], context["length"])
        assert shown == utf16_cut(ASTRAL, match["offset"], match["length"])
        assert match["sentence"] in ASTRAL


def test_data_annotation_offsets_count_the_markup(server) -> None:
    annotation = [
        {"markup": "<p>"},
        {"text": "I saw "},
        {"markup": '<a href="x">'},
        {"text": "a"},
        {"markup": "</a>"},
        {"text": " apple yesterday."},
        {"markup": "</p><p>", "interpretAs": "\n\n"},
        {"text": "We visited a island last week"},
        {"markup": "</p>"},
    ]
    original = "".join(part.get("text", part.get("markup")) for part in annotation)
    plain = "".join(part.get("text", part.get("interpretAs", "")) for part in annotation)
    assert plain == PARAGRAPHS
    expected = v1(server, plain)["edits"]
    matches = check(server, data=json.dumps({"annotation": annotation}), language="en-US").json()["matches"]
    assert len(matches) == len(expected) == 3
    for match, edit in zip(matches, expected, strict=True):
        assert utf16_cut(original, match["offset"], match["length"]) == edit["original"]
        assert match["replacements"][0]["value"] == edit["replacement"]
    first, _, last = matches
    assert first["offset"] == original.index('">a<') + 2  # inside the link, after its markup
    assert last["offset"] == original.index("</p>", len(original) - 5) and last["length"] == 0  # before the markup
    plain_matches = check(server, data=json.dumps({"text": PARAGRAPHS}), language="en").json()["matches"]
    assert [(m["offset"], m["length"]) for m in plain_matches] == [(e["offset"], e["length"]) for e in expected]
    # {"text": ...} in 'data' is plain text: offsets as in /v1/correct


@pytest.mark.parametrize("language", ["de", "fr-FR", "xx", "en-XX"])
def test_an_unknown_language_is_400_in_languagetools_plain_text(server, language: str) -> None:
    response = check(server, text="Hello.", language=language)
    assert response.status_code == 400 and response.headers["content-type"].startswith("text/plain")
    assert response.text.startswith(f"Error: '{language}' is not a language code known to LanguageTool.")
    assert "en-GB" in response.text and "en-CA" in response.text and "en-AU" in response.text


def dialect_matches(server: RunningServer, text: str, **fields: str) -> list[tuple[str, str, str]]:
    matches = check(server, text=text, **fields).json()["matches"]
    return [
        (m["rule"]["id"], text[m["offset"] : m["offset"] + m["length"]], m["replacements"][0]["value"]) for m in matches
    ]


def test_a_named_variant_suggests_its_spellings_and_en_and_auto_do_not(server) -> None:
    """The fixture model leaves "colour" and "Color" as written: the matches are the dialect stage's alone."""
    assert ("GEC_SPELL_DIALECT", "colour", "color") in dialect_matches(server, "I saw a colour.", language="en-US")
    assert dialect_matches(server, "Color", language="en-GB") == [("GEC_SPELL_DIALECT", "Color", "Colour")]
    for language in ("en-CA", "en-AU"):
        body = check(server, text="Color", language=language).json()
        assert body["language"]["code"] == language and body["matches"][0]["rule"]["category"]["id"] == "TYPOS"
    for fields in ({"language": "en"}, {"language": "auto", "preferredVariants": "en-GB"}):
        assert dialect_matches(server, "Color", **fields) == []  # both spellings stand, as before
    assert dialect_matches(server, "Color", language="en-GB", disabledRules="GEC_SPELL_DIALECT") == []


def test_languages_and_auto(server) -> None:
    for language, code in (("en", "en"), ("en-US", "en-US"), ("EN-gb", "en-GB")):
        body = check(server, text="I saw a apple.", language=language).json()
        assert body["language"]["code"] == body["language"]["detectedLanguage"]["code"] == code
    auto = check(server, text="I saw a apple.", language="auto", preferredVariants="de-AT,en-GB").json()["language"]
    assert auto["code"] == auto["detectedLanguage"]["code"] == "en-GB" and auto["detectedLanguage"]["confidence"] > 0.5
    mixed = check(server, text="Привет мир, как дела? I saw", language="auto").json()["language"]
    assert mixed["code"] == mixed["detectedLanguage"]["code"] == "ru-RU" and mixed["name"] == "Russian"


@pytest.mark.parametrize(
    ("text", "name", "code"),
    [
        ("Das ist ein Test. Ich habe keine Zeit.", "German (Germany)", "de-DE"),
        ("Je ne sais pas, mais je pense que oui.", "French", "fr"),
        ("No tengo tiempo hoy, pero mañana sí.", "Spanish", "es"),
        ("Minulla ei ole tänään aikaa, mutta huomenna on.", "Finnish", "fi"),  # a language LanguageTool does not check
    ],
)
def test_auto_answers_in_the_detected_language(server, text: str, name: str, code: str) -> None:
    """As LanguageTool: ``language`` and ``detectedLanguage`` name what was detected, with its confidence."""
    body = check(server, text=text, language="auto", preferredVariants="en-GB").json()
    language = body["language"]
    assert (language["name"], language["code"]) == (name, code)
    detected = language["detectedLanguage"]
    assert (detected["name"], detected["code"], detected["source"]) == (name, code, "fasttext")
    assert 0.9 < detected["confidence"] <= 1


def test_a_named_language_is_answered_in_and_the_detected_one_reported(server) -> None:
    english = check(server, text="We visited a island last week.", language="en-GB").json()["language"]
    assert english["code"] == english["detectedLanguage"]["code"] == "en-GB"  # English: the variant answered in
    assert 0.5 < english["detectedLanguage"]["confidence"] <= 1
    german = check(server, text="Das ist ein Test. Ich habe keine Zeit.", language="en-US").json()["language"]
    assert (german["name"], german["code"]) == ("English (US)", "en-US")
    assert german["detectedLanguage"]["code"] == "de-DE" and german["detectedLanguage"]["confidence"] > 0.9


def test_nothing_to_detect_falls_back_to_english(server) -> None:
    """No letters: LanguageTool's fallback, English with confidence 0."""
    language = check(server, text="😀 12 345 !!!", language="auto", preferredVariants="en-GB").json()["language"]
    assert (language["name"], language["code"]) == ("English (GB)", "en-GB")
    assert language["detectedLanguage"] == {
        "name": "English (GB)",
        "code": "en-GB",
        "confidence": 0.0,
        "source": "fallback",
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"language": "en-US"}, "Missing 'text' or 'data' parameter"),
        ({"text": "a", "data": '{"text": "a"}', "language": "en"}, "not both"),
        ({"text": "a"}, "Missing 'language' parameter"),
        ({"data": "{not json", "language": "en"}, "Could not parse JSON"),
        ({"data": "[1]", "language": "en"}, "JSON object"),
        ({"data": '{"text": "a", "annotation": []}', "language": "en"}, "not both"),
        ({"data": '{"annotation": {"text": "a"}}', "language": "en"}, "must be a list"),
        ({"data": '{"annotation": [{"text": "a", "markup": "<b>"}]}', "language": "en"}, "not both"),
        ({"data": '{"annotation": [{"text": "a", "interpretAs": " "}]}', "language": "en"}, "interpretAs"),
        ({"data": '{"annotation": [{"other": "a"}]}', "language": "en"}, "Only 'text' and 'markup'"),
        ({"data": '{"annotation": [{"text": 5}]}', "language": "en"}, "must be a string"),
        ({"data": '{"nothing": 1}', "language": "en"}, "requires 'text' or 'annotation'"),
        ({"text": "a", "language": "en-US", "preferredVariants": "en-GB"}, "language=auto"),
        ({"text": "a", "language": "auto", "preferredVariants": "en GB"}, "valid language code"),
        ({"text": "a", "language": "en", "motherTongue": "German!"}, "valid language code"),
        ({"text": "a", "language": "en", "level": "pedantic"}, "'default' or 'picky'"),
        ({"text": "a", "language": "en", "enabledOnly": "true"}, "enabled rules or categories"),
        ({"text": "a", "language": "en", "alternatives": "²"}, "alternatives"),
        ({"text": "a", "language": "en", "alternatives": "6"}, "alternatives"),
        ({"text": "a", "language": "en", "username": "u" * 257}, "username"),
    ],
)
def test_refused_parameters_are_400_with_languagetools_messages(server, fields: dict, message: str) -> None:
    response = check(server, **fields)
    assert response.status_code == 400, response.text
    assert response.text.startswith("Error: ") and message in response.text


def test_undecodable_bodies_are_400_never_500(server) -> None:
    for body in (b"text=%ff%fe&language=en", b"text=\xff&language=en", b"&".join([b"a=1"] * 101)):
        response = httpx.post(server.url + "/v2/check", content=body, timeout=30)
        assert response.status_code == 400 and response.text.startswith("Error: ")
    too_long = check(server, text="a" * 20_001, language="en")
    assert too_long.status_code == 413 and too_long.text.startswith("Error: ") and "20000" in too_long.text
    arm = httpx.post(server.url + "/v2/check", data={"text": "a", "language": "en"}, headers={"X-Gecserve-Arm": "x"})
    assert arm.status_code == 400 and "x" in arm.text and arm.text.startswith("Error: ")


def test_ltex_style_request_url_encoded_under_a_json_content_type(server) -> None:
    """LTeX posts URL-encoded parameters with Content-Type: application/json; LanguageTool reads them."""
    data = json.dumps({"annotation": [{"text": ASTRAL}]})
    response = httpx.post(
        server.url + "/v2/check",
        content=urlencode({"language": "en-US", "data": data}),
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 200 and response.json()["matches"]
    by_query = httpx.post(server.url + "/v2/check?language=en-US", data={"text": ASTRAL}, timeout=60)
    get = httpx.get(server.url + "/v2/check", params={"language": "en-US", "text": ASTRAL}, timeout=60)
    assert by_query.json()["matches"] == get.json()["matches"] == response.json()["matches"]


def test_rule_and_category_switches(server) -> None:
    def rules(**fields: str) -> list[str]:
        body = check(server, text=ASTRAL, language="en-US", username="writer", **fields).json()
        return [m["rule"]["id"] for m in body["matches"]]

    every = rules()
    assert {"GEC_DET", "GEC_OTHER"} <= set(every)  # a rule per ERRANT category: articles, and other word choice
    assert rules(disabledRules="MORFOLOGIK_RULE_EN_US,UPPERCASE_SENTENCE_START") == every  # LanguageTool's ids: no-op
    assert rules(disabledRules="GEC_DET") == [r for r in every if r != "GEC_DET"]
    articles = [r for r in every if r == "GEC_DET"]
    grammar = [r for r in every if r != "GEC_OTHER"]  # GEC_OTHER is LanguageTool's MISC, the rest its GRAMMAR
    assert rules(disabledCategories="MISC") == grammar
    assert rules(disabledCategories="MISC,GRAMMAR", enabledRules="GEC_DET") == articles
    assert rules(enabledOnly="true", enabledRules="GEC_DET") == articles
    assert rules(enabledOnly="yes", enabledCategories="MISC") == [r for r in every if r == "GEC_OTHER"]
    assert rules(enabledOnly="true", enabledCategories="TYPOS") == []
    assert rules(level="picky", motherTongue="de-DE") == every  # accepted; no picky-only rules, no L1 rules


def test_served_recorded_and_assigned_like_v1_correct(server) -> None:
    """The same sticky arm as /v1/correct for the same user; the same Prometheus series under route lt_check."""

    def requests(route: str, arm: str, outcome: str = "ok") -> float:
        text = httpx.get(server.url + "/metrics").text
        return metric(
            text, "gecserve_request_duration_seconds_count", route=route, arm=arm, experiment="lt-ab", outcome=outcome
        )

    arms = {}
    for i in range(12):
        user = f"user-{i}"
        response = check(server, text="I saw a apple.", language="en-US", username=user)
        arms[user] = response.headers["x-gecserve-arm"]
        assert response.headers["x-gecserve-experiment"] == "lt-ab"
        assert v1(server, "I saw a apple.", user=user)["arm"] == arms[user]
    assert set(arms.values()) == {"accelerated", "autoregressive"}
    before = {arm: requests("lt_check", arm) for arm in ("accelerated", "autoregressive")}
    for user, arm in arms.items():
        assert check(server, text="Tom found an owl.", language="en", username=user).headers["x-gecserve-arm"] == arm
    after = {arm: requests("lt_check", arm) for arm in ("accelerated", "autoregressive")}
    assert {arm: after[arm] - before[arm] for arm in after} == {
        arm: list(arms.values()).count(arm) for arm in ("accelerated", "autoregressive")
    }
    report = httpx.get(server.url + "/v1/experiments/lt-ab").json()
    assert sum(arm["requests"] for arm in report["arms"]) >= 3 * len(arms)  # both APIs counted in the arms
    metrics = httpx.get(server.url + "/metrics").text
    refused_before = metric(metrics, "gecserve_request_duration_seconds_count", route="lt_check", outcome="bad_request")
    check(server, text="a", language="xx")
    metrics = httpx.get(server.url + "/metrics").text
    refused = metric(metrics, "gecserve_request_duration_seconds_count", route="lt_check", outcome="bad_request")
    assert refused == refused_before + 1


def test_alternatives_are_an_opt_in_served_by_beam(server) -> None:
    response = check(server, text="I saw a apple yesterday.", language="en-US", alternatives="3")
    assert response.headers["x-gecserve-arm"] == "beam" and "x-gecserve-experiment" not in response.headers
    for match in response.json()["matches"]:
        values = [r["value"] for r in match["replacements"]]
        assert 1 <= len(values) <= 4 and len(set(values)) == len(values)


def test_start_up_endpoints(server) -> None:
    languages = httpx.get(server.url + "/v2/languages").json()
    assert languages == [
        {"name": "English", "code": "en", "longCode": "en"},
        {"name": "English (US)", "code": "en", "longCode": "en-US"},
        {"name": "English (GB)", "code": "en", "longCode": "en-GB"},
        {"name": "English (Canadian)", "code": "en", "longCode": "en-CA"},
        {"name": "English (Australian)", "code": "en", "longCode": "en-AU"},
    ]
    assert set(httpx.get(server.url + "/v2/info").json()["software"]) >= {"name", "version", "buildDate", "premium"}
    assert httpx.get(server.url + "/v2/healthcheck").text == "OK"
    assert httpx.get(server.url + "/v2/maxtextlength").text == "20000"
    config = httpx.get(server.url + "/v2/configinfo", params={"language": "en-US"}).json()
    assert config["parameter"] == {"maxTextLength": 20000} and len(config["rules"]) == len(RULES)
    assert httpx.get(server.url + "/v2/configinfo").status_code == 400


def test_language_tool_python_in_remote_mode(server, tmp_path: Path, monkeypatch) -> None:
    """A real client library pointed at the server; it downloads nothing in remote mode."""
    monkeypatch.setenv("LTP_PATH", str(tmp_path / "ltp"))
    monkeypatch.setenv("LTP_JAR_DIR_PATH", str(tmp_path / "jar"))
    tool = language_tool_python.LanguageTool("en-US", remote_server=server.url)
    try:
        matches = tool.check(ASTRAL)
        assert {"GEC_DET", "GEC_OTHER"} <= {m.rule_id for m in matches}
        assert all(m.message and m.message.endswith(".") for m in matches)  # each match explains itself
        assert tool.correct(ASTRAL) == v1(server, ASTRAL, user="anyone")["text"]  # the client's own offset handling
        tool.disabled_categories = {"MISC"}
        assert {m.category for m in tool.check(ASTRAL)} == {"GRAMMAR"}
        tool.disabled_categories = set()
        tool.enabled_rules, tool.enabled_rules_only = {"GEC_OTHER"}, True
        assert {m.rule_id for m in tool.check(ASTRAL)} == {"GEC_OTHER"}
    finally:
        tool.close()
    assert not any(path.exists() and any(path.iterdir()) for path in (tmp_path / "ltp", tmp_path / "jar"))
    with pytest.raises(ValueError, match="fr"):  # /v2/languages lists what the server accepts
        language_tool_python.LanguageTool("fr", remote_server=server.url)
