"""Only `permissions/` puts the tool-call question: no module outside it calls the
approver's questions about a tool call (`Approver.approve`, and `AsksWrites.approve_write`
for an edit the editor cannot show), and the gate has one entry, `Gate.ask`, so a reviewer
audits the gate in one file (`permissions/gate.py`)."""

from __future__ import annotations

import ast
from pathlib import Path

import agentls

SERVER = Path(agentls.__file__).parent
QUESTIONS = {"approve", "approve_write"}
"""The approver's questions about a tool call."""
OTHER_APPROVALS = {"trust", "mcp_commands"}
"""Receivers of an `approve` that is not the tool-call question: the project trust store
(`extensions/trust.py`) and the terminal's `agentls mcp approve` command."""
GATE_USES = {"ask", "unreadable"}
"""What is asked of a gate outside `permissions/`: the one entry, and the rules a search
leaves out."""


def _receiver(node: ast.expr) -> str:
    """The last name of what a method is called on: `context.approver` -> `approver`,
    `context.gate()` -> `gate`."""
    if isinstance(node, ast.Call):
        return _receiver(node.func)
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)


def _method_calls(root: Path) -> list[tuple[str, ast.Attribute, int]]:
    """Each `x.method(...)` outside `permissions/`: its file, the method, its line."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "permissions":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                found.append((str(relative), node.func, node.lineno))
    return found


def approvals_outside_the_gate(root: Path) -> list[str]:
    """Each call of an approver's tool-call question outside `permissions/`, as
    `path:line x.question`."""
    return [
        f"{path}:{line} {ast.unparse(method)}"
        for path, method, line in _method_calls(root)
        if method.attr in QUESTIONS and _receiver(method.value) not in OTHER_APPROVALS
    ]


def gates_entered_elsewhere(root: Path) -> list[str]:
    """Each call on a gate (`gate`, `context.gate()`, `self.gate`) outside `permissions/`
    but its one entry (and `unreadable`), as `path:line x.method`."""
    return [
        f"{path}:{line} {ast.unparse(method)}"
        for path, method, line in _method_calls(root)
        if _receiver(method.value) == "gate" and method.attr not in GATE_USES
    ]


def test_only_the_permission_gate_asks_the_approver() -> None:
    assert approvals_outside_the_gate(SERVER) == []


def test_the_gate_has_one_entry() -> None:
    tree = ast.parse((SERVER / "permissions" / "gate.py").read_text(encoding="utf-8"))
    (gate,) = (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Gate")
    public = {
        n.name
        for n in gate.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_")
    }
    asynchronous = {n.name for n in gate.body if isinstance(n, ast.AsyncFunctionDef)}
    assert public & asynchronous == {"ask"}  # the one entry that may ask the user
    assert public == {"ask", "decision", "unreadable"}
    assert gates_entered_elsewhere(SERVER) == []


def test_the_scan_finds_a_tool_that_asks_for_itself(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "lsp").mkdir()
    (tmp_path / "permissions").mkdir()
    asking = "async def run(context):\n    return await context.approver.approve('rm x')\n"
    (tmp_path / "tools" / "rogue.py").write_text(asking)
    (tmp_path / "permissions" / "gate.py").write_text(asking)
    (tmp_path / "tools" / "trusting.py").write_text("trust.approve('mcp', 'x', 'digest')\n")
    (tmp_path / "lsp" / "writer.py").write_text("await self.approver.approve_write('x')\n")
    assert approvals_outside_the_gate(tmp_path) == [
        "lsp/writer.py:1 self.approver.approve_write",
        "tools/rogue.py:2 context.approver.approve",
    ]


def test_the_scan_finds_a_second_way_into_the_gate(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.py").write_text(
        "gate = context.gate()\ngate.check('Bash', {})\nawait context.gate().ask(request)\n"
        "context.gate().unreadable()\nawait self.gate.ask(request)\n"
    )
    assert gates_entered_elsewhere(tmp_path) == ["tools/run.py:2 gate.check"]
