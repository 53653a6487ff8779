"""The sizes the code keeps (CONTRIBUTING.md, "Where a change goes"): a function fits on a
screen, the agent loop's files are each read in one sitting, and few modules lie loose at
the top of the package."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
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


MAX_POSITIONAL_FIELDS = 5
"""Past five fields, two neighbours of one type (two booleans) swap silently when built by
position: such a dataclass takes keywords only."""


def _dataclasses() -> list[type]:
    found: list[type] = []
    for info in pkgutil.walk_packages([str(PACKAGE)], "agentls."):
        if info.name.endswith(("__main__", "ray_engine")):  # runs the CLI; needs Ray
            continue
        module = importlib.import_module(info.name)
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and dataclasses.is_dataclass(value)
            and value.__module__ == module.__name__
        ]
    return found


def test_a_dataclass_of_more_than_five_fields_takes_keywords_only() -> None:
    positional = [
        f"{kind.__module__}.{kind.__qualname__}"
        for kind in _dataclasses()
        if len([f for f in dataclasses.fields(kind) if f.init and not f.kw_only])
        > MAX_POSITIONAL_FIELDS
    ]
    assert positional == []


def _module_name(path: Path, root: Path) -> str:
    """`agentls.x.y` for a file of the package; the path's parts for a test or a bench."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    parts = parts[1:] if parts[0] == "server" else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> dict[str, str]:
    """What each name bound by `from … import …` (or a class statement) stands for, as
    `module.Name`: the calls of a file resolved to the class they build."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bound[node.name] = f"{module}.{node.name}"
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".")[: None if is_package else -1]
                here = here[: len(here) - node.level + 1]
                base = ".".join([*here, *([node.module] if node.module else [])])
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    return bound


def test_such_a_dataclass_is_built_with_keywords_everywhere() -> None:
    """Also where the type checker does not look (tests, bench): a call of the class, by its
    name or through its module, with positional arguments."""
    wide = {
        f"{kind.__module__}.{kind.__name__}"
        for kind in _dataclasses()
        if len([f for f in dataclasses.fields(kind) if f.init]) > MAX_POSITIONAL_FIELDS
    }
    root = PACKAGE.parents[1]
    calls = []
    for folder in ("server", "tests", "bench"):
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            bound = _imported(tree, _module_name(path, root), path.name == "__init__.py")
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                called = node.func
                if isinstance(called, ast.Name):
                    built = bound.get(called.id)
                elif isinstance(called, ast.Attribute) and isinstance(called.value, ast.Name):
                    built = f"{bound.get(called.value.id, called.value.id)}.{called.attr}"
                else:
                    continue
                if built in wide:
                    calls.append(f"{path.relative_to(root)}:{node.lineno} {built}")
    assert calls == []
