"""The docs' tables stay the code's: the configuration page lists every setting with its default, the
LanguageTool page's rule table is ``service.text.rules.RULES``, and the quality page's levels and lexical classes are
``service.text.policy``'s, and its rule-stage table is ``service.text.grammar_rules.RULE_KINDS`` with the
measured figures each kept kind met; the architecture page's glossary names only classes, functions and tables that
exist. (The error table: ``tests/api/test_error_reasons.py``;
the site's links and pages: ``make docs``, which builds it with ``--strict``.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

from models.gec.rule_precision import markdown, meets_bar
from service.config import DEFAULT_MODEL, Settings
from service.engine.manifest import ModelManifest, level_keep_bias
from service.experiments.arms import BACKENDS
from service.text.dialects import BRITISH, DIALECTS, UNSURE, replacements
from service.text.grammar_rules import RULE_KINDS
from service.text.policy import LEVELS, MULTIPLIERS
from service.text.rules import RULES

DOCS = Path(__file__).resolve().parents[1] / "docs"
CONFIGURATION = (DOCS / "configuration.md").read_text(encoding="utf-8")
LANGUAGETOOL = (DOCS / "languagetool.md").read_text(encoding="utf-8")
HTTP = (DOCS / "http.md").read_text(encoding="utf-8")
BENCHMARKS = (DOCS / "benchmarks.md").read_text(encoding="utf-8")


def test_every_setting_is_in_the_configuration_table() -> None:
    for name, field in Settings.model_fields.items():
        default = "models/gec-default" if name == "model_path" else field.default
        row = f"| `GECSERVE_{name.upper()}` | `{default}` |"
        assert row in CONFIGURATION, f"docs/configuration.md's table lacks or misstates: {row}"


def test_the_rule_table_is_the_code_table() -> None:
    for category, rule in RULES.items():
        row = (
            f"| `{category}` | `{rule.id}` | {rule.description} | `{rule.issue_type}` | `{rule.category_id}` |"
            f" {rule.category_name} | `{rule.type_name}` | {rule.context_for_sure_match} |"
        )
        assert row in LANGUAGETOOL, f"docs/languagetool.md's rule table lacks or misstates: {row}"


QUALITY = (DOCS / "quality.md").read_text(encoding="utf-8")


def test_the_quality_page_s_levels_and_multipliers_are_the_policy_s() -> None:
    manifest = ModelManifest.load(Path(DEFAULT_MODEL))
    for level, threshold in LEVELS.items():
        row = f"| `{level}` | {threshold} | {level_keep_bias(manifest, level)} |"
        assert row in QUALITY, f"docs/quality.md's level table lacks or misstates: {row}"
    for lexical, multiplier in MULTIPLIERS.items():
        assert f"| `{lexical}` | {multiplier} |" in QUALITY, f"docs/quality.md lacks the multiplier of {lexical}"


def test_the_n_best_backends_table_is_the_backends_settings() -> None:
    for name in ("beam", "diverse"):
        p = BACKENDS[name].params
        row = f"| `{name}` | {p.num_beams} | {p.num_beam_groups} | {p.diversity_penalty} | {p.num_return_sequences} |"
        assert row in HTTP, f"docs/http.md's n-best backends table lacks or misstates: {row}"


def test_the_diverse_beam_table_is_its_benchmark_s() -> None:
    """Every row of ``docs/benchmarks/diversity-jfleg.json`` (``gecserve bench diversity``) is in the page, as given."""
    for r in json.loads((DOCS / "benchmarks" / "diversity-jfleg.json").read_text(encoding="utf-8"))["rows"]:
        row = (
            f"| {r['groups']} | {r['penalty']:g} | {r['distinct_outputs']:.2f} | {r['all_distinct']:.1%} |"
            f" {r['token_distance']:.2f} | {r['word_distance']:.2f} | {r['best_as_beam']:.1%} |"
            f" {r['ms_per_sentence']:.1f} | {r['cost_vs_beam']:.2f}x |"
        )
        assert row in BENCHMARKS, f"docs/benchmarks.md's diverse beam search table lacks or misstates: {row}"


TEXT = (DOCS / "text.md").read_text(encoding="utf-8")
_DIALECT_ROWS = {  # the text page's class names and examples: (class, British, American)
    "-our": ("our", "colour", "color"),
    "-re": ("re", "centre", "center"),
    "doubled l": ("ll", "travelled", "traveled"),
    "-ence": ("ence", "defence", "defense"),
    "-ogue": ("ogue", "catalogue", "catalog"),
    "-ise": ("ize", "organise", "organize"),
    "-yse": ("yze", "analyse", "analyze"),
    "ae, oe": ("ae", "anaemia", "anemia"),
    "-mme": ("mme", "programme", "program"),
}


def test_the_dialect_table_is_the_dialects_choice() -> None:
    for label, (name, british, american) in _DIALECT_ROWS.items():
        cells = []
        for dialect in DIALECTS.values():
            side = dialect.spells.get(name)
            if side is None:
                cells.append("both stand")
                continue
            written, other = (british, american) if side == BRITISH else (american, british)
            picky = replacements(dialect)[other][1] == UNSURE
            cells.append(f"{written} (picky)" if picky else written)
        row = f"| {label} | {british}/{american} | " + " | ".join(cells) + " |"
        assert row in TEXT, f"docs/text.md's dialect table lacks or misstates: {row}"
    assert [d.code for d in DIALECTS.values()] == ["en-US", "en-GB", "en-CA", "en-AU"]  # the table's columns
    assert "other" not in DIALECTS["en-ca"].spells  # "both stand"


def test_the_quality_page_s_rule_table_is_the_rule_stage_s_kinds_with_their_measured_figures() -> None:
    measured = json.loads((DOCS / "benchmarks" / "rules.json").read_text(encoding="utf-8"))
    rows = {row["kind"]: row for row in measured["kinds"]}
    assert list(rows) == list(RULE_KINDS), "docs/benchmarks/rules.json is not of the kinds the stage runs"
    for line in markdown(measured["kinds"]).splitlines():
        assert line in QUALITY, f"docs/quality.md's rule table lacks or misstates: {line}"
    for name, kind in RULE_KINDS.items():
        assert meets_bar(rows[name], measured["bar"]) and kind.confidence <= measured["bar"], name


def test_the_glossary_names_what_the_code_has() -> None:
    """Every class, function, table or setting the glossary's code column names (``CamelCase``, ``name()``,
    ``UPPER_CASE``, ``Class.attribute``, ``GECSERVE_*``) is defined in the service, and each word is defined once."""
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## Glossary")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and not line.startswith("| -")]
    words = [row[0].removeprefix("| ") for row in rows[1:]]
    assert len(words) == len(set(words)) and {"backend", "arm", "strategy", "queue", "worker", "engine"} <= set(words)
    source = "\n".join(path.read_text(encoding="utf-8") for path in (DOCS.parent / "service").rglob("*.py"))
    named = set()
    for row in rows[1:]:
        for code in re.findall(r"`([^`]+)`", row[2]):
            name = re.fullmatch(
                r"(?:[\w.]+\.)?([A-Z]\w*[a-z]\w*|[A-Z][A-Z_]+|\w+(?=\(\)))(?:\.(\w+))?(?:\(.*\))?", code
            )
            if code.startswith("GECSERVE_"):
                assert code.removeprefix("GECSERVE_").lower() in Settings.model_fields, code
            elif name:
                named.add(name.group(1))
                assert re.search(
                    rf"^\s*(?:class|def|async def) {name.group(1)}\b|^{name.group(1)}\b.*=", source, re.M
                ), code
                if name.group(2):
                    assert re.search(rf"\b(?:def |self\.)?{name.group(2)}\b", source), code
    assert {"Router", "Route", "Tally", "ExperimentSync", "LocalBatcher", "BACKENDS", "replica_id"} <= named
