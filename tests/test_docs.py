"""The docs' tables stay the code's: the configuration page lists every setting with its default, the
LanguageTool page's rule table is ``service.text.rules.RULES``, and the quality page's levels and lexical classes are
``service.text.policy``'s, its levels' dev figures the default model's manifest's (what ``GET /v1/models`` lists),
and its rule-stage table is ``service.text.grammar_rules.RULE_KINDS`` with the
measured figures each kept kind met; the architecture page's glossary names only classes, functions and tables that
exist, its request path only classes, settings and modules that exist, and its module map every module and package
of ``service/`` in the row of its folder and nothing that is not where its row says. (The error table:
``tests/api/test_error_reasons.py``; the layers' table: ``tests/test_layers.py``; the site's links and pages:
``make docs``, which builds it with ``--strict``.)"""

from __future__ import annotations

import fnmatch
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
ARCHITECTURE = (DOCS / "architecture.md").read_text(encoding="utf-8")
ROOT = DOCS.parent
SERVICE = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "service").rglob("*.py"))


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


def test_the_quality_page_s_level_figures_are_the_manifest_s_served_ones() -> None:
    levels = ModelManifest.load(Path(DEFAULT_MODEL)).extra["quality"]["levels"]
    safe, default, picky = (levels[level] for level in ("safe", "default", "picky"))
    for label, name in (("JFLEG dev GLEU", "jfleg_dev"), ("FCE dev GLEU", "fce_dev")):
        cells = f"{safe[name]['gleu']:.2f} | **{default[name]['gleu']:.2f}** | {picky[name]['gleu']:.2f} |"
        assert re.search(rf"^\| {label} \| [^|]+ \| {re.escape(cells)}$", QUALITY, re.M), f"docs/quality.md: {cells}"
    for label, name, count in (("FCE", "fce_dev", 830), ("JFLEG", "jfleg_dev", 89)):
        changed = [f"{100 * (1 - level[name]['unchanged_kept']):.1f}%" for level in (safe, default, picky)]
        cells = f"{changed[0]} | **{changed[1]}** | {changed[2]} |"
        row = rf"^\| {label} dev sentences needing no edit changed \(of {count}\) \| [^|]+ \| {re.escape(cells)}$"
        assert re.search(row, QUALITY, re.M), f"docs/quality.md's {label} row: {cells}"


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
    table = ARCHITECTURE.split("## Glossary")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and not line.startswith("| -")]
    words = [row[0].removeprefix("| ") for row in rows[1:]]
    assert len(words) == len(set(words)) and {"backend", "arm", "strategy", "queue", "worker", "engine"} <= set(words)
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
                    rf"^\s*(?:class|def|async def) {name.group(1)}\b|^{name.group(1)}\b.*=", SERVICE, re.M
                ), code
                if name.group(2):
                    assert re.search(rf"\b(?:def |self\.)?{name.group(2)}\b", SERVICE), code
    assert {"Router", "Route", "Tally", "ExperimentSync", "LocalBatcher", "BACKENDS", "replica_id"} <= named


_NAMED = re.compile(r"`([\w.*-]+(?:/[\w.*-]+)*/?)`")  # a file or folder in backticks: `app.py`, `http/`, `a/b.py`


def _module_map() -> list[tuple[list[Path], set[str]]]:
    """The module map's rows: the paths its first column names, and the files and folders its second names."""
    table = ARCHITECTURE.split("## The module map")[1].split("\n## ")[0]
    rows = []
    for line in [line for line in table.splitlines() if line.startswith("| ")][2:]:  # past the header
        where, what = line.removeprefix("| ").removesuffix(" |").split(" | ", 1)
        names = {name for name in _NAMED.findall(what) if name.endswith((".py", "/"))}
        rows.append(([ROOT / path for path in _NAMED.findall(where)], names))
    return rows


def _folders(paths: list[Path]) -> list[Path]:
    return [path if path.is_dir() else path.parent for path in paths]


IGNORED = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def _found(name: str, folders: list[Path]) -> bool:
    """``name`` (``x.py``, ``x/``, a pattern or a path) is in one of ``folders`` or below, or at the root; or git
    ignores it, as what a build installs (``make web``'s ``vendor/device/``)."""
    if any(line.endswith("/" + name) for line in IGNORED):
        return True
    pattern = name.rstrip("/")
    found = [*ROOT.glob(pattern), *(path for folder in folders for path in folder.rglob(pattern))]
    return any(path.is_dir() if name.endswith("/") else path.is_file() for path in found)


