"""The sizes the code keeps (CONTRIBUTING.md, "Where a change goes"): a function fits on a
screen, the agent loop's files are each read in one sitting, and few modules lie loose at
the top of the package."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "agentls"

MAX_FUNCTION_LINES = 80
LOOP_FILES = ["loop.py", "calls.py", "task_result.py", "budget.py", "context.py"]
"""`agent/loop.py` and the files the loop's turn and ends are written in."""
MAX_LOOP_FILE_LINES = 250
MAX_LOOSE_MODULES = 9


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    return [node for node in ast.walk(tree) if isinstance(node, kinds)]


def test_no_function_is_longer_than_a_screen() -> None:
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for function in _functions(ast.parse(path.read_text(encoding="utf-8"))):
            assert function.end_lineno is not None
            lines = function.end_lineno - function.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                long.append(f"{path.relative_to(PACKAGE)}:{function.lineno} {function.name}")
    assert long == [], f"functions over {MAX_FUNCTION_LINES} lines"


def test_the_loops_files_are_each_read_in_one_sitting() -> None:
    lines = {
        name: len((PACKAGE / "agent" / name).read_text(encoding="utf-8").splitlines())
        for name in LOOP_FILES
    }
    assert {name: n for name, n in lines.items() if n >= MAX_LOOP_FILE_LINES} == {}


def test_few_modules_lie_loose_at_the_top_of_the_package() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MAX_LOOSE_MODULES, loose
