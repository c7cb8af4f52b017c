"""The runtime imports only what the project declares: every third-party module ``service/`` imports (read with
``ast``, inside functions too) belongs to a distribution in ``[project] dependencies``, or one that those require.
A package that only the dev or build extras install (and the tests therefore find) would fail the image.
The benchmarks (``bench/``) lie outside ``service/``: they run where the dev and build extras are (CTranslate2,
matplotlib), and import them where they are used."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

from tests.test_layers import ROOT, imported


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def runtime_distributions() -> set[str]:
    """The declared runtime dependencies and everything they require (extras and markers left out)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    found, todo = set(), [_name(requirement) for requirement in declared]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            continue
        todo += [_name(need) for need in needs if "extra ==" not in need]
    return found


def test_every_third_party_module_the_service_imports_is_a_runtime_dependency() -> None:
    distributions = {module: [_name(d) for d in names] for module, names in packages_distributions().items()}
    runtime = runtime_distributions()
    missing = []
    for path in sorted((ROOT / "service").rglob("*.py")):
        for line, name in imported(path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top == "__future__" or top not in distributions:
                continue
            if "gecserve" in distributions[top]:  # the project's own packages (the command table names models/...)
                continue
            if not runtime.intersection(distributions[top]):
                missing.append(f"{Path(path).relative_to(ROOT)}:{line} {top} ({', '.join(distributions[top])})")
    assert missing == [], f"imported by the service but not a runtime dependency: {missing}"
