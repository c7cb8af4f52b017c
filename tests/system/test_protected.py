"""Never corrupt a writer's text, through the API with the bundled model: what the model cannot read comes back as
written (URLs, e-mail, code, paths, numbers, markdown, emoji, repeated lines), on both arms, with the spelling stage
on and off, over HTTP, gRPC and LanguageTool's API, while the words around it are still corrected."""

from __future__ import annotations

import httpx
import pytest

from service.api.grpc.proto import gecserve_pb2 as pb
from tests.system.clients import grpc_call, post
from tests.system.server import RunningServer
from tests.text.test_protect import URLS

pytestmark = [pytest.mark.slow, pytest.mark.server]

ATOMS = [
    *URLS,
    "john.smith@example.com",
    "user+tag@sub.domain.travel",
    "/usr/local/bin/python",
    "~/docs/notes.txt",
    "C:\\Users\\me\\report.docx",
    "main.py",
    "@alice",
    "#python",
    "snake_case",
    "os.path.join()",
    "getElementById",
    "--verbose",
    "$HOME",
    "`pip install gecserve`",
    "$1,250.50",
    "v1.2.3",
    "2024-01-15",
    "10:30am",
]


def correct(server: RunningServer, text: str, **options: object) -> dict:
    response = post(server, "/v1/correct", {"text": text, "options": options})
    assert response.status_code == 200, response.text
    return response.json()


def untouched(text: str, piece: str, answer: dict) -> bool:
    """``piece`` of ``text`` is in the answer as written, and no edit overlaps or splits it."""
    start = text.index(piece)
    end = start + len(piece)
    overlapping = [e for e in answer["edits"] if e["offset"] < end and e["offset"] + e["length"] > start]
    inside = [e for e in answer["edits"] if e["length"] == 0 and start < e["offset"] < end]
    return piece in answer["text"] and not overlapping and not inside


@pytest.mark.parametrize("atom", ATOMS)
def test_atoms_come_back_as_written_and_the_words_around_are_corrected(bundled: RunningServer, atom: str) -> None:
    text = f"Please read {atom} if you has questions."
    answer = correct(bundled, text)
    assert untouched(text, atom, answer), answer
    assert answer["text"] == f"Please read {atom} if you have questions.", answer


REPRODUCTIONS = [
    "Please visit https://www.example.com/path/to_page?id=42&ref=abc for more details.",
    "See https://github.com/openai/whisper for the code.",
    "Write to john.smith@example.com for more details.",
    "## Installation",
    "# Title",
    "Click **Save** to keep it.",
    "Read [the documentation](https://example.com/docs) first.",
    "x = 1  # set the counter",
    "It costs $1,250.50 (about 1.2 million yen) in Japan.",
    "He has a cat. " + "\U0001f600" * 50 + " She goes home.",
    "He has a cat. " + "\U0001f600" * 70 + " She goes home.",
    "Hi. " * 50,
    "Ok. " * 60,
    "| Name | Age |\n|------|-----|\n| Bob | 20 |",
    "```python\nx = compute(a, b)  # the value\n```",
]


@pytest.mark.parametrize("arm", ["accelerated", "autoregressive"])
@pytest.mark.parametrize("spelling", [True, False])
@pytest.mark.parametrize("text", REPRODUCTIONS)
def test_the_reproductions_come_back_unchanged(bundled: RunningServer, text: str, arm: str, spelling: bool) -> None:
    """The texts of the issue (with their learner errors corrected first): nothing to correct, nothing changed."""
    answer = correct(bundled, text, backend=arm, spelling=spelling)
    assert answer["text"] == text and answer["edits"] == [], answer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("> I has a question.", "> I have a question."),
        (
            "He have a cat. " + "\U0001f600" * 30 + " It were fun.",
            "He has a cat. " + "\U0001f600" * 30 + " It was fun.",
        ),
    ],
)
def test_markdown_code_and_emoji_around_corrected_prose(bundled: RunningServer, text: str, expected: str) -> None:
    assert correct(bundled, text)["text"] == expected


