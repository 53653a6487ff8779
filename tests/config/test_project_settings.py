"""A repository's `.mcp.json` and `.agentls/settings.json`: read before anything in them is
approved, so bounded before they are parsed; a hostile one is ignored with why, never a
failed start."""

from __future__ import annotations

from pathlib import Path

from agentls.config import project_settings


def test_settings_files_nested_too_deep_or_too_large_are_ignored_with_why(
    tmp_path: Path,
) -> None:
    (tmp_path / ".agentls").mkdir()
    deep = '{"hooks": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}"
    (tmp_path / ".agentls" / "settings.json").write_text(deep)
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {}, "x": "' + "a" * 1_100_000 + '"}')
    loaded = project_settings.load(tmp_path)
    assert loaded.problems == (
        ".agentls/settings.json is ignored: it nests too deeply",
        f".mcp.json is ignored: it is 1,100,027 bytes, more than the {1024 * 1024:,} read",
    )
    assert loaded.hooks == {} and loaded.mcp_servers == {}
