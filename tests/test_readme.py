"""The README stays a five-minute read that is true: at most 300 lines, the two commands, links that resolve, and
main knobs whose defaults are the code's (its HTTP example is checked against the bundled model by
``tests/system/test_readme_example.py``)."""

from __future__ import annotations

import re
from pathlib import Path

from service.config import Settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 300


def test_readme_shows_the_two_commands() -> None:
    assert "make serve" in README and "make test" in README


def test_every_link_resolves() -> None:
    targets = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [t.split("#")[0] for t in targets if not t.startswith(("http://", "https://"))]
    assert local, "the README links no page"
    missing = [target for target in local if not (ROOT / target).exists()]
    assert not missing, f"the README links files that do not exist: {missing}"


def test_the_main_knobs_have_the_codes_defaults() -> None:
    """Each row of the knobs table names settings that exist, with their defaults in order (unset for None)."""
    rows = re.findall(r"^\| ((?:`GECSERVE_\w+`(?:, )?)+) \| ([^|]+) \|", README, flags=re.MULTILINE)
    assert len(rows) >= 10
    fields = Settings.model_fields
    for names, defaults in rows:
        settings = re.findall(r"`GECSERVE_(\w+)`", names)
        shown = [d.strip() for d in re.findall(r"`([^`]*)`|unset", defaults)]
        if defaults.strip().startswith("unset"):
            assert all(fields[s.lower()].default is None for s in settings), names
            continue
        expected = [
            "models/gec-default" if s.lower() == "model_path" else str(fields[s.lower()].default) for s in settings
        ]
        assert shown == expected, names
