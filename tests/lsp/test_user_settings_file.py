"""One settings file for every door (issue 40, row 5): `~/.config/agentls/settings.json`
applies in the LSP door too (Neovim, VS Code), the editor's own settings winning key by key."""

from __future__ import annotations

import json
from pathlib import Path

from editor_client import editor
from fake_api import FakeAnthropic, reply, text


async def test_the_users_settings_file_applies_under_the_editors_own(
    root: Path, fake: FakeAnthropic
) -> None:
    config = root.parent / "config" / "agentls"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(
        json.dumps({"model": "claude-from-file", "maxTokens": 1234})
    )
    fake.script(reply(text("one")), reply(text("two")))
    async with editor(root, fake.url, process=True) as client:
        assert (await client.run_task("go"))["status"] == "done"
    async with editor(
        root,
        fake.url,
        process=True,
        initialization={"approveCommands": "always", "model": "claude-from-editor"},
    ) as client:
        assert (await client.run_task("go"))["status"] == "done"
    from_file, from_editor = (request.body for request in fake.requests)
    assert (from_file["model"], from_file["max_tokens"]) == ("claude-from-file", 1234)
    assert (from_editor["model"], from_editor["max_tokens"]) == ("claude-from-editor", 1234)
