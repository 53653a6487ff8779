"""End to end: the real server process, a scripted editor, the real SDK against the fake API."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from doubles import results, running_argv, unique_seconds
from editor_client import EditorClient, approves_commands, editor, without_annotations
from fake_api import (
    FakeAnthropic,
    auth_error,
    overloaded,
    rate_limited,
    reply,
    text,
    tool_use,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from scripts import SOURCE, echo_result, result_text


@pytest.mark.parametrize("flavour", ["vscode", "neovim"])
async def test_edit_accepted_on_an_open_document(
    fake: FakeAnthropic, root: Path, flavour: str
) -> None:
    path = root / "app.py"
    path.write_text(SOURCE)
    fake.script(
        reply(
            tool_use(
                "edit_file",
                {"path": "app.py", "old_text": "'你好 😀'", "new_text": "'你好 🎉 世界'"},
            )
        ),
        echo_result,
    )
    async with editor(root, fake.url, flavour=flavour) as client:
        uri = client.open(path)
        result = await client.run_task("change the greeting", uri=uri)
        assert result["status"] == "done"
        assert result["edits"] == {"applied": 1, "rejected": 0, "partly": 0}
        # The words every front end shows for the end, as the progress's end has them.
        assert result["outcome"].startswith("done · 2 steps · 1 edit · ")
        (request,) = client.edit_requests
        assert request.label == "edit_file: app.py"
        expected = SOURCE.replace("你好 😀", "你好 🎉 世界")
        assert client.documents[uri][0] == expected
        assert path.read_text() == expected
    assert fake.requests[-1].body["messages"][-1]["content"][0]["content"] == (
        "Edited app.py: 1 hunk accepted."
    )
    assert result["summary"] == "told: Edited app.py: 1 hunk accepted."


async def test_edit_rejected_leaves_the_file_alone(
    fake: FakeAnthropic, root: Path, lsp_editor: EditorClient
) -> None:
    path = root / "app.py"
    path.write_text(SOURCE)
    fake.script(
        reply(
            tool_use(
                "edit_file", {"path": "app.py", "old_text": "value = 1", "new_text": "value = 2"}
            )
        ),
        echo_result,
    )
    lsp_editor.review = lambda uri, edits: [False] * len(edits)
    uri = lsp_editor.open(path)
    result = await lsp_editor.run_task("change it", uri=uri)
    assert result["edits"] == {"applied": 0, "rejected": 1, "partly": 0}
    assert path.read_text() == SOURCE
    (told,) = results(fake.requests[-1].body["messages"])
    assert told["is_error"] is True
    assert told["content"] == (
        "The edit of app.py was not applied: the user rejected it. The file is unchanged."
    )


async def test_edit_partly_accepted_says_which_hunks(fake: FakeAnthropic, root: Path) -> None:
    path = root / "app.py"
    path.write_text(SOURCE)
    new = SOURCE.replace("def greet", "def hello").replace("other = 2", "other = 3")
    fake.script(reply(tool_use("write_file", {"path": "app.py", "content": new})), echo_result)
    async with editor(root, fake.url) as client:
        client.review = lambda uri, edits: [True, False]
        uri = client.open(path)
        result = await client.run_task("rename", uri=uri)
        (request,) = client.edit_requests
        (document_edit,) = request.edit.document_changes
        assert document_edit.text_document.version == 1
        annotations = request.edit.change_annotations
        assert [a.needs_confirmation for a in annotations.values()] == [True, True]
        # The editor shows each hunk in the words the model is told of it.
        assert [a.label for a in annotations.values()] == [
            "hunk 1 of 2: change of line 1",
            "hunk 2 of 2: change of line 5",
        ]
        assert [e.annotation_id for e in document_edit.edits] == list(annotations)
    assert path.read_text() == SOURCE.replace("def greet", "def hello")
    assert result_text(fake.requests[-1].body) == (
        "Edited app.py: 1 of 2 hunks accepted. Rejected:\n- change of line 5, which proposed:\n"
        "other = 3"
    )
    assert result["edits"] == {"applied": 1, "rejected": 0, "partly": 1}


async def test_write_file_new_and_existing_closed_files(fake: FakeAnthropic, root: Path) -> None:
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    fake.script(
        reply(tool_use("write_file", {"path": "docs/new.md", "content": "# New\n"})),
        reply(tool_use("write_file", {"path": "notes.txt", "content": "one\n2\nthree\n"})),
        reply(tool_use("bash", {"command": "cat docs/new.md notes.txt"})),
        echo_result,
    )
    async with editor(root, fake.url, capabilities=without_annotations) as client:
        client.save = False  # the server writes files the editor does not have open
        result = await client.run_task("write")
        create, edit = client.edit_requests
        assert isinstance(create.edit.document_changes[0], types.CreateFile)
        (hunk,) = edit.edit.document_changes[0].edits
        assert (hunk.range.start.line, hunk.range.end.line, hunk.new_text) == (1, 2, "2\n")
    assert result["summary"] == "told: exit code 0\n# New\none\n2\nthree"
    assert result["edits"] == {"applied": 2, "rejected": 0, "partly": 0}


async def test_changes_without_document_changes_support(fake: FakeAnthropic, root: Path) -> None:
    """`changes` holds plain TextEdits (the LSP annotates only documentChanges), even for a
    client that supports change annotations."""
    path = root / "a.txt"
    path.write_text("x\n")

    def plain(capabilities: types.ClientCapabilities) -> None:
        capabilities.workspace.workspace_edit.document_changes = False  # type: ignore[union-attr]

    fake.script(
        reply(tool_use("edit_file", {"path": "a.txt", "old_text": "x", "new_text": "y"})),
        reply(text("ok")),
    )
    async with editor(root, fake.url, capabilities=plain) as client:
        client.open(path)
        await client.run_task("edit")
        (request,) = client.edit_requests
        assert request.edit.document_changes is None
        ((_uri, (edit,)),) = request.edit.changes.items()
        assert isinstance(edit, types.TextEdit) and not isinstance(edit, types.AnnotatedTextEdit)
        assert request.edit.change_annotations is None
    assert path.read_text() == "y\n"


async def test_unsaved_edit_is_reported_to_the_model(fake: FakeAnthropic, root: Path) -> None:
    path = root / "a.py"
    path.write_text("a = 1\n")
    asked: list[float] = []

    def edit(body: dict[str, Any]) -> Any:
        asked.append(time.monotonic())
        return reply(tool_use("edit_file", {"path": "a.py", "old_text": "1", "new_text": "2"}))

    def echo(body: dict[str, Any]) -> Any:
        asked.append(time.monotonic())
        return echo_result(body)

    fake.script(edit, echo)
    async with editor(root, fake.url) as client:
        client.save = False
        uri = client.open(path)
        await client.run_task("edit", uri=uri)
        # applied: true is believed: nothing waits for a save or a didChange that never comes.
        assert asked[1] - asked[0] < 6
        assert client.documents[uri][0] == "a = 2\n"
    assert path.read_text() == "a = 1\n"
    assert "unsaved buffer of a.py" in result_text(fake.requests[-1].body)


async def test_read_file_sees_unsaved_text_and_context_goes_along(
    fake: FakeAnthropic, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("on disk\n")
    fake.script(reply(tool_use("read_file", {"path": "a.py"})), echo_result)
    async with editor(root, fake.url) as client:
        uri = client.open(path, "x = '😀' + '中文'\ny = 2\n")
        # UTF-16: the emoji takes two units, so the selection starts at 11, not 10.
        selection = {"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 15}}
        result = await client.run_task("explain", uri=uri, selection=selection)
    assert result["summary"] == "told: 1\tx = '😀' + '中文'\n2\ty = 2"
    task = fake.requests[0].body["messages"][0]["content"][0]["text"]
    assert "Open file: a.py (python)" in task and "Cursor on line 1." in task
    assert "Selected lines 1-1:\n```\n'中文'\n```" in task
    assert task.endswith("explain")


async def test_progress_with_a_client_token(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(tool_use("bash", {"command": "echo hi"})), reply(text("all done")))
    async with editor(root, fake.url) as client:
        client.progress_reports["my-token"] = []
        await client.run_task("go", token="my-token")
        reports = client.progress_reports["my-token"]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert (reports[0].title, reports[0].cancellable) == ("agent", True)
    assert [r.message for r in reports[1:-1]] == ["bash: echo hi"]
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert reports[-1].message.startswith("done · 2 steps · 0 edits · ")
    assert "".join(client.texts) == "all done"
    assert [s["state"] for s in client.steps] == ["started", "succeeded"]


async def test_progress_without_a_client_token(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(tool_use("list_files", {})), reply(text("ok")))
    async with editor(root, fake.url) as client:
        await client.run_task("go")
        ((token, reports),) = client.progress_reports.items()
    assert token.startswith("agentls-")
    assert [type(r).__name__ for r in reports] == [
        "WorkDoneProgressBegin",
        "WorkDoneProgressReport",
        "WorkDoneProgressEnd",
    ]
    assert reports[1].message == "list_files"


async def _start_long_bash(
    client: EditorClient, fake: FakeAnthropic, token: str | None = None
) -> tuple[str, asyncio.Future[Any], str]:
    """Starts a task whose bash step runs `sleep seconds` (found by that, sandboxed or not)."""
    seconds = unique_seconds()
    fake.script(reply(tool_use("bash", {"command": f"sleep {seconds}"})), reply(text("after")))
    request_id, answer = client.start_task("sleep", token=token)
    deadline = time.monotonic() + 30  # spawn and SDK import included, on a loaded machine
    while not running_argv("sleep", seconds):
        assert time.monotonic() < deadline, "the bash step never started"
        await asyncio.sleep(0.02)
    return request_id, answer, seconds


@pytest.mark.parametrize("route", ["agent.cancel", "progress", "cancelRequest"])
async def test_cancel_stops_the_task_and_kills_bash(
    fake: FakeAnthropic, root: Path, route: str
) -> None:
    async with editor(root, fake.url) as client:
        client.progress_reports["tok"] = []
        request_id, answer, seconds = await _start_long_bash(client, fake, token="tok")
        started = time.monotonic()
        if route == "agent.cancel":
            assert await client.command("agent.cancel") == {"cancelled": True}
        elif route == "progress":
            client.protocol.notify(
                types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
                types.WorkDoneProgressCancelParams(token="tok"),
            )
        else:
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
        if route == "cancelRequest":
            with pytest.raises(JsonRpcException) as refused:
                await answer
            assert refused.value.code == -32800  # RequestCancelled
        else:
            result = await answer
            assert result["status"] == "cancelled"
        while running_argv("sleep", seconds):
            assert time.monotonic() - started < 2, "bash still runs"
            await asyncio.sleep(0.02)
        # No further model call was made, and the server takes the next task.
        await asyncio.sleep(0.3)
        assert len(fake.requests) == 1
        fake.script(reply(text("next")))
        assert (await client.run_task("again"))["status"] == "done"
    (cancelled,) = results(fake.requests[-1].body["messages"])
    assert cancelled["is_error"] and "Cancelled" in cancelled["content"]


async def test_second_task_is_refused_while_one_runs(fake: FakeAnthropic, root: Path) -> None:
    async with editor(root, fake.url) as client:
        _, first, _seconds = await _start_long_bash(client, fake)
        with pytest.raises(JsonRpcException, match="already running"):
            await client.run_task("second")
        assert not first.done()
        await client.command("agent.cancel")
        assert (await first)["status"] == "cancelled"


async def test_rate_limits_and_overload_are_retried(fake: FakeAnthropic, root: Path) -> None:
    fake.script(rate_limited(), overloaded(), reply(text("made it")))
    async with editor(root, fake.url) as client:
        result = await client.run_task("go")
    assert (result["status"], result["summary"]) == ("done", "made it")
    assert len(fake.requests) == 3


async def test_bad_key_fails_clearly_and_the_server_survives(
    fake: FakeAnthropic, root: Path
) -> None:
    fake.script(auth_error())
    async with editor(root, fake.url) as client:
        result = await client.run_task("go")
        assert result["status"] == "failed"
        (message,) = [m for m in client.messages if m.type == types.MessageType.Error]
        assert "401" in message.message and "ANTHROPIC_API_KEY" in message.message
        assert "test-key-123" not in message.message
        fake.script(reply(text("fine now")))
        assert (await client.run_task("again"))["status"] == "done"
    assert len(fake.requests) == 2  # a 401 is not retried


async def test_missing_key_says_what_to_do(fake: FakeAnthropic, root: Path) -> None:
    # Not on loopback, where a local server wants no key.
    hosted = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "https://api.anthropic.invalid"}
    async with editor(root, fake.url, env=hosted) as client:
        result = await client.run_task("go")
        assert result["status"] == "failed"
        assert result["outcome"] == ("failed · 0 steps · 0 edits · 0 tokens")
        assert "Set ANTHROPIC_API_KEY" in client.messages[-1].message


async def test_key_from_the_users_config_file_never_from_the_workspace(
    fake: FakeAnthropic, root: Path
) -> None:
    """The user's config `.env` gives the key and the endpoint; the workspace's `.env` (the
    repository's) configures nothing, and its secrets are redacted too."""
    config = root.parent / "config" / "agentls"
    config.mkdir(parents=True)
    (config / ".env").write_text(
        f"ANTHROPIC_API_KEY=from-config-file\nANTHROPIC_BASE_URL={fake.url}\n"
        "AGENTLS_MODEL=claude-from-config\n"
    )
    (root / ".env").write_text(
        "ANTHROPIC_API_KEY=from-the-repository\nANTHROPIC_BASE_URL=http://127.0.0.1:9/\n"
        "AGENTLS_MODEL=claude-repository\n"
        "DATABASE_URL=postgres://u:pw@h/db\nBASH_ENV=hook.sh\n"
    )
    (root / "hook.sh").write_text("touch pwned\n")
    fake.script(
        reply(tool_use("bash", {"command": "env"})),
        reply(tool_use("read_file", {"path": ".env"})),
        echo_result,
    )
    env = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
    async with editor(root, fake.url, env=env) as client:
        result = await client.run_task("go")
    assert result["status"] == "done"
    first, env_step, _ = fake.requests
    env_output = result_text(env_step.body)
    assert "HOME=" in env_output and "postgres://" not in env_output
    assert "BASH_ENV" not in env_output
    # The model may read .env, but never the key in it.
    assert result["summary"].startswith("told: 1\tANTHROPIC_API_KEY=[redacted]\n")
    assert first.headers["authorization"] == "Bearer from-config-file"
    assert first.body["model"] == "claude-from-config"
    assert not (root / "pwned").exists()
    for request in fake.requests:
        assert "from-config-file" not in json.dumps(request.body)
        assert "from-the-repository" not in json.dumps(request.body)


async def test_session_memory_and_new_session(fake: FakeAnthropic, root: Path) -> None:
    fake.script(
        reply(text("first answer")), reply(text("second answer")), reply(text("fresh answer"))
    )
    async with editor(root, fake.url) as client:
        await client.run_task("first task")
        await client.run_task("second task")
        assert await client.command("agent.newSession") == {"ok": True}
        await client.run_task("third task")

    def texts(body: dict[str, Any]) -> list[str]:
        return [b["text"] for m in body["messages"] for b in m["content"]]

    assert texts(fake.requests[1].body) == ["first task", "first answer", "second task"]
    assert texts(fake.requests[2].body) == ["third task"]


@pytest.mark.parametrize(("answer", "ran"), [("Allow", True), ("Deny", False), (None, False)])
async def test_commands_are_put_to_the_user(
    fake: FakeAnthropic, root: Path, answer: str | None, ran: bool
) -> None:
    fake.script(reply(tool_use("bash", {"command": "touch made"})), echo_result)
    async with editor(root, fake.url, initialization={"approveCommands": "ask"}) as client:
        client.approvals = [answer]
        result = await client.run_task("make it")
        assert client.approval_requests == ["The agent wants to run:\ntouch made"]
    assert (root / "made").exists() == ran
    assert result["summary"].startswith("told: exit code 0" if ran else "told: The user denied")


@pytest.mark.parametrize(
    ("answer", "ran"),
    [("Allow", True), ("Allow for this task", True), ("Deny", False), (None, False), ("x", False)],
)
async def test_a_client_that_knows_approvals_gets_the_structured_request(
    fake: FakeAnthropic, root: Path, answer: str | None, ran: bool
) -> None:
    fake.script(reply(tool_use("bash", {"command": "touch made"})), echo_result)
    initialization = {"approveCommands": "ask"}
    async with editor(
        root, fake.url, initialization=initialization, capabilities=approves_commands
    ) as client:
        client.approvals = [answer]
        await client.run_task("make it")
        assert client.approval_requests == []  # no showMessageRequest
        assert client.command_approvals == [
            {
                "command": "touch made",
                "cwd": str(root),
                "sandboxed": True,
                "prompt": "The agent wants to run a command",
                "choices": [
                    {"id": "allow", "title": "Allow"},
                    {"id": "allow_task", "title": "Allow for this task"},
                    {"id": "deny", "title": "Deny"},
                ],
            }
        ]
    assert (root / "made").exists() == ran


async def test_allow_for_this_task_and_allowed_commands(fake: FakeAnthropic, root: Path) -> None:
    fake.script(
        reply(tool_use("bash", {"command": "ls"})),
        reply(tool_use("bash", {"command": "touch a"})),
        reply(tool_use("bash", {"command": "touch b"})),
        reply(text("done")),
    )
    settings = {"approveCommands": "ask", "allowedCommands": ["ls"]}
    async with editor(root, fake.url, initialization=settings) as client:
        client.approvals = ["Allow for this task"]
        await client.run_task("go")
        assert client.approval_requests == ["The agent wants to run:\ntouch a"]
    assert (root / "a").exists() and (root / "b").exists()


async def test_user_only_settings_come_from_the_editors_own_options_only(
    fake: FakeAnthropic, root: Path
) -> None:
    """workspace/configuration is what clients fill from a folder's files (eglot's
    .dir-locals.el): it cannot turn approval or the sandbox off."""
    fake.script(reply(tool_use("bash", {"command": "touch made"})), echo_result)
    chosen = {"approveCommands": "always", "sandbox": "off", "allowedCommands": ["touch"]}
    initialization = {"approveCommands": "ask", "sandbox": "off"}
    async with editor(root, fake.url, settings=chosen, initialization=initialization) as client:
        client.approvals = ["Deny"]
        await client.run_task("make it")
        assert client.approval_requests == ["The agent wants to run:\ntouch made"]
        warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert not (root / "made").exists()
    assert warnings == [
        "agentls: agentls.allowedCommands, agentls.approveCommands from this client ignored: "
        "user-only settings, they come from the editor's own settings (initializationOptions) "
        "only"
    ]


# The settings tests say "no sandbox": whether the host has one is not theirs to show.
NO_SANDBOX = {"approveCommands": "always", "sandbox": "off"}


async def test_invalid_settings_warn_and_fall_back(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(text("ok")))
    settings = {"maxSteps": "many"}
    async with editor(root, fake.url, settings=settings, initialization=NO_SANDBOX) as client:
        result = await client.run_task("go")
        assert result["status"] == "done"
        (warning,) = [m for m in client.messages if m.type == types.MessageType.Warning]
        assert "agentls.maxSteps" in warning.message and "50" in warning.message


async def test_step_limit_from_settings(fake: FakeAnthropic, root: Path) -> None:
    fake.script(*[reply(tool_use("list_files", {})) for _ in range(2)])
    async with editor(root, fake.url, settings={"maxSteps": 2}) as client:
        result = await client.run_task("go")
    assert (result["status"], result["steps"]) == ("step_limit", 2)


async def test_prompt_caching_breakpoints(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(tool_use("list_files", {})), reply(text("ok")))
    async with editor(root, fake.url) as client:
        result = await client.run_task("go")
    body = fake.requests[1].body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    marked = [m for m in body["messages"] if "cache_control" in m["content"][-1]]
    assert len(marked) == 2
    assert set(result["usage"]) == {
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
        "cacheHitRate",
        "model",
        "costUsd",
        "subagents",
    }


async def test_unreachable_endpoint_fails_clearly(root: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    async with editor(root, closed) as client:
        result = await client.run_task("go")
        assert result["status"] == "failed"
        assert f"Could not reach {closed}" in client.messages[-1].message


async def test_untitled_buffer_and_bad_selection(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(text("ok")))
    async with editor(root, fake.url) as client:
        result = await client.run_task("go", uri="untitled:Untitled-1")
        assert result["status"] == "done"
        with pytest.raises(JsonRpcException, match="selection"):
            await client.run_task("go", uri="untitled:Untitled-1", selection={"start": 3})
        with pytest.raises(JsonRpcException, match="uri must be"):
            await client.run_task("go", uri=42)
        with pytest.raises(JsonRpcException, match="takes one argument"):
            await client.command("agent.runTask")
    assert (
        "Open file: untitled:Untitled-1"
        in fake.requests[0].body["messages"][0]["content"][0]["text"]
    )


async def test_incremental_changes_below_unusual_line_separators(
    fake: FakeAnthropic, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("s = 'a\x0cb\u2028c'\nx = 1\n")
    fake.script(reply(tool_use("read_file", {"path": "a.py"})), echo_result)
    async with editor(root, fake.url) as client:
        uri = client.open(path)
        client.replace(uri, (1, 4), (1, 5), "2")
        result = await client.run_task("read")
    assert result["summary"] == "told: 1\ts = 'a\x0cb\u2028c'\n2\tx = 2"


async def test_root_through_a_symlink_edits_the_open_document(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.py").write_text("x = 1\n")
    root = tmp_path / "link"
    root.symlink_to(real)
    fake.script(
        reply(tool_use("edit_file", {"path": "a.py", "old_text": "x = 9", "new_text": "x = 10"})),
        echo_result,
    )
    async with editor(root, fake.url) as client:
        client.save = False
        uri = client.open(root / "a.py", "x = 9\n")  # unsaved text only the editor has
        await client.run_task("bump")
        (request,) = client.edit_requests
        (document_edit,) = request.edit.document_changes
        assert (document_edit.text_document.uri, document_edit.text_document.version) == (uri, 1)
        assert client.documents[uri][0] == "x = 10\n"
    assert (real / "a.py").read_text() == "x = 1\n"  # the editor's to save, not the server's


async def test_a_closed_file_reviewed_hunk_by_hunk_is_never_written_by_the_server(
    fake: FakeAnthropic, root: Path
) -> None:
    path = root / "notes.txt"
    path.write_text("a\nb\nc\nd\n")
    fake.script(
        reply(tool_use("write_file", {"path": "notes.txt", "content": "A\nb\nc\nD\n"})),
        echo_result,
    )
    async with editor(root, fake.url) as client:  # VS Code: change annotations, one per hunk
        client.save = False
        client.review = lambda uri, edits: [True, False]
        result = await client.run_task("edit")
    assert path.read_text() == "a\nb\nc\nd\n"  # the rejected hunk was not written anyway
    assert "has not saved it" in result["summary"]


async def test_cancel_during_the_review_withdraws_the_edit(fake: FakeAnthropic, root: Path) -> None:
    path = root / "a.py"
    path.write_text("a = 1\n")
    fake.script(reply(tool_use("edit_file", {"path": "a.py", "old_text": "1", "new_text": "2"})))
    async with editor(root, fake.url) as client:
        reviewing = asyncio.Event()
        decided = asyncio.Event()
        withdrawn: list[Any] = []
        client.protocol._handle_cancel_notification = withdrawn.append  # type: ignore[method-assign]

        async def slow_review(params: types.ApplyWorkspaceEditParams) -> Any:
            reviewing.set()
            await decided.wait()
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="withdrawn")

        client.apply_edit = slow_review  # type: ignore[method-assign]
        _, answer = client.start_task("edit")
        await asyncio.wait_for(reviewing.wait(), 30)  # spawn and SDK import included
        await client.command("agent.cancel")
        assert (await answer)["status"] == "cancelled"
        await asyncio.sleep(0.2)
        decided.set()
        assert len(withdrawn) == 1 and str(withdrawn[0]).startswith("agentls-edit-")
    assert path.read_text() == "a = 1\n"
    assert len(fake.requests) == 1


async def test_shutdown_during_a_task_cancels_it_cleanly(fake: FakeAnthropic, root: Path) -> None:
    async with editor(root, fake.url, process=True) as client:  # `exit` ends the process
        _, answer, seconds = await _start_long_bash(client, fake)
        await client.shutdown_session()  # answered without error, the task cancelled
        with pytest.raises(JsonRpcException):
            await answer
        deadline = time.monotonic() + 20
        while running_argv("sleep", seconds):
            assert time.monotonic() < deadline, "bash outlived the shutdown"
            await asyncio.sleep(0.02)
        client.shutdown_session = _already_shut  # type: ignore[method-assign]


async def _already_shut() -> None:
    return None


async def test_client_only_settings_are_ignored(fake: FakeAnthropic, root: Path) -> None:
    fake.script(reply(text("ok")))
    settings = {"trace": {"server": "verbose"}, "server": {"command": ["agentls"]}}
    async with editor(root, fake.url, settings=settings, initialization=NO_SANDBOX) as client:
        await client.run_task("go")
        assert [m for m in client.messages if m.type == types.MessageType.Warning] == []


async def test_uri_with_escaped_characters(fake: FakeAnthropic, root: Path) -> None:
    folder = root / "C#" / "50%"
    folder.mkdir(parents=True)
    (folder / "a b.py").write_text("x = 1\n")
    fake.script(reply(text("ok")))
    async with editor(root, fake.url) as client:
        uri = client.open(folder / "a b.py")
        assert "%23" in uri and "%25" in uri and "%20" in uri
        await client.run_task("go", uri=uri)
    assert (
        "Open file: C#/50%/a b.py (python)"
        in fake.requests[0].body["messages"][0]["content"][0]["text"]
    )


async def test_a_folder_never_chooses_the_model_nor_its_price(
    fake: FakeAnthropic, root: Path
) -> None:
    """L1: workspace/configuration (a folder's files) chose the model and priced it at 0."""
    fake.script(reply(text("ok")))
    folder = {"model": "claude-opus-4-1", "prices": {"claude": {"input": 0, "output": 0}}}
    mine = {"model": "claude-sonnet-4-5", **NO_SANDBOX}
    async with editor(root, fake.url, settings=folder, initialization=mine) as client:
        result = await client.run_task("go")
        warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert fake.requests[0].body["model"] == "claude-sonnet-4-5"
    assert result["usage"]["costUsd"] > 0
    assert warnings == [
        "agentls: agentls.model, agentls.prices from this client ignored: user-only settings, "
        "they come from the editor's own settings (initializationOptions) only"
    ]
