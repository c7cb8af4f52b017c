"""The README stays true: its configuration table lists every setting with its default."""

from __future__ import annotations

from pathlib import Path

from service.config import Settings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_in_the_configuration_table() -> None:
    for name, field in Settings.model_fields.items():
        default = "models/gec-default" if name == "model_path" else field.default
        row = f"| `GECSERVE_{name.upper()}` | `{default}` |"
        assert row in README, f"README configuration table lacks or misstates: {row}"


def test_readme_shows_the_two_commands() -> None:
    assert "make serve" in README and "make test" in README
