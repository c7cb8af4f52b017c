"""``gecserve correct``: lines in, corrected lines out, in order, as a real subprocess."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import FIXTURE_MODEL

LINES = [
    "i saw a apple yesterday",
    "",
    "Tom found an honest owl. We visited a island last week.",
    "The cat likes teh old car.",
]


def _run(stdin: str, *args: str) -> str:
    command = [sys.executable, "-m", "service.cli", "correct", "--model", str(FIXTURE_MODEL), *args]
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


@pytest.mark.parametrize("decoding", ["aggressive", "greedy", "beam"])
def test_lines_in_order_with_empty_lines_kept(decoding: str) -> None:
    out = _run("\n".join(LINES) + "\n", "--decoding", decoding, "--batch-size", "2")
    corrected = out.split("\n")
    assert corrected[-1] == "" and len(corrected) == len(LINES) + 1
    assert corrected[0] == "I saw an apple yesterday."
    assert corrected[1] == ""
    assert corrected[2].startswith("Tom found an honest owl.") and "an island" in corrected[2]


def test_aggressive_equals_greedy_and_batch_size_does_not_matter() -> None:
    text = "\n".join(LINES * 5)
    aggressive = _run(text, "--batch-size", "3")
    assert aggressive == _run(text, "--decoding", "greedy", "--batch-size", "32")
    assert not aggressive.endswith("\n")  # no trailing newline in, none out


def test_edits_are_held_back_as_served_and_all_kept_without_the_confidence() -> None:
    text = "\n".join(LINES)
    everything = _run(text, "--no-confidence")
    assert everything == _run(text, "--min-confidence", "0") != text
    certain = _run(text, "--min-confidence", "1")  # only what the model was sure of to 3 places
    assert certain != everything and certain.split("\n")[1:] == text.split("\n")[1:]


def test_a_dialect_named_gets_its_spellings_and_none_otherwise() -> None:
    text = "Color\nI saw a colour."  # the fixture model leaves both words as written
    assert _run(text, "--language", "en-GB").split("\n")[0] == "Colour"
    assert _run(text, "--language", "en-US").split("\n")[1].endswith("color.")
    assert _run(text).split("\n")[0] == "Color"
    refused = subprocess.run(
        [sys.executable, "-m", "service.cli", "correct", "--model", str(FIXTURE_MODEL), "--language", "de-DE"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "en-GB" in refused.stderr
