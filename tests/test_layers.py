"""The layers hold: every module's imports, read with ``ast`` (inside functions too, and the modules a module imports
by name through ``importlib``), against one ordered list of layers, ``LAYERS``, from the ground up.

- A module may import its own package (its entry in ``LAYERS``) and any package of a layer below its own: never one
  above (no import runs back up, so no two packages import each other) nor another package of its own layer (a
  layer's packages stand apart). Every module of ``service/``, ``models/``, ``tools/`` and ``bench/`` lies in one
  layer, and each name it imports from them too; ``tests/`` lies in none, so nothing imports the tests.
- A module that imports by name (``importlib.import_module``: the command table of ``service/cli.py``) imports
  every project module a string of it names.
- The outer edges ask more: ``models/`` and ``tools/`` use the service only through ``service.engine`` and
  ``service.text``; the benchmarks that start no server (``bench/engine/``) import no ``service.api`` and none of
  those that do (``bench.served``, ``bench.heap_diff``); the served ones (``bench/served/``) use no ``service.api``
  internals, only ``service.api.grpc.proto``, the generated gRPC code that is the public wire contract;
  ``service.engine`` uses no other part of the service than itself and ``service.text``, and ``service.text`` only
  itself (not even the ground below them: they are libraries that ``models/`` and ``tools/`` use alone); neither
  imports asyncio, a web framework or Redis.
- The architecture page's table of layers (docs/architecture.md, "The layers") is this list.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("service", "models", "tools", "bench")  # the project's code; ``tests/`` may import all of it

# The layers, from the ground up: (name, the packages or modules in it).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "ground",
        (
            "service.config",
            "service.observability",
            "service.redis_pool",
            "service.redis_keys",
            "service.error_reasons",
        ),
    ),
    ("text", ("service.text",)),
    ("engine", ("service.engine",)),
    ("batching", ("service.batching",)),
    ("inference", ("service.inference",)),
    ("experiments", ("service.experiments",)),
    ("repository", ("service.repository",)),
    ("pipeline", ("service.pipeline",)),
    ("start-up", ("service.wiring", "service.startup")),
    ("api entry", ("service.api",)),
    ("access", ("service.api.access",)),
    ("protocols", ("service.api.grpc", "service.api.languagetool")),
    ("http", ("service.api.http",)),
    ("serve", ("service.api.server",)),
    ("commands", ("service.commands", "service.worker", "service.engine_process", "models", "tools")),
    ("benchmarks", ("bench",)),
    ("command line", ("service.cli",)),
)
_PROJECT_MODULE = re.compile(r"(service|models|tools|bench|tests)(\.[A-Za-z_]\w*)+")


def _under(name: str, *prefixes: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def place(name: str) -> tuple[int, str] | None:
    """``(layer index, package)`` of a module or of a name in one (the longest package it is under); None outside
    every layer."""
    found = [(index, package) for index, (_, packages) in enumerate(LAYERS) for package in packages]
    under = [(index, package) for index, package in found if _under(name, package)]
    return max(under, key=lambda entry: len(entry[1]), default=None)


def _imports_by_name(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "import_module"
        for node in ast.walk(tree)
    )


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, name)`` of everything ``path`` imports: a module, or ``module.name`` for ``from module import
    name`` (which may be a submodule); relative imports resolved against the file's package; and, where the module
    imports by name, each string naming a project module."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    by_name = _imports_by_name(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        elif by_name and isinstance(node, ast.Constant) and _PROJECT_MODULE.fullmatch(str(node.value)):
            yield node.lineno, node.value


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> list[Path]:
    """Every module of the project's code but the package ``service`` itself (its docstring) and generated code."""
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "proto" not in path.relative_to(ROOT).parts and module_name(path) != "service":
                found.append(path)
    return found


def _forbidden(module: str, name: str) -> str | None:
    """Why ``module`` may not import ``name``; None when it may."""
    if name.split(".")[0] not in (*FOLDERS, "tests"):
        return None  # not the project's
    own, other = place(module), place(name)
    if own is None:
        return f"{module} is in no layer"
    if other is None:
        return "in no layer"
    if other[1] == own[1]:
        return None
    if other[0] == own[0]:
        return f"beside it, in {LAYERS[own[0]][0]}"
    if other[0] > own[0]:
        return f"above it: {LAYERS[other[0]][0]} over {LAYERS[own[0]][0]}"
    return None


