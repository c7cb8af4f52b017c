"""``gecserve categorize``: the edits between a text and its correction, each with its ERRANT category and message.

    printf 'She go to school.\\tShe goes to school.\\n' | gecserve categorize
    {"source": "She go to school.", "corrected": "She goes to school.", "edits": [{"offset": 4, "length": 2,
     "original": "go", "replacement": "goes", "category": "R:VERB:SVA", "message": "'go' → 'goes': ..."}]}

Each input line is ``source<TAB>corrected``; each output line is one JSON object, in the input's order. The edits
are the service's minimal word-level edits (``service.text.edits.extract_edits``, code-point offsets), and their
categories and messages come from the service's own classifier (``service.text.units.explained``). A line without
a tab is answered with an ``error`` and the command goes on; the exit status is 1 if any line was.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from service.text.edits import extract_edits
from service.text.units import explained


def categorized(source: str, corrected: str) -> list[dict[str, Any]]:
    """The edits from ``source`` to ``corrected``, each with its offsets, category and message."""
    edits = []
    for edit in extract_edits(source, corrected):
        category, message = explained(source, edit)
        edits.append(
            {
                "offset": edit.start,
                "length": edit.end - edit.start,
                "original": edit.original,
                "replacement": edit.replacement,
                "category": category,
                "message": message,
            }
        )
    return edits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gecserve categorize", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.parse_args(argv)
    failed = False
    for number, line in enumerate(sys.stdin, start=1):
        text = line.rstrip("\r\n")
        source, tab, corrected = text.partition("\t")
        if not tab:
            failed = True
            answer: dict[str, Any] = {"line": number, "error": "expected source<TAB>corrected"}
        else:
            answer = {"source": source, "corrected": corrected, "edits": categorized(source, corrected)}
        print(json.dumps(answer, ensure_ascii=False), flush=True)
    return 1 if failed else 0