def test_the_module_map_names_what_is_there() -> None:
    """Every path, file and folder the architecture page's module map names is where its row says."""
    for paths, names in _module_map():
        assert paths and all(path.exists() or list(ROOT.glob(str(path.relative_to(ROOT)))) for path in paths), paths
        for name in names:
            assert _found(name, _folders(paths)), f"the row of {paths[0].relative_to(ROOT)} names {name}: not there"


def test_the_module_map_names_every_module_of_the_service() -> None:
    """Every module and package of ``service/`` is named in the module map, in the row of its folder (the row
    whose path is the nearest folder above it), or as a path of a row."""
    rows = _module_map()
    unnamed = []
    for path in sorted((ROOT / "service").rglob("*.py")):
        if path.name == "__init__.py":
            path = path.parent  # a package: named as its folder
        while "proto" in path.parent.parts:
            path = path.parent  # generated gRPC code: named as its folder
        if path == ROOT / "service":
            continue
        if any(path in paths for paths, _ in rows):
            continue
        folder = max(
            (folder for paths, _ in rows for folder in paths if folder.is_dir() and folder in path.parents),
            key=lambda folder: len(folder.parts),
            default=None,
        )
        if folder is None:
            unnamed.append(f"{path.relative_to(ROOT)} (no row)")
            continue
        names = set().union(*(names for paths, names in rows if folder in paths))
        named = path.name + "/" if path.is_dir() else path.name
        if not any(
            fnmatch.fnmatch(named, name.rsplit("/", 2)[-2] + "/" if name.endswith("/") else name.rsplit("/", 1)[-1])
            for name in names
        ):
            unnamed.append(f"{path.relative_to(ROOT)} (the row of {folder.relative_to(ROOT)}/)")
    assert unnamed == [], "the module map does not name these:\n" + "\n".join(unnamed)


OTHER_SOFTWARE = {"FastAPI", "FastHttpUser", "JavaScript", "LanguageTool", "PyTorch", "SymSpell"}  # not the service's


def _not_in_the_code(text: str, files: bool = True) -> list[str]:
    """What ``text`` names that the code has not: a class (``CamelCase``) the service does not define, a
    ``GECSERVE_*`` setting that is not one, a path (``service/...``; with ``files``, ``x.py``) not in ``service/``."""
    missing = [
        name
        for name in set(re.findall(r"\b[A-Z][a-z]+[A-Z]\w*", text)) - OTHER_SOFTWARE
        if not re.search(rf"^\s*class {name}\b", SERVICE, re.M)
    ]
    missing += [
        name
        for name in set(re.findall(r"\bGECSERVE_[A-Z_]+\b", text))
        if name.removeprefix("GECSERVE_").lower() not in Settings.model_fields
    ]
    missing += [path for path in set(re.findall(r"\bservice/[\w/.]*\w/?", text)) if not (ROOT / path).exists()]
    missing += [
        name
        for name in set(re.findall(r"(?<![/\w])\w+\.py\b", text) if files else ())
        if not next((ROOT / "service").rglob(name), None)
    ]
    return sorted(missing)


def test_the_request_path_names_what_the_code_has() -> None:
    """The architecture page's request path (and what it says of start-up, wiring and the engine below it) names
    classes, settings and modules that are there."""
    section = ARCHITECTURE.split("\n## The request path\n")[1].split("\n## ")[0]
    assert {"SentenceDispatcher", "DecodingQueues", "dispatch.py"} <= set(re.findall(r"[\w.]+", section))
    assert _not_in_the_code(section) == []


def test_the_module_map_s_classes_and_settings_are_the_code_s() -> None:
    """The classes and settings the module map names are the service's (its files: the tests above)."""
    section = ARCHITECTURE.split("\n## The module map\n")[1].split("\n## ")[0]
    assert {"Gateway", "Router", "ExperimentParts", "GECSERVE_MODELS"} <= set(re.findall(r"\w+", section))
    assert _not_in_the_code(section, files=False) == []