@pytest.mark.parametrize(
    ("before", "after"), [("- ", ""), ("x = 1  # set the counter\n", ""), ("> ", " Thanks!"), ("1. ", "")]
)
def test_a_list_marker_quote_or_code_line_is_kept_and_the_sentence_beside_it_edited(
    bundled: RunningServer, before: str, after: str
) -> None:
    """ "She go to school every days." has two right corrections ("goes" and "went"): the check is that both errors
    get an edit, not which tense the model picks."""
    answer = correct(bundled, before + "She go to school every days." + after)["text"]
    assert answer.startswith(before + "She ") and answer.endswith("every day." + after), answer
    assert "She go " not in answer, answer


def test_bold_text_is_kept_and_the_error_beside_it_edited(bundled: RunningServer) -> None:
    """Version 3 writes "if you have changed" here (the right answer is "have changes"): the check is the span and
    the agreement edit, which every shipped version makes."""
    answer = correct(bundled, "Click **Save** if you has changes.")["text"]
    assert answer.startswith("Click **Save** if you have "), answer


@pytest.mark.parametrize("count", [1, 2, 5, 20, 100])
def test_emoji_runs_of_any_length_are_left_alone(bundled: RunningServer, count: int) -> None:
    run = "\U0001f600" * count
    for text in (f"He has a cat {run} and she goes home.", f"{run} She goes home.", f"She goes home {run}"):
        answer = correct(bundled, text)
        assert answer["text"] == text and answer["edits"] == [], answer


def test_the_guard_counts_what_it_drops(bundled: RunningServer) -> None:
    """ "Hi. " fifty times made the model write about 35 more: the output is dropped, the text stays, the metric
    says why."""
    text = "Hi. " * 50
    assert correct(bundled, text)["text"] == text
    metrics = httpx.get(f"{bundled.url}/metrics").text
    dropped = [line for line in metrics.splitlines() if line.startswith("gecserve_outputs_dropped_total{")]
    assert any('reason="repetition"' in line and not line.endswith(" 0.0") for line in dropped), dropped


def test_grpc_and_languagetool_leave_atoms_alone(bundled: RunningServer) -> None:
    text = "Write to john.smith@example.com if you has questions about https://example.com/a?b=1."
    expected = text.replace("has", "have")
    reply, _ = grpc_call(bundled, "Correct", pb.CorrectRequest(texts=[text]))
    assert reply.results[0].text == expected
    matches = httpx.post(f"{bundled.url}/v2/check", data={"text": text, "language": "en-US"}).json()["matches"]
    assert [(m["offset"], m["length"]) for m in matches] == [(text.index("has"), 3)]


FOREIGN = [
    "Das ist ein Test. Ich habe keine Zeit.",
    "Je suis fatigué mais je dois travailler ce soir.",
    "No tengo tiempo para ir al mercado hoy.",
    "Non ho tempo di andare al mercato oggi.",
    "Eu não tenho tempo para ir ao mercado hoje.",
    "Ik heb vandaag geen tijd om naar de markt te gaan.",
    "Jag har inte tid att gå till marknaden idag.",
    "Nie mam dzisiaj czasu, żeby iść na targ.",
    "Bugün pazara gitmek için vaktim yok.",
    "Saya tidak punya waktu untuk pergi ke pasar hari ini.",
]


@pytest.mark.parametrize("text", FOREIGN)
def test_other_languages_come_back_unchanged(bundled: RunningServer, text: str) -> None:
    answer = correct(bundled, text)
    assert answer["text"] == text and answer["edits"] == [], answer


def test_a_paragraph_mixing_languages_has_its_english_corrected(bundled: RunningServer) -> None:
    text = "She go to school every days. Ich habe heute leider keine Zeit für dich. I has a apple."
    answer = correct(bundled, text)
    german = "Ich habe heute leider keine Zeit für dich."
    assert untouched(text, german, answer), answer
    assert answer["text"].startswith("She ") and "every day. " + german in answer["text"], answer
    assert "She go " not in answer["text"], answer
    fixed = [(e["original"], e["replacement"]) for e in answer["edits"] if e["sentence"] == 2]
    assert fixed == [("has", "have"), ("a", "an")]  # the model's agreement, the rule stage's a/an
