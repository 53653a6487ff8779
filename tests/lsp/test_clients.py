"""LSP clients other than ours, reproduced at the protocol level: eglot and vim-lsp send the
didChange of an applied edit late, vim-lsp sends no versions, eglot 1.9 cannot create files
and answers a declined edit with an error, some clients cannot apply edits or ask the user.
The real server process, a scripted editor and the fake API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentls.lsp.workspace import NO_APPLY_EDIT_OPEN
from doubles import results
from editor_client import editor
from fake_api import FakeAnthropic, reply, text, tool_use
from lsprotocol import types

SOURCE = "def greet():\n    return 'hi'\n\nvalue = 1\nother = 2\n"


def told(fake: FakeAnthropic) -> list[str]:
    """Each tool result the model got, in order."""
    found = []
    for request in fake.requests:
        messages = request.body["messages"]
        if messages and messages[-1]["role"] == "user":
            found += [r["content"] for r in results(messages)]
    return found


def vim_lsp(capabilities: types.ClientCapabilities) -> None:
    """vim-lsp: edits as `changes` (no versions), no change annotations."""
    assert capabilities.workspace is not None
    capabilities.workspace.workspace_edit = types.WorkspaceEditClientCapabilities()


def yegappan(capabilities: types.ClientCapabilities) -> None:
    """yegappan/lsp: resource operations, but no `documentChanges` to carry them."""
    assert capabilities.workspace is not None
    capabilities.workspace.workspace_edit = types.WorkspaceEditClientCapabilities(
        resource_operations=[types.ResourceOperationKind.Create]
    )


def edit(old: str, new: str, path: str = "app.py") -> Any:
    return reply(tool_use("edit_file", {"path": path, "old_text": old, "new_text": new}))


@pytest.mark.parametrize("client_name", ["eglot", "vim-lsp"])
async def test_an_applied_edit_is_believed_before_its_late_did_change(
    fake: FakeAnthropic, root: Path, client_name: str
) -> None:
    path = root / "app.py"
    path.write_text(SOURCE)
    fake.script(
        edit("value = 1", "value = 2"),
        reply(tool_use("read_file", {"path": "app.py"})),
        # Lines added above the next edit: computed on stale text, it would land too high.
        edit("def greet():", "import os\n\n\ndef greet():"),
        edit("other = 2", "other = 3"),
        text("done"),
        reply(tool_use("read_file", {"path": "app.py"})),
        text("read it"),
    )
    expected = "import os\n\n\ndef greet():\n    return 'hi'\n\nvalue = 2\nother = 3\n"
    capabilities = vim_lsp if client_name == "vim-lsp" else None
    async with editor(root, fake.url, flavour="emacs", capabilities=capabilities) as client:
        client.defer_changes = True
        client.save = False
        uri = client.open(path)
        result = await client.run_task("change it", uri=uri)
        assert result["edits"] == {"applied": 3, "rejected": 0, "partly": 0}
        assert client.documents[uri][0] == expected
        if client_name == "eglot":
            # Its version after our edits is the client's to count: the later edits carry none.
            changes = [r.edit.document_changes for r in client.edit_requests]
            assert [c[0].text_document.version for c in changes if c] == [1, None, None]
        client.send_deferred_changes()
        await client.run_task("read it again")
    # eglot and vim-lsp never save the buffers they edit.
    edited = (
        "Edited app.py: 1 hunk accepted.\nThe change is in the editor's unsaved buffer of "
        "app.py: shell commands see the old file until the user saves it."
    )
    assert told(fake)[:4] == [edited, told(fake)[1], edited, edited]
    assert "4\tvalue = 2" in told(fake)[1]
    # After the late didChange the server's copy is still the client's buffer.
    assert told(fake)[4] == "\n".join(
        f"{n}\t{line}" for n, line in enumerate(expected.splitlines(), 1)
    )


@pytest.mark.parametrize("client_name", ["eglot-1.9", "vim-lsp", "yegappan", "vscode"])
async def test_a_new_file_comes_out_exactly(
    fake: FakeAnthropic, root: Path, client_name: str
) -> None:
    content = "first\nsecond\n"
    fake.script(reply(tool_use("write_file", {"path": "notes.md", "content": content})), text("ok"))
    flavour = "vscode" if client_name == "vscode" else "emacs"
    capabilities = {"vim-lsp": vim_lsp, "yegappan": yegappan}.get(client_name)
    async with editor(root, fake.url, flavour=flavour, capabilities=capabilities) as client:
        client.create_files = client_name == "vscode"
        client.save = client_name == "vscode"
        result = await client.run_task("write notes")
    assert result["edits"] == {"applied": 1, "rejected": 0, "partly": 0}
    assert (root / "notes.md").read_text() == content
    assert told(fake) == ["Created notes.md: 1 hunk accepted."]
    (request,) = client.edit_requests
    operations = request.edit.document_changes or []
    creates = [op for op in operations if isinstance(op, types.CreateFile)]
    assert len(creates) == (1 if client_name == "vscode" else 0)
    edits = (
        [e for op in operations if isinstance(op, types.TextDocumentEdit) for e in op.edits]
        if operations
        else next(iter((request.edit.changes or {}).values()))
    )
    # Through the start of the line after the empty document: Vim's one empty line is
    # replaced, not left as a blank line at the end.
    assert [(e.range.start.line, e.range.end.line, e.range.end.character) for e in edits] == [
        (0, 1, 0)
    ]


async def test_a_new_file_opened_as_one_empty_line_during_the_edit(
    fake: FakeAnthropic, root: Path
) -> None:
    """Neovim 0.7 with every buffer attached (nvim-lspconfig): the buffer it makes for the new
    file is opened with the text "\n" before it answers, the edit comes in a late didChange."""
    content = "first = 1\nsecond = 2\n"
    fake.script(reply(tool_use("write_file", {"path": "c.py", "content": content})), text("ok"))
    async with editor(root, fake.url, flavour="emacs", capabilities=vim_lsp) as client:
        client.defer_changes = True
        client.save = False
        client.on_edit = lambda: client.open(root / "c.py", "\n") and None
        await client.run_task("write c.py")
        assert told(fake)[0].startswith("Created c.py: 1 hunk accepted.\n")
        client.send_deferred_changes()
        fake.script(reply(tool_use("read_file", {"path": "c.py"})), text("read it"))
        await client.run_task("read it")
    assert told(fake)[1] == "1\tfirst = 1\n2\tsecond = 2"


async def test_an_edit_answered_with_an_error_counts_as_rejected(
    fake: FakeAnthropic, root: Path
) -> None:
    path = root / "app.py"
    path.write_text(SOURCE)
    fake.script(edit("value = 1", "value = 2"), text("ok"))

    def decline() -> None:
        raise ValueError("User cancelled server edit")

    async with editor(root, fake.url, flavour="emacs") as client:
        client.on_edit = decline
        result = await client.run_task("change it", uri=client.open(path))
    assert result["edits"] == {"applied": 0, "rejected": 1, "partly": 0}
    (answer,) = told(fake)
    assert answer.startswith("The edit of app.py was not applied: ")
    assert "User cancelled server edit" in answer
    assert answer.endswith("The file is unchanged.")
    assert path.read_text() == SOURCE


def no_apply_edit(capabilities: types.ClientCapabilities) -> None:
    assert capabilities.workspace is not None
    capabilities.workspace.apply_edit = False


async def test_a_client_without_apply_edit(fake: FakeAnthropic, root: Path) -> None:
    (root / "open.py").write_text(SOURCE)
    (root / "closed.py").write_text(SOURCE)
    fake.script(
        edit("value = 1", "value = 2", "open.py"),
        edit("value = 1", "value = 2", "closed.py"),
        text("ok"),
    )
    async with editor(
        root, fake.url, capabilities=no_apply_edit, initialization={"approveCommands": "ask"}
    ) as client:
        client.approvals = ["Allow"]
        result = await client.run_task("change both", uri=client.open(root / "open.py"))
    assert client.edit_requests == []
    assert result["edits"] == {"applied": 1, "rejected": 1, "partly": 0}
    refused, written = told(fake)
    assert refused == (
        f"The edit of open.py was not applied: {NO_APPLY_EDIT_OPEN}. The file is unchanged."
    )
    assert written == "Edited closed.py: 1 hunk accepted."
    assert client.approval_requests == ["The agent wants to change closed.py (change of line 4)"]
    assert (root / "open.py").read_text() == SOURCE
    assert (root / "closed.py").read_text() == SOURCE.replace("value = 1", "value = 2")


async def test_without_apply_edit_a_file_changed_during_the_question_is_not_overwritten(
    fake: FakeAnthropic, root: Path
) -> None:
    path = root / "closed.py"
    path.write_text(SOURCE)
    fake.script(edit("value = 1", "value = 2", "closed.py"), text("ok"))
    async with editor(
        root, fake.url, capabilities=no_apply_edit, initialization={"approveCommands": "ask"}
    ) as client:
        asked = client.approve

        def the_user_saves_first(params: types.ShowMessageRequestParams) -> Any:
            path.write_text(SOURCE + "mine = 1\n")  # typed and saved while the question waits
            return asked(params)

        client.approve = the_user_saves_first  # type: ignore[method-assign]
        client.approvals = ["Allow"]
        result = await client.run_task("change it")
    assert result["edits"] == {"applied": 0, "rejected": 1, "partly": 0}
    assert told(fake) == [
        "The edit of closed.py was not applied: the file changed on disk meanwhile; read it "
        "again. The file is unchanged."
    ]
    assert path.read_text() == SOURCE + "mine = 1\n"


@pytest.mark.parametrize(
    ("settings", "asked"),
    [
        ({"mode": "acceptEdits"}, []),  # the gate lets the edit land: nothing to review
        ({"permissions": {"allow": ["Edit(closed.py)"]}}, []),
        ({"permissions": {"ask": ["Edit(closed.py)"]}, "approveCommands": "always"}, ["closed"]),
    ],
)
async def test_without_apply_edit_the_gate_decides_whether_a_write_is_asked(
    fake: FakeAnthropic, root: Path, settings: dict[str, Any], asked: list[str]
) -> None:
    """The question that stands for the editor's review is the gate's: asked when the edit
    is to be reviewed (an ask rule, whatever approveCommands says), not when the mode or an
    allow rule lets it land."""
    path = root / "closed.py"
    path.write_text(SOURCE)
    fake.script(edit("value = 1", "value = 2", "closed.py"), text("ok"))
    async with editor(
        root,
        fake.url,
        capabilities=no_apply_edit,
        initialization={"approveCommands": "ask", **settings},
    ) as client:
        client.approvals = ["Allow"]
        result = await client.run_task("change it")
    assert result["edits"] == {"applied": 1, "rejected": 0, "partly": 0}
    questions = ["The agent wants to change closed.py (change of line 4)"]
    assert client.approval_requests == (questions if asked else [])
    assert path.read_text() == SOURCE.replace("value = 1", "value = 2")


async def test_a_client_that_cannot_ask_falls_back_to_the_rule(
    fake: FakeAnthropic, root: Path
) -> None:
    fake.script(
        reply(tool_use("bash", {"command": "echo one"})),
        reply(tool_use("bash", {"command": "git status"})),
        reply(tool_use("bash", {"command": "echo two"})),
        text("ok"),
    )
    async with editor(
        root,
        fake.url,
        initialization={"approveCommands": "ask", "allowedCommands": ["git status"]},
        without=(types.WINDOW_SHOW_MESSAGE_REQUEST,),
    ) as client:
        await client.run_task("run things")
    refused, allowed, again = told(fake)
    assert refused.startswith("This editor cannot ask the user to approve it")
    assert "approveCommands" in refused and "allowedCommands" in refused
    assert "JsonRpcMethodNotFound" not in refused
    assert allowed.startswith("exit code ")
    assert again == refused
