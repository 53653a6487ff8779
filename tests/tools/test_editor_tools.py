"""The editor's eyes as tools: new problems after an edit, diagnostics, navigation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentls.interfaces import Place, Problem
from agentls.tools import OPTIONAL_TOOLS, ToolContext, run_tool
from doubles import LanguageServersDouble, results
from doubles import tool_context as context
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from lsprotocol import types


def eyes(root: Path, servers: LanguageServersDouble) -> ToolContext:
    ctx = context(root)
    ctx.extra_tools = OPTIONAL_TOOLS
    ctx.language = servers
    return ctx


async def test_an_edit_names_the_new_errors_and_warnings(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text("import os\nx = 1\n")
    unused = Problem(app, 1, "warning", "'os' imported but unused", "pyflakes")
    servers = LanguageServersDouble(
        [unused],
        [
            Problem(app, 2, "warning", "'os' imported but unused", "pyflakes"),
            Problem(app, 3, "error", "undefined name 'foo'", "pyflakes"),
            Problem(app, 3, "hint", "consider a docstring", "style"),
        ],
    )
    text, error = await run_tool(
        eyes(tmp_path, servers),
        "edit_file",
        {"path": "app.py", "old_text": "x = 1\n", "new_text": "\nx = foo\n"},
    )
    assert not error
    assert text == (
        "Edited app.py: 1 hunk accepted.\nNew problems the editor reports since this edit:\n"
        "app.py:3: error: undefined name 'foo' (pyflakes)"
    )
    assert servers.asked == [("problems", [app]), ("problems", [app])]


async def test_new_problems_are_capped(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text("x = 1\n")
    after = [Problem(app, n, "error", f"problem {n}") for n in range(1, 15)]
    ctx = eyes(tmp_path, LanguageServersDouble([], after))
    text, _ = await run_tool(ctx, "write_file", {"path": "app.py", "content": "y = 2\n"})
    lines = text.splitlines()
    assert lines[2] == "app.py:1: error: problem 1" and lines[11] == "app.py:10: error: problem 10"
    assert lines[12] == "(and 4 more: see the diagnostics tool)"


async def test_a_file_the_editor_did_not_know_before_gets_its_problems_told(
    tmp_path: Path,
) -> None:
    app = tmp_path / "app.py"
    servers = LanguageServersDouble(None, [Problem(app, 1, "error", "undefined name 'y'")])
    ctx = eyes(tmp_path, servers)
    text, _ = await run_tool(ctx, "write_file", {"path": "app.py", "content": "x = y\n"})
    assert text == (
        "Created app.py: 1 hunk accepted.\nProblems the editor reports in app.py now:\n"
        "app.py:1: error: undefined name 'y'"
    )


async def test_without_the_editors_eyes_nothing_is_asked_or_offered(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    servers = LanguageServersDouble([])
    ctx = context(tmp_path)
    ctx.language = servers
    text, _ = await run_tool(ctx, "write_file", {"path": "app.py", "content": "y\n"})
    assert text == "Edited app.py: 1 hunk accepted." and servers.asked == []
    text, error = await run_tool(ctx, "diagnostics", {})
    assert error and "unknown tool 'diagnostics'" in text


async def test_diagnostics_lists_the_workspaces_problems_sorted(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "sub/b.py"
    servers = LanguageServersDouble(
        [
            Problem(b, 2, "error", "bad"),
            Problem(a, 9, "warning", "meh", "pyflakes"),
            Problem(a, 1, "hint", "shown never"),
            Problem(Path("/elsewhere/c.py"), 1, "error", "outside"),
        ]
    )
    ctx = eyes(tmp_path, servers)
    assert await run_tool(ctx, "diagnostics", {}) == (
        "a.py:9: warning: meh (pyflakes)\nsub/b.py:2: error: bad",
        False,
    )
    await run_tool(ctx, "diagnostics", {"path": "sub/b.py"})
    assert servers.asked[-1] == ("problems", [b])


async def test_definition_and_references_point_at_the_symbol(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text("def greet(name):\n    return name\n")
    (tmp_path / "app.py").write_text("from lib import greet\nprint(greet('你好'))\n")
    servers = LanguageServersDouble([])
    servers.places_found = [
        Place(tmp_path / "lib.py", 1),
        Place(tmp_path / "lib.py", 1),
        Place(Path("/usr/lib/python3/site.py"), 4),
    ]
    ctx = eyes(tmp_path, servers)
    text, error = await run_tool(
        ctx, "definition", {"path": "app.py", "line": 2, "symbol": "greet"}
    )
    assert (text, error) == (
        "lib.py:1: def greet(name):\n[1 more outside the workspace, not shown]",
        False,
    )
    assert servers.asked[-1] == ("definition", tmp_path / "app.py", 2, "print(")
    text, error = await run_tool(
        ctx, "references", {"path": "app.py", "line": 1, "symbol": "nothing"}
    )
    assert error and "'nothing' is not on line 1, which reads: from lib import greet" in text


async def test_symbols_name_their_kind(tmp_path: Path) -> None:
    servers = LanguageServersDouble([])
    servers.symbols_found = [Place(tmp_path / "b.py", 3, "class Parser")]
    text, _ = await run_tool(eyes(tmp_path, servers), "symbols", {"query": "Pars"})
    assert text == "b.py:3: class Parser"


async def test_only_a_client_that_advertises_them_is_asked_and_offered_them(
    fake: FakeAnthropic, root: Path
) -> None:
    (root / "app.py").write_text("x = 1\n")
    edit = {"path": "app.py", "old_text": "x = 1", "new_text": "x = y"}
    fake.script(reply(tool_use("edit_file", edit)), reply(text("ok")))
    async with editor(root, fake.url) as client:
        await client.run_task("edit")
    assert not {"diagnostics", "definition"} & {t["name"] for t in fake.requests[0].body["tools"]}

    fake.reset()
    (root / "app.py").write_text("x = 1\n")
    fake.script(reply(tool_use("edit_file", edit)), reply(text("ok")))
    asked: list[Any] = []

    def advertise(capabilities: types.ClientCapabilities) -> None:
        capabilities.experimental = {"agentls": {"diagnostics": True}}

    async with editor(root, fake.url, capabilities=advertise) as client:

        @client.feature("agent/diagnostics")
        def diagnostics(params: Any) -> dict[str, Any]:
            asked.append(params)
            problems = [] if len(asked) == 1 else [_undefined_y]
            return {"items": [{"uri": client.uri(root / "app.py"), "diagnostics": problems}]}

        await client.run_task("edit")
    tools = {t["name"] for t in fake.requests[0].body["tools"]}
    assert "diagnostics" in tools and "definition" not in tools
    assert results(fake.requests[1].body["messages"])[0]["content"] == (
        "Edited app.py: 1 hunk accepted.\nNew problems the editor reports since this edit:\n"
        "app.py:1: error: undefined name 'y' (pyflakes)"
    )


_undefined_y = {
    "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}},
    "severity": 1,
    "message": "undefined name 'y'",
    "source": "pyflakes",
}


async def test_a_place_in_a_file_the_read_rules_keep_back_is_named_without_its_text(
    tmp_path: Path,
) -> None:
    # A hostile server answers `definition` with places in a denied file, a `.env.*` file (whose
    # values agentls does not redact) and a link to one: their lines are not read out.
    from agentls.permissions.rules import parse_rules

    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "keys.py").write_text("VAULT_KEY = 'vault-0123456789'\n")
    (tmp_path / ".env.local").write_text("DEPLOY_TOKEN=deploy-0123456789\n")
    (tmp_path / "config.py").symlink_to(".env.local")
    (tmp_path / "app.py").write_text("greet()\n")
    servers = LanguageServersDouble([])
    servers.places_found = [
        Place(tmp_path / "vault" / "keys.py", 1),
        Place(tmp_path / ".env.local", 1),
        Place(tmp_path / "config.py", 1),
        Place(tmp_path / "app.py", 1),
    ]
    ctx = context(tmp_path, permissions=parse_rules({"deny": ["Read(vault/**)"]}))
    ctx.extra_tools, ctx.language = OPTIONAL_TOOLS, servers
    text, error = await run_tool(
        ctx, "definition", {"path": "app.py", "line": 1, "symbol": "greet"}
    )
    assert not error and "0123456789" not in text, text
    assert text.splitlines() == [
        ".env.local:1:",
        "app.py:1: greet()",
        "config.py:1:",
        "vault/keys.py:1:",
    ]