def layer_violations() -> list[str]:
    """``path:line name (why)`` of every import that breaks the order of ``LAYERS``."""
    found = []
    for path in modules():
        module = module_name(path)
        for line, name in imported(path):
            why = _forbidden(module, name)
            if why is not None:
                found.append(f"{path.relative_to(ROOT)}:{line} {name} ({why})")
    return found


def circles() -> list[list[str]]:
    """Circles of modules importing each other (the layers allow both ways within a package): none when there is
    none, else one at least through the first module (in order) of each, as the modules on it from that one; a name
    imported resolves to the longest module it is in."""
    paths = {module_name(path): path for path in modules()}

    def target(name: str) -> str | None:
        parts = name.split(".")
        return next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in paths), None)

    graph = {module: {target(name) for _, name in imported(path)} - {None, module} for module, path in paths.items()}
    found, done = [], set()
    for start in sorted(graph):
        stack, path_to = [start], {start: [start]}
        while stack:
            module = stack.pop()
            for following in sorted(m for m in graph[module] if m is not None):
                if following == start:
                    found.append(path_to[module])
                elif following not in path_to and following not in done:
                    path_to[following] = [*path_to[module], following]
                    stack.append(following)
        done.add(start)
    return found


def test_no_import_runs_back_up_the_layers() -> None:
    assert {"service.cli", "service.config", "models", "tools", "bench.latency"} <= set(map(module_name, modules()))
    assert layer_violations() == []


def test_no_modules_import_each_other() -> None:
    assert circles() == []


def test_every_package_of_a_layer_is_there() -> None:
    for _, packages in LAYERS:
        for package in packages:
            path = ROOT / package.replace(".", "/")
            assert path.is_dir() or path.with_suffix(".py").is_file(), package


