"""A correction as LanguageTool's ``/v2/check`` answer: ``software``, ``warnings``, ``language``, ``matches``.

Each edit the rule selection keeps becomes one match: its rule and LanguageTool category from its ERRANT
category (``service.text.rules``), its message the edit's own (``service.text.messages``), its short message
the rule's. ``offset`` and ``length`` count UTF-16 code units of the text the client sent, markup
included, as LanguageTool's (Java) offsets do. ``context`` is the match with up to ``CONTEXT_CHARS``
characters either side, cut where marked with "..." and with line breaks shown as spaces; its
``offset`` and ``length`` count UTF-16 code units of the context. ``sentence`` is the sentence the
edit starts in, trimmed (found by offset: the pipeline may split the text further, around what the model
cannot read). ``replacements``: the model's replacement, then beam-search alternatives when they were
asked for.

``language`` and ``detectedLanguage`` are LanguageTool's: the language of the text is always detected
(``service.text.language``), and ``detectedLanguage`` says what was found, with the identifier's probability as its
``confidence`` and ``source`` "fasttext" ("fallback", confidence 0, for a text with no letters); ``language`` is the
language the client named, or with ``auto`` the detected one. English is the English variant the answer is in (the
one named; with ``auto``, the first English variant of ``preferredVariants``, else en-US): the identifier cannot tell
variants apart. Only English is corrected, so a text in another language gets no matches.
"""

from __future__ import annotations

import bisect
from importlib.metadata import version
from typing import Any

from service.api.languagetool.params import CheckParams, Language, detected_language
from service.pipeline.types import Correction, EditOut
from service.text.language import DetectedLanguage
from service.text.offsets import Utf16Index, utf16_length
from service.text.rules import rule_of
from service.text.segment import split_sentences

CONTEXT_CHARS = 40
API_VERSION = 1  # LanguageTool's JSON format version
SOURCE = "fasttext"  # detectedLanguage.source: what detected it, as LanguageTool names its detectors


def software(model_name: str, model_version: str) -> dict[str, Any]:
    """The ``software`` object: this service, and the model in ``status``."""
    return {
        "name": "gecserve",
        "version": version("gecserve"),
        "buildDate": "",
        "apiVersion": API_VERSION,
        "premium": False,
        "status": f"model {model_name} version {model_version}",
    }


def language_info(language: Language) -> dict[str, str]:
    return {"name": language.name, "code": language.long_code}


def check_answer(
    params: CheckParams, detected: DetectedLanguage, correction: Correction, model_name: str, model_version: str
) -> dict[str, Any]:
    """The ``/v2/check`` answer for ``params`` from the language detected in ``params.text.plain`` and its
    correction (code-point offsets)."""
    return {
        "software": software(model_name, model_version),
        "warnings": {"incompleteResults": False},
        "language": _language(params, detected),
        "matches": _matches(params, correction.edits),
    }


def _language(params: CheckParams, detected: DetectedLanguage) -> dict[str, Any]:
    found = detected_language(detected.code, params.language)
    return {
        **language_info(found if params.auto else params.language),
        "detectedLanguage": {
            **language_info(found),
            "confidence": round(detected.confidence, 4),
            "source": SOURCE if detected.code else "fallback",
        },
    }


def _matches(params: CheckParams, edits: list[EditOut]) -> list[dict[str, Any]]:
    text = params.text
    kept = [(edit, rule_of(edit.category)) for edit in edits if params.rules.selected(rule_of(edit.category))]
    if not kept:
        return []
    sentences = split_sentences(text.plain)
    starts = [sentence.start for sentence in sentences]
    index = Utf16Index(text.original)
    matches = []
    for edit, rule in kept:
        start, end = text.original_span(edit.offset, edit.offset + edit.length)
        offset, length = index.span(start, end)
        matches.append(
            {
                "message": edit.message,
                "shortMessage": rule.short_message,
                "replacements": [{"value": value} for value in (edit.replacement, *edit.alternatives)],
                "offset": offset,
                "length": length,
                "context": _context(text.original, start, end),
                "sentence": sentences[max(bisect.bisect_right(starts, edit.offset) - 1, 0)].text.strip(),
                "type": {"typeName": rule.type_name},
                "rule": {
                    "id": rule.id,
                    "description": rule.description,
                    "issueType": rule.issue_type,
                    "category": {"id": rule.category_id, "name": rule.category_name},
                },
                "ignoreForIncompleteSentence": rule.ignore_for_incomplete_sentence,
                "contextForSureMatch": rule.context_for_sure_match,
            }
        )
    return matches


def _context(text: str, start: int, end: int) -> dict[str, Any]:
    left, right = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    before = ("..." if left > 0 else "") + text[left:start]
    after = text[end:right] + ("..." if right < len(text) else "")
    shown = (before + text[start:end] + after).replace("\r", " ").replace("\n", " ")
    return {"text": shown, "offset": utf16_length(before), "length": utf16_length(text[start:end])}
