"""No function in ``service/`` is over 80 lines (the project's style rule), counted from its ``def`` line to its last
line, decorators left out; nested functions count on their own and inside the function that holds them."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parent.parent / "service"
MAX_LINES = 80


def long_functions(root: Path, limit: int) -> list[str]:
    """``path:line name (N lines)`` of every function under ``root`` longer than ``limit`` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > limit:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_in_service_is_over_80_lines() -> None:
    assert long_functions(SERVICE, MAX_LINES) == []


def test_a_function_one_line_over_is_found(tmp_path: Path) -> None:
    def body(lines: int, indent: str) -> str:
        return "".join(f"{indent}x{i} = {i}\n" for i in range(lines))

    (tmp_path / "long.py").write_text("class C:\n    @staticmethod\n    async def long():\n" + body(MAX_LINES, " " * 8))
    (tmp_path / "short.py").write_text("def short():\n" + body(MAX_LINES - 1, " " * 4))
    assert long_functions(tmp_path, MAX_LINES) == ["long.py:3 long (81 lines)"]
