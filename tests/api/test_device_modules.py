"""The device engine's JavaScript modules under Node, against the Python they port, on generated inputs:
``decode.mjs``'s alignment moves as ``service/engine/decoding/alignment.py``'s does, and ``edits.mjs``'s edits applied
to a sentence give the output they were made from, with the guard's verdicts those of ``service/text/guard.py``."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.api.dashboard import STATIC
from service.engine.decoding.alignment import Alignment
from service.text.guard import degenerate

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (.ci/run installs it)")

RUN = """
import * as decode from "DECODE";
import * as edits from "EDITS";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const {fn, cases} = JSON.parse(input);
const answers = cases.map((c) => {
  if (fn === "align") {
    const align = new decode.Alignment([...c.source, 2], 0);
    const trail = [];
    for (let end = 1; end <= c.output.length; end++) {
      align.follow(c.output.slice(0, end));
      const output = c.output.slice(0, end);
      trail.push([align.pointer, align.guess(output), align.pointersAlong(output, c.more)]);
    }
    return trail;
  }
  const found = edits.diffEdits(c.source, c.output, 0);
  return {applied: edits.applyEdits(c.source, found), edits: found, guard: edits.degenerate(c.source, c.output)};
});
process.stdout.write(JSON.stringify(answers));
"""


def node(fn: str, cases: list[dict]) -> list:
    script = RUN.replace("DECODE", (STATIC / "device" / "decode.mjs").as_uri()).replace(
        "EDITS", (STATIC / "device" / "edits.mjs").as_uri()
    )
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        input=json.dumps({"fn": fn, "cases": cases}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


tokens = st.lists(st.integers(3, 9), max_size=14)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(tokens, tokens, tokens), min_size=1, max_size=20))
def test_the_alignment_moves_as_the_python_one(cases: list[tuple[list[int], list[int], list[int]]]) -> None:
    answers = node("align", [{"source": s, "output": o, "more": m} for s, o, m in cases])
    for (source, output, more), trail in zip(cases, answers, strict=True):
        align = Alignment([*source, 2])
        expected = []
        for end in range(1, len(output) + 1):
            align.follow(output[:end])
            expected.append([align.pointer, align.guess(output[:end]), align.pointers_along(output[:end], more)])
        assert trail == expected


words = st.sampled_from(["the", "The", "a", "cat", "cats", "go", "went", ",", ".", "?", "😀", "日本", "e\u0301", "a"])
sentence = st.lists(st.tuples(words, st.sampled_from([" ", "", "  ", "\t"])), max_size=12).map(
    lambda parts: "".join(w + s for w, s in parts)
)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(sentence, sentence), min_size=1, max_size=25))
def test_edits_applied_give_the_output_and_the_guard_agrees(cases: list[tuple[str, str]]) -> None:
    answers = node("edits", [{"source": s, "output": o} for s, o in cases])
    for (source, output), answer in zip(cases, answers, strict=True):
        assert answer["applied"] == output
        units = source.encode("utf-16-le")  # the offsets count UTF-16 code units
        spans = [units[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le") for e in answer["edits"]]
        assert spans == [e["original"] for e in answer["edits"]]
        if answer["guard"] != degenerate(source, output):  # the overlap rule counts matches otherwise (LCS, difflib)
            assert {answer["guard"], degenerate(source, output)} <= {"overlap", None}
