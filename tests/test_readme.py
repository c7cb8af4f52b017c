"""The README stays true: its configuration table lists every setting with its default."""

from __future__ import annotations

from pathlib import Path

from service.config import Settings
from service.text.rules import RULES

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_in_the_configuration_table() -> None:
    for name, field in Settings.model_fields.items():
        default = "models/gec-default" if name == "model_path" else field.default
        row = f"| `GECSERVE_{name.upper()}` | `{default}` |"
        assert row in README, f"README configuration table lacks or misstates: {row}"


def test_readme_shows_the_two_commands() -> None:
    assert "make serve" in README and "make test" in README


def test_readme_rule_table_is_the_code_table() -> None:
    for category, rule in RULES.items():
        row = (
            f"| `{category}` | `{rule.id}` | {rule.description} | `{rule.issue_type}` | `{rule.category_id}` |"
            f" {rule.category_name} | `{rule.type_name}` | {rule.context_for_sure_match} |"
        )
        assert row in README, f"README rule table lacks or misstates: {row}"
