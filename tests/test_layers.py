"""The layers hold: every module's imports, read with ``ast`` (inside functions too), against what its layer may use.

- ``models/`` and ``tools/`` use the service only through its lower layers, ``service.engine`` and ``service.text``
  (never the commands, the benchmarks, the request path or the APIs);
- ``loadtest/`` uses no ``service.api`` internals: only ``service.api.proto``, the generated gRPC code that is the
  public wire contract;
- ``service.engine`` uses no other part of the service than itself and ``service.text``, and ``service.text`` only
  itself; neither imports asyncio, a web framework or Redis;
- ``service/`` imports nothing of ``models``, ``loadtest``, ``tools`` or ``tests``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _under(name: str, *prefixes: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, name)`` of everything ``path`` imports: a module, or ``module.name`` for ``from module import
    name`` (which may be a submodule); relative imports resolved against the file's package."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)


def _service_below(*allowed: str) -> Callable[[str], bool]:
    """Forbids any ``service`` import but those under ``allowed``."""
    return lambda name: _under(name, "service") and not _under(name, *allowed)


def _no_api_internals(name: str) -> bool:
    return _under(name, "service.api") and not _under(name, "service.api.proto")


_NO_SERVING_STACK = ("asyncio", "fastapi", "starlette", "uvicorn", "grpc", "redis")

RULES: dict[str, Callable[[str], bool]] = {
    "models": _service_below("service.engine", "service.text"),
    "tools": _service_below("service.engine", "service.text"),
    "loadtest": _no_api_internals,
    "service/engine": lambda name: (
        _service_below("service.engine", "service.text")(name) or _under(name, *_NO_SERVING_STACK)
    ),
    "service/text": lambda name: _service_below("service.text")(name) or _under(name, *_NO_SERVING_STACK),
    "service": lambda name: _under(name, "models", "loadtest", "tools", "tests"),
}


def violations(folder: str, forbidden: Callable[[str], bool]) -> list[str]:
    """``path:line name`` of every forbidden import in the modules under ``folder``."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if "proto" in path.relative_to(ROOT).parts:  # generated gRPC code
            continue
        found += [f"{path.relative_to(ROOT)}:{line} {name}" for line, name in imported(path) if forbidden(name)]
    return found


@pytest.mark.parametrize("folder", list(RULES))
def test_each_layer_imports_only_what_it_may(folder: str) -> None:
    assert (ROOT / folder).is_dir()
    assert violations(folder, RULES[folder]) == []


def test_the_reader_sees_every_kind_of_import(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    module = tmp_path / "models" / "gec" / "tool.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "import service.engine.engine\n"
        "from service.text import units\n"
        "from service import config\n"
        "from .sibling import name\n"
        "def late():\n"
        "    from service.commands.correct import main\n"
    )
    assert [name for _, name in imported(module)] == [
        "service.engine.engine",
        "service.text.units",
        "service.config",
        "models.gec.sibling.name",
        "service.commands.correct.main",
    ]
    assert violations("models", RULES["models"]) == [
        "models/gec/tool.py:3 service.config",
        "models/gec/tool.py:6 service.commands.correct.main",
    ]
    assert _no_api_internals("service.api.auth.hash_key") and not _no_api_internals("service.api.proto.gecserve_pb2")
