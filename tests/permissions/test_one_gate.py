"""Only `permissions/` puts the tool-call question: no module outside it calls
`Approver.approve`, so a reviewer audits the gate in one file (`permissions/gate.py`)."""

from __future__ import annotations

import ast
from pathlib import Path

import agentls

SERVER = Path(agentls.__file__).parent
OTHER_APPROVALS = {"trust", "mcp_commands"}
"""Receivers of an `approve` that is not the tool-call question: the project trust store
(`extensions/trust.py`) and the terminal's `agentls mcp approve` command."""


def _receiver(node: ast.expr) -> str:
    """The last name of what a method is called on: `context.approver` -> `approver`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)


def approvals_outside_the_gate(root: Path) -> list[str]:
    """Each `x.approve(...)` call outside `permissions/`, as `path:line x`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "permissions":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "approve"
                and _receiver(node.func.value) not in OTHER_APPROVALS
            ):
                found.append(f"{relative}:{node.lineno} {ast.unparse(node.func.value)}")
    return found


def test_only_the_permission_gate_asks_the_approver() -> None:
    assert approvals_outside_the_gate(SERVER) == []


def test_the_scan_finds_a_tool_that_asks_for_itself(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "permissions").mkdir()
    asking = "async def run(context):\n    return await context.approver.approve('rm x')\n"
    (tmp_path / "tools" / "rogue.py").write_text(asking)
    (tmp_path / "permissions" / "gate.py").write_text(asking)
    (tmp_path / "tools" / "trusting.py").write_text("trust.approve('mcp', 'x', 'digest')\n")
    assert approvals_outside_the_gate(tmp_path) == ["tools/rogue.py:2 context.approver"]