def test_the_architecture_page_lists_these_layers() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("\n## The layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    listed = []
    for row in rows:
        _, number, name, packages, _ = (cell.strip() for cell in row.split("|", 4))
        listed.append((int(number), name, tuple(re.findall(r"`([\w.]+)`", packages))))
    assert listed == [(index + 1, name, packages) for index, (name, packages) in enumerate(LAYERS)]


# -- the outer edges ------------------------------------------------------------------------------


def _service_below(*allowed: str) -> Callable[[str], bool]:
    """Forbids any ``service`` import but those under ``allowed``."""
    return lambda name: _under(name, "service") and not _under(name, *allowed)


def _no_api_internals(name: str) -> bool:
    return _under(name, "service.api") and not _under(name, "service.api.grpc.proto")


def _no_server(name: str) -> bool:
    """Forbids the API and the benchmarks that start or run a server."""
    return _under(name, "service.api", "bench.served", "bench.heap_diff")


_NO_SERVING_STACK = ("asyncio", "fastapi", "starlette", "uvicorn", "grpc", "redis")

EDGES: dict[str, Callable[[str], bool]] = {
    "models": _service_below("service.engine", "service.text"),
    "tools": _service_below("service.engine", "service.text"),
    "bench/engine": _no_server,
    "bench/served": _no_api_internals,
    "service/engine": lambda name: (
        _service_below("service.engine", "service.text")(name) or _under(name, *_NO_SERVING_STACK)
    ),
    "service/text": lambda name: _service_below("service.text")(name) or _under(name, *_NO_SERVING_STACK),
}


def edge_violations(folder: str, forbidden: Callable[[str], bool]) -> list[str]:
    """``path:line name`` of every forbidden import in the modules under ``folder``."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if "proto" in path.relative_to(ROOT).parts:  # generated gRPC code
            continue
        found += [f"{path.relative_to(ROOT)}:{line} {name}" for line, name in imported(path) if forbidden(name)]
    return found


@pytest.mark.parametrize("folder", list(EDGES))
def test_each_outer_edge_imports_only_what_it_may(folder: str) -> None:
    assert (ROOT / folder).is_dir()
    assert edge_violations(folder, EDGES[folder]) == []


# -- the checks fail where they should ------------------------------------------------------------


def _write(root: Path, modules: dict[str, str]) -> None:
    for relative, source in modules.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def test_the_reader_sees_every_kind_of_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    _write(
        tmp_path,
        {
            "models/gec/tool.py": "import service.engine.engine\n"
            "from service.text import units\n"
            "from service import config\n"
            "from .sibling import name\n"
            "def late():\n"
            "    from service.commands.correct import main\n",
            "service/cli.py": "import importlib\n"
            'TABLE = {"serve": ("service.api.server", "run it"), "note": "service.api is not a name"}\n'
            "def main(name):\n"
            "    return importlib.import_module(TABLE[name][0])\n",
            "bench/served/spawn.py": 'COMMAND = ["python", "-m", "service.cli"]  # a process started, not an import\n',
            "bench/engine/decoding.py": "from bench.latency import latency_summary\n"
            "from service.api import server\n"
            "from bench.served.spawn import start_server\n",
        },
    )
    assert [name for _, name in imported(tmp_path / "models/gec/tool.py")] == [
        "service.engine.engine",
        "service.text.units",
        "service.config",
        "models.gec.sibling.name",
        "service.commands.correct.main",
    ]
    assert list(imported(tmp_path / "service/cli.py")) == [(1, "importlib"), (2, "service.api.server")]
    assert list(imported(tmp_path / "bench/served/spawn.py")) == []
    assert edge_violations("models", EDGES["models"]) == [
        "models/gec/tool.py:3 service.config",
        "models/gec/tool.py:6 service.commands.correct.main",
    ]
    assert _no_api_internals("service.api.access.auth.hash_key") and not _no_api_internals(
        "service.api.grpc.proto.gecserve_pb2"
    )
    assert edge_violations("bench/engine", EDGES["bench/engine"]) == [
        "bench/engine/decoding.py:2 service.api.server",
        "bench/engine/decoding.py:3 bench.served.spawn.start_server",
    ]


def test_an_import_back_up_the_layers_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deliberately wrong imports, each reported with its line and why: up a layer (plainly, inside a function, by
    name through ``importlib``, a circle's upward half), beside it in its own layer, and from or to no layer."""
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    _write(
        tmp_path,
        {
            "service/config.py": "from pathlib import Path\nfrom service.repository.sources import model_sources\n",
            "service/repository/sources.py": "from service.config import Settings\n",
            "service/engine/engine.py": "from service.text.units import Unit\n"
            "def run():\n"
            "    from service.pipeline.pipeline import Pipeline\n",
            "service/pipeline/late.py": "import importlib\n"
            "def app():\n"
            '    return importlib.import_module("service.api.http.app")\n',
            "service/observability/metrics.py": "from service.redis_pool import redis_client\n",
            "service/api/access/control.py": "from service.api.http.app import create_app\n",
            "service/routing/route.py": "from service.engine.engine import Engine\n",
            "service/text/units.py": "from service.text.spans import Span\nimport tests.conftest\n",
            "service/text/spans.py": "def late():\n    from service.text import units\n",
            "service/cli.py": "import importlib\n"
            'COMMANDS = {"serve": "service.api.server", "bench": "bench.served.serve", "eval": "models.gec.evaluate"}\n'
            "def main(name):\n"
            "    return importlib.import_module(COMMANDS[name])\n",
        },
    )
    assert layer_violations() == [
        "service/api/access/control.py:1 service.api.http.app.create_app (above it: http over access)",
        "service/config.py:2 service.repository.sources.model_sources (above it: repository over ground)",
        "service/engine/engine.py:3 service.pipeline.pipeline.Pipeline (above it: pipeline over engine)",
        "service/observability/metrics.py:1 service.redis_pool.redis_client (beside it, in ground)",
        "service/pipeline/late.py:3 service.api.http.app (above it: http over pipeline)",
        "service/routing/route.py:1 service.engine.engine.Engine (service.routing.route is in no layer)",
        "service/text/units.py:2 tests.conftest (in no layer)",
    ]
    assert circles() == [["service.config", "service.repository.sources"], ["service.text.spans", "service.text.units"]]
